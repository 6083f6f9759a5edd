// src/modules/acl_module.cpp: the `acl` module, a firewall over 5-tuple (ClassBench)
// or OpenFlow 12-tuple rules.
//
// Contract: reads parse; sets verdict, and context when a rule's action is goto:NAME.
// Stages
//   pre    the keys of the packets that have one, compacted into the slot (structure of arrays,
//          stride = the frame's capacity): IPv4 5-tuples under 5-tuple rules, every packet's
//          OpenFlow tuple under 12-tuple rules
//   job 0  classify the keys (the CPU classifier, or the offload one in the master)
//   post   for each selected packet with a key, the action of the rule it matched (or the
//          default action): deny -> drop "acl_deny", output:N -> forward out of N, goto:NAME ->
//          context NAME, permit -> continue. IPv6 packets under 5-tuple rules get `ipv6`'s
//          action (default: the default action, so a deny-by-default firewall does not pass a
//          family its rules do not cover), dropped as "acl_ipv6"; packets that are neither IPv4 nor IPv6 (ARP, MPLS, PPPoE, ...) under 5-tuple
//          rules get `nonip`'s (default: the default action, so a deny-by-default firewall
//          does not pass what it cannot inspect), dropped as "acl_non_ip"; IPv4 packets
//          without a key (ports not captured: RFC 1858 tiny fragments) get the default
//          action. With malformed=drop, a packet the parser rejected is dropped as "malformed"
//          before the rules are consulted; otherwise it continues (a router decides it).
#include <algorithm>
#include <string>

#include "warpath/runtime/module.hpp"
#include "packet/core/key_core.hpp"
#include "modules/actions.hpp"
#include "warpath/classify/classifier.hpp"
#include "warpath/classify/rule.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/modules/builtin.hpp"

namespace warpath::runtime {
namespace {

// The kind's contract, declared once (ModuleInfo): an instance without goto: rules tags no
// context.
ModuleContract acl_contract() {
  return {field_bit(Field::kParse), field_bit(Field::kVerdict) | field_bit(Field::kContext)};
}

struct AclSlot final : ModuleSlot {
  AclSlot(uint32_t cap, unsigned n_words) : words(size_t(n_words) * cap), index(cap), match(cap) {}
  std::vector<uint32_t> words, index, match;
  uint32_t count = 0;
};

/// An action compiled for the post loop.
struct Decision {
  ActionKind kind = ActionKind::kPermit;
  uint16_t value  = 0;  ///< output port or context id
};

class AclModule final : public Module {
 public:
  std::string_view kind() const noexcept override { return "acl"; }
  ModuleContract contract() const override {
    ModuleContract c = acl_contract();
    if (contexts_.empty()) c.sets &= ~field_bit(Field::kContext);  // no goto: rules
    c.contexts = contexts_;
    return c;
  }
  std::string describe() const override { return describe_; }
  std::string engines(Place p) const override {
    const auto& e = p == Place::kCpu ? cpu_ : offload_;
    return e ? std::string(e->id()) : std::string();
  }
  std::unique_ptr<ModuleSlot> make_slot(uint32_t cap) const override {
    return std::make_unique<AclSlot>(cap, classify::key_words(layout_));
  }

  Status pre(Frame& f, ModuleSlot* slot) const override {
    auto& s          = static_cast<AclSlot&>(*slot);
    const uint32_t n = f.size();
    uint32_t k       = 0;
    uint32_t* w      = s.words.data();
    const uint32_t st = f.capacity;
    if (layout_ == classify::KeyLayout::kFiveTuple) {
      for (uint32_t i = 0; i < n; ++i) {  // IPv4 packets only: the classifier sees no empty keys
        packet::FiveTuple4 t;
        if (!packet::core::five_tuple4(f.infos[i], t)) continue;
        uint32_t key[4];
        classify::five_tuple_words(t, key);
        for (unsigned j = 0; j < 4; ++j) w[size_t(j) * st + k] = key[j];
        s.index[k++] = i;
      }
    } else {  // every packet has an OpenFlow tuple: the keys are the packets, in order
      packet::extract_of_tuples(f.batch.view(), {f.infos.data(), n}, packet::OfTupleSoA{w, st, n});
      for (; k < n; ++k) s.index[k] = k;
    }
    s.count = k;
    return Status::ok();
  }

  uint32_t job_count() const noexcept override { return 1; }
  JobShape job_shape(uint32_t) const override { return {classify::key_words(layout_), 4, 4}; }
  JobData job_data(Frame& f, ModuleSlot* slot, uint32_t) const override {
    auto& s = static_cast<AclSlot&>(*slot);
    return {reinterpret_cast<const uint8_t*>(s.words.data()), size_t(f.capacity) * 4,
            reinterpret_cast<uint8_t*>(s.match.data()), s.count};
  }
  Status run_job(Place p, uint32_t, const JobData& d, ExecContext& ctx) const override {
    const classify::Classifier& c = p == Place::kCpu ? *cpu_ : *offload_;
    const classify::KeyBatch keys{reinterpret_cast<const uint32_t*>(d.keys), d.count,
                                  uint32_t(d.column_stride / 4), layout_};
    return c.classify(keys, {reinterpret_cast<uint32_t*>(d.answers), d.count}, ctx);
  }
  bool job_resident(uint32_t) const override { return offload_ && offload_->takes_device_memory(); }

  void post(Frame& f, ModuleSlot* slot, const Selection& sel) const override {
    auto& s      = static_cast<AclSlot&>(*slot);
    auto apply   = [&](uint32_t i, const Decision& a) {
      switch (a.kind) {
        case ActionKind::kDeny:
          f.reason[i] = deny_;
          break;
        case ActionKind::kOutput:
          f.reason[i] = kReasonForwarded;
          f.out[i]    = a.value;
          break;
        case ActionKind::kGoto:
          f.context[i] = a.value;
          break;
        case ActionKind::kPermit:
          break;
      }
    };
    if (malformed_drop_)
      for (uint32_t i : sel.list)
        if (f.infos[i].status != packet::ParseStatus::kOk) f.reason[i] = malformed_;
    for (uint32_t k = 0; k < s.count; ++k) {
      const uint32_t i = s.index[k];
      if (!sel.contains(i) || f.reason[i] != kContinue) continue;
      const uint32_t m = s.match[k];
      apply(i, m == classify::kNoMatch ? default_ : rules_[m]);
    }
    if (layout_ == classify::KeyLayout::kFiveTuple)
      for (uint32_t i : sel.list) {
        if (f.reason[i] != kContinue) continue;
        const packet::L3 l3 = f.infos[i].l3;
        if (l3 == packet::L3::kIpv6) {
          if (ipv6_.kind == ActionKind::kDeny)
            f.reason[i] = ipv6_deny_;
          else
            apply(i, ipv6_);
        } else if (l3 == packet::L3::kIpv4) {
          // Still undecided: an IPv4 packet the rules cannot see (its header or, for TCP/UDP,
          // its ports not captured: a tiny first fragment, RFC 1858). No rule can match it:
          // the default action, so a deny-by-default firewall does not pass it.
          // A bad IPv4 header is the router's business (slow path, RFC 1812 5.2.2).
          const packet::ParseStatus st = f.infos[i].status;
          const bool bad_header        = st == packet::ParseStatus::kBadIpv4Header ||
                                  st == packet::ParseStatus::kBadIpv4Checksum ||
                                  st == packet::ParseStatus::kBadIpv4Length;
          packet::FiveTuple4 t;
          if (!bad_header && !packet::core::five_tuple4(f.infos[i], t)) apply(i, default_);
        } else {
          if (nonip_.kind == ActionKind::kDeny)
            f.reason[i] = non_ip_;
          else
            apply(i, nonip_);
        }
      }
  }

  static Result<std::unique_ptr<Module>> make(const ModuleArgs& args, BuildEnv& env);

 private:
  Result<Decision> compile(const Action& a, const std::string& what, BuildEnv& env) {
    Decision d{a.kind, a.port};
    if (a.kind == ActionKind::kOutput && a.port >= env.port_count)
      return Status(Errc::kInvalidArgument, what + ": output:" + std::to_string(a.port) +
                                                " but only " + std::to_string(env.port_count) +
                                                " port(s) are configured");
    if (a.kind == ActionKind::kGoto) {
      d.value = env.contexts->intern(a.context);
      if (d.value >= 256) return Status(Errc::kCapacity, what + ": more than 256 contexts");
      bool known = false;
      for (const auto& c : contexts_) known = known || c == a.context;
      if (!known) contexts_.push_back(a.context);
    }
    return d;
  }

  classify::KeyLayout layout_ = classify::KeyLayout::kFiveTuple;
  std::vector<Decision> rules_;
  Decision default_, ipv6_, nonip_;
  bool malformed_drop_ = false;
  uint16_t deny_ = 0, malformed_ = 0, non_ip_ = 0, ipv6_deny_ = 0;
  std::vector<std::string> contexts_;
  std::unique_ptr<classify::Classifier> cpu_, offload_;
  std::string describe_;
};

Result<std::unique_ptr<classify::Classifier>> make_classifier(const classify::RuleSet& rules,
                                                              const std::string& device,
                                                              const std::string& algo) {
  if (algo == "ref") return classify::make_classifier("ref.linear", rules);  // the oracle
  if (algo != "auto") return classify::make_classifier(device + "." + algo, rules);
  return classify::make_best_classifier(rules, device + ".");
}

Result<std::unique_ptr<Module>> AclModule::make(const ModuleArgs& args, BuildEnv& env) {
  auto m = std::make_unique<AclModule>();
  classify::RuleSet loaded;
  const classify::RuleSet* rules = nullptr;
  const std::string path         = args.get("rules");
  const std::string format       = args.get("format", "classbench");
  if (format != "classbench" && format != "openflow")
    return Status(Errc::kInvalidArgument,
                  "format=" + format + ": must be one of classbench, openflow");
  if (!path.empty()) {
    if (!env.tables || !env.tables->load_rules)
      return Status(Errc::kNotSupported, "rules=" + path + ": this program cannot load rule files");
    WARPATH_ASSIGN_OR_RETURN(loaded, env.tables->load_rules(path, format));
    rules       = &loaded;
    m->describe_ = path + " (" + format + ", " + std::to_string(loaded.rules.size()) + " rules)";
  } else if (const auto* given = env.preloaded<classify::RuleSet>("acl.rules")) {
    rules        = given;
    m->describe_ = rules->name + " (" + std::to_string(rules->rules.size()) + " rules)";
  } else {
    loaded       = builtin_acl(env.seed);
    rules        = &loaded;
    m->describe_ = "built-in random 5-tuple ACL: deny ICMP, every 8th rule denies (" +
                   std::to_string(loaded.rules.size()) + " rules)";
  }
  const std::string algo = args.get("algo", "auto");
  const std::vector<std::string> algos = classify::classifier_algorithms();  // and ref
  if (algo != "ref" && std::find(algos.begin(), algos.end(), algo) == algos.end())
    return Status(Errc::kInvalidArgument, "algo=" + algo + ": must be one of " +
                                              classify::classifier_algorithm_list() + ", ref");
  const std::string mal = args.get("malformed", "continue");
  if (mal != "drop" && mal != "continue")
    return Status(Errc::kInvalidArgument, "malformed=" + mal + ": must be drop or continue");
  m->malformed_drop_ = mal == "drop";
  m->layout_         = rules->layout;
  if (env.warnings && rules->rules.empty())
    env.warnings->push_back("the rule set is empty: every packet gets the default action");

  auto action = [&](const char* key, const char* fallback) -> Result<Decision> {
    auto a = parse_action(args.get(key, fallback));
    if (!a.is_ok()) return Status(a.status().code(), std::string(key) + "=" + a.status().message());
    return m->compile(*a, std::string(key), env);
  };
  WARPATH_ASSIGN_OR_RETURN(const Decision match, action("match", "permit"));
  WARPATH_ASSIGN_OR_RETURN(m->default_, action("default", "deny"));
  const std::string default_text = args.get("default", "deny");
  WARPATH_ASSIGN_OR_RETURN(m->ipv6_, action("ipv6", default_text.c_str()));
  WARPATH_ASSIGN_OR_RETURN(m->nonip_, action("nonip", default_text.c_str()));
  const Action match_action = parse_action(args.get("match", "permit")).value();
  m->rules_.reserve(rules->rules.size());
  for (size_t i = 0; i < rules->rules.size(); ++i) {
    const classify::Rule& rule = rules->rules[i];
    const std::string what     = rule.line ? rules->name + ":" + std::to_string(rule.line)
                                           : rules->name + ": rule " + std::to_string(i);
    auto a                     = rule_action(rule, rules->layout, match_action);
    if (!a.is_ok()) return Status(a.status().code(), what + ": " + a.status().message());
    WARPATH_ASSIGN_OR_RETURN(const Decision d, m->compile(*a, what, env));
    m->rules_.push_back(d);
  }
  (void)match;
  WARPATH_ASSIGN_OR_RETURN(m->cpu_, make_classifier(*rules, "cpu", algo));
  if (env.offload) {
    const std::string device = env.offload_device == "cpu" ? "cpu" : "cuda";
    WARPATH_ASSIGN_OR_RETURN(m->offload_, make_classifier(*rules, device, algo));
  }
  WARPATH_ASSIGN_OR_RETURN(m->deny_, env.reasons->add("acl_deny", Verdict::kDrop, env.position));
  WARPATH_ASSIGN_OR_RETURN(m->malformed_,
                           env.reasons->add("malformed", Verdict::kDrop, env.position));
  WARPATH_ASSIGN_OR_RETURN(m->non_ip_,
                           env.reasons->add("acl_non_ip", Verdict::kDrop, env.position));
  WARPATH_ASSIGN_OR_RETURN(m->ipv6_deny_,
                           env.reasons->add("acl_ipv6", Verdict::kDrop, env.position));
  return std::unique_ptr<Module>(std::move(m));
}

}  // namespace

ModuleInfo acl_module_info() {
  ModuleInfo i;
  i.kind    = "acl";
  i.summary = "firewall: first-match rules over 5-tuples (ClassBench) or OpenFlow 12-tuples";
  i.args    = {
         {"rules", "built-in 1,000 rules", "rule file", ArgFile::kInput},
         {"format", "classbench", "classbench | openflow"},
         {"algo", "auto", "linear | tuple | bloom | rfc | tic | split | auto | ref (the oracle)"},
         {"match", "permit", "action of a matching rule that names none"},
         {"default", "deny", "action when no rule matches"},
         {"ipv6", "(default's)",
          "action for IPv6 packets under 5-tuple rules (their keys are IPv4); a deny counts them as "
             "acl_ipv6"},
         {"nonip", "(default's)",
          "action for frames neither IPv4 nor IPv6 (ARP, MPLS, PPPoE) under 5-tuple rules; a deny "
             "counts them as acl_non_ip"},
         {"malformed", "continue", "drop | continue: packets the parser rejected"},
  };
  i.contract = acl_contract();
  i.make  = AclModule::make;
  return i;
}

WARPATH_REGISTER_MODULE(acl_module_info);

}  // namespace warpath::runtime
