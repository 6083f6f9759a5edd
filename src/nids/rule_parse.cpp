// One rule line into the rule model (nids/rule.hpp has the subset).
#include <cctype>
#include <cstdint>
#include <cstdlib>

#include "nids/rule_keywords.hpp"
#include "warpath/io/text_file.hpp"
#include "warpath/nids/rule.hpp"

namespace warpath::nids {
namespace {

using detail::content_bytes, detail::parse_byte, detail::parse_flags, detail::parse_flow,
    detail::parse_flowbits, detail::parse_int, detail::parse_numtest, detail::parse_pcre,
    detail::parse_threshold, detail::syntax, detail::unsupported;

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

Content* last_content(Rule& r) {
  for (auto it = r.items.rbegin(); it != r.items.rend(); ++it)
    if (it->kind == Item::kContent) return &it->content;
  return nullptr;
}

Status check_content(const Content& c) {
  const int32_t len = int32_t(c.bytes.size());
  if ((c.has_offset || c.has_depth) && c.relative())
    return syntax("content \"" + c.bytes + "\": offset/depth with distance/within");
  if (c.has_depth && c.depth_var < 0 && c.depth < len) return syntax("content: depth " + std::to_string(c.depth) + " is shorter than the content");
  if (c.has_within && c.within_var < 0 && c.within < len) return syntax("content: within " + std::to_string(c.within) + " is shorter than the content");
  if (c.startswith && (c.has_offset || c.has_depth || c.relative()))
    return syntax("content: startswith with offset, depth, distance or within");
  return Status::ok();
}

// Items after base64_data look at what their base64_decode decoded: its buffer, no other (a
// legacy modifier or a pcre buffer flag would move one elsewhere).
Status check_decoded(const Rule& r) {
  const Item* decode = nullptr;
  for (const Item& it : r.items) {
    if (it.kind == Item::kBase64Decode && !it.decoded) decode = &it;
    if (it.decoded && (!decode || it.buffer != decode->buffer || it.dotprefix != decode->dotprefix))
      return syntax("an item after base64_data names another buffer (it looks at the decoded bytes)");
  }
  return Status::ok();
}

// A byte_extract variable is read only by items of the buffer it was extracted from.
Status check_byte_vars(const Rule& r) {
  // (buffer, in the decoded bytes) of each variable's byte_extract, once it was seen: a
  // modifier may attach to a content before the byte_extract it names (content; byte_extract;
  // depth:var), which would read the variable before it is set.
  std::vector<std::pair<AppBuffer, bool>> home(r.byte_vars.size(), {AppBuffer::kPayload, false});
  std::vector<bool> set(r.byte_vars.size(), false);
  for (const Item& it : r.items) {
    if (it.kind == Item::kByteExtract) home[size_t(it.byte.var)] = {it.buffer, it.decoded}, set[size_t(it.byte.var)] = true;
    const int8_t used[] = {it.content.offset_var,  it.content.depth_var, it.content.distance_var,
                           it.content.within_var,  it.isdataat.offset_var, it.byte.bytes_var,
                           it.byte.offset_var,     it.byte.value_var};
    for (int8_t v : used)
      if (v >= 0 && !set[size_t(v)])
        return syntax("byte_extract variable '" + r.byte_vars[size_t(v)] + "' read before the byte_extract that sets it");
    for (int8_t v : used)
      if (v >= 0 && home[size_t(v)] != std::pair(it.buffer, it.decoded))
        return syntax("byte_extract variable '" + r.byte_vars[size_t(v)] + "' read in another buffer");
  }
  return Status::ok();
}

const char* const kInformational[] = {"reference", "metadata", "target", "tag", "rawbytes", "prefilter"};

// msg:"..." with its backslash escapes removed.
Status parse_msg(std::string_view value, Rule& r) {
  std::string_view m = value;
  if (m.size() >= 2 && m.front() == '"' && m.back() == '"') m = m.substr(1, m.size() - 2);
  r.msg.clear();
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] == '\\' && i + 1 < m.size()) ++i;
    r.msg.push_back(m[i]);
  }
  return Status::ok();
}

// content:["!"]"bytes|hex|": a content item, its modifiers to follow.
Status parse_content(std::string_view value, Rule& r) {
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

// isdataat:["!"]N[, relative|rawbytes].
Status parse_isdataat(std::string_view value, Rule& r) {
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
  auto n = detail::number_or_var(v, "isdataat", "offset", 0, 65535, r.byte_vars, it.isdataat.offset_var);
  if (!n.is_ok()) return n.status();
  it.isdataat.offset = int32_t(*n);
  r.items.push_back(std::move(it));
  return Status::ok();
}

// The buffers a rule's items look at, as its options name them: a sticky buffer keyword applies
// to the items after it, a legacy modifier (http_uri) and a pcre flag to their own item. Which
// side a buffer both sides have (http.header, file_data) is decided once the rule is read.
struct BufferState {
  bool sticky_set = false;
  bool dotprefix  = false;  // the sticky buffer's transform
  // A keyword outside the subset that takes no value, as a sticky buffer does (tls.random): the
  // rule is skipped for it, and what follows (bsize, dotprefix) is no syntax error.
  bool unknown_sticky = false;
  BufferKeyword sticky;
  std::vector<BufferKeyword> item;  // per item of the rule (kPayload: the payload)
  // base64_data: the items after it look at what the last base64_decode (of buffer b64_home)
  // decoded, until a sticky buffer keyword.
  bool in_decoded = false, has_decode = false;
  BufferKeyword b64_home;

  // Items parse_option added take the sticky buffer (a pcre its flag's).
  void took(Rule& r) {
    for (size_t k = item.size(); k < r.items.size(); ++k) {
      BufferKeyword kw = sticky_set ? sticky : BufferKeyword{};
      if (in_decoded) kw = b64_home;
      r.items[k].decoded = in_decoded;
      if (r.items[k].kind == Item::kBase64Decode) has_decode = true, b64_home = kw;
      r.items[k].dotprefix = sticky_set && dotprefix;
      if (r.items[k].kind == Item::kPcre && r.items[k].pcre.buffer_flag)
        find_pcre_buffer(r.items[k].pcre.buffer_flag, kw);
      item.push_back(kw);
    }
  }

  Status resolve(Rule& r) {
    bool app = false, request = r.flow.to_server, response = r.flow.to_client;
    bool request_only = false, response_only = false;
    for (const BufferKeyword& kw : item) {
      if (kw.request == AppBuffer::kPayload) continue;
      app = true;
      if (kw.request == kw.response) (app_buffer_is_response(kw.request) ? response_only : request_only) = true;
    }
    if (request_only && response_only)
      return syntax("buffers of the request and of the response in one rule (conflicting directions)");
    if ((r.flow.to_server && response_only) || (r.flow.to_client && request_only))
      return syntax(std::string("flow:") + (r.flow.to_server ? "to_server" : "to_client") +
                    " with buffers of the other direction (conflicting directions)");
    request  = request || request_only;
    response = response || response_only;
    bool payload = false;
    for (size_t k = 0; k < r.items.size(); ++k) {
      const BufferKeyword& kw = item[k];
      if (kw.request == AppBuffer::kPayload) {
        payload = true;
        continue;
      }
      const bool resp = response || (!request && kw.response_default);
      r.items[k].buffer = resp ? kw.response : kw.request;
    }
    if (!app) return Status::ok();
    // A protocol warpath only detects has no buffers here (smtp's file_data is its mail's).
    if (r.app != AppLayer::kNone && !app_layer_parsed(r.app))
      for (const BufferKeyword& kw : item)
        if (kw.request != AppBuffer::kPayload)
          return unsupported(std::string("app-layer proto ") + app_layer_name(r.app) + " buffers");
    AppLayer layer = AppLayer::kNone;
    for (const Item& it : r.items) {
      const AppLayer l = app_buffer_layer(it.buffer);
      if (l == AppLayer::kNone) continue;
      if (layer != AppLayer::kNone && l != layer)
        return syntax(std::string("buffers of ") + app_layer_name(layer) + " and " + app_layer_name(l) + " in one rule");
      layer = l;
    }
    if (r.app != AppLayer::kNone && r.app != layer)
      return syntax(std::string(app_layer_name(layer)) + " buffers in an " + app_layer_name(r.app) + " rule");
    const bool tcp_only = layer != AppLayer::kDns;
    if (tcp_only ? r.proto != Proto::kTcp && r.proto != Proto::kIp
                 : r.proto != Proto::kTcp && r.proto != Proto::kUdp && r.proto != Proto::kIp)
      return syntax(std::string(app_layer_name(layer)) + " buffers in a rule for " + proto_name(r.proto));
    if (payload && layer == AppLayer::kDns)
      return unsupported("payload content beside dns buffers");
    // HTTP and TLS payload items look at the transaction's raw stream (app_layer.hpp).
    if (tcp_only) r.proto = Proto::kTcp;
    r.app = layer;
    return Status::ok();
  }
};

// A buffer keyword (sticky, legacy modifier), bsize or urilen; kNotFound for any other option.
Status buffer_option(std::string_view name, std::string_view value, bool has_value, Rule& r,
                     BufferState& st) {
  BufferKeyword kw;
  if (find_buffer_keyword(name, kw)) {
    if (has_value) return syntax(std::string(name) + " takes no value");
    if (kw.sticky) {
      if (st.in_decoded) return syntax(std::string(name) + " after base64_data (the buffer cannot change there)");
      st.sticky     = kw;
      st.sticky_set = true;
      st.dotprefix  = false;  // a transform applies to the buffer it follows
      return Status::ok();
    }
    // A legacy modifier: the content before it (and only a content) looks at the buffer.
    for (size_t k = r.items.size(); k-- > 0;) {
      if (r.items[k].kind != Item::kContent) continue;
      if (st.item[k].request != AppBuffer::kPayload && st.sticky_set)
        return syntax(std::string(name) + " after a sticky buffer");
      st.item[k] = kw;
      return Status::ok();
    }
    return syntax(std::string(name) + " without a preceding content");
  }
  if (name == "base64_data") {
    if (has_value) return syntax("base64_data takes no value");
    if (!st.has_decode) return syntax("base64_data without a base64_decode before it");
    st.in_decoded = true;
    return Status::ok();
  }
  if (name == "base64_decode" && st.in_decoded) return syntax("base64_decode after base64_data");
  if (name == "dotprefix") {  // a transform of the sticky buffer: "." + its bytes
    if (has_value) return syntax("dotprefix takes no value");
    if (st.in_decoded) return syntax("dotprefix after base64_data");
    if (!st.sticky_set && !st.unknown_sticky) return syntax("dotprefix without a sticky buffer before it");
    st.dotprefix = true;
    return Status::ok();
  }
  if (name == "bsize" || name == "urilen") {
    if (!has_value || value.empty()) return syntax(std::string(name) + " needs a value");
    std::string_view v = value;
    BufferKeyword where = st.sticky;
    if (name == "urilen") {
      find_buffer_keyword("http.uri", where);
      if (size_t comma = v.find(','); comma != std::string_view::npos) {
        const std::string_view opt = io::trim(v.substr(comma + 1));
        if (opt == "raw") find_buffer_keyword("http.uri.raw", where);
        else if (opt != "norm") return syntax("urilen: unknown option '" + std::string(opt) + "'");
        v = io::trim(v.substr(0, comma));
      }
    } else if (!st.sticky_set && !st.unknown_sticky && !st.in_decoded) {
      return syntax("bsize without a sticky buffer before it");
    }
    auto t = parse_numtest(v, name);
    if (!t.is_ok()) return t.status();
    Item it;
    it.kind      = Item::kBsize;
    it.size      = *t;
    it.dotprefix = name == "bsize" && st.dotprefix;
    if (st.in_decoded && name == "bsize") it.decoded = true, where = st.b64_home;  // the decoded length
    r.items.push_back(std::move(it));
    st.item.push_back(where);
    return Status::ok();
  }
  return Status(Errc::kNotFound, "");
}

// content and its modifiers (nocase, fast_pattern, offset, depth, distance, within, ...);
// kNotFound for any other option.
Status content_option(std::string_view name, std::string_view value, bool has_value, Rule& r) {
  auto need_value = [&]() -> Status {
    return has_value && !value.empty() ? Status::ok() : syntax(std::string(name) + " needs a value");
  };
  auto modifier = [&](auto apply) -> Status {
    Content* c = last_content(r);
    if (!c) return syntax(std::string(name) + " without a preceding content");
    return apply(*c);
  };
  auto int_modifier = [&](bool Content::*has, int32_t Content::*field, int8_t Content::*var,
                          int64_t lo) -> Status {
    WARPATH_TRY(need_value());
    int8_t index = -1;
    auto n = detail::number_or_var(value, name, "value", lo, 65535, r.byte_vars, index);
    if (!n.is_ok()) return n.status();
    return modifier([&](Content& c) -> Status {
      if (c.*has) return syntax(std::string(name) + " given twice for one content");
      c.*has   = true;
      c.*field = int32_t(*n);
      c.*var   = index;
      return Status::ok();
    });
  };

  if (name == "content") {
    WARPATH_TRY(need_value());
    return parse_content(value, r);
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
  if (name == "offset") return int_modifier(&Content::has_offset, &Content::offset, &Content::offset_var, 0);
  if (name == "depth") return int_modifier(&Content::has_depth, &Content::depth, &Content::depth_var, 1);
  if (name == "distance")
    return int_modifier(&Content::has_distance, &Content::distance, &Content::distance_var, -65535);
  if (name == "within") return int_modifier(&Content::has_within, &Content::within, &Content::within_var, 1);
  return Status(Errc::kNotFound, "");
}

// tls.version: a TLS rule's version (1.0 .. 1.3, or 0xNNNN as given).
Status parse_tls_version(std::string_view value, Rule& r) {
  if (r.app != AppLayer::kNone && r.app != AppLayer::kTls)
    return syntax(std::string("tls.version in an ") + app_layer_name(r.app) + " rule");
  if (r.proto != Proto::kTcp && r.proto != Proto::kIp) return syntax(std::string("tls.version in a rule for ") + proto_name(r.proto));
  static constexpr std::pair<std::string_view, uint16_t> kVersions[] = {
      {"1.0", 0x0301}, {"1.1", 0x0302}, {"1.2", 0x0303}, {"1.3", 0x0304}};
  for (const auto& [text, number] : kVersions)
    if (value == text) r.tls_version = number;
  if (!r.tls_version) {
    int8_t no_var = -1;
    auto n = detail::number_or_var(value, "tls.version", "version", 1, 0xffff, {}, no_var);
    if (!n.is_ok() || !value.starts_with("0x"))
      return syntax("tls.version: '" + std::string(value) + "' (1.0, 1.1, 1.2, 1.3 or 0xNNNN)");
    r.tls_version     = uint16_t(*n);
    r.tls_version_raw = true;
  }
  r.proto = Proto::kTcp;
  r.app   = AppLayer::kTls;
  return Status::ok();
}

Status parse_option(std::string_view name, std::string_view value, bool has_value, Rule& r) {
  auto need_value = [&]() -> Status {
    return has_value && !value.empty() ? Status::ok() : syntax(std::string(name) + " needs a value");
  };
  if (Status s = content_option(name, value, has_value, r); s.code() != Errc::kNotFound) return s;
  if (name == "msg") {
    WARPATH_TRY(need_value());
    return parse_msg(value, r);
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
    return parse_isdataat(value, r);
  }
  if (name == "byte_test" || name == "byte_jump") {
    WARPATH_TRY(need_value());
    auto it = parse_byte(value, name == "byte_jump", r.byte_vars);
    if (!it.is_ok()) return it.status();
    r.items.push_back(std::move(*it));
    return Status::ok();
  }
  if (name == "base64_decode") {
    auto it = detail::parse_base64_decode(has_value ? value : std::string_view{});
    if (!it.is_ok()) return it.status();
    r.items.push_back(std::move(*it));
    return Status::ok();
  }
  if (name == "byte_extract") {
    WARPATH_TRY(need_value());
    auto it = detail::parse_byte_extract(value, r.byte_vars);
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
  if (name == "flowint") {
    WARPATH_TRY(need_value());
    return detail::parse_flowint(value, r);
  }
  if (name == "xbits") {
    WARPATH_TRY(need_value());
    return detail::parse_xbits(value, r);
  }
  if (name == "ip_proto") {
    WARPATH_TRY(need_value());
    auto t = detail::parse_ip_proto(value);
    if (!t.is_ok()) return t.status();
    r.ip_proto = *t;
    return Status::ok();
  }
  if (name == "tls.version") {
    WARPATH_TRY(need_value());
    return parse_tls_version(value, r);
  }
  if (name == "stream_size") {
    WARPATH_TRY(need_value());
    auto t = detail::parse_stream_size(value);
    if (!t.is_ok()) return t.status();
    r.stream_size = *t;
    return Status::ok();
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
  else if (proto == "http1") r.proto = Proto::kTcp, r.app = AppLayer::kHttp;
  else {  // an application protocol by its name: DNS over UDP and TCP, the others over TCP
    for (size_t a = 1; a < kAppLayers && r.app == AppLayer::kNone; ++a)
      if (proto == app_layer_name(AppLayer(a))) r.app = AppLayer(a);
    if (r.app == AppLayer::kNone) return unsupported("app-layer proto " + std::string(proto));
    r.proto = r.app == AppLayer::kDns ? Proto::kIp : Proto::kTcp;
  }
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
  BufferState buffers;
  for (std::string_view opt : split_options(line.substr(open + 1, close - open - 1))) {
    const size_t colon = opt.find(':');
    const std::string_view name  = io::trim(opt.substr(0, colon));
    const std::string_view value = colon == std::string_view::npos ? std::string_view{} : io::trim(opt.substr(colon + 1));
    Status s = buffer_option(name, value, colon != std::string_view::npos, r, buffers);
    if (s.code() == Errc::kNotFound) s = parse_option(name, value, colon != std::string_view::npos, r);
    buffers.took(r);
    if (s.code() == Errc::kNotSupported) {
      if (colon == std::string_view::npos) buffers.unknown_sticky = true;
      if (first_unsupported.is_ok()) first_unsupported = s;
      continue;  // syntax errors later in the rule still count as such
    }
    if (!s.is_ok()) return s;
  }
  if (r.sid == 0) return syntax("no sid");
  if (!first_unsupported.is_ok()) return first_unsupported;
  WARPATH_TRY(buffers.resolve(r));
  WARPATH_TRY(check_decoded(r));
  WARPATH_TRY(check_byte_vars(r));
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
