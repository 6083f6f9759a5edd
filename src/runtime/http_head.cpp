// The head of an HTTP/1.x request (http_head.hpp).
#include "runtime/http_head.hpp"

#include <algorithm>
#include <cctype>

namespace warpath::runtime {
namespace {

bool token_char(unsigned char c) {
  return std::isalnum(c) ||
         std::string_view("!#$%&'*+-.^_`|~").find(char(c)) != std::string_view::npos;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Whether the comma-separated list `v` holds `word` (case-insensitive).
bool has_word(std::string_view v, std::string_view word) {
  for (;;) {
    const size_t comma = v.find(',');
    if (lower(trim(v.substr(0, comma))) == word) return true;
    if (comma == std::string_view::npos) return false;
    v.remove_prefix(comma + 1);
  }
}

}  // namespace

HeadParse parse_http_head(std::string_view in, HttpHead& head, size_t& used, std::string& why) {
  // Leading empty lines before a request line are ignored (RFC 9112 2.2), a few of them.
  size_t start = 0;
  while (start < in.size() && start < 8 && (in[start] == '\r' || in[start] == '\n')) ++start;
  const size_t crlf = in.find("\n\r\n", start), lf = in.find("\n\n", start);
  const size_t end = std::min(crlf == std::string_view::npos ? crlf : crlf + 3,
                              lf == std::string_view::npos ? lf : lf + 2);
  if (end == std::string_view::npos || end > kMaxHttpHead) {
    if (in.size() - start <= kMaxHttpHead && end == std::string_view::npos)
      return HeadParse::kIncomplete;
    why = "request head longer than " + std::to_string(kMaxHttpHead) + " bytes";
    return HeadParse::kBad;
  }
  std::string_view text = in.substr(start, end - start);
  head                  = HttpHead{};
  bool first            = true;
  bool has_length       = false;
  while (!text.empty()) {
    const size_t nl       = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find('\r') != std::string_view::npos || line.find('\0') != std::string_view::npos) {
      why = "a bare CR or NUL in the head";
      return HeadParse::kBad;
    }
    if (line.empty()) break;  // the blank line ending the head
    if (first) {
      first           = false;
      const size_t s1 = line.find(' ');
      const size_t s2 = s1 == std::string_view::npos ? s1 : line.find(' ', s1 + 1);
      if (s2 == std::string_view::npos || line.find(' ', s2 + 1) != std::string_view::npos) {
        why = "the request line is not METHOD TARGET VERSION";
        return HeadParse::kBad;
      }
      const std::string_view method = line.substr(0, s1), target = line.substr(s1 + 1, s2 - s1 - 1),
                             version = line.substr(s2 + 1);
      if (method.empty() ||
          !std::all_of(method.begin(), method.end(), [](char c) { return token_char(c); })) {
        why = "a method that is not a token";
        return HeadParse::kBad;
      }
      if (target.empty() || std::any_of(target.begin(), target.end(), [](char c) {
            return (unsigned char)c <= 0x20 || c == 0x7f;
          })) {
        why = "a bad request target";
        return HeadParse::kBad;
      }
      if (version.size() != 8 || version.substr(0, 7) != "HTTP/1." ||
          !std::isdigit((unsigned char)version[7])) {
        why = "not HTTP/1.x";
        return HeadParse::kBad;
      }
      head.method     = std::string(method);
      head.target     = std::string(target);
      head.minor      = version[7] - '0';
      head.keep_alive = head.minor >= 1;
      continue;
    }
    if (line.front() == ' ' || line.front() == '\t') {
      why = "obsolete line folding";
      return HeadParse::kBad;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0 ||
        !std::all_of(line.begin(), line.begin() + long(colon),
                     [](char c) { return token_char(c); })) {
      why = "a header field without a name";
      return HeadParse::kBad;
    }
    const std::string name   = lower(line.substr(0, colon));
    const std::string_view v = trim(line.substr(colon + 1));
    if (name == "connection") {
      if (has_word(v, "close"))
        head.keep_alive = false;
      else if (has_word(v, "keep-alive"))
        head.keep_alive = true;
    } else if (name == "content-length") {
      if (has_length || v.empty() || v.size() > 18 ||
          !std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit((unsigned char)c); })) {
        why = "a bad or repeated Content-Length";
        return HeadParse::kBad;
      }
      has_length    = true;
      head.has_body = head.has_body || std::stoull(std::string(v)) > 0;
    } else if (name == "transfer-encoding") {
      head.has_body = true;
    }
  }
  if (first) {
    why = "an empty request";
    return HeadParse::kBad;
  }
  used = end;
  return HeadParse::kComplete;
}

}  // namespace warpath::runtime
