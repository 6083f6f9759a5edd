// src/openflow/flow_text.cpp: flows in ovs-ofctl syntax (flow.hpp), parsed and printed.
#include <charconv>
#include <cstdio>
#include <string>

#include "warpath/io/text_file.hpp"
#include "warpath/net/addr_text.hpp"
#include "warpath/openflow/flow.hpp"

namespace warpath::openflow {
namespace {

using io::trim;

bool parse_uint(std::string_view t, uint64_t max, uint64_t& out) { return io::parse_number(t, max, out); }

bool parse_mac(std::string_view t, uint8_t out[6]) {
  for (int i = 0; i < 6; ++i) {
    const size_t colon = t.find(':');
    if ((colon == std::string_view::npos) != (i == 5)) return false;
    const std::string_view part = t.substr(0, colon);
    unsigned v                  = 0;
    if (part.empty() || part.size() > 2) return false;
    const auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v, 16);
    if (ec != std::errc() || p != part.data() + part.size()) return false;
    out[i] = uint8_t(v);
    if (i < 5) t.remove_prefix(colon + 1);
  }
  return true;
}

struct NamedPort {
  const char* name;
  uint16_t port;
};
constexpr NamedPort kNamedPorts[] = {
    {"in_port", kPortInPort}, {"table", kPortTable}, {"normal", kPortNormal},
    {"flood", kPortFlood},    {"all", kPortAll},     {"controller", kPortController},
    {"local", kPortLocal},    {"none", kPortNone},
};

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
  return true;
}

// A port: 1..0xff00 or a reserved name (any case: ovs-ofctl prints LOCAL).
bool parse_port(std::string_view t, uint16_t& out) {
  for (const NamedPort& n : kNamedPorts)
    if (iequal(t, n.name)) {
      out = n.port;
      return true;
    }
  uint64_t v = 0;
  if (!parse_uint(t, 0xffff, v) || v == 0 || (v >= kPortMax && v < kPortInPort)) return false;
  out = uint16_t(v);
  return true;
}

std::string port_text(uint16_t p) {
  for (const NamedPort& n : kNamedPorts)
    if (n.port == p) {
      std::string s = n.name;
      for (char& c : s) c = char(c - 32 * (c >= 'a' && c <= 'z'));
      return s;
    }
  return std::to_string(p);
}

Status field_error(std::string_view item, std::string_view why) {
  return Status(Errc::kParseError, std::string(item) + ": " + std::string(why));
}

// Which fields were given, so a repeat (tcp,nw_proto=17) is an error.
enum Given : uint32_t {
  kGivenInPort = 1, kGivenVlan = 2, kGivenSrc = 4, kGivenDst = 8, kGivenType = 16,
  kGivenProto = 32, kGivenTpSrc = 64, kGivenTpDst = 128, kGivenNwSrc = 256, kGivenNwDst = 512,
  kGivenPcp = 1024, kGivenTos = 2048,
};

struct Parser {
  FlowSpec spec;
  uint32_t given = 0;
  uint32_t wc    = kWcAll;

  Status take(uint32_t bit, std::string_view name) {
    if (given & bit) return Status(Errc::kParseError, std::string(name) + ": given twice");
    given |= bit;
    return Status::ok();
  }

  Status shorthand(std::string_view s) {
    uint16_t type = kEthIp;
    int proto     = -1;
    if (s == "ip") {
    } else if (s == "tcp") {
      proto = 6;
    } else if (s == "udp") {
      proto = 17;
    } else if (s == "icmp") {
      proto = 1;
    } else if (s == "sctp") {
      proto = 132;
    } else if (s == "arp") {
      type = kEthArp;
    } else if (s == "rarp") {
      type = kEthRarp;
    } else if (s == "ipv6" || s == "tcp6" || s == "udp6" || s == "icmp6" || s == "sctp6") {
      return field_error(s, "IPv6 fields need OpenFlow 1.2 or later (OpenFlow 1.0 matches "
                            "IPv6 by dl_type=0x86dd only)");
    } else {
      return field_error(s, "unknown field or shorthand");
    }
    WARPATH_TRY(take(kGivenType, s));
    spec.match.f.dl_type = type;
    wc &= ~kWcDlType;
    if (proto >= 0) {
      WARPATH_TRY(take(kGivenProto, s));
      spec.match.f.nw_proto = uint8_t(proto);
      wc &= ~kWcNwProto;
    }
    return Status::ok();
  }

  Status number(std::string_view item, std::string_view v, uint64_t max, uint64_t& out) {
    if (v.find('/') != std::string_view::npos)
      return field_error(item, "masks on this field need OpenFlow 1.1 or NXM, not OpenFlow 1.0");
    if (!parse_uint(v, max, out))
      return field_error(item, "not a number 0.." + std::to_string(max));
    return Status::ok();
  }

  Status nw_prefix(std::string_view item, std::string_view v, uint32_t& addr, unsigned& len) {
    const size_t slash = v.find('/');
    if (!net::parse_ipv4(v.substr(0, slash), addr))
      return field_error(item, "not an IPv4 address");
    len = 32;
    if (slash == std::string_view::npos) return Status::ok();
    const std::string_view m = v.substr(slash + 1);
    uint64_t n               = 0;
    uint32_t dotted          = 0;
    if (parse_uint(m, 32, n)) {
      len = unsigned(n);
    } else if (net::parse_ipv4(m, dotted)) {
      // A dotted mask is fine when it is a prefix.
      unsigned ones = 0;
      while (ones < 32 && (dotted >> (31 - ones) & 1)) ++ones;
      if (ones < 32 && (dotted << ones) != 0)
        return field_error(item, "not a CIDR prefix (OpenFlow 1.0 cannot express it)");
      len = ones;
    } else {
      return field_error(item, "bad mask");
    }
    return Status::ok();
  }

  Status field(std::string_view item, std::string_view key, std::string_view v, FlowText kind) {
    packet::OfFields& f = spec.match.f;
    uint64_t n          = 0;
    if (key == "priority") {
      WARPATH_TRY(number(item, v, 0xffff, n));
      spec.priority = uint16_t(n);
    } else if (key == "cookie") {
      if (v.find('/') != std::string_view::npos)
        return field_error(item, "cookie masks need OpenFlow 1.1 or NXM, not OpenFlow 1.0");
      WARPATH_TRY(number(item, v, ~0ull, n));
      spec.cookie = n;
    } else if (key == "idle_timeout" || key == "hard_timeout") {
      if (kind == FlowText::kFilter) return field_error(item, "not allowed in a filter");
      WARPATH_TRY(number(item, v, 0xffff, n));
      (key == "idle_timeout" ? spec.idle_timeout : spec.hard_timeout) = uint16_t(n);
    } else if (key == "out_port") {
      if (kind != FlowText::kFilter) return field_error(item, "only for deletes and filters");
      if (!parse_port(v, spec.out_port)) return field_error(item, "not a port");
    } else if (key == "in_port") {
      WARPATH_TRY(take(kGivenInPort, key));
      if (!parse_port(v, f.in_port) || (f.in_port >= kPortMax && f.in_port != kPortLocal))
        return field_error(item, "not a port number 1..65279 or LOCAL");
      wc &= ~kWcInPort;
    } else if (key == "dl_src" || key == "dl_dst") {
      const bool src = key == "dl_src";
      WARPATH_TRY(take(src ? kGivenSrc : kGivenDst, key));
      if (v.find('/') != std::string_view::npos)
        return field_error(item, "Ethernet masks need NXM, not OpenFlow 1.0");
      if (!parse_mac(v, src ? f.dl_src : f.dl_dst))
        return field_error(item, "not a MAC address xx:xx:xx:xx:xx:xx");
      wc &= ~(src ? kWcDlSrc : kWcDlDst);
    } else if (key == "dl_vlan") {
      WARPATH_TRY(take(kGivenVlan, key));
      WARPATH_TRY(number(item, v, 0xffff, n));
      if (n > 4095 && n != 0xffff) return field_error(item, "a VLAN id is 0..4095 (0xffff: no tag)");
      f.dl_vlan = uint16_t(n);
      wc &= ~kWcDlVlan;
    } else if (key == "dl_vlan_pcp") {
      WARPATH_TRY(take(kGivenPcp, key));
      WARPATH_TRY(number(item, v, 7, n));
      f.dl_vlan_pcp = uint8_t(n);
      wc &= ~kWcDlVlanPcp;
    } else if (key == "dl_type") {
      WARPATH_TRY(take(kGivenType, key));
      WARPATH_TRY(number(item, v, 0xffff, n));
      f.dl_type = uint16_t(n);
      wc &= ~kWcDlType;
    } else if (key == "nw_tos") {
      WARPATH_TRY(take(kGivenTos, key));
      WARPATH_TRY(number(item, v, 255, n));
      f.nw_tos = uint8_t(n & 0xfc);  // DSCP bits only, as ovs-ofctl
      wc &= ~kWcNwTos;
    } else if (key == "nw_proto" || key == "arp_op") {
      WARPATH_TRY(take(kGivenProto, key));
      WARPATH_TRY(number(item, v, 255, n));
      f.nw_proto = uint8_t(n);
      wc &= ~kWcNwProto;
    } else if (key == "nw_src" || key == "nw_dst" || key == "arp_spa" || key == "arp_tpa") {
      const bool src = key == "nw_src" || key == "arp_spa";
      WARPATH_TRY(take(src ? kGivenNwSrc : kGivenNwDst, key));
      uint32_t a   = 0;
      unsigned len = 32;
      WARPATH_TRY(nw_prefix(item, v, a, len));
      (src ? f.nw_src : f.nw_dst) = a;
      const unsigned shift        = src ? kWcNwSrcShift : kWcNwDstShift;
      wc = (wc & ~(63u << shift)) | (32 - len) << shift;
    } else if (key == "tp_src" || key == "tp_dst" || key == "icmp_type" || key == "icmp_code") {
      const bool src = key == "tp_src" || key == "icmp_type";
      WARPATH_TRY(take(src ? kGivenTpSrc : kGivenTpDst, key));
      WARPATH_TRY(number(item, v, key[0] == 'i' ? 255 : 0xffff, n));
      (src ? f.tp_src : f.tp_dst) = uint16_t(n);
      wc &= ~(src ? kWcTpSrc : kWcTpDst);
    } else {
      return field_error(item, "unknown field");
    }
    return Status::ok();
  }

  Status action(std::string_view a) {
    Action x;
    const size_t colon       = a.find(':');
    const std::string_view k = a.substr(0, colon);
    const std::string_view v =
        colon == std::string_view::npos ? std::string_view() : a.substr(colon + 1);
    const bool has_v = colon != std::string_view::npos;
    uint64_t n       = 0;
    auto need = [&](uint64_t max) -> Status {
      if (!has_v || !parse_uint(v, max, n))
        return field_error(a, "needs a number 0.." + std::to_string(max));
      return Status::ok();
    };
    if (k == "drop" && !has_v) {
      if (!spec.actions.empty()) return field_error(a, "drop must be the only action");
      dropped = true;
      return Status::ok();
    }
    if (dropped) return field_error(a, "no action may follow drop");
    if (k == "output") {
      if (!has_v || !parse_port(v, x.port) || x.port == kPortNone || x.port == kPortTable)
        return field_error(a, "not an output port");
      if (x.port == kPortController) x.max_len = 0xffff;
    } else if (k == "controller") {
      x.port    = kPortController;
      x.max_len = 0xffff;
      if (has_v) {
        std::string_view len = v;
        if (len.substr(0, 8) == "max_len=") len.remove_prefix(8);
        if (!parse_uint(len, 0xffff, n)) return field_error(a, "max_len is 0..65535");
        x.max_len = uint16_t(n);
      }
    } else if (!has_v && (k == "in_port" || k == "flood" || k == "all" || k == "normal" ||
                          k == "local")) {
      (void)parse_port(k, x.port);
    } else if (!has_v && parse_uint(k, kPortMax - 1, n) && n > 0) {
      x.port = uint16_t(n);
    } else if (k == "enqueue") {
      const size_t c2 = v.find(':');
      if (!has_v || c2 == std::string_view::npos || !parse_port(v.substr(0, c2), x.port) ||
          !parse_uint(v.substr(c2 + 1), 0xffff'fffe, n))
        return field_error(a, "enqueue:PORT:QUEUE");
      x.type  = ActionType::kEnqueue;
      x.value = uint32_t(n);
    } else if (k == "mod_vlan_vid") {
      WARPATH_TRY(need(4095));
      x.type  = ActionType::kSetVlanVid;
      x.value = uint32_t(n);
    } else if (k == "mod_vlan_pcp") {
      WARPATH_TRY(need(7));
      x.type  = ActionType::kSetVlanPcp;
      x.value = uint32_t(n);
    } else if ((k == "strip_vlan" || k == "pop_vlan") && !has_v) {
      x.type = ActionType::kStripVlan;
    } else if (k == "mod_dl_src" || k == "mod_dl_dst") {
      if (!has_v || !parse_mac(v, x.mac)) return field_error(a, "needs a MAC address");
      x.type = k == "mod_dl_src" ? ActionType::kSetDlSrc : ActionType::kSetDlDst;
    } else if (k == "mod_nw_src" || k == "mod_nw_dst") {
      if (!has_v || !net::parse_ipv4(v, x.value)) return field_error(a, "needs an IPv4 address");
      x.type = k == "mod_nw_src" ? ActionType::kSetNwSrc : ActionType::kSetNwDst;
    } else if (k == "mod_nw_tos") {
      WARPATH_TRY(need(255));
      if (n & 3) return field_error(a, "not a valid TOS (a multiple of 4: the DSCP bits)");
      x.type  = ActionType::kSetNwTos;
      x.value = uint32_t(n);
    } else if (k == "mod_tp_src" || k == "mod_tp_dst") {
      WARPATH_TRY(need(0xffff));
      x.type  = k == "mod_tp_src" ? ActionType::kSetTpSrc : ActionType::kSetTpDst;
      x.value = uint32_t(n);
    } else {
      return field_error(a, "unknown action (OpenFlow 1.0 actions: output, in_port, flood, "
                            "all, normal, local, controller, drop, enqueue, mod_vlan_vid, "
                            "mod_vlan_pcp, strip_vlan, mod_dl_src, mod_dl_dst, mod_nw_src, "
                            "mod_nw_dst, mod_nw_tos, mod_tp_src, mod_tp_dst)");
    }
    if (spec.actions.size() >= kMaxActions)
      return field_error(a, "more than " + std::to_string(kMaxActions) +
                                " actions (a flow's statistics must fit one OpenFlow message)");
    spec.actions.push_back(x);
    return Status::ok();
  }
  static constexpr size_t kMaxActions = 4000;  // 16 bytes at most each: 64,000 < 65,535 - 100
  bool dropped = false;
};

}  // namespace

Result<FlowSpec> parse_flow(std::string_view text, FlowText kind) {
  Parser p;
  text              = trim(text);
  const size_t act  = text.find("actions=");
  std::string_view actions;
  bool has_actions = false;
  if (act != std::string_view::npos) {
    if (kind == FlowText::kFilter)
      return Status(Errc::kParseError, "actions: not allowed in a filter or a delete");
    actions     = trim(text.substr(act + 8));
    has_actions = true;
    text        = text.substr(0, act);
  }
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find_first_of(", \t", pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(pos, end - pos);
    pos                         = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      if (item == "send_flow_rem") {
        p.spec.flags |= kSendFlowRem;
      } else if (item == "check_overlap") {
        p.spec.flags |= kCheckOverlap;
      } else {
        WARPATH_TRY(p.shorthand(item));
      }
      continue;
    }
    WARPATH_TRY(p.field(item, item.substr(0, eq), item.substr(eq + 1), kind));
  }
  if (kind == FlowText::kFlow && !has_actions)
    return Status(Errc::kParseError, "actions: missing (actions=drop drops)");
  if (has_actions) {
    size_t a = 0;
    if (actions.empty()) return Status(Errc::kParseError, "actions: empty (actions=drop drops)");
    while (a <= actions.size()) {
      size_t e = actions.find(',', a);
      if (e == std::string_view::npos) e = actions.size();
      const std::string_view one = trim(actions.substr(a, e - a));
      if (one.empty()) return Status(Errc::kParseError, "actions: an empty action in the list");
      WARPATH_TRY(p.action(one));
      a = e + 1;
    }
  }
  p.spec.match = make_match(p.spec.match.f, p.wc);
  return p.spec;
}

Result<std::vector<FlowSpec>> parse_flow_file(std::string_view text, std::string_view name) {
  std::vector<FlowSpec> out;
  io::LineCursor cursor(text);
  std::string_view line;
  while (cursor.next(line)) {
    const size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    Result<FlowSpec> f = parse_flow(line, FlowText::kFlow);
    if (!f.is_ok()) return io::parse_error(name, cursor.line_number(), f.status().message());
    out.push_back(std::move(*f));
  }
  return out;
}

namespace {

std::string mac_text(const uint8_t* m) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4],
                m[5]);
  return buf;
}

std::string ip_text(uint32_t a) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255);
  return buf;
}

void add(std::string& out, std::string_view s) {
  if (!out.empty()) out += ',';
  out += s;
}

}  // namespace

std::string format_match(const Match& m) {
  const packet::OfFields& f = m.f;
  const uint32_t wc         = m.wildcards;
  std::string out;
  const bool type_exact = !(wc & kWcDlType), proto_exact = !(wc & kWcNwProto);
  bool proto_done = false;
  if (type_exact && f.dl_type == kEthIp) {
    if (proto_exact && (f.nw_proto == 6 || f.nw_proto == 17 || f.nw_proto == 1 || f.nw_proto == 132)) {
      add(out, f.nw_proto == 6 ? "tcp" : f.nw_proto == 17 ? "udp" : f.nw_proto == 1 ? "icmp" : "sctp");
      proto_done = true;
    } else {
      add(out, "ip");
    }
  } else if (type_exact && f.dl_type == kEthArp) {
    add(out, "arp");
  } else if (type_exact && f.dl_type == kEthRarp) {
    add(out, "rarp");
  }
  if (!(wc & kWcInPort)) add(out, "in_port=" + port_text(f.in_port));
  if (!(wc & kWcDlVlan)) add(out, f.dl_vlan == packet::kOfNoVlan ? std::string("dl_vlan=0xffff")
                                                                  : "dl_vlan=" + std::to_string(f.dl_vlan));
  if (!(wc & kWcDlVlanPcp) && f.dl_vlan != packet::kOfNoVlan) add(out, "dl_vlan_pcp=" + std::to_string(f.dl_vlan_pcp));
  if (!(wc & kWcDlSrc)) add(out, "dl_src=" + mac_text(f.dl_src));
  if (!(wc & kWcDlDst)) add(out, "dl_dst=" + mac_text(f.dl_dst));
  if (type_exact && f.dl_type != kEthIp && f.dl_type != kEthArp && f.dl_type != kEthRarp) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "dl_type=0x%04x", f.dl_type);
    add(out, buf);
  }
  const unsigned sl = m.nw_src_len(), dl = m.nw_dst_len();
  if (sl) add(out, "nw_src=" + ip_text(f.nw_src) + (sl < 32 ? "/" + std::to_string(sl) : ""));
  if (dl) add(out, "nw_dst=" + ip_text(f.nw_dst) + (dl < 32 ? "/" + std::to_string(dl) : ""));
  if (proto_exact && !proto_done) add(out, "nw_proto=" + std::to_string(f.nw_proto));
  if (!(wc & kWcNwTos)) add(out, "nw_tos=" + std::to_string(f.nw_tos));
  const bool icmp = proto_done && f.nw_proto == 1;
  if (!(wc & kWcTpSrc)) add(out, (icmp ? "icmp_type=" : "tp_src=") + std::to_string(f.tp_src));
  if (!(wc & kWcTpDst)) add(out, (icmp ? "icmp_code=" : "tp_dst=") + std::to_string(f.tp_dst));
  return out;
}

std::string format_actions(const std::vector<Action>& actions) {
  if (actions.empty()) return "drop";
  std::string out;
  for (const Action& a : actions) {
    switch (a.type) {
      case ActionType::kOutput:
        if (a.port == kPortController)
          add(out, "controller:" + std::to_string(a.max_len));
        else if (a.port > kPortMax)
          add(out, [&] {
            std::string s = port_text(a.port);
            for (char& c : s) c = char(c + 32 * (c >= 'A' && c <= 'Z'));
            return s;
          }());
        else
          add(out, "output:" + std::to_string(a.port));
        break;
      case ActionType::kEnqueue:
        add(out, "enqueue:" + port_text(a.port) + ":" + std::to_string(a.value));
        break;
      case ActionType::kSetVlanVid: add(out, "mod_vlan_vid:" + std::to_string(a.value)); break;
      case ActionType::kSetVlanPcp: add(out, "mod_vlan_pcp:" + std::to_string(a.value)); break;
      case ActionType::kStripVlan: add(out, "strip_vlan"); break;
      case ActionType::kSetDlSrc: add(out, "mod_dl_src:" + mac_text(a.mac)); break;
      case ActionType::kSetDlDst: add(out, "mod_dl_dst:" + mac_text(a.mac)); break;
      case ActionType::kSetNwSrc: add(out, "mod_nw_src:" + ip_text(a.value)); break;
      case ActionType::kSetNwDst: add(out, "mod_nw_dst:" + ip_text(a.value)); break;
      case ActionType::kSetNwTos: add(out, "mod_nw_tos:" + std::to_string(a.value)); break;
      case ActionType::kSetTpSrc: add(out, "mod_tp_src:" + std::to_string(a.value)); break;
      case ActionType::kSetTpDst: add(out, "mod_tp_dst:" + std::to_string(a.value)); break;
    }
  }
  return out;
}

std::string format_flow(const FlowSpec& f) {
  std::string out;
  if (f.cookie) add(out, "cookie=" + std::to_string(f.cookie));
  if (f.idle_timeout) add(out, "idle_timeout=" + std::to_string(f.idle_timeout));
  if (f.hard_timeout) add(out, "hard_timeout=" + std::to_string(f.hard_timeout));
  if (f.flags & kSendFlowRem) add(out, "send_flow_rem");
  add(out, "priority=" + std::to_string(f.priority));
  const std::string m = format_match(f.match);
  if (!m.empty()) add(out, m);
  return out + " actions=" + format_actions(f.actions);
}

}  // namespace warpath::openflow
