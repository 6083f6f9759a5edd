// libFuzzer target: the NIDS's application-layer parsers on hostile bytes (HTTP through libhtp,
// TLS's record and handshake parser with OpenSSL's certificate decoding, DNS through ldns over
// UDP and TCP), each conversation fed in the pieces and directions the input chooses. The
// sanitizers watch; the bounds are checked: bodies within their limits, unanswered requests
// within max_txs, and (detection's path) every byte the parsers held released at the flow's end.
//
// Input: byte 0 picks the protocol (0 HTTP, 1 TLS, 2 DNS over TCP, 3 DNS over UDP, 4 detection
// by content), then pieces of [direction and length byte][bytes].
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "nids/app/app_flow.hpp"
#include "nids/app/dns_parse.hpp"
#include "nids/app/http_flow.hpp"
#include "nids/app/tls_flow.hpp"

using namespace warpath::nids;
using namespace warpath::nids::detail;

namespace {

// Bodies within their limits; HTTP requests never answered (open when the flow ended) at most
// max_txs.
void check(const std::vector<AppTx>& txs, const AppConfig& cfg) {
  std::vector<uint64_t> asked, answered;
  for (const AppTx& t : txs) {
    if (t.buf[size_t(AppBuffer::kHttpRequestBody)].size() > cfg.request_body_limit) std::abort();
    if (t.buf[size_t(AppBuffer::kHttpResponseBody)].size() > cfg.response_body_limit) std::abort();
    if (t.layer == AppLayer::kHttp) (t.response ? answered : asked).push_back(t.id);
  }
  std::sort(asked.begin(), asked.end());  // a request inspected, then logged at the end: once
  asked.erase(std::unique(asked.begin(), asked.end()), asked.end());
  size_t open = 0;
  for (uint64_t id : asked)
    open += std::find(answered.begin(), answered.end(), id) == answered.end();
  if (open > cfg.max_txs) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  AppConfig cfg;
  cfg.request_body_limit  = 512;
  cfg.response_body_limit = 512;
  cfg.max_txs             = 16;
  cfg.decompression_limit = 64 << 10;
  const int kind = data[0] % 5;
  AppCounters counters;
  std::vector<AppTx> txs;
  HttpConfig http_cfg(cfg);
  HttpFlow http(http_cfg, counters);
  TlsFlow tls(counters);
  DnsTcpStream dns[2];
  AppParsers parsers(cfg);
  AppFlow flow;
  uint64_t next_id = 0;
  for (size_t at = 1; at + 1 < size;) {
    const uint8_t dir = data[at] >> 7;
    size_t n = size_t(data[at] & 0x7f) * 4 + 1;
    ++at;
    if (n > size - at) n = size - at;
    const uint8_t* p = data + at;
    at += n;
    switch (kind) {
      case 0: http.feed(dir, p, n, 1, txs); break;
      case 1: tls.feed(dir, p, n, txs); break;
      case 2: dns[dir].feed(p, n, txs, next_id); break;
      case 3: {
        AppTx t;
        if (parse_dns(p, n, t)) txs.push_back(std::move(t));
        (void)probe_dns(p, n);
        break;
      }
      case 4: parsers.take(flow, dir, p, n, false, 1); break;
    }
  }
  if (kind == 0) http.close(2, txs);
  if (kind == 1) tls.close(txs);
  if (kind == 4) {
    parsers.close(flow, 2);
    if (parsers.counters().held_bytes != 0) std::abort();
  }
  check(txs, cfg);
  check(flow.ready, cfg);
  return 0;
}
