// src/runtime/app.hpp
//
// The application a pipeline runs (acl, router, router+acl): its tables, its engines and the
// per-chunk work of the three shade stages. Immutable after build(); every worker and the
// offload master share one App.
//
//   pre_shade(chunk)         parse (cpu.parse), gather the ACL keys of the packets that have
//                            one (IPv4 5-tuples, or OpenFlow 12-tuples of every packet) and the
//                            destinations for the FIB
//   shade(engines, chunk)    classify and look up, on one set of engines (the CPU's in a
//                            worker; the master shades many chunks at once, see master.hpp)
//   post_shade(chunk)        per packet: ACL action, router data path (rewrites forwarded
//                            packets in place), reason and output port
//
// Packets without an ACL key: with 5-tuple rules, IPv6 packets get acl.ipv6's action; in the
// acl app a packet the parser rejected (bad IPv4 checksum, truncated, ...) is dropped as
// "malformed" before the rules are consulted, and any other packet without a key (ARP,
// non-IP) is permitted (the firewall filters IP). In router apps such packets go to the router,
// which drops or slow-paths what it cannot forward.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/actions.hpp"
#include "runtime/chunk.hpp"
#include "warpath/classify/classifier.hpp"
#include "warpath/core/exec.hpp"
#include "warpath/forward/router.hpp"
#include "warpath/lookup/fib.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/runtime/pipeline.hpp"

namespace warpath::runtime {

/// The engines of one place the shade stage runs.
struct ShadeEngines {
  std::unique_ptr<lookup::Fib> fib;
  std::unique_ptr<classify::Classifier> acl;
  std::string describe() const;  ///< "cpu.lpm + cpu.rfc"
};

class App {
 public:
  /// Builds tables and the CPU engines; with `offload` also the master's engines
  /// (config.offload_device: "cuda" -> cuda.*, "cpu" -> cpu.*). `port_count` numbered ports.
  static Result<std::unique_ptr<App>> build(const RunConfig& config, const RunInputs& inputs,
                                            uint16_t port_count, bool offload);

  bool has_acl() const noexcept { return acl_enabled_; }
  bool has_router() const noexcept { return router_enabled_; }
  classify::KeyLayout acl_layout() const noexcept { return layout_; }
  const ShadeEngines& cpu() const noexcept { return cpu_; }
  const ShadeEngines* offload() const noexcept {
    return offload_.fib || offload_.acl ? &offload_ : nullptr;
  }

  Status pre_shade(Chunk& c) const;
  Status shade(const ShadeEngines& e, Chunk& c, ExecContext& ctx) const;
  void post_shade(Chunk& c) const;
  /// The slow path's answer to packet i of `c` when its reason is ttl_expired or
  /// hop_limit_expired: an ICMP / ICMPv6 Time Exceeded frame (forward::build_time_exceeded,
  /// from the ingress port's MAC and address) written to `out` (kMaxIcmpFrameBytes), sent back
  /// out of the ingress port. Returns its length, or 0 when none may be sent (RFC 1812 4.3.2.7).
  uint32_t time_exceeded(const Chunk& c, uint32_t i, uint8_t* out) const;

 private:
  App()                       = default;
  AppKind kind_               = AppKind::kRouterAcl;
  bool acl_enabled_           = false;
  bool router_enabled_        = false;
  uint16_t port_count_        = 0;
  classify::KeyLayout layout_ = classify::KeyLayout::kFiveTuple;
  std::vector<Action> rule_actions_;
  Action default_action_, ipv6_action_;
  std::unique_ptr<packet::Parser> parser_;
  std::unique_ptr<forward::RouterTables> tables_;
  ShadeEngines cpu_, offload_;
};

}  // namespace warpath::runtime
