// src/nids/app/dns_parse.hpp: a DNS message (over UDP, or one of TCP's length-prefixed
// messages) parsed with ldns into a transaction: each question's name an instance of dns.query
// (labels joined by '.', no trailing dot, bytes as sent), the header and records for EVE.
#pragma once
#include <cstddef>
#include <cstdint>

#include "warpath/nids/app_layer.hpp"

namespace warpath::nids::detail {

/// Parses one message into `tx` (layer kDns; a query is the request phase, a response the
/// response phase). False when ldns does not take it or it has no question.
bool parse_dns(const uint8_t* data, size_t len, AppTx& tx);

/// Whether a UDP datagram is DNS, by content: a whole message ldns takes, with one to 16
/// questions and record counts that fit its length (Suricata's probe checks the same).
bool probe_dns(const uint8_t* data, size_t len);

/// One direction of DNS over TCP: two-byte lengths, then messages (at most 64 KiB each),
/// reassembled across deliveries; `ready` gets a transaction per message.
class DnsTcpStream {
 public:
  /// False when a message does not parse (the direction stops, counted by the caller).
  bool feed(const uint8_t* data, size_t len, std::vector<AppTx>& ready, uint64_t& next_id);
  size_t held() const noexcept { return held_.size(); }

 private:
  std::string held_;
  bool stopped_ = false;
};

}  // namespace warpath::nids::detail
