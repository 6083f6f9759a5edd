// bench/common/app_traffic.hpp: generated application-layer traffic for warpath-nids-bench's
// "app" workload: a third each of HTTP/1.1 connections (http_traffic.hpp's), TLS 1.2
// connections (a ClientHello with an SNI, the server's hello, a certificate and its
// ServerHelloDone, ChangeCipherSpec, then encrypted-looking application data records) and DNS
// over UDP (an A query and its answer). The certificate is a self-signed P-256 one made for
// this benchmark with the openssl CLI (CN=www.bench.example), so the NIDS decodes a real one.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/http_traffic.hpp"
#include "common/tcp_frames.hpp"

namespace warpath::bench {

inline const char* kBenchCertDerHex =
    "308201dd30820183a00302010202145ebb94cf7c9a797c6bc1717f6d1fe5e61443f798300a06082a8648ce3d0403023044310b300906035504061302555331193017060355040a0c104578616d706c652042656e6368204341311a301806035504030c117777772e62656e63682e6578616d706c65301e170d3236313132373137323730335a170d3336313132343137323730335a3044310b300906035504061302555331193017060355040a0c104578616d706c652042656e6368204341311a301806035504030c117777772e62656e63682e6578616d706c653059301306072a8648ce3d020106082a8648ce3d03010703420004f1ac0a0ad8cc6867135a9d16584dd1921d7571c1dd3fe37f48465131a2044fdd7cd59637d4b1cb91d7bcecd89e4aa32a7dc6c5b39303808ec193d77253acbf04a3533051301d0603551d0e0416041431ceb04a7697a82d773e47cb657fca2c9ce00e57301f0603551d2304183016801431ceb04a7697a82d773e47cb657fca2c9ce00e57300f0603551d130101ff040530030101ff300a06082a8648ce3d0403020348003045022100dd0ce7e80ce59c6c3cd3eae6721d410f6b7fde690a34d7f677812df1b7205baf022025419cedec429ffadf2a9828f1e1a801bbedf2c7c7f43628e6bc0b30514ad41b";

inline std::string from_hex(const char* h) {
  std::string out;
  for (; h[0] && h[1]; h += 2) out.push_back(char(std::stoi(std::string(h, 2), nullptr, 16)));
  return out;
}

inline void put16(std::string& s, size_t v) { s.push_back(char(v >> 8)), s.push_back(char(v & 0xff)); }
inline void put24(std::string& s, size_t v) { s.push_back(char(v >> 16)), put16(s, v & 0xffff); }

// A handshake message (type, 3-byte length, body) in one TLS 1.2 record.
inline std::string tls_record(uint8_t type, const std::string& body) {
  std::string r(1, char(type));
  r += std::string("\x03\x03", 2);
  put16(r, body.size());
  return r + body;
}
inline std::string handshake(uint8_t type, const std::string& body) {
  std::string m(1, char(type));
  put24(m, body.size());
  return m + body;
}

inline std::string client_hello(gen::detail::Rng& rng, const std::string& sni) {
  std::string b("\x03\x03", 2);
  for (int i = 0; i < 32; ++i) b.push_back(char(rng.next32()));
  b.push_back(32);
  for (int i = 0; i < 32; ++i) b.push_back(char(rng.next32()));
  const uint16_t suites[] = {0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8,
                             0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035};
  put16(b, sizeof suites);
  for (uint16_t s : suites) put16(b, s);
  b += std::string("\x01\x00", 2);
  std::string ext;
  put16(ext, 0);  // server_name
  put16(ext, sni.size() + 5);
  put16(ext, sni.size() + 3);
  ext.push_back(0);
  put16(ext, sni.size());
  ext += sni;
  ext += std::string("\x00\x0a\x00\x08\x00\x06\x00\x1d\x00\x17\x00\x18", 12);  // groups
  ext += std::string("\x00\x0b\x00\x02\x01\x00", 6);                              // point formats
  ext += std::string("\x00\x0d\x00\x08\x00\x06\x04\x03\x08\x04\x04\x01", 12);  // signature algorithms
  ext += std::string("\x00\x17\x00\x00\xff\x01\x00\x01\x00", 9);                  // ems, renegotiation
  put16(b, ext.size());
  return tls_record(22, handshake(1, b + ext));
}

inline std::string server_flight(gen::detail::Rng& rng, const std::string& der) {
  std::string hello("\x03\x03", 2);
  for (int i = 0; i < 32; ++i) hello.push_back(char(rng.next32()));
  hello.push_back(0);
  put16(hello, 0xc02f);
  hello.push_back(0);
  hello += std::string("\x00\x0b\xff\x01\x00\x01\x00\x00\x0b\x00\x02\x01\x00", 13);
  std::string certs;
  put24(certs, der.size());
  certs += der;
  std::string cert_body;
  put24(cert_body, certs.size());
  cert_body += certs;
  return tls_record(22, handshake(2, hello) + handshake(11, cert_body) + handshake(14, ""));
}

// A DNS A query for `name` (answer: one A record), as UDP payloads.
inline std::string dns_message(uint16_t id, const std::string& name, bool answer) {
  std::string m;
  put16(m, id);
  m += answer ? std::string("\x81\x80", 2) : std::string("\x01\x00", 2);
  m += answer ? std::string("\x00\x01\x00\x01\x00\x00\x00\x00", 8) : std::string("\x00\x01\x00\x00\x00\x00\x00\x00", 8);
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    m.push_back(char(dot - start));
    m += name.substr(start, dot - start);
    start = dot + 1;
  }
  m.push_back(0);
  m += std::string("\x00\x01\x00\x01", 4);
  if (answer) m += std::string("\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x5d\xb8\xd8\x22", 16);
  return m;
}

inline void udp_frame(Frames& out, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
                      const std::string& payload, uint64_t& t) {
  gen::detail::FrameSpec spec;
  spec.src4  = src;
  spec.dst4  = dst;
  spec.sport = sport;
  spec.dport = dport;
  spec.proto = gen::detail::kProtoUdp;
  gen::detail::PacketFields fields;
  uint8_t f[14 + 20 + 8 + 1500];
  const uint32_t head   = gen::detail::frame_header_bytes(spec);
  const uint32_t caplen = head + uint32_t(payload.size());
  gen::detail::build_frame(spec, fields, caplen, nullptr, f);
  std::memcpy(f + head, payload.data(), payload.size());
  out.add(f, caplen, t += 1000);
  out.payload += payload.size();
}

/// `flows` connections: HTTP/1.1 (as build_http_traffic with http1), TLS 1.2 with
/// `records` application data records of `segment` bytes each way after the handshake, and
/// DNS query/answer pairs, a third each.
inline Frames build_app_traffic(uint32_t flows, uint32_t records, uint32_t segment, uint64_t seed) {
  TrafficShape http{flows / 3, 200, records, segment};
  http.http1 = true;
  Frames out = build_http_traffic(http, seed);
  gen::detail::Rng rng(seed, 13);
  uint64_t t = out.ts.empty() ? 0 : out.ts.back();
  const std::string der = from_hex(kBenchCertDerHex);
  static const char* domains[] = {"www.example.com", "api.service.example", "cdn.static.example.net",
                                  "login.example.org", "mail.example.com", "telemetry.example.io"};
  for (uint32_t i = 0; i < flows / 3; ++i) {  // TLS
    const uint32_t c = 0xc6140000u + i, srv = 0xc0a90000u + (i & 0xff);
    const uint16_t cp = uint16_t(32768 + i % 28232);
    uint32_t cseq = rng.next32(), sseq = rng.next32();
    const std::string none;
    text_frame(out, c, srv, cp, 443, cseq++, 0, 0x02, none, t);
    text_frame(out, srv, c, 443, cp, sseq++, cseq, 0x12, none, t);
    text_frame(out, c, srv, cp, 443, cseq, sseq, 0x10, none, t);
    auto send = [&](bool from_client, const std::string& bytes) {
      for (size_t at = 0; at < bytes.size(); at += 1448) {
        const std::string part = bytes.substr(at, 1448);
        if (from_client) {
          text_frame(out, c, srv, cp, 443, cseq, sseq, 0x18, part, t);
          cseq += uint32_t(part.size());
          text_frame(out, srv, c, 443, cp, sseq, cseq, 0x10, none, t);
        } else {
          text_frame(out, srv, c, 443, cp, sseq, cseq, 0x18, part, t);
          sseq += uint32_t(part.size());
          text_frame(out, c, srv, cp, 443, cseq, sseq, 0x10, none, t);
        }
      }
    };
    send(true, client_hello(rng, std::to_string(i % 97) + "." + domains[i % 6]));
    send(false, server_flight(rng, der));
    send(true, std::string("\x14\x03\x03\x00\x01\x01", 6) + tls_record(22, std::string(40, 'f')));
    send(false, std::string("\x14\x03\x03\x00\x01\x01", 6) + tls_record(22, std::string(40, 'f')));
    for (uint32_t r = 0; r < records; ++r) {
      std::string data;
      for (uint32_t k = 0; k + 5 < segment; ++k) data.push_back(char(rng.next32()));
      send(r % 4 == 0, tls_record(23, data));
    }
    text_frame(out, c, srv, cp, 443, cseq, sseq, 0x11, none, t);
    text_frame(out, srv, c, 443, cp, sseq, cseq + 1, 0x11, none, t);
    text_frame(out, c, srv, cp, 443, cseq + 1, sseq + 1, 0x10, none, t);
  }
  for (uint32_t i = 0; i < flows / 3; ++i) {  // DNS over UDP
    const uint32_t c = 0xc6160000u + i, srv = 0xc0aa0001u;
    const uint16_t cp = uint16_t(32768 + i % 28232), id = uint16_t(rng.next32());
    const std::string name = std::to_string(i % 1000) + "." + domains[i % 6];
    udp_frame(out, c, srv, cp, 53, dns_message(id, name, false), t);
    udp_frame(out, srv, c, 53, cp, dns_message(id, name, true), t);
  }
  return out;
}

}  // namespace warpath::bench
