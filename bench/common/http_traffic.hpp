// bench/common/http_traffic.hpp: generated HTTP-like TCP traffic for the NIDS benchmarks
// (warpath-nids-bench, warpath-gpu-bench's inspector rows): connections from clients in
// 198.18.0.0/15 ($EXTERNAL_NET) to servers in 192.168.0.0/16 ($HOME_NET) port 80, with
// handshakes, a text request and its ACK, response segments each ACKed, and FINs. Client ports
// are ephemeral ones, from 32768 as Linux's default range (they were 1024 + n until
// 2026-11-25: rules name many ports there, so detection's port groups were broader than on a
// real link's traffic).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/tcp_frames.hpp"
#include "gen/packet_builder.hpp"

namespace warpath::bench {

// HTTP-like text: request lines, headers, HTML and JSON words.
inline std::string http_like_text(gen::detail::Rng& rng, size_t n) {
  static const char* words[] = {"GET ",
                                "POST ",
                                "/index.php?id=",
                                "HTTP/1.1\r\n",
                                "Host: www.example.com\r\n",
                                "User-Agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64)\r\n",
                                "Accept: text/html\r\n",
                                "Cookie: session=",
                                "Content-Type: application/json\r\n",
                                "<html>",
                                "<div class=\"",
                                "</div>",
                                "<script src=\"/js/app.js\"></script>",
                                "{\"user\":",
                                "\"name\":\"",
                                "true,",
                                "null}",
                                "the ",
                                "quick ",
                                "brown ",
                                "fox ",
                                "data ",
                                "value ",
                                "login ",
                                "search ",
                                "item ",
                                "0123456789",
                                "abcdef",
                                "\r\n\r\n",
                                "function(a,b){return a+b;}",
                                "SELECT ",
                                "password ",
                                "admin ",
                                "update ",
                                "download ",
                                "file.exe ",
                                "image.png ",
                                "style.css "};
  std::string s;
  s.reserve(n + 64);
  while (s.size() < n) s += words[rng.next32() % (sizeof words / sizeof *words)];
  s.resize(n);
  return s;
}

// One Ethernet + IPv4 + TCP frame carrying `payload` (text), a microsecond after the last.
inline void text_frame(Frames& out, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
                       uint32_t seq, uint32_t ack, uint8_t flags, const std::string& payload,
                       uint64_t& t) {
  add_tcp_frame(out, src, dst, sport, dport, seq, ack, flags, uint32_t(payload.size()),
                reinterpret_cast<const uint8_t*>(payload.data()), t += 1000);
}

/// `flows` connections, `concurrent` at a time, each a request and `response_segments`
/// segments of `segment` bytes back. `http1`: real HTTP/1.1 messages (a request line and
/// headers; a status line, headers and a Content-Length body over the segments), which the
/// NIDS's app layer parses; else HTTP-like text.
struct TrafficShape {
  uint32_t flows, concurrent, response_segments, segment;
  bool http1 = false;
};

// A real HTTP/1.1 request (GET or POST with a small form body), its words drawn from rng.
inline std::string http1_request(gen::detail::Rng& rng) {
  static const char* paths[] = {"/index.php", "/login", "/api/v1/items", "/search", "/static/app.js",
                                "/images/logo.png", "/admin/config", "/download/file.exe"};
  const bool post = rng.next32() % 4 == 0;
  std::string req = post ? "POST " : "GET ";
  req += paths[rng.next32() % 8];
  req += "?id=" + std::to_string(rng.next32() % 100000) + "&q=" + http_like_text(rng, 8 + rng.next32() % 24);
  for (char& c : req)
    if (c == ' ' && &c != &req[post ? 4 : 3]) c = '+';
  req += " HTTP/1.1\r\nHost: www.example" + std::to_string(rng.next32() % 50) + ".com\r\n";
  req += "User-Agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36\r\n";
  req += "Accept: text/html,application/json\r\nAccept-Language: en-US\r\n";
  req += "Cookie: session=" + std::to_string(rng.next32()) + "\r\n";
  std::string body;
  if (post) {
    body = "user=" + std::to_string(rng.next32() % 1000) + "&data=";
    for (uint32_t i = 0, n = 40 + rng.next32() % 200; i < n; ++i) body += char('a' + rng.next32() % 26);
    req += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  return req + "\r\n" + body;
}

inline Frames build_http_traffic(const TrafficShape& s, uint64_t seed) {
  gen::detail::Rng rng(seed, 11);
  Frames out;
  uint64_t t = 1'700'000'000'000'000'000ull;
  const std::string none;
  for (uint32_t first = 0; first < s.flows; first += s.concurrent) {
    const uint32_t n = std::min(s.concurrent, s.flows - first);
    struct Conn {
      uint32_t c, srv;
      uint16_t cp;
      uint32_t cseq, sseq;
    };
    std::vector<Conn> conns(n);
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t id = first + k;
      conns[k] = {0xc6120000u + id, 0xc0a80000u + (id & 0xff), uint16_t(32768 + id % 28232),
                  rng.next32(), rng.next32()};
    }
    for (Conn& c : conns) text_frame(out, c.c, c.srv, c.cp, 80, c.cseq++, 0, 0x02, none, t);
    for (Conn& c : conns) text_frame(out, c.srv, c.c, 80, c.cp, c.sseq++, c.cseq, 0x12, none, t);
    for (Conn& c : conns) text_frame(out, c.c, c.srv, c.cp, 80, c.cseq, c.sseq, 0x10, none, t);
    for (Conn& c : conns) {  // the request, and its ACK
      const std::string req = s.http1 ? http1_request(rng) : http_like_text(rng, 300 + rng.next32() % 400);
      text_frame(out, c.c, c.srv, c.cp, 80, c.cseq, c.sseq, 0x18, req, t);
      c.cseq += uint32_t(req.size());
      text_frame(out, c.srv, c.c, 80, c.cp, c.sseq, c.cseq, 0x10, none, t);
    }
    // http1: the status line and headers (kHead bytes, padded by an X-Pad header) start the
    // first segment; the body fills the rest of the segments (segment >= kHead).
    constexpr size_t kHead = 160;
    const uint32_t total = s.response_segments * s.segment;
    std::string status = "HTTP/1.1 200 OK\r\nServer: nginx/1.24.0\r\nContent-Type: text/html; charset=utf-8\r\n"
                         "Content-Length: " + std::to_string(total > kHead ? total - kHead : 0) + "\r\nX-Pad: ";
    status += std::string(kHead - std::min(kHead, status.size() + 4), 'x') + "\r\n\r\n";
    for (uint32_t seg = 0; seg < s.response_segments; ++seg)
      for (Conn& c : conns) {
        std::string body = http_like_text(rng, s.segment);
        if (s.http1 && seg == 0) body.replace(0, std::min(body.size(), status.size()), status, 0, body.size());
        text_frame(out, c.srv, c.c, 80, c.cp, c.sseq, c.cseq, 0x18, body, t);
        c.sseq += uint32_t(body.size());
        text_frame(out, c.c, c.srv, c.cp, 80, c.cseq, c.sseq, 0x10, none, t);
      }
    for (Conn& c : conns) {
      text_frame(out, c.c, c.srv, c.cp, 80, c.cseq, c.sseq, 0x11, none, t);
      text_frame(out, c.srv, c.c, 80, c.cp, c.sseq, c.cseq + 1, 0x11, none, t);
      text_frame(out, c.c, c.srv, c.cp, 80, c.cseq + 1, c.sseq + 1, 0x10, none, t);
    }
  }
  return out;
}

}  // namespace warpath::bench
