// compile_rules: loaded rules into the image the engines share (evaluation order, folded
// contents, compiled pcre, flowbits by index).
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cctype>
#include <tuple>
#include <map>
#include <numeric>

#include "nids/detect_image.hpp"
#include "nids/rule_keywords.hpp"

namespace warpath::nids {
namespace detail {

// A list's compiled pcre, and its base64_data lists'.
static void free_list(ItemList& l) {
  for (CompiledItem& it : l.items)
    if (it.code) pcre2_code_free(it.code);
  for (auto& sub : l.decoded_lists) free_list(*sub);
}

Image::~Image() {
  for (CompiledRule& r : compiled_) {
    free_list(r);
    for (AppList& l : r.app) free_list(l);
  }
}

ClassType Image::class_of(const Rule& r) const {
  ClassType c;
  if (auto it = classification_.find(r.classtype); it != classification_.end()) c = it->second;
  if (r.priority) c.priority = r.priority;
  return c;
}

namespace {

// Whether the rule has a content or pcre that must be found (what anchors a stream match in the
// chunk it alerts for); rules of only isdataat, byte_* and negations look at packets.
bool has_positive(const Rule& r) {
  for (const Item& it : r.items)
    if ((it.kind == Item::kContent && !it.content.negated) || (it.kind == Item::kPcre && !it.pcre.negated))
      return true;
  return false;
}

// Packet keywords: what only a packet has (its size, TCP flags, ICMP type).
bool packet_keywords(const Rule& r) {
  return r.dsize.op != NumTest::kNone || r.flags.set || r.itype.op != NumTest::kNone ||
         r.icode.op != NumTest::kNone || r.flow.no_stream || r.proto == Proto::kTcpPkt ||
         r.proto == Proto::kUdp || r.proto == Proto::kIcmp || !has_positive(r);
}

RuleKind kind_of(const Rule& r) {
  if (r.has_app_buffers()) return RuleKind::kAppTx;
  if (r.proto == Proto::kTcpStream || r.flow.only_stream) return RuleKind::kStream;
  if (r.has_payload()) {
    const bool packet = packet_keywords(r);
    return packet ? RuleKind::kPacket : RuleKind::kPacketStream;
  }
  const FlowOpt& f = r.flow;
  const bool flow_kw = f.established || f.not_established || f.to_server || f.to_client ||
                       f.stateless || f.only_stream || f.no_stream;
  bool checks_bits = false;
  for (const Flowbit& b : r.flowbits) checks_bits |= Flowbit::condition(b.op);
  for (const Xbit& b : r.xbits) checks_bits |= Flowbit::condition(b.op);
  // Any flowint: Suricata's flowint is not IP-only (a counting rule looks at every packet).
  checks_bits |= !r.flowints.empty();
  if (flow_kw || checks_bits || !r.sport.unrestricted() || !r.dport.unrestricted() || r.dsize.op != NumTest::kNone ||
      r.flags.set || r.itype.op != NumTest::kNone || r.icode.op != NumTest::kNone ||
      r.proto == Proto::kTcpPkt || !r.app_proto.empty() || r.ip_proto.op != NumTest::kNone ||
      r.stream_size.side != StreamSize::kNone || r.tls_version)
    return RuleKind::kPacket;
  const bool negated = !r.src.exclude.empty() || !r.dst.exclude.empty() || !r.src.exclude_sets.empty() ||
                       !r.dst.exclude_sets.empty();
  return negated ? RuleKind::kLikeIpOnly : RuleKind::kIpOnly;
}

int flowbits_rank(const Rule& r) {
  bool sets = false, checks = false;
  for (const Flowbit& f : r.flowbits) (Flowbit::condition(f.op) ? checks : sets) = true;
  for (const Xbit& f : r.xbits) (Flowbit::condition(f.op) ? checks : sets) = true;
  for (const Flowint& f : r.flowints) (f.changes() ? sets : checks) = true;
  return sets && !checks ? 0 : checks && !sets ? 2 : 1;
}

Result<pcre2_code*> compile_pcre(const Rule& r, const Pcre& p) {
  const uint32_t options = pcre_options(p);
  int err = 0;
  PCRE2_SIZE at = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(p.regex.data()), p.regex.size(),
                                   options, &err, &at, nullptr);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    return Status(Errc::kNotSupported, r.where + ": sid " + std::to_string(r.sid) + ": pcre \"" +
                                           p.regex + "\" at offset " + std::to_string(at) + ": " +
                                           reinterpret_cast<const char*>(msg));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // interpreted when JIT is not available
  return code;
}

}  // namespace

// One item compiled onto the end of `list` (its pcre compiled, its content folded for nocase).
Status add_item(const Rule& r, const Item& it, ItemList& list) {
  CompiledItem ci;
  ci.kind = it.kind;
  const bool first = list.items.empty();
  const int32_t idx = int32_t(list.items.size());
  if (it.kind == Item::kContent) {
    ci.content = &it.content;
    ci.needle  = it.content.bytes;
    if (it.content.nocase)
      for (char& ch : ci.needle) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    if (!it.content.negated) list.last_positive = idx;
    if (!first && it.content.relative()) list.needs_relative_retry = true;
  } else if (it.kind == Item::kPcre) {
    ci.pcre = &it.pcre;
    auto code = compile_pcre(r, it.pcre);
    if (!code.is_ok()) return code.status();
    ci.code = *code;
    if (!it.pcre.negated) list.last_positive = idx;
    if (!first && it.pcre.relative) list.needs_relative_retry = true;
  } else if (it.kind == Item::kIsDataAt) {
    ci.isdataat = &it.isdataat;
    if (!first && it.isdataat.relative) list.needs_relative_retry = true;
  } else if (it.kind == Item::kBsize) {
    ci.size = &it.size;
  } else if (it.kind == Item::kBase64Decode) {
    ci.b64 = &it.b64;
    if (!first && it.b64.relative) list.needs_relative_retry = true;
  } else {
    ci.byte = &it.byte;
    if (!first && it.byte.relative) list.needs_relative_retry = true;
  }
  list.items.push_back(std::move(ci));
  return Status::ok();
}

}  // namespace detail

const char* rule_kind_name(RuleKind k) noexcept {
  switch (k) {
    case RuleKind::kIpOnly: return "ip_only";
    case RuleKind::kLikeIpOnly: return "like_ip_only";
    case RuleKind::kPacket: return "pkt";
    case RuleKind::kPacketStream: return "pkt_stream";
    case RuleKind::kStream: return "stream";
    case RuleKind::kAppTx: return "app_tx";
  }
  return "?";
}

Result<std::shared_ptr<const DetectImage>> compile_rules(const RuleSet& set) {
  auto image = std::make_shared<detail::Image>();
  image->classification_ = set.classification;
  std::vector<uint32_t> order(set.rules.size());
  std::iota(order.begin(), order.end(), 0u);
  auto prio = [&](const Rule& r) {
    if (r.priority) return r.priority;
    auto it = set.classification.find(r.classtype);
    return it == set.classification.end() ? 3 : it->second.priority;
  };
  auto action_rank = [&](Action a) {
    auto it = std::find(set.action_order.begin(), set.action_order.end(), a);
    return int(it - set.action_order.begin());
  };
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Rule &x = set.rules[a], &y = set.rules[b];
    const auto kx = std::tuple(action_rank(x.action), detail::flowbits_rank(x), prio(x));
    const auto ky = std::tuple(action_rank(y.action), detail::flowbits_rank(y), prio(y));
    return kx < ky;
  });
  image->rules_.reserve(order.size());
  for (uint32_t i : order) image->rules_.push_back(set.rules[i]);
  std::map<std::string, uint32_t, std::less<>> bit_ids;
  auto bit = [&](const std::string& name) {
    auto [it, fresh] = bit_ids.try_emplace(name, uint32_t(bit_ids.size()));
    return it->second;
  };
  std::map<std::pair<std::string, bool>, uint32_t> xbit_ids;
  auto xbit = [&](const std::string& name, bool pair) {
    return xbit_ids.try_emplace({name, pair}, uint32_t(xbit_ids.size())).first->second;
  };
  std::map<std::string, uint32_t, std::less<>> flowint_ids;
  auto flowint = [&](const std::string& name) {
    return flowint_ids.try_emplace(name, uint32_t(flowint_ids.size())).first->second;
  };
  image->compiled_.resize(image->rules_.size());
  for (size_t i = 0; i < image->rules_.size(); ++i) {
    const Rule& r = image->rules_[i];
    detail::CompiledRule& c = image->compiled_[i];
    // Each item into its buffer's list; the fast pattern is the fast_pattern content, else the
    // longest positive one (of any buffer: a transaction rule is prefiltered in that buffer).
    size_t longest = 0;
    int32_t longest_list = -1, longest_item = -1, fp_list = -1, fp_item = -1;
    for (const Item& it : r.items) {
      detail::ItemList* list = &c;
      int32_t list_index = -1;
      if (it.buffer != AppBuffer::kPayload) {
        auto found = std::find_if(c.app.begin(), c.app.end(), [&](const detail::AppList& l) {
          return l.buffer == it.buffer && l.dotprefix == it.dotprefix;
        });
        if (found == c.app.end()) {
          c.app.emplace_back();
          c.app.back().buffer    = it.buffer;
          c.app.back().dotprefix = it.dotprefix;
          found = c.app.end() - 1;
        }
        list       = &*found;
        list_index = int32_t(found - c.app.begin());
        c.app_response = c.app_response || app_buffer_is_response(it.buffer);
      }
      if (it.decoded) {  // base64_data: into the list of the last base64_decode before it
        auto dec = std::find_if(list->items.rbegin(), list->items.rend(), [](const detail::CompiledItem& x) {
          return x.kind == Item::kBase64Decode;
        });
        if (dec == list->items.rend())  // the parser keeps them together (check_decoded)
          return Status(Errc::kInvalidArgument, r.where + ": sid " + std::to_string(r.sid) +
                                             ": base64_data items without their base64_decode");
        if (!dec->decoded_items) {
          list->decoded_lists.push_back(std::make_unique<detail::ItemList>());
          dec->decoded_items = list->decoded_lists.back().get();
        }
        auto code = detail::add_item(r, it, *dec->decoded_items);
        if (!code.is_ok()) return code;
        continue;  // not a fast pattern: the prefilter sees the buffer, not what it decodes to
      }
      // A base64_decode ends its list's inspection: what follows it is never looked at, so it
      // cannot be the fast pattern either.
      const bool after_decode = std::any_of(list->items.begin(), list->items.end(), [](const detail::CompiledItem& x) {
        return x.kind == Item::kBase64Decode;
      });
      const int32_t idx = int32_t(list->items.size());
      auto code = detail::add_item(r, it, *list);
      if (!code.is_ok()) return code;
      if (it.kind == Item::kContent && !it.content.negated && !after_decode) {
        if (it.content.bytes.size() > longest) {
          longest      = it.content.bytes.size();
          longest_list = list_index, longest_item = idx;
        }
        if (it.content.fast_pattern) fp_list = list_index, fp_item = idx;
      }
    }
    if (fp_item < 0) fp_list = longest_list, fp_item = longest_item;
    if (r.has_app_buffers()) {
      c.app_fp_list = fp_list, c.app_fp_item = fp_item;
    } else {
      c.fast_pattern = fp_item;
    }
    for (const Flowbit& f : r.flowbits) {
      std::vector<uint32_t> ids;
      for (const std::string& n : f.names) ids.push_back(bit(n));
      switch (f.op) {
        case Flowbit::kSet: c.set.insert(c.set.end(), ids.begin(), ids.end()); break;
        case Flowbit::kUnset: c.unset.insert(c.unset.end(), ids.begin(), ids.end()); break;
        case Flowbit::kToggle: c.toggle.insert(c.toggle.end(), ids.begin(), ids.end()); break;
        case Flowbit::kIsSet: c.conditions.push_back({f.any, false, ids}); break;
        case Flowbit::kIsNotSet: c.conditions.push_back({f.any, true, ids}); break;
      }
    }
    for (const Xbit& x : r.xbits) {
      // Host bits (ip_src, ip_dst: one space, keyed by an address) apart from address pairs'.
      const detail::XbitOp op{xbit(x.name, x.track == Xbit::kIpPair), x.op, x.track,
                              uint64_t(x.expire) * 1'000'000'000ull};
      (Flowbit::condition(x.op) ? c.xbit_conditions : c.xbit_changes).push_back(op);
    }
    for (const Flowint& f : r.flowints) {
      const detail::FlowintOp op{f.op, flowint(f.name), f.value,
                                 f.value_name.empty() ? -1 : int32_t(flowint(f.value_name))};
      (f.changes() ? c.int_changes : c.int_conditions).push_back(op);
    }
    c.kind        = detail::kind_of(r);
    c.stream_only = r.proto == Proto::kTcpStream || r.flow.only_stream;
    c.packet_only = !r.has_payload() || detail::packet_keywords(r);
    if (c.stream_only && !r.has_payload()) c.packet_only = false;  // never matches a packet
  }
  image->bits_ = uint32_t(bit_ids.size());
  return std::shared_ptr<const DetectImage>(std::move(image));
}

}  // namespace warpath::nids
