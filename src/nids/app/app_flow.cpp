// A flow's application layer: detection, then its parser (src/nids/app/app_flow.hpp).
#include "nids/app/app_flow.hpp"

#include <algorithm>
#include <string_view>

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

}  // namespace

void AppParsers::take(AppFlow& f, uint8_t dir, const uint8_t* data, size_t len, bool gap,
                      uint64_t ts_ns) {
  dir &= 1;
  if (gap) {
    if (f.http) f.http->gap();
    if (!f.decided) f.decided = true;  // no detection across lost bytes
    return;
  }
  if (f.decided) {
    if (!f.http) return;
    keep_raw(f.raw[dir], data, len);
    const size_t before = f.ready.size();
    f.http->feed(dir, data, len, ts_ns, f.ready);
    stamp_raw(f, before);
    return;
  }
  // Detection: keep the first bytes of each direction until one of them says what they are.
  std::string& p = f.probe[dir];
  p.append(reinterpret_cast<const char*>(data), std::min(len, kProbeLimit - std::min(p.size(), kProbeLimit)));
  if (f.said[dir] == Probe::kMore) {
    f.said[dir] = probe_http(dir, reinterpret_cast<const uint8_t*>(p.data()), std::min(p.size(), kProbeBytes));
    if (f.said[dir] == Probe::kMore && p.size() >= kProbeBytes) f.said[dir] = Probe::kNo;
  }
  detect(f, ts_ns);
}

void AppParsers::detect(AppFlow& f, uint64_t ts_ns) {
  const bool yes = f.said[0] == Probe::kYes || f.said[1] == Probe::kYes;
  if (yes && cfg_.http) {
    f.decided = true;
    f.layer   = AppLayer::kHttp;
    f.http    = std::make_unique<HttpFlow>(http_, counters_);
    ++counters_.http_flows;
    // What waited, the client's first (a request comes before its response).
    for (uint8_t d = 0; d < 2; ++d) {
      const auto* bytes = reinterpret_cast<const uint8_t*>(f.probe[d].data());
      keep_raw(f.raw[d], bytes, f.probe[d].size());
      const size_t before = f.ready.size();
      f.http->feed(d, bytes, f.probe[d].size(), ts_ns, f.ready);
      stamp_raw(f, before);
      std::string().swap(f.probe[d]);
    }
    return;
  }
  // Neither direction can be HTTP. (A direction that has shown nothing yet may still say yes;
  // each keeps at most kProbeLimit bytes meanwhile.)
  if (f.said[0] == Probe::kNo && f.said[1] == Probe::kNo) {
    f.decided = true;
    for (std::string& p : f.probe) std::string().swap(p);
  }
}

void AppParsers::close(AppFlow& f, uint64_t ts_ns) {
  if (!f.http) return;
  const size_t before = f.ready.size();
  f.http->close(ts_ns, f.ready);
  stamp_raw(f, before);
}

}  // namespace warpath::nids::detail
