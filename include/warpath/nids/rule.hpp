// include/warpath/nids/rule.hpp
//
// Suricata/Snort rules: the subset of the rule language that ET Open and the Snort community
// set use on plain TCP, UDP, ICMP and IP traffic, parsed into an immutable rule model that the
// detection engines (nids/detect.hpp) compile.
//
// Syntax (Suricata's; docs.suricata.io "Rules Format")
//   ACTION PROTO SRC SPORT DIR DST DPORT (KEYWORD[:VALUE]; ...)
//   action     alert, drop, reject (as drop), pass
//   proto      ip, tcp, udp, icmp, tcp-pkt (packets only), tcp-stream (streams only);
//              http, tls, dns (parsed), ftp, smtp, ssh, smb (detected only): the flows found
//              by content to speak it (nids/app_layer.hpp); other application protocols
//              (dcerpc, ftp-data, ...) are skipped
//   addresses  any, an address or prefix (IPv4/IPv6), a variable ($HOME_NET), a list [a,b],
//              negation !a, !$VAR, ![a,b], nested lists
//   ports      any, N, N:M, N:, :M, a variable ($HTTP_PORTS), lists and negation as above
//   dir        -> or <> (both directions)
//   Keywords
//     msg, sid, rev, gid, classtype, priority, reference, metadata, target (informational)
//     content:"..." (|41 42| hex, \" \; \\ escapes; ! negation) with nocase, offset, depth,
//       distance, within, startswith, endswith, fast_pattern (also :only and :N,M),
//       rawbytes (no-op: there is no normalised buffer)
//     pcre:"/re/flags" (! negation; flags i s m x A E G R; the HTTP buffer flags below)
//     isdataat:N[,relative] (! negation)
//     byte_test:N,[!]OP,VALUE,OFFSET[,relative][,big|little][,string,hex|dec|oct][,bitmask M]
//     byte_jump:N,OFFSET[,relative][,multiplier M][,big|little][,string,hex|dec|oct][,align]
//       [,from_beginning|from_end][,post_offset P][,bitmask M]
//     byte_extract:N,OFFSET,NAME[,relative][,multiplier M][,big|little][,string[,hex|dec|oct]]
//       [,align 2|4]: the number into variable NAME and the cursor after it; a later item of
//       the same buffer may take NAME for byte_test's size, value and offset, byte_jump's size
//       and offset, isdataat's offset and content's offset, depth, distance and within
//       (dce is outside the subset)
//     flow: established, not_established, stateless, to_server/from_client,
//       to_client/from_server, only_stream, no_stream
//     dsize: N, <N, >N, N<>M, !N
//     ip_proto: [!|<|>]N or a protocol name (tcp, udp, icmp, ipv6-icmp, gre, esp, ipv6, ...)
//     stream_size: client|server|both|either, < > = != <= >=, N (TCP only: a side's next
//       sequence number less its ISN; 0 before it is seen)
//     base64_decode[:bytes N][,offset N][,relative], then base64_data: the items after it look
//       at the decoded bytes; when they match the rule does (Suricata's decoded list ends the
//       inspection; without base64_data the rule never matches; no buffer after base64_data)
//     tls.version: 1.0, 1.1, 1.2, 1.3 or 0xNNNN (the side's hello version; a tls rule)
//     prefilter (a hint to Suricata's engine choice: matches are the same without it)
//     flowint: NAME,= + - == != < <= > >=,N|NAME; NAME,isset|notset (integers of the flow)
//     xbits: set|unset|toggle|isset|isnotset,NAME,track ip_src|ip_dst|ip_pair[,expire S];
//       noalert (bits across flows, on a host or an address pair; 30 s unless told)
//     flowbits: set, unset, toggle, isset, isnotset (names joined with | or &), noalert;
//       noalert
//     flags: TCP flags (F S R P A U C E, 0; + * ! modifiers; ,mask)
//     itype, icode: N, <N, >N, N<>M
//     app-layer-protocol:[!]NAME (the flow's L7 label, nids/l7.hpp)
//     threshold: type limit|threshold|both, track by_src|by_dst|by_rule|by_both, count N,
//       seconds T; detection_filter: track ..., count N, seconds T (which matches alert)
//     HTTP buffers (nids/app_layer.hpp): sticky (http.uri, http.method, http.header,
//       file_data, ...), the legacy content modifiers (http_uri, http_header, ...) and pcre's
//       buffer flags (U I M H D C P Q S Y V W Z); bsize:N (the buffer's length), urilen:N;
//       DNS: dns.query (dns_query); TLS: tls.sni, tls.cert_subject, tls.cert_issuer,
//       tls.cert_serial, tls.cert_fingerprint, tls.certs, ja3.hash, ja3.string, ja3s.hash,
//       ja3s.string (and their underscore forms); the dotprefix transform
//   Anything else (app-layer-event, asn1, ssh_proto, ...) skips the rule
//   with the keyword as its reason; a malformed rule is a syntax error naming file, line and
//   what is wrong.
//
// Variables: Suricata's default address and port groups (HOME_NET is RFC 1918 space,
// EXTERNAL_NET is !$HOME_NET, the server groups are $HOME_NET, HTTP_PORTS is 80, ...), each
// replaceable (Vars::set).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/nids/app_layer.hpp"

namespace warpath::nids {

enum class Action : uint8_t { kAlert, kDrop, kPass };
enum class Proto : uint8_t { kIp, kTcp, kUdp, kIcmp, kTcpPkt, kTcpStream };
const char* action_name(Action a) noexcept;  ///< "alert", "drop", "pass"
const char* proto_name(Proto p) noexcept;    ///< "ip", "tcp", ...

/// An address prefix (network order; IPv4 in the first 4 bytes).
struct Prefix {
  uint8_t version = 4;
  uint8_t length  = 0;
  uint8_t addr[16] = {};
};

/// A set of addresses, as a list expression evaluates: (any, or in one of `include` or
/// `include_sets`) and in none of `exclude` or `exclude_sets`. Nested sets keep lists that mix
/// negations exact: ![a,!b] is everything but (a less b).
struct AddrSet {
  bool any = true;
  std::vector<Prefix> include, exclude;
  std::vector<AddrSet> include_sets, exclude_sets;
  bool contains(uint8_t version, const uint8_t* addr) const noexcept;
  /// Every address (plain `any`).
  bool unrestricted() const noexcept { return any && exclude.empty() && exclude_sets.empty(); }
};

struct PortRange {
  uint16_t lo = 0, hi = 65535;
};
struct PortSet {
  bool any = true;
  std::vector<PortRange> include, exclude;
  std::vector<PortSet> include_sets, exclude_sets;
  bool contains(uint16_t port) const noexcept;
  bool unrestricted() const noexcept { return any && exclude.empty() && exclude_sets.empty(); }
};

/// At most this many byte_extract variables in one rule.
inline constexpr uint32_t kMaxByteVars = 16;

/// A content match and its modifiers. Offsets and lengths are in bytes; `distance` may be
/// negative. A relative content (distance/within) is placed after the previous match. A
/// modifier given as a byte_extract variable holds its index in the `*_var` field (-1: the
/// number in the field itself).
struct Content {
  std::string bytes;
  bool nocase = false, negated = false, fast_pattern = false, fast_pattern_only = false;
  bool startswith = false, endswith = false;
  bool has_offset = false, has_depth = false, has_distance = false, has_within = false;
  int32_t offset = 0, depth = 0, distance = 0, within = 0;
  int8_t offset_var = -1, depth_var = -1, distance_var = -1, within_var = -1;
  bool relative() const noexcept { return has_distance || has_within; }
};

struct Pcre {
  std::string regex;  ///< between the slashes
  bool caseless = false, dotall = false, multiline = false, extended = false;
  bool anchored = false, dollar_endonly = false, ungreedy = false;
  bool relative = false, negated = false;
  char buffer_flag = 0;  ///< an HTTP buffer's flag (U, I, M, H, ...; app_layer.hpp), 0: none
};

struct IsDataAt {
  int32_t offset = 0;
  int8_t offset_var = -1;  ///< the offset from a byte_extract variable (-1: `offset`)
  bool relative = false, negated = false;
};

/// byte_test, byte_jump and byte_extract: a number read from the buffer (binary in either byte
/// order, or ASCII digits in base 8, 10 or 16), masked and shifted by `bitmask`. Its size,
/// offset and (byte_test) value may come from byte_extract variables (`*_var`, -1: the field).
struct ByteOp {
  uint8_t bytes = 1;
  int32_t offset = 0;
  int8_t bytes_var = -1, offset_var = -1, value_var = -1;
  // byte_extract: the variable it sets (Rule::byte_vars), and its value rounded up to a
  // multiple of align_to (2 or 4; 0: not) after the multiplier.
  int8_t var = -1;
  uint8_t align_to = 0;
  bool relative = false, little = false, string = false;
  uint8_t base = 10;      ///< string: 8, 10 or 16
  uint64_t bitmask = 0;   ///< 0: none
  // byte_test
  char op = '=';          ///< '<' '>' '=' '&' '^' 'l' (<=) 'g' (>=)
  bool negated = false;
  uint64_t value = 0;
  // byte_jump
  uint32_t multiplier = 1;
  bool align = false, from_beginning = false, from_end = false;
  int32_t post_offset = 0;
};

/// base64_decode: `bytes` of the buffer (after `offset` from its start, or from the previous
/// match when `relative`) decoded as base64 (as Suricata 7 does: RFC 4648, not strict, up to
/// the first character that is neither in the alphabet nor padding) for the items after
/// base64_data.
struct Base64Decode {
  uint32_t bytes = 65535, offset = 0;
  bool relative = false;
};

/// A numeric test: dsize, itype, icode, bsize, urilen.
struct NumTest {
  enum Op : uint8_t { kNone, kEq, kNe, kLt, kGt, kRange } op = kNone;
  uint32_t a = 0, b = 0;
  /// Inline: every candidate rule's header tests several (dsize, ip_proto, ...).
  bool matches(uint32_t v) const noexcept {
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
};

/// One payload condition, in rule order, and the buffer it looks at (kPayload: the packet's
/// payload or the stream; else an application-layer buffer, nids/app_layer.hpp).
struct Item {
  enum Kind : uint8_t {
    kContent, kPcre, kIsDataAt, kByteTest, kByteJump, kBsize, kByteExtract, kBase64Decode
  } kind = kContent;
  AppBuffer buffer = AppBuffer::kPayload;
  bool dotprefix   = false;  ///< the buffer's dotprefix transform ("." + the buffer)
  /// After base64_data: looks at what the last base64_decode before it (same buffer) decoded.
  bool decoded = false;
  Base64Decode b64;  ///< kBase64Decode
  Content content;
  Pcre pcre;
  IsDataAt isdataat;
  ByteOp byte;
  NumTest size;  ///< kBsize: the buffer's length (bsize; urilen is bsize on http.uri)
};

struct FlowOpt {
  bool established = false, not_established = false, stateless = false;
  bool to_server = false, to_client = false, only_stream = false, no_stream = false;
};

/// stream_size: a TCP session's size on a side (its next sequence number less its ISN:
/// the bytes it sent, plus one for its SYN and one for its FIN), tested against a number.
struct StreamSize {
  enum Side : uint8_t { kNone, kClient, kServer, kBoth, kEither } side = kNone;
  NumTest test;
};

struct Flowbit {
  enum Op : uint8_t { kSet, kUnset, kToggle, kIsSet, kIsNotSet } op = kSet;
  /// isset, isnotset: a condition of the rule (the others change bits when it matched).
  static constexpr bool condition(Op o) noexcept { return o == kIsSet || o == kIsNotSet; }
  std::vector<std::string> names;
  bool any = false;  ///< names joined with | (else all, &)
};

/// flowint: a named integer of the flow (unsigned 32 bits, wrapping), changed when the rule
/// matches (=, +, -: Suricata's post-match) or tested as one of its conditions (==, !=, <, <=,
/// >, >=: false while unset; isset, notset). The value is a number or another flowint (0 while
/// unset). + on an unset integer sets it; - leaves it unset.
struct Flowint {
  enum Op : uint8_t { kSet, kAdd, kSub, kEq, kNe, kLt, kLe, kGt, kGe, kIsSet, kNotSet } op = kSet;
  std::string name;
  uint32_t value = 0;
  std::string value_name;  ///< the value is this flowint's (empty: `value`)
  bool changes() const noexcept { return op == kSet || op == kAdd || op == kSub; }
};

/// xbits: a named bit kept on a host (the packet's source or destination address) or on an
/// address pair (either order), which expires `expire` seconds after it was set (Suricata's
/// host and ippair bits: state across flows).
struct Xbit {
  Flowbit::Op op = Flowbit::kSet;
  std::string name;
  enum Track : uint8_t { kIpSrc, kIpDst, kIpPair } track = kIpSrc;
  uint32_t expire = 30;  ///< seconds (Suricata's default)
};

struct TcpFlags {
  bool set = false;
  uint8_t bits = 0;   ///< flags that must be set (in their masked view)
  uint8_t mask = 0xff;  ///< flags that are compared (those after ',' are ignored)
  enum Mod : uint8_t { kExact, kPlus, kAny, kNot } mod = kExact;
  bool matches(uint8_t flags) const noexcept;
};

/// threshold / detection_filter: which matches alert, per tracked address and time window.
struct Threshold {
  enum Type : uint8_t { kNone, kLimit, kThreshold, kBoth, kDetectionFilter } type = kNone;
  enum Track : uint8_t { kBySrc, kByDst, kByRule, kByBoth } track = kBySrc;
  uint32_t count = 1, seconds = 60;
};

struct Rule {
  Action action = Action::kAlert;
  Proto proto   = Proto::kIp;
  AddrSet src, dst;
  PortSet sport, dport;
  bool bidirectional = false;
  std::string msg, classtype;
  uint32_t sid = 0, rev = 0, gid = 1;
  int32_t priority = 0;  ///< 0: the classtype's
  std::vector<Item> items;
  /// byte_extract's variable names, by index (the items' `*_var` fields); a variable is read
  /// only by later items of its own buffer.
  std::vector<std::string> byte_vars;
  FlowOpt flow;
  NumTest dsize, itype, icode;
  NumTest ip_proto;  ///< ip_proto: the packet's transport protocol number
  StreamSize stream_size;
  /// tls.version: the hello version of the packet's side (0: none asked), exactly when
  /// `tls_version_raw` (given in hex), else 1.3 takes 1.3's drafts too.
  uint16_t tls_version = 0;
  bool tls_version_raw = false;
  TcpFlags flags;
  std::vector<Flowbit> flowbits;
  std::vector<Xbit> xbits;
  std::vector<Flowint> flowints;
  Threshold threshold;
  /// The application protocol the rule is for (`alert http ...`, or a buffer of it): it sees
  /// flows whose protocol detection found it, and its buffers' transactions.
  AppLayer app = AppLayer::kNone;
  std::string app_proto;          ///< app-layer-protocol: the flow's L7 label must be this
  bool app_proto_negated = false; ///< ... must not be
  bool noalert = false;
  std::string text;   ///< the rule as written
  std::string where;  ///< "file:line"
  /// Whether the rule looks at the payload (content, pcre, isdataat, byte_test, byte_jump).
  bool has_payload() const noexcept {
    for (const Item& it : items)
      if (it.buffer == AppBuffer::kPayload) return true;
    return false;
  }
  /// Whether the rule looks at application-layer buffers (its transactions'), not the payload.
  bool has_app_buffers() const noexcept {
    for (const Item& it : items)
      if (it.buffer != AppBuffer::kPayload) return true;
    return false;
  }
};

/// Address and port variables ($HOME_NET, $HTTP_PORTS).
class Vars {
 public:
  /// Suricata's defaults.
  Vars();
  void set(const std::string& name, const std::string& value);
  /// The value of `name` (without $), or nullptr.
  const std::string* find(std::string_view name) const;
  /// "NAME=VALUE" (as --set-var takes it); kInvalidArgument when there is no '='.
  Status set_from(std::string_view assignment);

 private:
  std::map<std::string, std::string, std::less<>> vars_;
};

/// One rule line. kParseError for a malformed rule, kNotSupported (the message starting with
/// the keyword or the construct) for a rule outside the supported subset.
Result<Rule> parse_rule(std::string_view line, const Vars& vars, std::string_view where = {});

/// Parses an address or port expression alone (tests, the CLI).
Result<AddrSet> parse_addresses(std::string_view text, const Vars& vars);
Result<PortSet> parse_ports(std::string_view text, const Vars& vars);

/// classification.config: classtype -> (description, priority).
struct ClassType {
  std::string description;
  int32_t priority = 3;
};
using Classification = std::map<std::string, ClassType, std::less<>>;
/// Suricata's built-in default classification (the classification.config it ships).
const Classification& default_classification();
/// "config classification: NAME,DESCRIPTION,PRIORITY" lines; kParseError naming the line.
Result<Classification> parse_classification(std::string_view text, std::string_view name);

/// A skipped or broken rule.
struct RuleProblem {
  std::string where;   ///< file:line
  uint32_t sid = 0;
  std::string reason;  ///< the keyword or construct, then details
  bool syntax = false; ///< a syntax error (not a rule outside the subset)
};

/// The rules of one file, loaded and not.
struct FileReport {
  std::string path;
  uint32_t rules = 0;     ///< enabled rule lines
  uint32_t loaded = 0;
  uint32_t disabled = 0;  ///< commented-out rule lines (not counted in rules)
  std::vector<RuleProblem> problems;
};

struct RuleSet {
  std::vector<Rule> rules;  ///< loaded rules, in file order
  /// Evaluation order of the actions (Suricata's action-order; reject counts as drop).
  std::vector<Action> action_order = {Action::kPass, Action::kDrop, Action::kAlert};
  std::vector<FileReport> files;
  Classification classification = default_classification();
  uint32_t syntax_errors() const;
  uint32_t skipped() const;
};

/// Reads rules from files and directories (*.rules in a directory, sorted; .gz too) with
/// `read` (a file's text). kIoError when a path cannot be read; rules that are outside the
/// subset or malformed are listed in the reports, not failed. Duplicate (gid, sid) pairs: the
/// later rule is a problem.
Result<RuleSet> load_rules(const std::vector<std::string>& paths, const Vars& vars,
                           const std::function<Result<std::string>(const std::string&)>& read);
/// The same, reading with io::read_text_file (in warpath_io).
Result<RuleSet> load_rules(const std::vector<std::string>& paths, const Vars& vars);
/// The same for the text of one file (`name` for messages).
void add_rules_text(RuleSet& set, std::string_view text, std::string_view name, const Vars& vars);

/// "drop,pass,reject,alert" into an action order (reject is drop); kInvalidArgument unless each
/// of pass, drop and alert appears once.
Result<std::vector<Action>> parse_action_order(std::string_view text);

/// A rule's reason reduced to its keyword ("http.uri", "byte_test", "app-layer proto http"),
/// what `nids --check-rules` counts by.
std::string reason_key(const RuleProblem& p);

}  // namespace warpath::nids
