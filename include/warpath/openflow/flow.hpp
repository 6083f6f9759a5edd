// include/warpath/openflow/flow.hpp
//
// OpenFlow 1.0 flows: the 12-field match, the action list and the flow text of ovs-ofctl
// (PacketShader's OpenFlow switch, GSwitch's 12-field rules). flow_table.hpp keeps a table of
// them with OpenFlow 1.0 semantics; the `switch` module runs it.
//
// Match
//   The twelve fields of OpenFlow 1.0 (in_port, dl_src, dl_dst, dl_vlan, dl_vlan_pcp, dl_type,
//   nw_tos, nw_proto, nw_src, nw_dst, tp_src, tp_dst), each exact or wildcarded; nw_src and
//   nw_dst by prefix (CIDR only: OpenFlow 1.0 carries a count of ignored low bits). Kept as the
//   wire form says (OfFields + the wildcards word), and as value/mask over packet::OfTuple
//   (flow_key.hpp), the key the data path extracts from each packet.
//
// Normalisation (as Open vSwitch's ofputil_normalize_match)
//   Fields that the match's dl_type / nw_proto make meaningless are wildcarded: nw_* unless
//   dl_type is IPv4, ARP or RARP (nw_tos only for IPv4), tp_* unless the match is IPv4 with
//   nw_proto TCP, UDP, SCTP or ICMP (ICMP type and code sit in tp_src / tp_dst). dl_vlan 0xffff
//   ("no tag", Open vSwitch's vlan_tci=0x0000) makes dl_vlan_pcp exact 0. Wildcarded fields
//   read zero, nw_tos keeps its DSCP bits, so two matches that match the same packets compare
//   equal. One difference from Open vSwitch: dl_vlan_pcp without dl_vlan matches the PCP of a
//   tagged packet and reads 0 on an untagged one, where Open vSwitch requires a tag.
//
// Precedence (flow_table.hpp)
//   A match with no wildcard at all is an exact-match flow: OpenFlow 1.0 gives it priority over
//   every wildcarded flow, so it is stored at priority 65535 whatever was asked. Unlike Open
//   vSwitch, which looks at the wildcards as sent, warpath decides on the normalised match: an
//   ARP match with every wire field exact is not exact here (its ports are wildcarded), and an
//   untagged match exact in every other field is (its PCP is part of "no tag").
//
// Flow text (ovs-ofctl(8) "Flow Syntax", the OpenFlow 1.0 subset)
//   [priority=N][,cookie=N][,idle_timeout=S][,hard_timeout=S][,send_flow_rem][,check_overlap]
//   [,out_port=N (delete and filters)][,shorthand][,field=value[/prefix]]...[,actions=LIST]
//   shorthands: ip tcp udp icmp sctp arp rarp. Fields as above; icmp_type / icmp_code are
//   tp_src / tp_dst. Masks on dl_*, tp_* and non-CIDR nw masks are not OpenFlow 1.0: refused,
//   as ovs-ofctl -O OpenFlow10 refuses them. Actions, in list order: output:N (or N), in_port,
//   flood, all, normal, local, controller[:max_len], drop, enqueue:P:Q, mod_vlan_vid:V,
//   mod_vlan_pcp:P, strip_vlan, mod_dl_src:MAC, mod_dl_dst:MAC, mod_nw_src:IP, mod_nw_dst:IP,
//   mod_nw_tos:T (a multiple of 4 below 256), mod_tp_src:P, mod_tp_dst:P. An action whose
//   headers a packet does not have is a no-op on that packet (OpenFlow 1.0 accepts such
//   "inconsistent" pairs and so does Open vSwitch); at most 4,000 actions. Port names are the numbers 1..65279 (the
//   `--port` order of `warpath run`) and the reserved names.
//
//   Errors name the field and why ("nw_src=10.0.0.0/255.0.255.0: not a CIDR prefix (OpenFlow
//   1.0 cannot express it)"); a file's errors also name the file and line.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/packet/flow_key.hpp"

namespace warpath::openflow {

// OpenFlow 1.0 port numbers.
inline constexpr uint16_t kPortMax        = 0xff00;
inline constexpr uint16_t kPortInPort     = 0xfff8;
inline constexpr uint16_t kPortTable      = 0xfff9;
inline constexpr uint16_t kPortNormal     = 0xfffa;
inline constexpr uint16_t kPortFlood      = 0xfffb;
inline constexpr uint16_t kPortAll        = 0xfffc;
inline constexpr uint16_t kPortController = 0xfffd;
inline constexpr uint16_t kPortLocal      = 0xfffe;
inline constexpr uint16_t kPortNone       = 0xffff;

// The wildcards word of ofp_match (OpenFlow 1.0).
enum Wildcards : uint32_t {
  kWcInPort     = 1u << 0,
  kWcDlVlan     = 1u << 1,
  kWcDlSrc      = 1u << 2,
  kWcDlDst      = 1u << 3,
  kWcDlType     = 1u << 4,
  kWcNwProto    = 1u << 5,
  kWcTpSrc      = 1u << 6,
  kWcTpDst      = 1u << 7,
  kWcNwSrcShift = 8,  ///< 6 bits: how many low bits of nw_src are ignored (>= 32: all)
  kWcNwDstShift = 14,
  kWcNwSrcMask  = 63u << kWcNwSrcShift,
  kWcNwDstMask  = 63u << kWcNwDstShift,
  kWcDlVlanPcp  = 1u << 20,
  kWcNwTos      = 1u << 21,
  kWcAll        = (1u << 22) - 1,
  /// Every field wildcarded, nw counts 32: what ovs-ofctl sends for "match everything".
  kWcEverything = 0x003820ffu,
};

inline constexpr uint16_t kEthIp = 0x0800, kEthArp = 0x0806, kEthRarp = 0x8035, kEthVlan = 0x8100;

struct Match {
  packet::OfFields f;           ///< values; wildcarded fields read 0 (dl_vlan: 0)
  uint32_t wildcards = kWcEverything;  ///< Wildcards bits (nw counts stored as 0..32)

  unsigned nw_src_len() const noexcept { return len((wildcards & kWcNwSrcMask) >> kWcNwSrcShift); }
  unsigned nw_dst_len() const noexcept { return len((wildcards & kWcNwDstMask) >> kWcNwDstShift); }
  bool exact() const noexcept { return wildcards == 0; }
  /// value/mask over the OfTuple words: a key k matches when (k.w[i] & mask.w[i]) == value.w[i].
  packet::OfTuple value() const noexcept;
  packet::OfTuple mask() const noexcept;
  friend bool operator==(const Match& a, const Match& b) noexcept;

 private:
  static unsigned len(unsigned ignored) noexcept { return ignored >= 32 ? 0 : 32 - ignored; }
};

/// A match from the ofp_match wire fields (wildcard counts above 32 read as 32), normalised.
Match make_match(const packet::OfFields& f, uint32_t wildcards);
/// Applies the normalisation of the header comment in place.
void normalize(Match& m);
bool matches(const Match& m, const packet::OfTuple& key) noexcept;
/// Every packet `specific` matches, `general` matches too (OpenFlow's "loose" match of
/// non-strict MODIFY / DELETE and of statistics filters).
bool covers(const Match& general, const Match& specific) noexcept;
/// Some packet matches both.
bool overlaps(const Match& a, const Match& b) noexcept;
/// The mask of an exact match (every field): the exact-match table's key mask.
packet::OfTuple exact_mask() noexcept;

enum class ActionType : uint8_t {
  kOutput = 0,  // OpenFlow 1.0 wire codes
  kSetVlanVid,
  kSetVlanPcp,
  kStripVlan,
  kSetDlSrc,
  kSetDlDst,
  kSetNwSrc,
  kSetNwDst,
  kSetNwTos,
  kSetTpSrc,
  kSetTpDst,
  kEnqueue,
};

struct Action {
  ActionType type  = ActionType::kOutput;
  uint16_t port    = 0;  ///< output / enqueue port (reserved ports included)
  uint16_t max_len = 0;  ///< output to the controller: bytes sent (65535 = all)
  uint32_t value   = 0;  ///< vid, pcp, tos, tp port, IPv4 address (host order), enqueue queue
  uint8_t mac[6]   = {};
  friend bool operator==(const Action& a, const Action& b) noexcept;
};

/// ofp_flow_mod flags.
enum FlowFlags : uint16_t { kSendFlowRem = 1, kCheckOverlap = 2, kEmergency = 4 };

/// What a flow_mod or a flow-file line says.
struct FlowSpec {
  Match match;
  uint16_t priority     = 32768;
  uint64_t cookie       = 0;
  uint16_t idle_timeout = 0, hard_timeout = 0;  ///< seconds, 0 = never
  uint16_t flags        = 0;                    ///< FlowFlags
  uint16_t out_port     = kPortNone;            ///< DELETE and statistics filter
  std::vector<Action> actions;                  ///< empty = drop
};

/// What a line of text may hold: a flow to add or modify (actions required), or a match with
/// priority and out_port (delete-flows and dump-flows filters: no actions, no timeouts).
enum class FlowText : uint8_t { kFlow, kFilter };

/// One flow in ovs-ofctl syntax; kParseError "field: reason" otherwise.
Result<FlowSpec> parse_flow(std::string_view text, FlowText kind = FlowText::kFlow);
/// A flow file: one flow per line, '#' comments and blank lines skipped; errors
/// "name:line: field: reason". Empty files are fine (an empty table).
Result<std::vector<FlowSpec>> parse_flow_file(std::string_view text, std::string_view name);

/// "tcp,in_port=1,nw_src=10.0.0.0/8,tp_dst=80" ("" for match-all), in ovs-ofctl's order.
std::string format_match(const Match& m);
/// "mod_dl_dst:02:00:00:00:00:01,output:2" ("drop" when empty).
std::string format_actions(const std::vector<Action>& actions);
/// A whole flow as a line of a flow file (priority, cookie and timeouts when not default).
std::string format_flow(const FlowSpec& f);

/// Whether some action outputs to `port` (DELETE's and the filters' out_port).
bool outputs_to(const std::vector<Action>& actions, uint16_t port) noexcept;

}  // namespace warpath::openflow
