// Pattern files (include/warpath/pattern/pattern.hpp): Hyperscan's tools' `ID:/REGEX/FLAGS`,
// one regex per line, and the shared data's derived tables; the pattern line form back.
#include <charconv>
#include <string>

#include "warpath/io/text_file.hpp"
#include "warpath/pattern/pattern.hpp"

namespace warpath::pattern {
namespace {

bool parse_u32(std::string_view s, uint32_t& v) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
  return -1;
}

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> out;
  size_t p = 0;
  while (true) {
    const size_t t = line.find('\t', p);
    out.push_back(line.substr(p, t == std::string_view::npos ? std::string_view::npos : t - p));
    if (t == std::string_view::npos) return out;
    p = t + 1;
  }
}

// Flags after the closing slash. `snort`: the pcre option of a rule, whose Snort/Suricata
// buffer modifiers (R U P H C I B D M S Y K O G ...) say where to match, not what: dropped;
// A (anchored) becomes \A.
Status apply_flags(std::string_view flags, Pattern& p, bool snort) {
  bool anchored = false;
  for (char f : flags) {
    switch (f) {
      case 'i': p.flags |= kCaseless; break;
      case 's': p.flags |= kDotAll; break;
      case 'm': p.flags |= kMultiLine; break;
      case 'H':
        if (!snort) p.flags |= kSingleMatch;
        break;
      case 'A':
        if (snort) {
          anchored = true;
          break;
        }
        [[fallthrough]];
      case 'E':  // PCRE's DOLLAR_ENDONLY: $ only at the very end; not in the subset
      default:
        if (snort && f >= 'A' && f <= 'Z' && f != 'E') break;
        if (p.unsupported.empty())
          p.unsupported = std::string("the flag '") + f + "' (supported: i, s, m, H)";
    }
  }
  if (anchored) p.expression = "\\A(?:" + p.expression + ")";
  return Status::ok();
}

// "/REGEX/FLAGS" into p.
Status parse_slashed(std::string_view text, Pattern& p, bool snort) {
  const size_t close = text.rfind('/');
  if (text.size() < 2 || text[0] != '/' || close == 0)
    return Status(Errc::kParseError, "expected /REGEX/FLAGS");
  p.expression = std::string(text.substr(1, close - 1));
  return apply_flags(text.substr(close + 1), p, snort);
}

Result<std::string> unhex(std::string_view hex) {
  if (hex.size() % 2) return Status(Errc::kParseError, "odd number of hex digits");
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int a = hexval(hex[i]), b = hexval(hex[i + 1]);
    if (a < 0 || b < 0) return Status(Errc::kParseError, "not a hex digit");
    out.push_back(char(a * 16 + b));
  }
  return out;
}

enum class Format { kUnknown, kHyperscan, kPlain, kLiteralSid, kLiteral, kPcreSid, kL7 };

}  // namespace

Result<Pattern> parse_pattern_line(std::string_view line, std::string_view where) {
  Pattern p;
  p.where = std::string(where);
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || !parse_u32(line.substr(0, colon), p.id))
    return Status(Errc::kParseError, "expected ID:/REGEX/FLAGS with a decimal ID");
  WARPATH_TRY(parse_slashed(line.substr(colon + 1), p, false));
  return p;
}

std::string regex_of(const Pattern& p) {
  if (!p.literal) return p.expression;
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : p.expression) {
    if (unsigned((c | 0x20) - 'a') < 26u || unsigned(c - '0') < 10u) {
      out.push_back(char(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string to_pattern_line(const Pattern& p) {
  std::string out = std::to_string(p.id) + ":/" + regex_of(p);
  out += '/';
  if (p.flags & kCaseless) out += 'i';
  if (p.flags & kDotAll) out += 's';
  if (p.flags & kMultiLine) out += 'm';
  if (p.flags & kSingleMatch) out += 'H';
  return out;
}

Result<std::vector<Pattern>> parse_pattern_text(std::string_view text, std::string_view name) {
  std::vector<Pattern> out;
  io::LineCursor cursor(text);
  std::string_view line;
  Format format  = Format::kUnknown;
  uint32_t index = 0;
  while (cursor.next(line)) {
    const uint64_t no = cursor.line_number();
    auto error = [&](const Status& s) { return io::parse_error(name, no, s.message()); };
    if (line.rfind("# columns:", 0) == 0) {
      std::string_view cols = line.substr(10);
      while (!cols.empty() && cols.front() == ' ') cols.remove_prefix(1);
      if (cols == "sid\tenabled\tnocase\tlen\thex") format = Format::kLiteralSid;
      else if (cols == "nocase\tlen\thex") format = Format::kLiteral;
      else if (cols == "sid\tenabled\tpcre") format = Format::kPcreSid;
      else if (cols == "dir\tname\tattributes\tregex") format = Format::kL7;
      else return error(Status(Errc::kParseError, "unknown table columns '" + std::string(cols) + "'"));
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    const std::string where = std::string(name) + ":" + std::to_string(no);
    if (format == Format::kUnknown) {
      const size_t colon = line.find(':');
      uint32_t id        = 0;
      format = colon != std::string_view::npos && parse_u32(line.substr(0, colon), id) &&
                       line.substr(colon + 1, 1) == "/"
                   ? Format::kHyperscan
                   : Format::kPlain;
    }
    Pattern p;
    p.where = where;
    switch (format) {
      case Format::kHyperscan: {
        auto r = parse_pattern_line(line, where);
        if (!r.is_ok()) return error(r.status());
        p = std::move(*r);
        break;
      }
      case Format::kPlain:
        p.id         = index;
        p.expression = std::string(line);
        break;
      case Format::kLiteralSid:
      case Format::kLiteral: {
        const auto f = split_tabs(line);
        const bool sid = format == Format::kLiteralSid;
        if (f.size() != (sid ? 5u : 3u))
          return error(Status(Errc::kParseError, "expected " + std::to_string(sid ? 5 : 3) +
                                                     " tab-separated columns"));
        uint32_t enabled = 1, len = 0;
        if (sid && (!parse_u32(f[0], p.id) || !parse_u32(f[1], enabled)))
          return error(Status(Errc::kParseError, "bad sid or enabled column"));
        const auto& nocase = f[sid ? 2 : 0];
        if ((nocase != "0" && nocase != "1") || !parse_u32(f[sid ? 3 : 1], len))
          return error(Status(Errc::kParseError, "bad nocase or len column"));
        auto bytes = unhex(f[sid ? 4 : 2]);
        if (!bytes.is_ok()) return error(bytes.status());
        if (bytes->size() != len)
          return error(Status(Errc::kParseError, "len " + std::to_string(len) + " but " +
                                                     std::to_string(bytes->size()) + " bytes"));
        if (!enabled) continue;
        if (!sid) p.id = index;
        p.expression = std::move(*bytes);
        p.literal    = true;
        if (nocase == "1") p.flags |= kCaseless;
        break;
      }
      case Format::kPcreSid: {
        const auto f     = split_tabs(line);
        uint32_t enabled = 0;
        if (f.size() != 3 || !parse_u32(f[0], p.id) || !parse_u32(f[1], enabled))
          return error(Status(Errc::kParseError, "expected sid, enabled and /pcre/ columns"));
        if (!enabled) continue;
        if (Status s = parse_slashed(f[2], p, true); !s.is_ok()) return error(s);
        break;
      }
      case Format::kL7: {
        const auto f = split_tabs(line);
        if (f.size() != 4) return error(Status(Errc::kParseError, "expected 4 tab-separated columns"));
        p.id         = index;
        p.expression = std::string(f[3]);
        p.flags      = kCaseless;  // l7-filter matches case-insensitively
        p.where      = where + " (" + std::string(f[1]) + ")";
        break;
      }
      case Format::kUnknown:
        break;
    }
    ++index;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace warpath::pattern
