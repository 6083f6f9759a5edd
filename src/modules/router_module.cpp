// src/modules/router_module.cpp: the `router` module, PacketShader's IPv4/IPv6 router
// (include/warpath/forward/router.hpp has its verdicts, tables and files).
//
// Contract: reads parse; sets verdict and bytes (TTL / hop limit, checksum, MACs of forwarded
// packets).
// Stages
//   pre    the destinations of IPv4 and IPv6 packets, gathered into the slot (RouteKeys)
//   job 0  IPv4 destinations -> next hops (lookup4)    job 1  IPv6 (lookup6)
//   post   next hops scattered to the packets; forward::core::forward_packet decides each
//          selected packet (forward, slow path or drop with the router's reasons) and rewrites
//          a forwarded one in place
//   reply  ICMP / ICMPv6 Time Exceeded for ttl_expired and hop_limit_expired packets
#include <array>
#include <string>

#include "warpath/runtime/module.hpp"
#include "forward/core/forward_core.hpp"
#include "warpath/core/hd.hpp"
#include "warpath/forward/router.hpp"
#include "warpath/lookup/fib.hpp"
#include "warpath/modules/builtin.hpp"

namespace warpath::runtime {
namespace {

// The kind's contract, declared once (ModuleInfo) and kept by every instance.
ModuleContract router_contract() {
  return {field_bit(Field::kParse),
          field_bit(Field::kVerdict) | field_bit(Field::kBytes)};
}

struct RouterSlot final : ModuleSlot {
  explicit RouterSlot(uint32_t cap) : keys(cap), nexthops(cap) {}
  forward::RouteKeys keys;
  std::vector<lookup::NextHop> nexthops;
};

class RouterModule final : public Module {
 public:
  std::string_view kind() const noexcept override { return "router"; }
  ModuleContract contract() const override { return router_contract(); }
  std::string describe() const override { return describe_; }
  std::string engines(Place p) const override {
    const auto& e = p == Place::kCpu ? cpu_ : offload_;
    return e ? std::string(e->id()) : std::string();
  }
  std::unique_ptr<ModuleSlot> make_slot(uint32_t cap) const override {
    return std::make_unique<RouterSlot>(cap);
  }
  Status pre(Frame& f, ModuleSlot* slot) const override {
    return static_cast<RouterSlot&>(*slot).keys.extract({f.infos.data(), f.size()});
  }

  uint32_t job_count() const noexcept override { return 2; }
  JobShape job_shape(uint32_t j) const override {
    return {1, j == 0 ? uint32_t(sizeof(uint32_t)) : uint32_t(sizeof(lookup::Ip6)),
            uint32_t(sizeof(lookup::NextHop))};
  }
  JobData job_data(Frame&, ModuleSlot* slot, uint32_t j) const override {
    auto& k = static_cast<RouterSlot&>(*slot).keys;
    if (j == 0)
      return {reinterpret_cast<const uint8_t*>(k.dst4().data), 0,
              reinterpret_cast<uint8_t*>(k.nexthops4().data), k.dst4().size};
    return {reinterpret_cast<const uint8_t*>(k.dst6().data), 0,
            reinterpret_cast<uint8_t*>(k.nexthops6().data), k.dst6().size};
  }
  Status run_job(Place p, uint32_t j, const JobData& d, ExecContext& ctx) const override {
    const lookup::Fib& fib = p == Place::kCpu ? *cpu_ : *offload_;
    auto* nh               = reinterpret_cast<lookup::NextHop*>(d.answers);
    if (j == 0) return fib.lookup4({reinterpret_cast<const uint32_t*>(d.keys), d.count}, {nh, d.count}, ctx);
    return fib.lookup6({reinterpret_cast<const lookup::Ip6*>(d.keys), d.count}, {nh, d.count}, ctx);
  }
  bool job_resident(uint32_t) const override { return offload_ && offload_->takes_device_memory(); }

  void post(Frame& f, ModuleSlot* slot, const Selection& sel) const override {
    auto& s          = static_cast<RouterSlot&>(*slot);
    const uint32_t n = f.size();
    (void)s.keys.scatter({s.nexthops.data(), n});  // sizes match by construction
    const forward::RouterView view = tables_->view();
    const uint32_t count           = sel.list.size;
    for (uint32_t k = 0; k < count; ++k) {
      if (k + 4 < count) WARPATH_PREFETCH(f.batch.data(sel.list[k + 4]));
      const uint32_t i               = sel.list[k];
      const packet::PacketMeta& m    = f.batch.meta(i);
      const forward::ForwardResult r = forward::core::forward_packet(
          f.batch.data(i), m.caplen, m.len, f.infos[i], m.port, s.nexthops[i], view);
      f.reason[i] = ids_[unsigned(r.reason)];
      f.out[i]    = r.port;
    }
  }

  int32_t reply(const Frame& f, uint32_t i, uint8_t* out) const override {
    if (f.reason[i] != ids_[unsigned(forward::Reason::kTtlExpired)] &&
        f.reason[i] != ids_[unsigned(forward::Reason::kHopLimitExpired)])
      return -1;
    const packet::PacketMeta& m = f.batch.meta(i);
    return int32_t(forward::build_time_exceeded(
        f.batch.data(i), m.caplen, f.infos[i], tables_->port_mac(m.port),
        tables_->icmp_source4(m.port), tables_->icmp_source6(m.port), out));
  }

  static Result<std::unique_ptr<Module>> make(const ModuleArgs& args, BuildEnv& env);

 private:
  std::unique_ptr<forward::RouterTables> tables_;
  std::unique_ptr<lookup::Fib> cpu_, offload_;
  std::array<uint16_t, forward::kReasonCount> ids_{};
  std::string describe_;
};

static_assert(kMaxReplyBytes >= forward::kMaxIcmpFrameBytes, "a Time Exceeded frame fits");

Result<std::unique_ptr<Module>> RouterModule::make(const ModuleArgs& args, BuildEnv& env) {
  auto m = std::make_unique<RouterModule>();
  lookup::RouteTable loaded;
  const lookup::RouteTable* fib = nullptr;
  const std::string path        = args.get("fib");
  if (!path.empty()) {
    if (!env.tables || !env.tables->load_routes)
      return Status(Errc::kNotSupported, "fib=" + path + ": this program cannot load route files");
    WARPATH_ASSIGN_OR_RETURN(loaded, env.tables->load_routes(path));
    fib          = &loaded;
    m->describe_ = path;
  } else if (const auto* given = env.preloaded<lookup::RouteTable>("router.fib")) {
    fib          = given;
    m->describe_ = "given table";
  } else {
    loaded       = builtin_fib(env.seed);
    fib          = &loaded;
    m->describe_ = "built-in synthetic table";
  }
  m->describe_ += " (" + std::to_string(fib->v4.size()) + " IPv4 + " +
                  std::to_string(fib->v6.size()) + " IPv6 routes)";
  forward::RouterConfig nb_loaded;
  const forward::RouterConfig* nb = nullptr;
  const std::string nb_path       = args.get("neighbors");
  if (!nb_path.empty()) {
    if (!env.tables || !env.tables->read_text)
      return Status(Errc::kNotSupported,
                    "neighbors=" + nb_path + ": this program cannot load neighbour files");
    WARPATH_ASSIGN_OR_RETURN(std::string text, env.tables->read_text(nb_path));
    WARPATH_ASSIGN_OR_RETURN(nb_loaded, forward::parse_neighbors(nb_path, text, *fib));
    nb = &nb_loaded;
  } else if (const auto* given = env.preloaded<forward::RouterConfig>("router.neighbors")) {
    nb = given;
  } else {
    nb_loaded = forward::default_neighbors(*fib, env.port_count);
    nb        = &nb_loaded;
  }
  // MAC check: on the live ports (promiscuous: they see frames for every MAC), or as asked.
  const std::string mac_check = args.get("mac_check", "auto");
  if (mac_check != "auto" && mac_check != "on" && mac_check != "off")
    return Status(Errc::kInvalidArgument, "mac_check=" + mac_check + ": must be auto, on or off");
  forward::RouterConfig checked = *nb;
  checked.mac_check_ports.clear();
  for (uint16_t p = 0; p < env.port_count; ++p) {
    const PortLink link = p < env.links.size() ? env.links[p] : PortLink{};
    if (mac_check == "on" || (mac_check == "auto" && link.promiscuous))
      checked.mac_check_ports.push_back(p);
    checked.port_hw_macs[p] = link.mac;  // all zero: unknown, never matches
    // The interface's own addresses are the router's on that port: packets for them go to
    // the host (to_router), never back out (the kernel answers them on AF_PACKET; a tap
    // slow path hands them over on AF_XDP).
    for (uint32_t a : link.ipv4) checked.addresses.push_back({int32_t(p), false, a, {}});
    // (ICMPv6 errors leave from a port's global address, never a link-local one: tables.)
    for (const auto& a : link.ipv6) checked.addresses.push_back({int32_t(p), true, 0, a});
  }
  for (const auto& n : checked.neighbors)
    if (n.port >= env.port_count)
      return Status(Errc::kInvalidArgument,
                    (nb_path.empty() ? std::string("neighbours") : "neighbors=" + nb_path) +
                        ": next hop " + fib->nexthop_text(n.nexthop) + " leaves on port " +
                        std::to_string(n.port) + ", but only " + std::to_string(env.port_count) +
                        " port(s) are configured (ports are numbered from 0 in --port order)");
  if (env.warnings && fib->v4.empty() && fib->v6.empty())
    env.warnings->push_back("the FIB has no routes: every IP packet is dropped as no_route");
  WARPATH_ASSIGN_OR_RETURN(forward::RouterTables tables, forward::RouterTables::build(checked));
  m->tables_ = std::make_unique<forward::RouterTables>(std::move(tables));
  const std::string engine = args.get("lookup", "auto");
  if (engine.empty()) return Status(Errc::kInvalidArgument, "lookup: must not be empty (use auto)");
  WARPATH_ASSIGN_OR_RETURN(m->cpu_, lookup::make_fib(engine, *fib));
  if (env.offload) {
    const std::string device = env.offload_device == "cpu" ? "cpu" : "cuda";
    WARPATH_ASSIGN_OR_RETURN(m->offload_, lookup::make_fib(device + ".lpm", *fib));
  }
  for (unsigned r = 0; r < forward::kReasonCount; ++r) {
    const auto reason = forward::Reason(r);
    if (reason == forward::Reason::kForwarded) {
      m->ids_[r] = kReasonForwarded;
      continue;
    }
    WARPATH_ASSIGN_OR_RETURN(m->ids_[r],
                             env.reasons->add(forward::reason_name(reason),
                                              forward::reason_verdict(reason), env.position));
  }
  return std::unique_ptr<Module>(std::move(m));
}

}  // namespace

ModuleInfo router_module_info() {
  ModuleInfo i;
  i.kind    = "router";
  i.summary = "IPv4/IPv6 router: longest-prefix match, TTL/hop limit, checksum, MACs, slow path";
  i.args    = {
         {"fib", "built-in 240,000 routes", "route file: <prefix>/<len> [<nexthop>] per line",
          ArgFile::kInput},
         {"neighbors", "next hop N -> port N % ports", "neighbour file (router.hpp)", ArgFile::kInput},
         {"lookup", "auto", "CPU lookup engine id (cpu.lpm, ref.lpm, ...) or auto"},
         {"mac_check", "auto",
          "drop unicast frames for neither the port's MAC nor its interface's as not_for_us: on, "
             "off, or auto (on promiscuous live ports: afpacket, afxdp, dpdk NICs)"},
  };
  i.contract = router_contract();
  i.make  = RouterModule::make;
  return i;
}

WARPATH_REGISTER_MODULE(router_module_info);

}  // namespace warpath::runtime
