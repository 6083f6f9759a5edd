// src/runtime/http_head.hpp: the head of an HTTP/1.x request (request line and header fields,
// RFC 9112), as the metrics server reads it: bounded, and strict where a lax reading could
// be abused (a body it would not skip, bare CR, obsolete line folding). Internal to runtime; a
// fuzz target (fuzz/readers_fuzz.cpp) feeds it arbitrary bytes.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace warpath::runtime {

inline constexpr size_t kMaxHttpHead = 8192;  ///< bytes of request line and header fields

struct HttpHead {
  std::string method, target;
  int minor       = 1;      ///< HTTP/1.minor
  bool keep_alive = true;   ///< 1.1 unless "Connection: close"; 1.0 only with "keep-alive"
  bool has_body   = false;  ///< Content-Length above 0, or Transfer-Encoding
};

enum class HeadParse { kIncomplete, kComplete, kBad };

/// Parses the head at the start of `in`. kComplete sets `head` and `used` (the bytes of the
/// head, its blank line included); kBad sets `why` (a 400: malformed, or longer than
/// kMaxHttpHead); kIncomplete: more bytes are needed.
HeadParse parse_http_head(std::string_view in, HttpHead& head, size_t& used, std::string& why);

}  // namespace warpath::runtime
