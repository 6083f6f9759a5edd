// src/nids/app/tls_flow.hpp: one flow's TLS handshake, parsed from the reassembled streams: a
// bounded record and handshake-message parser (records of at most 2^14 + 2048 bytes, handshake
// messages of at most 64 KiB), the ClientHello (SNI, JA3) as the request phase, the server's
// hello and certificates (OpenSSL decodes them) as the response phase
// (include/warpath/nids/app_layer.hpp lists the buffers).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "warpath/nids/app_layer.hpp"

namespace warpath::nids::detail {

/// Whether a direction's first bytes are a TLS handshake record (16 03 00..04), kMore while
/// fewer than three.
bool probe_tls(const uint8_t* data, size_t len, bool& more) noexcept;

/// JA3's and JA3S's fields of hello messages (exposed for the tests): the decimal values joined
/// as JA3 specifies, GREASE values left out.
struct TlsHello {
  std::string sni, ja3, version;
  /// The version as tls.version compares it (Suricata's): the hello's, or from
  /// supported_versions the server's choice and a client's TLS 1.3 (or a 1.3 draft, 0x7fNN).
  uint16_t number = 0;
};
/// A ClientHello (its body, after the 4-byte message header) into sni and ja3; false when
/// malformed.
bool parse_client_hello(const uint8_t* p, size_t n, TlsHello& out);
bool parse_server_hello(const uint8_t* p, size_t n, TlsHello& out);
/// MD5 as lower-case hex (JA3's hash), through OpenSSL.
std::string md5_hex(const std::string& s);

class TlsFlow {
 public:
  explicit TlsFlow(AppCounters& counters) : counters_(counters) {}
  void feed(uint8_t dir, const uint8_t* data, size_t len, std::vector<AppTx>& ready);
  /// The flow ended: a server side that began is inspected as it is.
  void close(std::vector<AppTx>& ready);
  /// Whether direction `dir` has turned to encrypted records (after its ChangeCipherSpec or
  /// first application data).
  bool encrypted(uint8_t dir) const noexcept { return side_[dir & 1].encrypted; }
  /// Direction `dir`'s hello's version (TlsHello::number), 0 before it.
  uint16_t version(uint8_t dir) const noexcept { return version_[dir & 1]; }
  /// Bytes it holds: records and handshake messages not yet complete, the server's certificates.
  size_t held() const noexcept {
    size_t n = side_[0].records.size() + side_[0].handshake.size() + side_[1].records.size() +
               side_[1].handshake.size();
    for (const auto& [b, v] : server_.more) n += v.size();
    return n + server_.buf[size_t(AppBuffer::kTlsCerts)].size();
  }

 private:
  struct Side {
    std::string records;    // bytes of records not yet complete
    std::string handshake;  // handshake messages not yet complete
    bool encrypted = false, stopped = false;
  };
  void record(uint8_t dir, uint8_t type, const uint8_t* p, size_t n, std::vector<AppTx>& ready);
  void message(uint8_t dir, uint8_t type, const uint8_t* p, size_t n, std::vector<AppTx>& ready);
  void certificates(const uint8_t* p, size_t n);
  void server_done(std::vector<AppTx>& ready);

  AppCounters& counters_;
  Side side_[2];
  AppTx client_, server_;
  bool client_sent_ = false, server_began_ = false, server_sent_ = false;
  uint16_t version_[2] = {};
};

}  // namespace warpath::nids::detail
