// One rule line into the rule model (nids/rule.hpp has the subset).
#include <cctype>
#include <cstdint>
#include <cstdlib>

#include "warpath/io/text_file.hpp"
#include "warpath/nids/rule.hpp"

namespace warpath::nids {
namespace {

Status syntax(std::string msg) { return Status(Errc::kParseError, std::move(msg)); }
Status unsupported(std::string msg) { return Status(Errc::kNotSupported, std::move(msg)); }

// Options split at ';' not escaped by a backslash.
std::vector<std::string_view> split_options(std::string_view body) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '\\') {
      ++i;
      continue;
    }
    if (body[i] == ';') {
      std::string_view o = io::trim(body.substr(start, i - start));
      if (!o.empty()) out.push_back(o);
      start = i + 1;
    }
  }
  std::string_view tail = io::trim(body.substr(start));
  if (!tail.empty()) out.push_back(tail);
  return out;
}

Result<int64_t> parse_int(std::string_view t, std::string_view what, int64_t lo, int64_t hi) {
  t = io::trim(t);
  bool neg = !t.empty() && t[0] == '-';
  uint64_t v = 0;
  if (!io::parse_number(neg ? t.substr(1) : t, uint64_t(1) << 40, v))
    return syntax(std::string(what) + ": not a number: '" + std::string(t) + "'");
  const int64_t n = neg ? -int64_t(v) : int64_t(v);
  if (n < lo || n > hi)
    return syntax(std::string(what) + ": " + std::to_string(n) + " is out of range [" +
                  std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return n;
}

// The bytes of a quoted content string: |hex| runs and \" \; \\ \: escapes.
Result<std::string> content_bytes(std::string_view v) {
  if (v.size() < 2 || v.front() != '"' || v.back() != '"') return syntax("content must be quoted");
  v = v.substr(1, v.size() - 2);
  std::string out;
  bool hex = false;
  int nibble = -1;
  for (size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    if (c == '|') {
      if (hex && nibble >= 0) return syntax("content: odd number of hex digits");
      hex = !hex;
      continue;
    }
    if (hex) {
      if (c == ' ') {
        if (nibble >= 0) return syntax("content: odd number of hex digits");
        continue;
      }
      if (!std::isxdigit(static_cast<unsigned char>(c)))
        return syntax(std::string("content: '") + c + "' in a hex run");
      const int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (std::tolower(c) - 'a' + 10);
      if (nibble < 0) {
        nibble = d;
      } else {
        out.push_back(char(nibble << 4 | d));
        nibble = -1;
      }
      continue;
    }
    if (c == '\\') {
      if (i + 1 >= v.size()) return syntax("content: a lone backslash at the end");
      const char e = v[++i];
      if (e != '"' && e != ';' && e != '\\' && e != ':')
        return syntax(std::string("content: invalid escape '\\") + e + "'");
      out.push_back(e);
      continue;
    }
    if (c == '"') return syntax("content: unescaped '\"'");
    out.push_back(c);
  }
  if (hex) return syntax("content: unterminated hex run");
  if (out.empty()) return syntax("content: empty");
  return out;
}

Result<NumTest> parse_numtest(std::string_view v, std::string_view what) {
  NumTest t;
  v = io::trim(v);
  auto num = [&](std::string_view s) -> Result<int64_t> { return parse_int(s, what, 0, 0xffffffffll); };
  if (size_t r = v.find("<>"); r != std::string_view::npos) {
    auto a = num(v.substr(0, r));
    auto b = num(v.substr(r + 2));
    if (!a.is_ok()) return a.status();
    if (!b.is_ok()) return b.status();
    if (*b <= *a + 1) return syntax(std::string(what) + ": empty range '" + std::string(v) + "'");
    t.op = NumTest::kRange;
    t.a  = uint32_t(*a);
    t.b  = uint32_t(*b);
    return t;
  }
  std::string_view rest = v;
  NumTest::Op op = NumTest::kEq;
  int adjust     = 0;
  if (rest.starts_with("<=")) op = NumTest::kLt, adjust = 1, rest.remove_prefix(2);
  else if (rest.starts_with(">=")) op = NumTest::kGt, adjust = -1, rest.remove_prefix(2);
  else if (rest.starts_with("<")) op = NumTest::kLt, rest.remove_prefix(1);
  else if (rest.starts_with(">")) op = NumTest::kGt, rest.remove_prefix(1);
  else if (rest.starts_with("!")) op = NumTest::kNe, rest.remove_prefix(1);
  else if (rest.starts_with("=")) rest.remove_prefix(1);
  auto a = num(rest);
  if (!a.is_ok()) return a.status();
  int64_t x = *a + adjust;
  if (op == NumTest::kGt && x < 0) {  // >=0: every value
    op = NumTest::kNone;
    x  = 0;
  }
  if (op == NumTest::kLt && *a == 0 && adjust == 0)
    return syntax(std::string(what) + ": '<0' matches nothing");
  t.op = op;
  t.a  = uint32_t(x);
  return t;
}

Status parse_flow(std::string_view v, FlowOpt& f) {
  size_t start = 0;
  for (size_t i = 0; i <= v.size(); ++i) {
    if (i < v.size() && v[i] != ',') continue;
    std::string_view w = io::trim(v.substr(start, i - start));
    start = i + 1;
    if (w == "established") f.established = true;
    else if (w == "not_established") f.not_established = true;
    else if (w == "stateless") f.stateless = true;
    else if (w == "to_server" || w == "from_client") f.to_server = true;
    else if (w == "to_client" || w == "from_server") f.to_client = true;
    else if (w == "only_stream") f.only_stream = true;
    else if (w == "no_stream") f.no_stream = true;
    else if (w == "only_frag" || w == "no_frag") return unsupported("flow:" + std::string(w));
    else return syntax("flow: unknown option '" + std::string(w) + "'");
  }
  if (f.to_server && f.to_client) return syntax("flow: to_server and to_client together");
  if (f.established && f.not_established) return syntax("flow: established and not_established together");
  if (f.only_stream && f.no_stream) return syntax("flow: only_stream and no_stream together");
  return Status::ok();
}

Status parse_flowbits(std::string_view v, Rule& r) {
  v = io::trim(v);
  if (v == "noalert") {
    r.noalert = true;
    return Status::ok();
  }
  const size_t comma = v.find(',');
  const std::string_view cmd = io::trim(v.substr(0, comma));
  Flowbit fb;
  if (cmd == "set") fb.op = Flowbit::kSet;
  else if (cmd == "unset") fb.op = Flowbit::kUnset;
  else if (cmd == "toggle") fb.op = Flowbit::kToggle;
  else if (cmd == "isset") fb.op = Flowbit::kIsSet;
  else if (cmd == "isnotset") fb.op = Flowbit::kIsNotSet;
  else return syntax("flowbits: unknown command '" + std::string(cmd) + "'");
  if (comma == std::string_view::npos) return syntax("flowbits:" + std::string(cmd) + " needs a name");
  std::string_view names = io::trim(v.substr(comma + 1));
  const bool has_or = names.find('|') != std::string_view::npos;
  const bool has_and = names.find('&') != std::string_view::npos;
  if (has_or && has_and) return syntax("flowbits: | and & together");
  if ((has_or || has_and) && (fb.op == Flowbit::kSet || fb.op == Flowbit::kUnset || fb.op == Flowbit::kToggle) && has_or)
    return syntax("flowbits:" + std::string(cmd) + " takes names joined with & only");
  fb.any = has_or;
  const char sep = has_or ? '|' : '&';
  size_t start = 0;
  for (size_t i = 0; i <= names.size(); ++i) {
    if (i < names.size() && names[i] != sep) continue;
    std::string_view n = io::trim(names.substr(start, i - start));
    start = i + 1;
    if (n.empty()) return syntax("flowbits: empty name");
    for (char c : n)
      if (std::isspace(static_cast<unsigned char>(c)) || c == ',')
        return syntax("flowbits: bad name '" + std::string(n) + "'");
    fb.names.emplace_back(n);
  }
  r.flowbits.push_back(std::move(fb));
  return Status::ok();
}

Status parse_flags(std::string_view v, TcpFlags& f) {
  v = io::trim(v);
  std::string_view bits = v, mask;
  if (size_t comma = v.find(','); comma != std::string_view::npos) {
    bits = io::trim(v.substr(0, comma));
    mask = io::trim(v.substr(comma + 1));
  }
  auto bit_of = [](char c) -> int {
    switch (c) {
      case 'F': return 0x01; case 'S': return 0x02; case 'R': return 0x04; case 'P': return 0x08;
      case 'A': return 0x10; case 'U': return 0x20; case 'E': case '2': return 0x40;
      case 'C': case '1': return 0x80; case '0': return 0;
      default: return -1;
    }
  };
  f.set = true;
  for (char c : bits) {
    if (c == '+') f.mod = TcpFlags::kPlus;
    else if (c == '*') f.mod = TcpFlags::kAny;
    else if (c == '!') f.mod = TcpFlags::kNot;
    else if (int b = bit_of(c); b >= 0) f.bits |= uint8_t(b);
    else return syntax(std::string("flags: unknown flag '") + c + "'");
  }
  uint8_t ignored = 0;
  for (char c : mask) {
    const int b = bit_of(c);
    if (b < 0) return syntax(std::string("flags: unknown flag '") + c + "' in the mask");
    ignored |= uint8_t(b);
  }
  f.mask = uint8_t(~ignored);
  return Status::ok();
}

Result<Pcre> parse_pcre(std::string_view v) {
  Pcre p;
  v = io::trim(v);
  if (!v.empty() && v[0] == '!') {
    p.negated = true;
    v         = io::trim(v.substr(1));
  }
  if (v.size() < 4 || v.front() != '"' || v.back() != '"') return syntax("pcre must be quoted");
  v = v.substr(1, v.size() - 2);
  if (v.empty() || v[0] != '/') return syntax("pcre must start with '/'");
  const size_t last = v.rfind('/');
  if (last == 0) return syntax("pcre without a closing '/'");
  p.regex = std::string(v.substr(1, last - 1));
  for (char c : v.substr(last + 1)) {
    switch (c) {
      case 'i': p.caseless = true; break;
      case 's': p.dotall = true; break;
      case 'm': p.multiline = true; break;
      case 'x': p.extended = true; break;
      case 'A': p.anchored = true; break;
      case 'E': p.dollar_endonly = true; break;
      case 'G': p.ungreedy = true; break;
      case 'R': p.relative = true; break;
      case 'B': case 'O': break;  // rawbytes; match-limit override
      case 'U': case 'I': case 'P': case 'Q': case 'H': case 'D': case 'M': case 'C':
      case 'K': case 'S': case 'Y': case 'V': case 'W': case 'Z':
        return unsupported(std::string("pcre/") + c + " (an app-layer buffer)");
      default:
        return syntax(std::string("pcre: unknown flag '") + c + "'");
    }
  }
  if (p.regex.empty()) return syntax("pcre: empty expression");
  return p;
}

// byte_test / byte_jump arguments after the leading ones: the common options.
Status byte_options(std::vector<std::string_view> rest, ByteOp& b, bool jump, std::string_view kw) {
  for (size_t i = 0; i < rest.size(); ++i) {
    std::string_view o = rest[i];
    auto number_after = [&](std::string_view word, int64_t lo, int64_t hi) -> Result<int64_t> {
      std::string_view v = io::trim(o.substr(word.size()));
      if (!v.empty() && !std::isdigit(static_cast<unsigned char>(v[0])) && v[0] != '-' && !v.starts_with("0x"))
        return unsupported(std::string(kw) + " " + std::string(word) + " from a variable (byte_extract)");
      if (v.starts_with("0x")) {
        uint64_t x = 0;
        for (char c : v.substr(2)) {
          if (!std::isxdigit(static_cast<unsigned char>(c))) return syntax(std::string(kw) + ": bad " + std::string(word));
          x = x * 16 + uint64_t(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10);
          if (x > uint64_t(hi)) return syntax(std::string(kw) + ": " + std::string(word) + " too large");
        }
        return int64_t(x);
      }
      return parse_int(v, kw, lo, hi);
    };
    if (o == "relative") b.relative = true;
    else if (o == "big") b.little = false;
    else if (o == "little") b.little = true;
    else if (o == "string") b.string = true;
    else if (o == "hex") b.base = 16;
    else if (o == "dec") b.base = 10;
    else if (o == "oct") b.base = 8;
    else if (o == "dce") return unsupported(std::string(kw) + " dce");
    else if (o.starts_with("bitmask")) {
      auto m = number_after("bitmask", 1, 0xffffffffll);
      if (!m.is_ok()) return m.status();
      b.bitmask = uint64_t(*m);
    } else if (jump && o == "align") b.align = true;
    else if (jump && o == "from_beginning") b.from_beginning = true;
    else if (jump && o == "from_end") b.from_end = true;
    else if (jump && o.starts_with("multiplier")) {
      auto m = number_after("multiplier", 1, 65535);
      if (!m.is_ok()) return m.status();
      b.multiplier = uint32_t(*m);
    } else if (jump && o.starts_with("post_offset")) {
      auto m = number_after("post_offset", -65535, 65535);
      if (!m.is_ok()) return m.status();
      b.post_offset = int32_t(*m);
    } else {
      return syntax(std::string(kw) + ": unknown option '" + std::string(o) + "'");
    }
  }
  const int max_bytes = b.string ? 10 : 8;
  if (b.bytes < 1 || b.bytes > max_bytes)
    return syntax(std::string(kw) + ": " + std::to_string(b.bytes) + " bytes (1.." + std::to_string(max_bytes) + (b.string ? " as a string)" : " binary)"));
  if (b.from_beginning && b.from_end) return syntax(std::string(kw) + ": from_beginning and from_end together");
  return Status::ok();
}

Result<Item> parse_byte(std::string_view value, bool jump) {
  const std::string_view kw = jump ? "byte_jump" : "byte_test";
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= value.size(); ++i)
    if (i == value.size() || value[i] == ',') {
      parts.push_back(io::trim(value.substr(start, i - start)));
      start = i + 1;
    }
  const size_t lead = jump ? 2 : 4;
  if (parts.size() < lead) return syntax(std::string(kw) + ": expected at least " + std::to_string(lead) + " values");
  Item it;
  it.kind = jump ? Item::kByteJump : Item::kByteTest;
  ByteOp& b = it.byte;
  auto num = [&](std::string_view t, std::string_view what, int64_t lo, int64_t hi) -> Result<int64_t> {
    if (!t.empty() && !std::isdigit(static_cast<unsigned char>(t[0])) && t[0] != '-')
      return unsupported(std::string(kw) + " " + std::string(what) + " from a variable (byte_extract)");
    if (t.starts_with("0x") || t.starts_with("0X")) {
      uint64_t x = 0;
      if (t.size() == 2 || t.size() > 18) return syntax(std::string(kw) + ": bad " + std::string(what));
      for (char c : t.substr(2)) {
        if (!std::isxdigit(static_cast<unsigned char>(c))) return syntax(std::string(kw) + ": bad " + std::string(what));
        x = x * 16 + uint64_t(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10);
      }
      if (int64_t(x) < lo || x > uint64_t(hi)) return syntax(std::string(kw) + ": " + std::string(what) + " out of range");
      return int64_t(x);
    }
    return parse_int(t, kw, lo, hi);
  };
  auto n = num(parts[0], "size", 1, 64);
  if (!n.is_ok()) return n.status();
  b.bytes = uint8_t(*n);
  size_t next = 1;
  if (!jump) {
    std::string_view op = parts[1];
    if (!op.empty() && op[0] == '!') {
      b.negated = true;
      op.remove_prefix(1);
    }
    if (op == "<") b.op = '<';
    else if (op == ">") b.op = '>';
    else if (op == "=" || op == "==") b.op = '=';
    else if (op == "&") b.op = '&';
    else if (op == "^") b.op = '^';
    else if (op == "<=") b.op = 'l';
    else if (op == ">=") b.op = 'g';
    else if (op.empty() && b.negated) b.op = '=';  // "!" alone is !=
    else if (op == "!=") b.op = '=', b.negated = !b.negated;
    else return syntax("byte_test: unknown operator '" + std::string(parts[1]) + "'");
    auto v = num(parts[2], "value", 0, INT64_MAX);
    if (!v.is_ok()) return v.status();
    b.value = uint64_t(*v);
    next = 3;
  }
  auto off = num(parts[next], "offset", -65535, 65535);
  if (!off.is_ok()) return off.status();
  b.offset = int32_t(*off);
  std::vector<std::string_view> rest(parts.begin() + long(next + 1), parts.end());
  WARPATH_TRY(byte_options(rest, b, jump, kw));
  return it;
}

Status parse_threshold(std::string_view v, bool filter, Threshold& t) {
  const std::string kw = filter ? "detection_filter" : "threshold";
  if (t.type != Threshold::kNone) return syntax(kw + ": a rule takes one threshold or detection_filter");
  bool has_type = filter, has_track = false, has_count = false, has_seconds = false;
  if (filter) t.type = Threshold::kDetectionFilter;
  size_t start = 0;
  for (size_t i = 0; i <= v.size(); ++i) {
    if (i < v.size() && v[i] != ',') continue;
    const std::string_view part = io::trim(v.substr(start, i - start));
    start = i + 1;
    const size_t sp = part.find_first_of(" \t");
    const std::string_view key = part.substr(0, sp);
    const std::string_view val = sp == std::string_view::npos ? std::string_view{} : io::trim(part.substr(sp));
    if (key == "type" && !filter) {
      if (val == "limit") t.type = Threshold::kLimit;
      else if (val == "threshold") t.type = Threshold::kThreshold;
      else if (val == "both") t.type = Threshold::kBoth;
      else return syntax(kw + ": unknown type '" + std::string(val) + "'");
      has_type = true;
    } else if (key == "track") {
      if (val == "by_src") t.track = Threshold::kBySrc;
      else if (val == "by_dst") t.track = Threshold::kByDst;
      else if (val == "by_rule") t.track = Threshold::kByRule;
      else if (val == "by_both") t.track = Threshold::kByBoth;
      else if (val == "by_flow") return unsupported(kw + " track by_flow");
      else return syntax(kw + ": unknown track '" + std::string(val) + "'");
      has_track = true;
    } else if (key == "count" || key == "seconds") {
      auto n = parse_int(val, kw, key == "count" ? 1 : 1, 0x7fffffff);
      if (!n.is_ok()) return n.status();
      (key == "count" ? t.count : t.seconds) = uint32_t(*n);
      (key == "count" ? has_count : has_seconds) = true;
    } else if (key == "unique_on") {
      return unsupported(kw + " unique_on");
    } else {
      return syntax(kw + ": unknown option '" + std::string(key) + "'");
    }
  }
  if (!has_type || !has_track || !has_count || !has_seconds)
    return syntax(kw + ": needs " + (filter ? "" : "type, ") + "track, count and seconds");
  return Status::ok();
}

Content* last_content(Rule& r) {
  for (auto it = r.items.rbegin(); it != r.items.rend(); ++it)
    if (it->kind == Item::kContent) return &it->content;
  return nullptr;
}

Status check_content(const Content& c) {
  const int32_t len = int32_t(c.bytes.size());
  if ((c.has_offset || c.has_depth) && c.relative())
    return syntax("content \"" + c.bytes + "\": offset/depth with distance/within");
  if (c.has_depth && c.depth < len) return syntax("content: depth " + std::to_string(c.depth) + " is shorter than the content");
  if (c.has_within && c.within < len) return syntax("content: within " + std::to_string(c.within) + " is shorter than the content");
  if (c.startswith && (c.has_offset || c.has_depth || c.relative()))
    return syntax("content: startswith with offset, depth, distance or within");
  return Status::ok();
}

const char* const kInformational[] = {"reference", "metadata", "target", "tag", "rawbytes"};

Status parse_option(std::string_view name, std::string_view value, bool has_value, Rule& r) {
  auto need_value = [&]() -> Status {
    return has_value && !value.empty() ? Status::ok() : syntax(std::string(name) + " needs a value");
  };
  auto modifier = [&](auto apply) -> Status {
    Content* c = last_content(r);
    if (!c) return syntax(std::string(name) + " without a preceding content");
    return apply(*c);
  };
  auto int_modifier = [&](bool Content::*has, int32_t Content::*field, int64_t lo) -> Status {
    WARPATH_TRY(need_value());
    if (!value.empty() && !std::isdigit(static_cast<unsigned char>(value[0])) && value[0] != '-')
      return unsupported(std::string(name) + " from a variable (byte_extract)");
    auto n = parse_int(value, name, lo, 65535);
    if (!n.is_ok()) return n.status();
    return modifier([&](Content& c) -> Status {
      if (c.*has) return syntax(std::string(name) + " given twice for one content");
      c.*has   = true;
      c.*field = int32_t(*n);
      return Status::ok();
    });
  };

  if (name == "msg") {
    WARPATH_TRY(need_value());
    std::string_view m = value;
    if (m.size() >= 2 && m.front() == '"' && m.back() == '"') m = m.substr(1, m.size() - 2);
    r.msg.clear();
    for (size_t i = 0; i < m.size(); ++i) {
      if (m[i] == '\\' && i + 1 < m.size()) ++i;
      r.msg.push_back(m[i]);
    }
    return Status::ok();
  }
  if (name == "sid" || name == "rev" || name == "gid") {
    WARPATH_TRY(need_value());
    auto n = parse_int(value, name, name == "sid" ? 1 : 0, 0xffffffffll);
    if (!n.is_ok()) return n.status();
    (name == "sid" ? r.sid : name == "rev" ? r.rev : r.gid) = uint32_t(*n);
    return Status::ok();
  }
  if (name == "classtype") {
    WARPATH_TRY(need_value());
    r.classtype = std::string(value);
    return Status::ok();
  }
  if (name == "priority") {
    WARPATH_TRY(need_value());
    auto n = parse_int(value, name, 1, 255);
    if (!n.is_ok()) return n.status();
    r.priority = int32_t(*n);
    return Status::ok();
  }
  for (const char* info : kInformational)
    if (name == info) return Status::ok();
  if (name == "content") {
    WARPATH_TRY(need_value());
    Item it;
    it.kind = Item::kContent;
    std::string_view v = value;
    if (v[0] == '!') {
      it.content.negated = true;
      v = io::trim(v.substr(1));
    }
    auto bytes = content_bytes(v);
    if (!bytes.is_ok()) return bytes.status();
    it.content.bytes = std::move(*bytes);
    if (it.content.bytes.size() > 65535) return syntax("content longer than 65535 bytes");
    r.items.push_back(std::move(it));
    return Status::ok();
  }
  if (name == "nocase") return modifier([](Content& c) { c.nocase = true; return Status::ok(); });
  if (name == "startswith") return modifier([](Content& c) { c.startswith = true; return Status::ok(); });
  if (name == "endswith") return modifier([](Content& c) { c.endswith = true; return Status::ok(); });
  if (name == "fast_pattern") {
    return modifier([&](Content& c) -> Status {
      for (const Item& i : r.items)
        if (i.kind == Item::kContent && i.content.fast_pattern && &i.content != &c)
          return syntax("fast_pattern on two contents");
      c.fast_pattern = true;
      if (has_value && value == "only") c.fast_pattern_only = true;
      // "N,M": a part of the content as the fast pattern; the whole is used (a superset).
      else if (has_value && value.find(',') == std::string_view::npos)
        return syntax("fast_pattern: unknown value '" + std::string(value) + "'");
      return Status::ok();
    });
  }
  if (name == "offset") return int_modifier(&Content::has_offset, &Content::offset, 0);
  if (name == "depth") return int_modifier(&Content::has_depth, &Content::depth, 1);
  if (name == "distance") return int_modifier(&Content::has_distance, &Content::distance, -65535);
  if (name == "within") return int_modifier(&Content::has_within, &Content::within, 1);
  if (name == "pcre") {
    WARPATH_TRY(need_value());
    auto p = parse_pcre(value);
    if (!p.is_ok()) return p.status();
    Item it;
    it.kind = Item::kPcre;
    it.pcre = std::move(*p);
    r.items.push_back(std::move(it));
    return Status::ok();
  }
  if (name == "isdataat") {
    WARPATH_TRY(need_value());
    Item it;
    it.kind = Item::kIsDataAt;
    std::string_view v = value;
    if (v[0] == '!') it.isdataat.negated = true, v = io::trim(v.substr(1));
    const size_t comma = v.find(',');
    if (comma != std::string_view::npos) {
      std::string_view opt = io::trim(v.substr(comma + 1));
      if (opt == "relative") it.isdataat.relative = true;
      else if (opt == "rawbytes") {}
      else return syntax("isdataat: unknown option '" + std::string(opt) + "'");
      v = io::trim(v.substr(0, comma));
    }
    if (!v.empty() && !std::isdigit(static_cast<unsigned char>(v[0])))
      return unsupported("isdataat from a variable (byte_extract)");
    auto n = parse_int(v, name, 0, 65535);
    if (!n.is_ok()) return n.status();
    it.isdataat.offset = int32_t(*n);
    r.items.push_back(std::move(it));
    return Status::ok();
  }
  if (name == "byte_test" || name == "byte_jump") {
    WARPATH_TRY(need_value());
    auto it = parse_byte(value, name == "byte_jump");
    if (!it.is_ok()) return it.status();
    r.items.push_back(std::move(*it));
    return Status::ok();
  }
  if (name == "flow") {
    WARPATH_TRY(need_value());
    return parse_flow(value, r.flow);
  }
  if (name == "app-layer-protocol") {
    WARPATH_TRY(need_value());
    std::string_view v = value;
    if (v[0] == '!') r.app_proto_negated = true, v = io::trim(v.substr(1));
    if (v.find(',') != std::string_view::npos) return unsupported("app-layer-protocol with a mode");
    if (v.empty()) return syntax("app-layer-protocol needs a name");
    r.app_proto = std::string(v);
    return Status::ok();
  }
  if (name == "threshold" || name == "detection_filter") {
    WARPATH_TRY(need_value());
    return parse_threshold(value, name == "detection_filter", r.threshold);
  }
  if (name == "dsize" || name == "itype" || name == "icode") {
    WARPATH_TRY(need_value());
    auto t = parse_numtest(value, name);
    if (!t.is_ok()) return t.status();
    (name == "dsize" ? r.dsize : name == "itype" ? r.itype : r.icode) = *t;
    return Status::ok();
  }
  if (name == "flowbits") {
    WARPATH_TRY(need_value());
    return parse_flowbits(value, r);
  }
  if (name == "noalert") {
    r.noalert = true;
    return Status::ok();
  }
  if (name == "flags") {
    WARPATH_TRY(need_value());
    return parse_flags(value, r.flags);
  }
  return unsupported(std::string(name));
}

}  // namespace

const char* action_name(Action a) noexcept {
  switch (a) {
    case Action::kAlert: return "alert";
    case Action::kDrop: return "drop";
    case Action::kPass: return "pass";
  }
  return "?";
}

const char* proto_name(Proto p) noexcept {
  switch (p) {
    case Proto::kIp: return "ip";
    case Proto::kTcp: return "tcp";
    case Proto::kUdp: return "udp";
    case Proto::kIcmp: return "icmp";
    case Proto::kTcpPkt: return "tcp-pkt";
    case Proto::kTcpStream: return "tcp-stream";
  }
  return "?";
}

bool NumTest::matches(uint32_t v) const noexcept {
  switch (op) {
    case kNone: return true;
    case kEq: return v == a;
    case kNe: return v != a;
    case kLt: return v < a;
    case kGt: return v > a;
    case kRange: return v > a && v < b;
  }
  return false;
}

bool TcpFlags::matches(uint8_t flags) const noexcept {
  if (!set) return true;
  const uint8_t v = flags & mask;
  switch (mod) {
    case kExact: return v == bits;
    case kPlus: return (v & bits) == bits;
    case kAny: return (v & bits) != 0;
    case kNot: return (v & bits) != bits;
  }
  return false;
}

Result<Rule> parse_rule(std::string_view line, const Vars& vars, std::string_view where) {
  Rule r;
  r.where = std::string(where);
  r.text  = std::string(io::trim(line));
  const size_t open = line.find('(');
  const size_t close = line.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return syntax("no option list '( ... )'");
  if (!io::trim(line.substr(close + 1)).empty()) return syntax("text after the closing ')'");
  std::vector<std::string_view> head;
  {
    std::string_view h = line.substr(0, open);
    size_t i = 0;
    while (i < h.size()) {  // whitespace-separated; [ ... ] lists may hold spaces
      while (i < h.size() && std::isspace(static_cast<unsigned char>(h[i]))) ++i;
      if (i >= h.size()) break;
      size_t j = i;
      int depth = 0;
      while (j < h.size() && (depth > 0 || !std::isspace(static_cast<unsigned char>(h[j])))) {
        if (h[j] == '[') ++depth;
        else if (h[j] == ']') --depth;
        ++j;
      }
      head.push_back(h.substr(i, j - i));
      i = j;
    }
  }
  if (head.size() != 7)
    return syntax("header has " + std::to_string(head.size()) +
                  " fields, expected 7 (action proto src sport dir dst dport)");
  const std::string_view action = head[0];
  if (action == "alert") r.action = Action::kAlert;
  else if (action == "drop" || action == "reject" || action == "rejectsrc" || action == "rejectdst" || action == "rejectboth") r.action = Action::kDrop;
  else if (action == "pass") r.action = Action::kPass;
  else if (action == "log" || action == "activate" || action == "dynamic" || action == "sdrop" || action == "config")
    return unsupported("action " + std::string(action));
  else return syntax("unknown action '" + std::string(action) + "'");
  const std::string_view proto = head[1];
  if (proto == "ip" || proto == "pkthdr") r.proto = Proto::kIp;
  else if (proto == "tcp") r.proto = Proto::kTcp;
  else if (proto == "udp") r.proto = Proto::kUdp;
  else if (proto == "icmp") r.proto = Proto::kIcmp;
  else if (proto == "tcp-pkt") r.proto = Proto::kTcpPkt;
  else if (proto == "tcp-stream") r.proto = Proto::kTcpStream;
  else return unsupported("app-layer proto " + std::string(proto));
  auto src = parse_addresses(head[2], vars);
  if (!src.is_ok()) return syntax("source address: " + src.status().message());
  auto sport = parse_ports(head[3], vars);
  if (!sport.is_ok()) return syntax("source port: " + sport.status().message());
  if (head[4] == "<>") r.bidirectional = true;
  else if (head[4] == "<-") return syntax("'<-' is not a direction (use ->)");
  else if (head[4] != "->") return syntax("direction must be -> or <>, not '" + std::string(head[4]) + "'");
  auto dst = parse_addresses(head[5], vars);
  if (!dst.is_ok()) return syntax("destination address: " + dst.status().message());
  auto dport = parse_ports(head[6], vars);
  if (!dport.is_ok()) return syntax("destination port: " + dport.status().message());
  r.src   = std::move(*src);
  r.dst   = std::move(*dst);
  r.sport = std::move(*sport);
  r.dport = std::move(*dport);

  Status first_unsupported;
  for (std::string_view opt : split_options(line.substr(open + 1, close - open - 1))) {
    const size_t colon = opt.find(':');
    const std::string_view name  = io::trim(opt.substr(0, colon));
    const std::string_view value = colon == std::string_view::npos ? std::string_view{} : io::trim(opt.substr(colon + 1));
    Status s = parse_option(name, value, colon != std::string_view::npos, r);
    if (s.code() == Errc::kNotSupported) {
      if (first_unsupported.is_ok()) first_unsupported = s;
      continue;  // syntax errors later in the rule still count as such
    }
    if (!s.is_ok()) return s;
  }
  if (r.sid == 0) return syntax("no sid");
  if (!first_unsupported.is_ok()) return first_unsupported;
  for (const Item& it : r.items)
    if (it.kind == Item::kContent) WARPATH_TRY(check_content(it.content));
  const bool has_ports = !r.sport.unrestricted() || !r.dport.unrestricted();
  // ip rules with ports (ET has some) match TCP and UDP packets with those ports only.
  if (has_ports && r.proto == Proto::kIcmp)
    return syntax(std::string("ports with proto ") + proto_name(r.proto));
  if ((r.itype.op != NumTest::kNone || r.icode.op != NumTest::kNone) && r.proto != Proto::kIcmp && r.proto != Proto::kIp)
    return syntax("itype/icode in a rule that is not icmp");
  if (r.flags.set && r.proto != Proto::kTcp && r.proto != Proto::kTcpPkt && r.proto != Proto::kIp)
    return syntax("flags in a rule that is not tcp");
  return r;
}

}  // namespace warpath::nids
