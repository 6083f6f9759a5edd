// The value of each rule keyword (src/nids/rule_keywords.hpp).
#include "nids/rule_keywords.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cctype>
#include <cstdint>
#include <utility>

#include "warpath/io/text_file.hpp"

namespace warpath::nids::detail {
namespace {

// A keyword's value cut at its commas, each part trimmed.
std::vector<std::string_view> split_commas(std::string_view value) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= value.size(); ++i)
    if (i == value.size() || value[i] == ',') {
      parts.push_back(io::trim(value.substr(start, i - start)));
      start = i + 1;
    }
  return parts;
}

// "key value" (threshold's, xbits', base64_decode's options): the word, then the rest trimmed.
std::pair<std::string_view, std::string_view> key_value(std::string_view part) {
  const size_t sp = part.find_first_of(" \t");
  if (sp == std::string_view::npos) return {part, {}};
  return {part.substr(0, sp), io::trim(part.substr(sp))};
}

// flowbits' and xbits' command.
bool bit_command(std::string_view cmd, Flowbit::Op& op) {
  static constexpr std::pair<std::string_view, Flowbit::Op> kCommands[] = {
      {"set", Flowbit::kSet},     {"unset", Flowbit::kUnset},       {"toggle", Flowbit::kToggle},
      {"isset", Flowbit::kIsSet}, {"isnotset", Flowbit::kIsNotSet}};
  for (const auto& [text, o] : kCommands)
    if (cmd == text) {
      op = o;
      return true;
    }
  return false;
}

}  // namespace

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
  if ((op == NumTest::kGt && x < 0) || (op == NumTest::kLt && x > 0xffffffffll)) {  // >=0, <=max: all
    op = NumTest::kNone;
    x  = 0;
  }
  if (op == NumTest::kLt && *a == 0 && adjust == 0)
    return syntax(std::string(what) + ": '<0' matches nothing");
  t.op = op;
  t.a  = uint32_t(x);
  return t;
}

Result<NumTest> parse_ip_proto(std::string_view v) {
  static constexpr std::pair<std::string_view, uint8_t> kNames[] = {
      {"ip", 0},      {"hopopt", 0},     {"icmp", 1},       {"igmp", 2},         {"ipencap", 4},
      {"tcp", 6},     {"egp", 8},        {"udp", 17},       {"dccp", 33},        {"ipv6", 41},
      {"ipv6-route", 43}, {"ipv6-frag", 44}, {"rsvp", 46},  {"gre", 47},         {"esp", 50},
      {"ah", 51},     {"ipv6-icmp", 58}, {"icmpv6", 58},    {"ipv6-nonxt", 59},  {"ipv6-opts", 60},
      {"eigrp", 88},  {"ospf", 89},      {"ipip", 94},      {"etherip", 97},     {"pim", 103},
      {"ipcomp", 108}, {"vrrp", 112},    {"l2tp", 115},     {"sctp", 132},       {"udplite", 136},
  };
  v = io::trim(v);
  std::string_view op, rest = v;
  if (!rest.empty() && (rest[0] == '!' || rest[0] == '<' || rest[0] == '>')) op = rest.substr(0, 1), rest = io::trim(rest.substr(1));
  if (!rest.empty() && std::isalpha(static_cast<unsigned char>(rest[0]))) {
    for (const auto& [name, number] : kNames)
      if (name == rest) return parse_numtest(std::string(op) + std::to_string(number), "ip_proto");
    return syntax("ip_proto: unknown protocol '" + std::string(rest) + "'");
  }
  auto n = parse_int(rest, "ip_proto", 0, 255);
  if (!n.is_ok()) return n.status();
  return parse_numtest(std::string(op) + std::to_string(*n), "ip_proto");
}

Result<StreamSize> parse_stream_size(std::string_view v) {
  StreamSize s;
  const std::vector<std::string_view> parts = split_commas(v);
  if (parts.size() != 3) return syntax("stream_size: expected SIDE,OPERATOR,NUMBER");
  if (parts[0] == "client") s.side = StreamSize::kClient;
  else if (parts[0] == "server") s.side = StreamSize::kServer;
  else if (parts[0] == "both") s.side = StreamSize::kBoth;
  else if (parts[0] == "either") s.side = StreamSize::kEither;
  else return syntax("stream_size: unknown side '" + std::string(parts[0]) + "' (client, server, both, either)");
  const std::string_view op = parts[1];
  if (op != "<" && op != ">" && op != "=" && op != "!=" && op != "<=" && op != ">=")
    return syntax("stream_size: unknown operator '" + std::string(op) + "'");
  auto t = parse_numtest(std::string(op == "!=" ? "!" : op) + std::string(parts[2]), "stream_size");
  if (!t.is_ok()) return t.status();
  s.test = *t;
  return s;
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
  if (!bit_command(cmd, fb.op)) return syntax("flowbits: unknown command '" + std::string(cmd) + "'");
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

Status parse_flowint(std::string_view v, Rule& r) {
  const std::vector<std::string_view> parts = split_commas(v);
  auto is_name = [](std::string_view n) {
    if (n.empty() || !std::isalpha(static_cast<unsigned char>(n[0]))) return false;
    for (char c : n)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '/') return false;
    return true;
  };
  if (parts.size() < 2 || parts.size() > 3) return syntax("flowint: expected NAME,MODIFIER[,VALUE]");
  Flowint f;
  if (!is_name(parts[0])) return syntax("flowint: bad name '" + std::string(parts[0]) + "'");
  f.name = std::string(parts[0]);
  static constexpr std::pair<std::string_view, Flowint::Op> kOps[] = {
      {"=", Flowint::kSet}, {"+", Flowint::kAdd}, {"-", Flowint::kSub},   {"==", Flowint::kEq},
      {"!=", Flowint::kNe}, {"<", Flowint::kLt},  {"<=", Flowint::kLe},   {">", Flowint::kGt},
      {">=", Flowint::kGe}, {"isset", Flowint::kIsSet}, {"notset", Flowint::kNotSet}};
  bool known = false;
  for (const auto& [text, op] : kOps)
    if (parts[1] == text) f.op = op, known = true;
  if (!known) return syntax("flowint: unknown modifier '" + std::string(parts[1]) + "'");
  const bool unary = f.op == Flowint::kIsSet || f.op == Flowint::kNotSet;
  if (unary != (parts.size() == 2))
    return syntax(std::string("flowint: ") + (unary ? "isset and notset take no value" : "a value is needed"));
  if (!unary) {
    if (is_name(parts[2])) {
      f.value_name = std::string(parts[2]);
    } else {
      auto n = parse_int(parts[2], "flowint value", 0, 0xffffffffll);
      if (!n.is_ok()) return n.status();
      f.value = uint32_t(*n);
    }
  }
  r.flowints.push_back(std::move(f));
  return Status::ok();
}

Status parse_xbits(std::string_view v, Rule& r) {
  v = io::trim(v);
  if (v == "noalert") {
    r.noalert = true;
    return Status::ok();
  }
  const std::vector<std::string_view> parts = split_commas(v);
  if (parts.size() < 3) return syntax("xbits: expected COMMAND,NAME,track ip_src|ip_dst|ip_pair[,expire S]");
  Xbit x;
  if (!bit_command(parts[0], x.op)) return syntax("xbits: unknown command '" + std::string(parts[0]) + "'");
  if (parts[1].empty() || parts[1].find_first_of(" \t|&") != std::string_view::npos)
    return syntax("xbits: bad name '" + std::string(parts[1]) + "'");
  x.name = std::string(parts[1]);
  bool tracked = false;
  for (size_t i = 2; i < parts.size(); ++i) {
    const std::string_view part = parts[i];
    const auto [key, val]       = key_value(part);
    if (key == "track") {
      if (val == "ip_src") x.track = Xbit::kIpSrc;
      else if (val == "ip_dst") x.track = Xbit::kIpDst;
      else if (val == "ip_pair") x.track = Xbit::kIpPair;
      else return syntax("xbits: unknown track '" + std::string(val) + "' (ip_src, ip_dst, ip_pair)");
      tracked = true;
    } else if (key == "expire") {
      auto n = parse_int(val, "xbits expire", 1, 0xffffffffll);
      if (!n.is_ok()) return n.status();
      x.expire = uint32_t(*n);
    } else {
      return syntax("xbits: unknown option '" + std::string(part) + "'");
    }
  }
  if (!tracked) return syntax("xbits: no track (ip_src, ip_dst or ip_pair)");
  r.xbits.push_back(std::move(x));
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
      case 'S': case 'Y': case 'V': case 'W': case 'Z':
        if (p.buffer_flag && p.buffer_flag != c)
          return syntax(std::string("pcre: two buffer flags '") + p.buffer_flag + "' and '" + c + "'");
        p.buffer_flag = c;
        break;
      default:
        return syntax(std::string("pcre: unknown flag '") + c + "'");
    }
  }
  if (p.regex.empty()) return syntax("pcre: empty expression");
  int err       = 0;
  PCRE2_SIZE at = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(p.regex.data()), p.regex.size(),
                                   pcre_options(p), &err, &at, nullptr);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    return syntax("pcre \"" + p.regex + "\" does not compile at offset " + std::to_string(at) +
                  ": " + reinterpret_cast<const char*>(msg));
  }
  pcre2_code_free(code);
  return p;
}

uint32_t pcre_options(const Pcre& p) noexcept {
  uint32_t options = 0;
  if (p.caseless) options |= PCRE2_CASELESS;
  if (p.dotall) options |= PCRE2_DOTALL;
  if (p.multiline) options |= PCRE2_MULTILINE;
  if (p.extended) options |= PCRE2_EXTENDED;
  if (p.anchored) options |= PCRE2_ANCHORED;
  if (p.dollar_endonly) options |= PCRE2_DOLLAR_ENDONLY;
  if (p.ungreedy) options |= PCRE2_UNGREEDY;
  return options;
}

Result<int64_t> number_or_var(std::string_view t, std::string_view kw, std::string_view what,
                              int64_t lo, int64_t hi, const std::vector<std::string>& vars,
                              int8_t& var) {
  t   = io::trim(t);
  var = -1;
  if (!t.empty() && (std::isalpha(static_cast<unsigned char>(t[0])) || t[0] == '_')) {
    for (size_t i = 0; i < vars.size(); ++i)
      if (vars[i] == t) {
        var = int8_t(i);
        return int64_t(0);
      }
    return syntax(std::string(kw) + ": " + std::string(what) + " '" + std::string(t) +
                  "' is no byte_extract variable set before it");
  }
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
}

namespace {

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
  // As Suricata: at most 23 digits as a string (what fits 64 bits in octal), 8 bytes binary; 0
  // digits reads a string number to its end (strtoull's way).
  const int max_bytes = b.string ? 23 : 8;
  if (b.bytes_var < 0 && ((b.bytes < 1 && !b.string) || b.bytes > max_bytes))
    return syntax(std::string(kw) + ": " + std::to_string(b.bytes) + " bytes (1.." + std::to_string(max_bytes) + (b.string ? " as a string)" : " binary)"));
  if (b.from_beginning && b.from_end) return syntax(std::string(kw) + ": from_beginning and from_end together");
  return Status::ok();
}

}  // namespace

Result<Item> parse_byte(std::string_view value, bool jump, const std::vector<std::string>& vars) {
  const std::string_view kw = jump ? "byte_jump" : "byte_test";
  const std::vector<std::string_view> parts = split_commas(value);
  const size_t lead = jump ? 2 : 4;
  if (parts.size() < lead) return syntax(std::string(kw) + ": expected at least " + std::to_string(lead) + " values");
  Item it;
  it.kind = jump ? Item::kByteJump : Item::kByteTest;
  ByteOp& b = it.byte;
  auto num = [&](std::string_view t, std::string_view what, int64_t lo, int64_t hi, int8_t& var) {
    return number_or_var(t, kw, what, lo, hi, vars, var);
  };
  auto n = num(parts[0], "size", 0, 64, b.bytes_var);
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
    auto v = num(parts[2], "value", 0, INT64_MAX, b.value_var);
    if (!v.is_ok()) return v.status();
    b.value = uint64_t(*v);
    next = 3;
  }
  auto off = num(parts[next], "offset", -65535, 65535, b.offset_var);
  if (!off.is_ok()) return off.status();
  b.offset = int32_t(*off);
  std::vector<std::string_view> rest(parts.begin() + long(next + 1), parts.end());
  WARPATH_TRY(byte_options(rest, b, jump, kw));
  return it;
}

Result<Item> parse_base64_decode(std::string_view value) {
  Item it;
  it.kind = Item::kBase64Decode;
  if (io::trim(value).empty()) return it;
  for (std::string_view part : split_commas(value)) {
    const auto [key, val] = key_value(part);
    if (key == "relative" && val.empty()) {
      it.b64.relative = true;
    } else if (key == "bytes" || key == "offset") {
      auto n = parse_int(val, "base64_decode " + std::string(key), 0, 65535);
      if (!n.is_ok()) return n.status();
      if (key == "offset") it.b64.offset = uint32_t(*n);
      else it.b64.bytes = *n ? uint32_t(*n) : 65535;  // 0: as many as there are (Suricata's)
    } else {
      return syntax("base64_decode: unknown option '" + std::string(part) + "'");
    }
  }
  return it;
}

Result<Item> parse_byte_extract(std::string_view value, std::vector<std::string>& vars) {
  const std::vector<std::string_view> parts = split_commas(value);
  if (parts.size() < 3) return syntax("byte_extract: expected at least 3 values (size, offset, name)");
  Item it;
  it.kind   = Item::kByteExtract;
  ByteOp& b = it.byte;
  auto n = parse_int(parts[0], "byte_extract size", 1, 23);
  if (!n.is_ok()) return n.status();
  b.bytes  = uint8_t(*n);
  auto off = parse_int(parts[1], "byte_extract offset", -65535, 65535);
  if (!off.is_ok()) return off.status();
  b.offset = int32_t(*off);
  const std::string_view name = parts[2];
  bool word = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) word = word && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
  if (!word) return syntax("byte_extract: bad variable name '" + std::string(name) + "'");
  for (const std::string& v : vars)
    if (v == name) return syntax("byte_extract: variable '" + std::string(name) + "' set twice");
  if (vars.size() >= kMaxByteVars)
    return syntax("byte_extract: more than " + std::to_string(kMaxByteVars) + " variables in one rule");
  bool has_base = false;
  for (size_t i = 3; i < parts.size(); ++i) {
    const std::string_view o = parts[i];
    auto number_after = [&](std::string_view word_, int64_t lo, int64_t hi) {
      return parse_int(o.substr(word_.size()), std::string("byte_extract ") + std::string(word_), lo, hi);
    };
    if (o == "relative") b.relative = true;
    else if (o == "big") b.little = false;
    else if (o == "little") b.little = true;
    else if (o == "string") b.string = true;
    else if (o == "hex" || o == "dec" || o == "oct") b.base = o == "hex" ? 16 : o == "dec" ? 10 : 8, has_base = true;
    else if (o == "dce") return unsupported("byte_extract dce");
    else if (o.starts_with("multiplier")) {
      auto m = number_after("multiplier", 1, 65535);
      if (!m.is_ok()) return m.status();
      b.multiplier = uint32_t(*m);
    } else if (o.starts_with("align")) {
      auto m = number_after("align", 2, 4);
      if (!m.is_ok() || *m == 3) return syntax("byte_extract: align takes 2 or 4");
      b.align_to = uint8_t(*m);
    } else {
      return syntax("byte_extract: unknown option '" + std::string(o) + "'");
    }
  }
  if (has_base && !b.string) return syntax("byte_extract: hex, dec or oct without string");
  // As Suricata: 8 bytes binary; as a string what fits 64 bits (20 decimal, 14 hex, 23 octal).
  const int max_bytes = !b.string ? 8 : b.base == 16 ? 14 : b.base == 10 ? 20 : 23;
  if (b.bytes > max_bytes)
    return syntax("byte_extract: " + std::to_string(b.bytes) + " bytes (1.." + std::to_string(max_bytes) +
                  (b.string ? " as a string)" : " binary)"));
  b.var = int8_t(vars.size());
  vars.emplace_back(name);
  return it;
}

Status parse_threshold(std::string_view v, bool filter, Threshold& t) {
  const std::string kw = filter ? "detection_filter" : "threshold";
  if (t.type != Threshold::kNone) return syntax(kw + ": a rule takes one threshold or detection_filter");
  bool has_type = filter, has_track = false, has_count = false, has_seconds = false;
  if (filter) t.type = Threshold::kDetectionFilter;
  for (std::string_view part : split_commas(v)) {
    const auto [key, val] = key_value(part);
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

}  // namespace warpath::nids::detail
