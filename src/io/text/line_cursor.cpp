// src/io/text/line_cursor.cpp: line iteration over in-memory text, the field helpers the text
// parsers share, and parse error messages.
#include <charconv>
#include <string>

#include "warpath/io/text_file.hpp"

namespace warpath::io {

bool LineCursor::next(std::string_view& line) {
  if (pos_ >= text_.size()) return false;
  size_t end   = text_.find('\n', pos_);
  size_t after = end;
  if (end == std::string_view::npos) {
    // The last line has no newline; it still counts as a line.
    end   = text_.size();
    after = end;
  } else {
    after = end + 1;
  }
  line = text_.substr(pos_, end - pos_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  pos_ = after;
  ++line_no_;
  return true;
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool parse_number(std::string_view t, uint64_t max, uint64_t& out) noexcept {
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    t.remove_prefix(2);
    base = 16;
  }
  if (t.empty()) return false;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out, base);
  return ec == std::errc() && p == t.data() + t.size() && out <= max;
}

Status parse_error(std::string_view name, uint64_t line, std::string_view reason) {
  std::string message;
  message.reserve(name.size() + reason.size() + 24);
  message.append(name);
  message += ':';
  message += std::to_string(line);
  message += ": ";
  message.append(reason);
  return Status(Errc::kParseError, std::move(message));
}

}  // namespace warpath::io
