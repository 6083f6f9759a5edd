// include/warpath/io/text_file.hpp
//
// Reading text inputs (rule, trace, route and address files).
//
// Files ending in .gz are decompressed with zlib and files ending in .xz with liblzma, so the
// compressed data sets in ../shared/data are read directly, never unpacked into the repo.
// LineCursor walks the text line by line and keeps the 1-based line number that every
// parse error names ("acl1:17: ...").
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "warpath/core/status.hpp"

namespace warpath::io {

/// The most text read_text_file() returns, after decompression: a rule, route or pattern file
/// is at most tens of MB (the full IPv4 table is 20 MB), while a decompression bomb (a 1 MB .xz
/// of a TB of zeros) must not take the machine's memory.
inline constexpr uint64_t kMaxTextBytes = uint64_t(1) << 30;

/// Whole file as text; kIoError naming the path on failure (missing, unreadable, corrupt .gz),
/// kCapacity past kMaxTextBytes.
Result<std::string> read_text_file(const std::string& path);

/// Iterates the lines of a text; CR before LF is dropped.
class LineCursor {
 public:
  explicit LineCursor(std::string_view text) : text_(text) {}
  /// Next line (without its newline) into `line`; false at the end.
  bool next(std::string_view& line);
  /// 1-based number of the line last returned.
  uint64_t line_number() const noexcept { return line_no_; }

 private:
  std::string_view text_;
  size_t pos_       = 0;
  uint64_t line_no_ = 0;
};

/// Splits one line into TAB- or space-separated fields on demand (rule, trace, route files).
class FieldScanner {
 public:
  explicit FieldScanner(std::string_view line) : text_(line) {}
  static constexpr bool is_space(char c) { return c == ' ' || c == '\t'; }
  /// The next field, or an empty view at the end of the line.
  std::string_view next() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
    const size_t begin = pos_;
    while (pos_ < text_.size() && !is_space(text_[pos_])) ++pos_;
    return text_.substr(begin, pos_ - begin);
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

/// `s` without leading and trailing spaces and tabs.
std::string_view trim(std::string_view s) noexcept;
/// A whole field as an unsigned number, decimal or 0x-prefixed hexadecimal, at most `max`.
bool parse_number(std::string_view t, uint64_t max, uint64_t& out) noexcept;

/// "name:line: reason" as a kParseError Status.
Status parse_error(std::string_view name, uint64_t line, std::string_view reason);

/// TOML files (run configurations, SA files) are ASCII: toml++ as Debian ships it (3.x before
/// upstream PR #305) reaches __builtin_unreachable on some non-ASCII code points (upstream
/// issues #190 and #295; found by fuzz/readers_fuzz.cpp in strings, comments and its error
/// paths alike, in both readers): undefined behaviour on a user's file. A string spells other
/// characters as \uXXXX escapes, which toml++ decodes without that check.
/// kParseError "name:line: non-ASCII character: ..." for the first raw one.
Status check_toml_ascii(std::string_view text, std::string_view name);

}  // namespace warpath::io
