// src/runtime/app.cpp: building the application and its three shade stages (app.hpp).
#include "runtime/app.hpp"

#include <algorithm>
#include <string>

#include "forward/core/forward_core.hpp"
#include "packet/core/key_core.hpp"

namespace warpath::runtime {
namespace {

Result<std::unique_ptr<classify::Classifier>> make_acl(const classify::RuleSet& rules,
                                                       const std::string& device,
                                                       const std::string& algo) {
  if (algo != "auto") return classify::make_classifier(device + "." + algo, rules);
  return classify::make_best_classifier(rules, device + ".");
}

}  // namespace

std::string ShadeEngines::describe() const {
  std::string s;
  if (fib) s += std::string(fib->id());
  if (acl) s += (s.empty() ? "" : " + ") + std::string(acl->id());
  return s;
}

Result<std::unique_ptr<App>> App::build(const RunConfig& config, const RunInputs& in,
                                        uint16_t port_count, bool offload) {
  std::unique_ptr<App> app(new App());
  app->kind_           = config.app;
  app->acl_enabled_    = config.app != AppKind::kRouter;
  app->router_enabled_ = config.app != AppKind::kAcl;
  app->port_count_     = port_count;
  WARPATH_ASSIGN_OR_RETURN(app->parser_, packet::make_parser("cpu.parse"));
  const std::string device = config.offload_device == "cpu" ? "cpu" : "cuda";

  if (app->router_enabled_) {
    if (!in.fib || !in.neighbors)
      return Status(Errc::kInvalidArgument, "the router needs a FIB and a neighbour table");
    WARPATH_ASSIGN_OR_RETURN(forward::RouterTables tables,
                             forward::RouterTables::build(*in.neighbors));
    app->tables_ = std::make_unique<forward::RouterTables>(std::move(tables));
    WARPATH_ASSIGN_OR_RETURN(app->cpu_.fib, lookup::make_fib(config.lookup_engine, *in.fib));
    if (offload) {
      WARPATH_ASSIGN_OR_RETURN(app->offload_.fib, lookup::make_fib(device + ".lpm", *in.fib));
    }
  }
  if (app->acl_enabled_) {
    if (!in.rules) return Status(Errc::kInvalidArgument, "the ACL needs a rule set");
    const classify::RuleSet& rules = *in.rules;
    app->layout_                   = rules.layout;
    WARPATH_ASSIGN_OR_RETURN(app->cpu_.acl, make_acl(rules, "cpu", config.algo));
    if (offload) {
      WARPATH_ASSIGN_OR_RETURN(app->offload_.acl, make_acl(rules, device, config.algo));
    }
    auto port_ok = [&](const Action& a, const std::string& what) -> Status {
      if (a.kind == ActionKind::kOutput && a.port >= port_count)
        return Status(Errc::kInvalidArgument, what + ": output:" + std::to_string(a.port) +
                                                  " but only " + std::to_string(port_count) +
                                                  " port(s) are configured");
      return Status::ok();
    };
    WARPATH_ASSIGN_OR_RETURN(Action match, parse_action(config.match_action));
    WARPATH_ASSIGN_OR_RETURN(app->default_action_, parse_action(config.default_action));
    WARPATH_ASSIGN_OR_RETURN(app->ipv6_action_, parse_action(config.ipv6_action));
    WARPATH_TRY(port_ok(match, "acl.match"));
    WARPATH_TRY(port_ok(app->default_action_, "acl.default"));
    WARPATH_TRY(port_ok(app->ipv6_action_, "acl.ipv6"));
    app->rule_actions_.reserve(rules.rules.size());
    for (size_t i = 0; i < rules.rules.size(); ++i) {
      const std::string what = rules.name + ": rule " + std::to_string(i);
      auto a                 = rule_action(rules.rules[i], match);
      if (!a.is_ok()) return Status(a.status().code(), what + ": " + a.status().message());
      WARPATH_TRY(port_ok(*a, what));
      app->rule_actions_.push_back(*a);
    }
  }
  return app;
}

Status App::pre_shade(Chunk& c) const {
  const uint32_t n = c.batch.size();
  ExecContext ctx;
  WARPATH_TRY(parser_->parse(c.batch.view(), {c.infos.data(), n}, ctx));
  if (acl_enabled_) {
    uint32_t k        = 0;
    uint32_t* w       = c.acl_words.data();
    const uint32_t st = c.capacity;
    if (layout_ == classify::KeyLayout::kFiveTuple) {
      // IPv4 packets only, compacted (the classifier sees no empty keys).
      for (uint32_t i = 0; i < n; ++i) {
        packet::FiveTuple4 t;
        if (!packet::core::five_tuple4(c.infos[i], t)) continue;
        uint32_t key[4];
        classify::five_tuple_words(t, key);
        for (unsigned j = 0; j < 4; ++j) w[size_t(j) * st + k] = key[j];
        c.acl_index[k++] = i;
      }
    } else {
      // Every packet has an OpenFlow tuple: the keys are the packets, in order.
      packet::extract_of_tuples(c.batch.view(), {c.infos.data(), n}, packet::OfTupleSoA{w, st, n});
      for (; k < n; ++k) c.acl_index[k] = k;
    }
    c.acl_count = k;
  }
  if (router_enabled_) WARPATH_TRY(c.route_keys.extract({c.infos.data(), n}));
  return Status::ok();
}

Status App::shade(const ShadeEngines& e, Chunk& c, ExecContext& ctx) const {
  if (acl_enabled_ && c.acl_count)
    WARPATH_TRY(e.acl->classify(c.acl_keys(), {c.acl_match.data(), c.acl_count}, ctx));
  if (router_enabled_) WARPATH_TRY(c.route_keys.lookup(*e.fib, ctx));
  return Status::ok();
}

void App::post_shade(Chunk& c) const {
  constexpr uint16_t kUndecided = 0xFFFF;
  const uint32_t n              = c.batch.size();
  const uint16_t fwd            = reason_id(forward::Reason::kForwarded);
  auto apply                    = [&](uint32_t i, const Action& a) {
    if (c.reason[i] != kUndecided) return;
    switch (a.kind) {
      case ActionKind::kDeny:
        c.reason[i] = reason_id(Extra::kAclDeny);
        break;
      case ActionKind::kOutput:
        c.reason[i] = fwd;
        c.out[i]    = a.port;
        break;
      case ActionKind::kPermit:
        break;
    }
  };
  std::fill_n(c.reason.begin(), n, kUndecided);
  if (!router_enabled_)  // the firewall alone drops what the parser rejected, before its rules
    for (uint32_t i = 0; i < n; ++i)
      if (c.infos[i].status != packet::ParseStatus::kOk) c.reason[i] = reason_id(Extra::kMalformed);
  if (acl_enabled_) {
    for (uint32_t k = 0; k < c.acl_count; ++k) {
      const uint32_t m = c.acl_match[k];
      apply(c.acl_index[k], m == classify::kNoMatch ? default_action_ : rule_actions_[m]);
    }
    if (layout_ == classify::KeyLayout::kFiveTuple)
      for (uint32_t i = 0; i < n; ++i)
        if (c.reason[i] == kUndecided && c.infos[i].l3 == packet::L3::kIpv6) apply(i, ipv6_action_);
  }
  if (router_enabled_) {
    (void)c.route_keys.scatter({c.nexthops.data(), n});  // sizes match by construction
    const forward::RouterView view = tables_->view();
    for (uint32_t i = 0; i < n; ++i) {
      if (i + 4 < n) WARPATH_PREFETCH(c.batch.data(i + 4));
      if (c.reason[i] != kUndecided) continue;
      const packet::PacketMeta& m    = c.batch.meta(i);
      const forward::ForwardResult r = forward::core::forward_packet(
          c.batch.data(i), m.caplen, m.len, c.infos[i], c.nexthops[i], view);
      c.reason[i] = reason_id(r.reason);
      c.out[i]    = r.port;
    }
  } else {
    for (uint32_t i = 0; i < n; ++i) {
      if (c.reason[i] != kUndecided) continue;
      const uint16_t in = c.batch.meta(i).port;
      const auto pair   = uint16_t(in ^ 1u);
      c.reason[i]       = fwd;
      c.out[i]          = pair < port_count_ ? pair : in;
    }
  }
  for (uint32_t i = 0; i < n; ++i)
    if (c.reason[i] == fwd && c.out[i] >= port_count_) c.reason[i] = reason_id(Extra::kNoPort);
}

uint32_t App::time_exceeded(const Chunk& c, uint32_t i, uint8_t* out) const {
  if (!router_enabled_) return 0;
  const packet::PacketMeta& m = c.batch.meta(i);
  return forward::build_time_exceeded(c.batch.data(i), m.caplen, c.infos[i],
                                      tables_->port_mac(m.port), tables_->icmp_source4(m.port),
                                      tables_->icmp_source6(m.port), out);
}

}  // namespace warpath::runtime
