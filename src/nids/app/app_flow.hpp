// src/nids/app/app_flow.hpp: a flow's application layer in the inspector: protocol detection by
// content on each direction's first bytes (HTTP, TLS, DNS over TCP) or a UDP flow's first
// datagram (DNS), then the protocol's parser, whose finished transactions wait in `ready` for
// the inspector to inspect (include/warpath/nids/app_layer.hpp).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nids/app/dns_parse.hpp"
#include "nids/app/http_flow.hpp"
#include "nids/app/tls_flow.hpp"
#include "warpath/nids/app_layer.hpp"

namespace warpath::nids::detail {

struct AppFlow {
  AppLayer layer = AppLayer::kNone;
  bool decided   = false;       // detection finished (found a protocol or gave up)
  std::string probe[2];         // each direction's first bytes while detection waits
  bool probe_cut[2] = {};       // a direction passed kProbeLimit while detection waited
  // What each protocol's probe said of each direction (by AppLayer; DNS: over TCP).
  Probe said[kAppLayers][2] = {};  // kMore: not decided yet
  std::unique_ptr<HttpFlow> http;
  std::unique_ptr<TlsFlow> tls;
  std::unique_ptr<DnsTcpStream> dns[2];
  uint64_t next_id = 0;         // DNS: the next message's transaction number
  std::vector<AppTx> ready;     // transactions (or responses) to inspect
  std::string raw[2];           // each direction's last stream bytes (a rule's payload items)
  size_t held = 0;              // what it counted into AppParsers's held bytes
  /// Bytes its parser and detection hold now.
  size_t holding() const noexcept {
    size_t n = probe[0].size() + probe[1].size() + raw[0].size() + raw[1].size();
    if (http) n += http->held();
    if (tls) n += tls->held();
    for (const auto& d : dns)
      if (d) n += d->held();
    return n;
  }
};

/// The parsers of one inspector: their shared configuration and counters.
class AppParsers {
 public:
  /// Bytes each direction may show before detection gives up on it.
  static constexpr size_t kProbeBytes = 64;
  /// Bytes a direction keeps while the other decides (what the parser gets once it does).
  static constexpr size_t kProbeLimit = 4096;

  explicit AppParsers(const AppConfig& cfg) : cfg_(cfg), http_(cfg) {}
  /// In-order stream bytes of direction `dir` (or a gap: the parser stops).
  void take(AppFlow& f, uint8_t dir, const uint8_t* data, size_t len, bool gap, uint64_t ts_ns);
  /// A UDP datagram's payload (DNS: detected by its first datagram, then each one parsed).
  void datagram(AppFlow& f, uint8_t dir, const uint8_t* data, size_t len);
  /// The flow ended: open transactions finish into f.ready, and what it held is released.
  void close(AppFlow& f, uint64_t ts_ns);
  /// The flow is forgotten: what it held leaves the count.
  void release(AppFlow& f) noexcept {
    counters_.held_bytes -= f.held;
    f.held = 0;
  }
  const AppCounters& counters() const noexcept { return counters_; }

 private:
  void detect(AppFlow& f, uint64_t ts_ns);
  void start(AppFlow& f, AppLayer layer, uint64_t ts_ns);
  void feed(AppFlow& f, uint8_t dir, const uint8_t* data, size_t len, uint64_t ts_ns);
  // After a flow's parser ran: its holding counted again; past the memcap the parser stops.
  void account(AppFlow& f);
  void stop(AppFlow& f);
  AppConfig cfg_;
  HttpConfig http_;
  AppCounters counters_;
};

}  // namespace warpath::nids::detail
