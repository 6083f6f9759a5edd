// src/io/text/line_cursor.cpp: line iteration over in-memory text and parse error messages.
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
