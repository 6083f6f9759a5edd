// src/nids/app/http_flow.hpp: one flow's HTTP/1.x parser (OISF's libhtp), fed the reassembled
// bytes of each direction in order, making transactions with Suricata's inspection buffers
// (include/warpath/nids/app_layer.hpp has what each buffer holds and the bounds).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "warpath/nids/app_layer.hpp"

struct htp_cfg_t;
struct htp_connp_t;
struct htp_tx_t;

namespace warpath::nids::detail {

/// Whether a direction's first bytes are HTTP: direction 0 a request method and a space,
/// direction 1 "HTTP/". kMore while the bytes are a prefix of one.
enum class Probe : uint8_t { kMore, kYes, kNo };  // kMore first: a zeroed answer waits
Probe probe_http(uint8_t dir, const uint8_t* data, size_t len) noexcept;

/// libhtp's configuration, shared by the flows of one inspector (personality IDS, Suricata's
/// decoding defaults, decompression with its bomb limit, the callbacks).
class HttpConfig {
 public:
  explicit HttpConfig(const AppConfig& cfg);
  ~HttpConfig();
  HttpConfig(const HttpConfig&) = delete;
  HttpConfig& operator=(const HttpConfig&) = delete;
  htp_cfg_t* get() const noexcept { return cfg_; }
  const AppConfig& limits() const noexcept { return limits_; }

 private:
  htp_cfg_t* cfg_ = nullptr;
  AppConfig limits_;
};

class HttpFlow {
 public:
  HttpFlow(const HttpConfig& cfg, AppCounters& counters);
  ~HttpFlow();
  HttpFlow(const HttpFlow&) = delete;
  HttpFlow& operator=(const HttpFlow&) = delete;

  /// Bytes of direction `dir` (0: client to server) in stream order; the transactions whose
  /// request or response completed are appended to `ready`.
  void feed(uint8_t dir, const uint8_t* data, size_t len, uint64_t ts_ns, std::vector<AppTx>& ready);
  /// A gap: the parser cannot follow the stream past lost bytes and stops.
  void gap();
  /// The flow ended: what its open transactions hold is appended (request, response phases).
  void close(uint64_t ts_ns, std::vector<AppTx>& ready);
  bool stopped() const noexcept { return stopped_; }
  /// Bytes it holds: bodies and raw headers of open transactions, input not yet taken.
  size_t held() const noexcept;

  struct Tx;  // a transaction's state (http_flow.cpp)

 private:
  friend struct HttpCallbacks;
  void run(uint64_t ts_ns);
  void finish_request(Tx& t, ::htp_tx_t* tx);
  void finish_response(Tx& t, ::htp_tx_t* tx);

  const HttpConfig& cfg_;
  AppCounters& counters_;
  htp_connp_t* connp_ = nullptr;
  std::string pending_[2];  // bytes libhtp did not take yet (it waits on the other direction)
  std::vector<std::unique_ptr<Tx>> txs_;  // open transactions
  std::vector<AppTx>* ready_ = nullptr;   // feed()'s output while libhtp calls back
  uint64_t next_id_ = 0;
  bool stopped_ = false;
  bool over_    = false;  // past max_txs: the parser stops when libhtp returns
};

}  // namespace warpath::nids::detail
