// src/classify/rule.cpp: keys, ClassBench conversion, the plain match, and OpenFlow rule text
// (see include/warpath/classify/rule.hpp).
#include "warpath/classify/rule.hpp"

#include <charconv>
#include <cstdio>
#include <new>

#include "warpath/io/text_file.hpp"
#include "warpath/net/addr_text.hpp"

namespace warpath::classify {

KeyBuffer::KeyBuffer(KeyLayout layout, uint32_t count)
    : layout_(layout), count_(count), words_(size_t(key_words(layout)) * count, 0) {}

void KeyBuffer::set(uint32_t i, const uint32_t* key) {
  for (unsigned w = 0; w < key_words(layout_); ++w) words_[size_t(w) * count_ + i] = key[w];
}

void KeyBuffer::get(uint32_t i, uint32_t* key) const {
  for (unsigned w = 0; w < key_words(layout_); ++w) key[w] = words_[size_t(w) * count_ + i];
}

KeyBatch pinned_copy(const KeyBatch& keys, PinnedVector<uint32_t>& words) {
  words.assign(keys.words, keys.words + size_t(key_words(keys.layout)) * keys.stride);
  KeyBatch copy = keys;
  copy.words    = words.data();
  return copy;
}

RuleSet from_classbench(const std::vector<io::ClassBenchRule>& rules, std::string name) {
  RuleSet set;
  set.layout = KeyLayout::kFiveTuple;
  set.name   = std::move(name);
  set.rules.reserve(rules.size());
  const auto n = uint32_t(rules.size());
  for (uint32_t i = 0; i < n; ++i) {
    const io::ClassBenchRule& c = rules[i];
    Rule r;
    r.mask[0]  = net::mask4(0xFFFF'FFFFu, c.src_len);
    r.value[0] = c.src & r.mask[0];
    r.mask[1]  = net::mask4(0xFFFF'FFFFu, c.dst_len);
    r.value[1] = c.dst & r.mask[1];
    r.mask[3]  = c.proto_mask;
    r.value[3] = uint32_t(c.proto & c.proto_mask);
    r.sport_lo = c.sport_lo;
    r.sport_hi = c.sport_hi;
    r.dport_lo = c.dport_lo;
    r.dport_hi = c.dport_hi;
    r.priority = n - 1 - i;
    r.line     = c.line;
    r.action   = c.action;
    set.rules.push_back(std::move(r));
  }
  return set;
}

KeyBuffer keys_from_trace(const std::vector<io::TraceEntry>& trace) {
  KeyBuffer keys(KeyLayout::kFiveTuple, uint32_t(trace.size()));
  uint32_t k[4];
  for (uint32_t i = 0; i < trace.size(); ++i) {
    five_tuple_words(trace[i].key, k);
    keys.set(i, k);
  }
  return keys;
}

bool rule_matches(const Rule& r, KeyLayout layout, const uint32_t* key) {
  for (unsigned w = 0; w < key_words(layout); ++w)
    if ((key[w] & r.mask[w]) != r.value[w]) return false;
  const uint32_t ports = key[ports_word(layout)];
  const uint32_t sport = ports >> 16, dport = ports & 0xFFFFu;
  return r.sport_lo <= sport && sport <= r.sport_hi && r.dport_lo <= dport && dport <= r.dport_hi;
}

// ---- OpenFlow (ovs-ofctl) text -------------------------------------------------------------

namespace {

// Where a field lives in the 9-word tuple: word, shift of its lowest bit, width in bits.
struct FieldPos {
  const char* name;
  unsigned word, shift, bits;
};
constexpr FieldPos kFields[] = {
    {"in_port", 0, 16, 16}, {"dl_vlan", 0, 0, 16}, {"dl_vlan_pcp", 4, 8, 8},
    {"dl_type", 4, 16, 16}, {"nw_tos", 4, 0, 8},   {"nw_proto", 5, 24, 8},
    {"nw_src", 6, 0, 32},   {"nw_dst", 7, 0, 32},  {"tp_src", 8, 16, 16},
    {"tp_dst", 8, 0, 16},
};

using io::trim;

bool parse_uint(std::string_view t, uint64_t max, uint64_t& out) { return io::parse_number(t, max, out); }

bool parse_mac(std::string_view t, uint64_t& out) {
  out       = 0;
  int parts = 0;
  while (!t.empty()) {
    const size_t colon          = t.find(':');
    const std::string_view part = t.substr(0, colon);
    uint64_t b                  = 0;
    if (part.empty() || part.size() > 2 || !parse_uint("0x" + std::string(part), 255, b))
      return false;
    out = out << 8 | b;
    ++parts;
    if (colon == std::string_view::npos) break;
    t.remove_prefix(colon + 1);
  }
  return parts == 6;
}

// Sets `bits` of value/mask at (word, shift) and checks for a field given twice.
bool set_bits(Rule& r, unsigned word, unsigned shift, unsigned bits, uint64_t value, uint64_t mask,
              uint32_t& assigned, unsigned field, std::string& error, std::string_view name) {
  if (assigned & (1u << field)) {
    error = "field " + std::string(name) + " given twice";
    return false;
  }
  assigned |= 1u << field;
  const uint64_t full = bits == 32 ? 0xFFFF'FFFFull : (1ull << bits) - 1;
  if (value > full || mask > full) {
    error = "value of " + std::string(name) + " does not fit in " + std::to_string(bits) + " bits";
    return false;
  }
  r.mask[word] |= uint32_t(mask << shift);
  r.value[word] |= uint32_t((value & mask) << shift);
  return true;
}

// The 48 bits of a MAC across words 1-3: dl_src = w1 (32) + w2 high 16; dl_dst = w2 low 16 +
// w3 (32).
void set_mac(Rule& r, bool src, uint64_t value, uint64_t mask) {
  if (src) {
    r.mask[1] |= uint32_t(mask >> 16), r.value[1] |= uint32_t((value & mask) >> 16);
    r.mask[2] |= uint32_t(mask & 0xFFFF) << 16, r.value[2] |= uint32_t(value & mask & 0xFFFF) << 16;
  } else {
    r.mask[2] |= uint32_t(mask >> 32), r.value[2] |= uint32_t((value & mask) >> 32);
    r.mask[3] |= uint32_t(mask), r.value[3] |= uint32_t(value & mask);
  }
}

bool parse_flow(std::string_view line, Rule& r, std::string& error) {
  r.priority        = 32768;
  uint32_t assigned = 0;
  // actions= takes the rest of the line (actions contain commas).
  const size_t act = line.find("actions=");
  if (act != std::string_view::npos) {
    r.action = std::string(trim(line.substr(act + 8)));
    line     = line.substr(0, act);
  }
  size_t pos = 0;
  while (pos < line.size()) {
    size_t end = line.find_first_of(", \t", pos);
    if (end == std::string_view::npos) end = line.size();
    const std::string_view item = line.substr(pos, end - pos);
    pos                         = end + 1;
    if (item.empty()) continue;
    const size_t eq            = item.find('=');
    const std::string_view key = item.substr(0, eq);
    if (eq == std::string_view::npos) {
      uint64_t proto = 0, type = 0x0800;
      if (key == "ip") {
        proto = 256;
      } else if (key == "tcp") {
        proto = 6;
      } else if (key == "udp") {
        proto = 17;
      } else if (key == "icmp") {
        proto = 1;
      } else if (key == "arp") {
        type = 0x0806, proto = 256;
      } else {
        error = "unknown keyword '" + std::string(key) + "'";
        return false;
      }
      // Field numbers as in kFields (dl_type 3, nw_proto 5), so a repeat is caught.
      if (!set_bits(r, 4, 16, 16, type, 0xFFFF, assigned, 3, error, "dl_type")) return false;
      if (proto != 256 && !set_bits(r, 5, 24, 8, proto, 0xFF, assigned, 5, error, "nw_proto"))
        return false;
      continue;
    }
    const std::string_view val = item.substr(eq + 1);
    const size_t slash         = val.find('/');
    const std::string_view v = val.substr(0, slash), m = slash == std::string_view::npos
                                                             ? std::string_view()
                                                             : val.substr(slash + 1);
    if (key == "priority") {
      uint64_t p = 0;
      if (!parse_uint(val, 0xFFFF'FFFFull, p)) {
        error = "priority '" + std::string(val) + "' is not a number 0..4294967295";
        return false;
      }
      r.priority = uint32_t(p);
      continue;
    }
    if (key == "dl_src" || key == "dl_dst") {
      uint64_t mac = 0, mask = 0xFFFF'FFFF'FFFFull;
      if (!parse_mac(v, mac) || (!m.empty() && !parse_mac(m, mask))) {
        error = "bad MAC address in '" + std::string(item) + "'";
        return false;
      }
      const unsigned field = key == "dl_src" ? 22 : 23;
      if (assigned & (1u << field)) {
        error = "field " + std::string(key) + " given twice";
        return false;
      }
      assigned |= 1u << field;
      set_mac(r, key == "dl_src", mac, mask);
      continue;
    }
    unsigned f = 0;
    while (f < std::size(kFields) && key != kFields[f].name) ++f;
    if (f == std::size(kFields)) {
      error = "unknown field '" + std::string(key) + "'";
      return false;
    }
    const FieldPos& fp = kFields[f];
    uint64_t value = 0, mask = fp.bits == 32 ? 0xFFFF'FFFFull : (1ull << fp.bits) - 1;
    if (key == "nw_src" || key == "nw_dst") {
      uint32_t a = 0;
      if (!net::parse_ipv4(v, a)) {
        error = "bad IPv4 address in '" + std::string(item) + "'";
        return false;
      }
      value = a;
      if (!m.empty()) {
        uint64_t len    = 0;
        uint32_t dotted = 0;
        if (parse_uint(m, 32, len)) {
          mask = net::mask4(0xFFFF'FFFFu, unsigned(len));
        } else if (net::parse_ipv4(m, dotted)) {
          mask = dotted;
        } else {
          error = "bad mask in '" + std::string(item) + "'";
          return false;
        }
      }
    } else if (key == "dl_vlan" && v == "0xffff") {
      value = 0xFFFF;
    } else if (!parse_uint(v, mask, value) || (!m.empty() && !parse_uint(m, mask, mask))) {
      error = "bad value for " + std::string(key) + " in '" + std::string(item) + "'";
      return false;
    }
    if (!set_bits(r, fp.word, fp.shift, fp.bits, value, mask, assigned, f, error, key))
      return false;
  }
  return true;
}

Result<RuleSet> parse_openflow_impl(std::string_view text, std::string_view name) {
  RuleSet set;
  set.layout = KeyLayout::kOpenFlow;
  set.name   = std::string(name);
  io::LineCursor cursor(text);
  std::string_view line;
  std::string error;
  while (cursor.next(line)) {
    const size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    Rule r;
    r.line = uint32_t(cursor.line_number());
    if (!parse_flow(line, r, error)) return io::parse_error(name, cursor.line_number(), error);
    set.rules.push_back(std::move(r));
  }
  return set;
}

void append_field(std::string& out, const char* name, uint32_t value, uint32_t mask, uint32_t full,
                  bool hex) {
  if (mask == 0) return;
  char buf[64];
  if (hex) {
    std::snprintf(buf, sizeof buf, ",%s=0x%x", name, value);
  } else {
    std::snprintf(buf, sizeof buf, ",%s=%u", name, value);
  }
  out += buf;
  if (mask != full) {
    std::snprintf(buf, sizeof buf, "/0x%x", mask);
    out += buf;
  }
}

std::string mac_text(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", unsigned(v >> 40 & 255),
                unsigned(v >> 32 & 255), unsigned(v >> 24 & 255), unsigned(v >> 16 & 255),
                unsigned(v >> 8 & 255), unsigned(v & 255));
  return buf;
}

Result<KeyBuffer> parse_openflow_trace_impl(std::string_view text, std::string_view name) {
  std::vector<uint32_t> words;
  io::LineCursor cursor(text);
  std::string_view line;
  while (cursor.next(line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    std::string_view tok[12];
    size_t count = 0, pos = 0;
    while (pos < line.size()) {
      const size_t b = line.find_first_not_of(" \t", pos);
      if (b == std::string_view::npos) break;
      const size_t e = std::min(line.find_first_of(" \t", b), line.size());
      if (count == 12) return io::parse_error(name, cursor.line_number(), "more than 12 fields");
      tok[count++] = line.substr(b, e - b);
      pos          = e;
    }
    if (count != 12)
      return io::parse_error(name, cursor.line_number(),
                             "expected 12 fields, found " + std::to_string(count));
    packet::OfFields f;
    uint64_t v[12]         = {};
    uint32_t ip[2]         = {};
    uint64_t mac[2]        = {};
    const char* bad        = nullptr;
    const uint64_t max[12] = {0xFFFF, 0, 0, 0xFFFF, 0xFF, 0xFFFF, 0xFF, 0xFF, 0, 0, 0xFFFF, 0xFFFF};
    for (int i = 0; i < 12 && !bad; ++i) {
      if (i == 1 || i == 2) {
        if (!parse_mac(tok[i], mac[i - 1])) bad = "MAC address";
      } else if (i == 8 || i == 9) {
        if (!net::parse_ipv4(tok[i], ip[i - 8])) bad = "IPv4 address";
      } else if (!parse_uint(tok[i], max[i], v[i])) {
        bad = "number";
      }
      if (bad)
        return io::parse_error(name, cursor.line_number(),
                               "field " + std::to_string(i + 1) + " '" + std::string(tok[i]) +
                                   "' is not a valid " + bad);
    }
    f.in_port = uint16_t(v[0]);
    for (int b = 0; b < 6; ++b) {
      f.dl_src[b] = uint8_t(mac[0] >> (40 - 8 * b));
      f.dl_dst[b] = uint8_t(mac[1] >> (40 - 8 * b));
    }
    f.dl_vlan               = uint16_t(v[3]);
    f.dl_vlan_pcp           = uint8_t(v[4]);
    f.dl_type               = uint16_t(v[5]);
    f.nw_tos                = uint8_t(v[6]);
    f.nw_proto              = uint8_t(v[7]);
    f.nw_src                = ip[0];
    f.nw_dst                = ip[1];
    f.tp_src                = uint16_t(v[10]);
    f.tp_dst                = uint16_t(v[11]);
    const packet::OfTuple t = packet::of_pack(f);
    words.insert(words.end(), t.w, t.w + 9);
  }
  KeyBuffer keys(KeyLayout::kOpenFlow, uint32_t(words.size() / 9));
  for (uint32_t i = 0; i < keys.size(); ++i) keys.set(i, &words[size_t(i) * 9]);
  return keys;
}

}  // namespace

Result<KeyBuffer> parse_openflow_trace(std::string_view text, std::string_view name) {
  try {
    return parse_openflow_trace_impl(text, name);
  } catch (const std::bad_alloc&) {
    return Status(Errc::kOutOfMemory, std::string(name) + ": out of memory");
  }
}

std::string format_openflow_key(const uint32_t* key) {
  packet::OfTuple t;
  for (int i = 0; i < 9; ++i) t.w[i] = key[i];
  const packet::OfFields f = packet::of_unpack(t);
  uint64_t src = 0, dst = 0;
  for (int b = 0; b < 6; ++b) src = src << 8 | f.dl_src[b], dst = dst << 8 | f.dl_dst[b];
  char buf[160];
  std::snprintf(buf, sizeof buf, "%u %s %s %u %u 0x%04x %u %u %s %s %u %u", f.in_port,
                mac_text(src).c_str(), mac_text(dst).c_str(), f.dl_vlan, f.dl_vlan_pcp, f.dl_type,
                f.nw_tos, f.nw_proto, net::format_ipv4(f.nw_src).c_str(),
                net::format_ipv4(f.nw_dst).c_str(), f.tp_src, f.tp_dst);
  return buf;
}

Result<std::string> format_classbench(const Rule& r) {
  auto prefix_len = [](uint32_t m) -> int {
    const int len = __builtin_popcount(m);
    return (len == 0 ? 0u : 0xFFFF'FFFFu << (32 - len)) == m ? len : -1;
  };
  const int sl = prefix_len(r.mask[0]), dl = prefix_len(r.mask[1]);
  if (sl < 0 || dl < 0 || r.mask[2] != 0 || (r.mask[3] != 0 && r.mask[3] != 0xFF))
    return Status(Errc::kInvalidArgument, "rule is not expressible in ClassBench format");
  char buf[160];
  std::snprintf(buf, sizeof buf, "@%s/%d\t%s/%d\t%u : %u\t%u : %u\t0x%02x/0x%02x",
                net::format_ipv4(r.value[0]).c_str(), sl,
                net::format_ipv4(r.value[1]).c_str(), dl, r.sport_lo, r.sport_hi, r.dport_lo,
                r.dport_hi, r.value[3], r.mask[3]);
  return std::string(buf);
}

Result<RuleSet> parse_openflow_rules(std::string_view text, std::string_view name) {
  try {
    return parse_openflow_impl(text, name);
  } catch (const std::bad_alloc&) {
    return Status(Errc::kOutOfMemory, std::string(name) + ": out of memory");
  }
}

std::string format_openflow_rule(const Rule& r) {
  std::string out = "priority=" + std::to_string(r.priority);
  for (const FieldPos& f : kFields) {
    const uint32_t full  = f.bits == 32 ? 0xFFFF'FFFFu : (1u << f.bits) - 1;
    const uint32_t value = (r.value[f.word] >> f.shift) & full;
    const uint32_t mask  = (r.mask[f.word] >> f.shift) & full;
    if (f.word == 6 || f.word == 7) {
      if (mask == 0) continue;
      out += std::string(",") + f.name + "=" + net::format_ipv4(value);
      if (mask != full) out += "/" + net::format_ipv4(mask);
      continue;
    }
    const bool hex = f.word == 4 && f.shift == 16;  // dl_type
    append_field(out, f.name, value, mask, full, hex);
  }
  for (int src = 1; src >= 0; --src) {
    uint64_t v = 0, m = 0;
    if (src) {
      v = uint64_t(r.value[1]) << 16 | r.value[2] >> 16;
      m = uint64_t(r.mask[1]) << 16 | r.mask[2] >> 16;
    } else {
      v = uint64_t(r.value[2] & 0xFFFF) << 32 | r.value[3];
      m = uint64_t(r.mask[2] & 0xFFFF) << 32 | r.mask[3];
    }
    if (m == 0) continue;
    out += std::string(src ? ",dl_src=" : ",dl_dst=") + mac_text(v);
    if (m != 0xFFFF'FFFF'FFFFull) out += "/" + mac_text(m);
  }
  out += ",actions=" + (r.action.empty() ? std::string("drop") : r.action);
  return out;
}

}  // namespace warpath::classify
