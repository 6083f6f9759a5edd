// A flow's application layer: detection, then its parser (src/nids/app/app_flow.hpp).
#include "nids/app/app_flow.hpp"

#include "nids/app/label_probe.hpp"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <utility>

#include "warpath/nids/detect.hpp"

namespace warpath::nids::detail {
namespace {

// A direction's last stream bytes: kStreamLookback of them (trimmed once twice as many).
void keep_raw(std::string& raw, const uint8_t* data, size_t len) {
  raw.append(reinterpret_cast<const char*>(data), len);
  if (raw.size() > 2 * kStreamLookback) raw.erase(0, raw.size() - kStreamLookback);
}

// The transactions made since `from` get their direction's raw stream as the payload buffer.
void stamp_raw(AppFlow& f, size_t from) {
  for (size_t i = from; i < f.ready.size(); ++i) {
    const std::string& raw = f.raw[f.ready[i].response ? 1 : 0];
    f.ready[i].set(AppBuffer::kPayload,
                   std::string_view(raw).substr(raw.size() - std::min<size_t>(raw.size(), kStreamLookback)));
  }
}

// The protocols detected by content without a parser (label_probe.hpp), in detection order.
constexpr AppLayer kDetectedOnly[] = {AppLayer::kFtp, AppLayer::kSmtp, AppLayer::kSsh, AppLayer::kSmb};

// DNS over TCP: a two-byte length, then a whole message that parses (kMore until it is there).
Probe probe_dns_tcp(const std::string& s) {
  if (s.size() < 2) return Probe::kMore;
  const size_t n = size_t(uint8_t(s[0]) << 8 | uint8_t(s[1]));
  if (n < 12 || n + 2 > AppParsers::kProbeLimit) return Probe::kNo;
  if (s.size() < n + 2) return Probe::kMore;
  return probe_dns(reinterpret_cast<const uint8_t*>(s.data()) + 2, n) ? Probe::kYes : Probe::kNo;
}

}  // namespace

void AppParsers::stop(AppFlow& f) {
  f.http.reset();
  f.tls.reset();
  f.dns[0].reset();
  f.dns[1].reset();
  for (std::string& s : f.probe) std::string().swap(s);
  for (std::string& s : f.raw) std::string().swap(s);
  f.decided = true;
  f.layer   = AppLayer::kNone;
}

void AppParsers::account(AppFlow& f) {
  const size_t now = f.holding();
  counters_.held_bytes = counters_.held_bytes - f.held + now;
  f.held = now;
  if (counters_.held_bytes > cfg_.memcap) {  // this flow's parsing ends here (policy ignore)
    ++counters_.memcap;
    stop(f);
    counters_.held_bytes -= f.held;
    f.held = 0;
  }
}

void AppParsers::feed(AppFlow& f, uint8_t dir, const uint8_t* data, size_t len, uint64_t ts_ns) {
  if (!app_layer_parsed(f.layer)) return;  // detected only: no parser, no transactions
  if (cfg_.raw_window) keep_raw(f.raw[dir], data, len);
  const size_t before = f.ready.size();
  switch (f.layer) {
    case AppLayer::kHttp: f.http->feed(dir, data, len, ts_ns, f.ready); break;
    case AppLayer::kTls: f.tls->feed(dir, data, len, f.ready); break;
    case AppLayer::kDns: {
      const size_t first = f.ready.size();
      if (!f.dns[dir]->feed(data, len, f.ready, f.next_id)) ++counters_.parse_errors;
      counters_.dns_messages += f.ready.size() - first;
      break;
    }
    default: break;
  }
  counters_.app_bytes += len;
  if (cfg_.raw_window) stamp_raw(f, before);
  account(f);
}

void AppParsers::take(AppFlow& f, uint8_t dir, const uint8_t* data, size_t len, bool gap,
                      uint64_t ts_ns) {
  dir &= 1;
  if (gap) {
    if (f.http) f.http->gap();  // HTTP: what was parsed stands, nothing after the gap is
    else if (app_layer_parsed(f.layer)) stop(f);  // TLS, DNS: no framing across lost bytes
    f.decided = true;  // no detection across lost bytes
    account(f);
    return;
  }
  if (f.decided) {
    if (f.layer != AppLayer::kNone) feed(f, dir, data, len, ts_ns);
    return;
  }
  // Detection: keep the first bytes of each direction until one of them says what they are.
  std::string& p = f.probe[dir];
  const size_t keep = std::min(len, kProbeLimit - std::min(p.size(), kProbeLimit));
  p.append(reinterpret_cast<const char*>(data), keep);
  f.probe_cut[dir] = f.probe_cut[dir] || keep < len;
  const auto* bytes = reinterpret_cast<const uint8_t*>(p.data());
  Probe* said = nullptr;
  auto ask = [&](AppLayer l) { return *(said = &f.said[size_t(l)][dir]) == Probe::kMore; };
  if (ask(AppLayer::kHttp)) {
    *said = probe_http(dir, bytes, std::min(p.size(), kProbeBytes));
    if (*said == Probe::kMore && p.size() >= kProbeBytes) *said = Probe::kNo;
  }
  if (ask(AppLayer::kTls)) {
    bool more = false;
    *said = probe_tls(bytes, p.size(), more) ? Probe::kYes : more ? Probe::kMore : Probe::kNo;
  }
  if (ask(AppLayer::kDns)) {
    *said = dir == 0 ? probe_dns_tcp(p) : Probe::kNo;  // the client asks first
    if (*said == Probe::kMore && p.size() >= kProbeLimit) *said = Probe::kNo;
  }
  for (AppLayer l : kDetectedOnly)
    if (ask(l)) *said = probe_label(l, dir, bytes, p.size());
  detect(f, ts_ns);
  account(f);
}

void AppParsers::start(AppFlow& f, AppLayer layer, uint64_t ts_ns) {
  // A direction that passed kProbeLimit while the other decided lost bytes: no parser can
  // follow it (it would read a stream with a hole), so the flow is not parsed.
  if ((f.probe_cut[0] || f.probe_cut[1]) && app_layer_parsed(layer)) layer = AppLayer::kNone;
  f.decided = true;
  f.layer   = layer;
  switch (layer) {
    case AppLayer::kHttp:
      f.http = std::make_unique<HttpFlow>(http_, counters_);
      ++counters_.http_flows;
      break;
    case AppLayer::kTls:
      f.tls = std::make_unique<TlsFlow>(counters_);
      ++counters_.tls_flows;
      break;
    case AppLayer::kDns:
      f.dns[0] = std::make_unique<DnsTcpStream>();
      f.dns[1] = std::make_unique<DnsTcpStream>();
      ++counters_.dns_flows;
      break;
    default: break;  // detected only (label_probe.hpp): nothing to parse
  }
  // What waited, the client's first (a request comes before its response).
  for (uint8_t d = 0; d < 2; ++d) {
    if (layer != AppLayer::kNone && !f.probe[d].empty())
      feed(f, d, reinterpret_cast<const uint8_t*>(f.probe[d].data()), f.probe[d].size(), ts_ns);
    std::string().swap(f.probe[d]);
  }
}

void AppParsers::detect(AppFlow& f, uint64_t ts_ns) {
  // HTTP, TLS, DNS in this order as each is enabled, then the protocols only detected.
  std::pair<AppLayer, bool> order[3 + std::size(kDetectedOnly)] = {
      {AppLayer::kHttp, cfg_.http}, {AppLayer::kTls, cfg_.tls}, {AppLayer::kDns, cfg_.dns}};
  for (size_t k = 0; k < std::size(kDetectedOnly); ++k) order[3 + k] = {kDetectedOnly[k], true};
  bool all_no = true;
  for (const auto& [layer, enabled] : order) {
    if (!enabled) continue;
    const Probe* said = f.said[size_t(layer)];
    if (said[0] == Probe::kYes || said[1] == Probe::kYes) return start(f, layer, ts_ns);
    all_no = all_no && said[0] == Probe::kNo && said[1] == Probe::kNo;
  }
  // No protocol can still be found. (A direction that has shown nothing yet may still say yes;
  // each keeps at most kProbeLimit bytes meanwhile.)
  if (all_no) start(f, AppLayer::kNone, ts_ns);
}

void AppParsers::datagram(AppFlow& f, uint8_t dir, const uint8_t* data, size_t len) {
  if (!cfg_.dns || !len) return;
  if (!f.decided) {  // a UDP flow's first datagram decides
    f.decided = true;
    if (!probe_dns(data, len)) return;
    f.layer = AppLayer::kDns;
    ++counters_.dns_flows;
  }
  if (f.layer != AppLayer::kDns) return;
  AppTx tx;
  if (!parse_dns(data, len, tx)) {
    ++counters_.parse_errors;
    return;
  }
  (void)dir;
  tx.id = f.next_id++;
  ++counters_.dns_messages;
  counters_.app_bytes += len;
  if (cfg_.raw_window) tx.set(AppBuffer::kPayload, std::string_view(reinterpret_cast<const char*>(data), len));
  f.ready.push_back(std::move(tx));
}

void AppParsers::close(AppFlow& f, uint64_t ts_ns) {
  const size_t before = f.ready.size();
  if (f.http) f.http->close(ts_ns, f.ready);
  if (f.tls) f.tls->close(f.ready);
  if (cfg_.raw_window) stamp_raw(f, before);
  release(f);  // the flow is over: nothing of it is held any more
}

}  // namespace warpath::nids::detail
