// include/warpath/lookup/fib.hpp
//
// Longest-prefix-match forwarding tables (FIBs) for IPv4 and IPv6.
//
// What
//   A Fib holds a routing table (the RIB, control plane) and the lookup images built from it
//   (data plane), and answers batches of destination addresses with next hops. It is the
//   shade stage of PacketShader's IPv4 and IPv6 forwarding applications (sections 6.2.1 and
//   6.2.2) and the lookup of G-Opt's CPU comparison.
//
// Algorithms
//   IPv4  DIR-24-8-BASIC (Gupta et al., as in PacketShader): tbl24, one entry per /24, holds
//         either the next hop of the longest prefix of length <= 24 covering it or the index of
//         a 256-entry tbl8 group that resolves the last 8 bits. Entries are 16 bits when the
//         table has at most 32,767 distinct next hops and 32,768 groups (PacketShader's
//         layout: tbl24 is 32 MiB and stays in the last-level cache longer), else 32 bits (up
//         to 2^31 - 2 next hops, 2^23 groups). The width is chosen at build time and changes
//         by a rebuild when an update needs more.
//   IPv6  Binary search on prefix lengths (Waldvogel et al., as in PacketShader): one hash
//         table per distinct prefix length; markers on the search path of every prefix carry
//         their best matching prefix, so a lookup is log2(#lengths) hash probes.
//   A default route (0.0.0.0/0, ::/0) is an ordinary route; an address without a route gets
//   kNoRoute.
//
// Engines (lookup module registry; ids as in core/registry.hpp)
//   id              priority  notes
//   ref.lpm         0         the oracle: one plain binary trie per family, one bit per step
//   cpu.lpm.scalar  5         DIR-24-8 / binary search on lengths, one address at a time
//   cpu.lpm         10        the same bodies, G-Opt style: a group of lookups in flight, each
//                             step's memory prefetched for the whole group before it is used
//   cpu.lpm.compressed 11     DIR-24-8 with its tbl24 compressed by /16 (ADR 0004), staged
//                             prefetch; what "cpu" and "auto" pick
//   cuda.lpm        8         the same bodies in CUDA kernels, images mirrored in device
//                             memory; batches copied in and out. A lone lookup call pays the
//                             copies; the pipeline's offload master uses it explicitly.
//   Aliases: "cpu" (the CPU engine of the highest priority), "gpu" (cuda.lpm), "ref".
//   "validate:<id>" runs <id> beside ref.lpm on every batch and fails on the first difference.
//
// Updates
//   add/remove change single routes while other threads keep calling lookup4/lookup6. A
//   lookup sees, for each address, the table before or after each update, never a torn
//   entry: IPv4 entries are rewritten in place with single aligned stores (a new tbl8 group
//   is filled before it is published; a freed one is reused only after ReadGuard says no
//   reader can still see it); IPv6 and IPv4 rebuilds publish a new image by pointer swap.
//   One thread at a time may update; any number may look up.
//
// Errors
//   Lookups have no per-address error: a miss is kNoRoute. Calls fail with kInvalidArgument
//   for a short output span or a bad route, kCapacity when an image cannot grow, kCudaError
//   on a GPU failure.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/exec.hpp"
#include "warpath/core/registry.hpp"
#include "warpath/core/span.hpp"
#include "warpath/core/status.hpp"
#include "warpath/lookup/route.hpp"

namespace warpath::lookup {

struct FibParams {
  /// IPv4 entry width: 0 = automatic (16 bits when the table fits, see above), 16 or 32.
  unsigned entry_bits = 0;
  /// tbl8 groups reserved beyond those the table needs, for updates without a rebuild.
  uint32_t spare_groups = 1024;
};

/// What a Fib holds, for --stats and benchmarks.
struct FibStats {
  uint64_t routes4 = 0, routes6 = 0;
  uint64_t memory_bytes = 0;  ///< lookup images (host + device), the RIB excluded
  uint64_t rib_bytes    = 0;  ///< control-plane copy of the routes (estimate)
  double build_ms       = 0;  ///< last full build
  unsigned entry_bits   = 0;  ///< IPv4 image entry width (0 for ref.lpm)
  uint32_t tbl8_groups  = 0;  ///< groups in use
  uint32_t v6_lengths   = 0;  ///< distinct IPv6 prefix lengths (hash tables)
  uint64_t v6_markers   = 0;  ///< IPv6 marker entries
  uint64_t rebuilds     = 0;  ///< full image rebuilds caused by updates
};

class Fib {
 public:
  virtual ~Fib()                               = default;
  virtual std::string_view id() const noexcept = 0;
  /// Whether lookups take device-resident addresses and answers (ExecContext::resident): the
  /// CUDA engine; the others answer such a call kNotSupported.
  virtual bool takes_device_memory() const noexcept { return false; }

  /// out[i] = next hop of the longest prefix matching addrs[i], or kNoRoute.
  /// kInvalidArgument when out.size < addrs.size. (Non-virtual interface: the arguments are
  /// checked here, once, and engines implement do_lookup4 / do_lookup6.)
  Status lookup4(Span<const uint32_t> addrs, Span<NextHop> out, ExecContext& ctx) const {
    if (ctx.resident && !takes_device_memory()) return host_only();
    if (out.size < addrs.size) return short_span(addrs.size, out.size);
    return do_lookup4(addrs, out, ctx);
  }
  Status lookup6(Span<const Ip6> addrs, Span<NextHop> out, ExecContext& ctx) const {
    if (ctx.resident && !takes_device_memory()) return host_only();
    if (out.size < addrs.size) return short_span(addrs.size, out.size);
    return do_lookup6(addrs, out, ctx);
  }

  /// Adds a route or replaces the next hop of an existing one.
  virtual Status add4(const Route4& r) = 0;
  virtual Status add6(const Route6& r) = 0;
  /// Removes a route; kNotFound when the table does not have it.
  virtual Status remove4(uint32_t prefix, uint8_t len) = 0;
  virtual Status remove6(Ip6 prefix, uint8_t len)      = 0;

  virtual FibStats stats() const = 0;

 protected:
  /// The lookups, with out.size >= addrs.size.
  virtual Status do_lookup4(Span<const uint32_t> addrs, Span<NextHop> out,
                            ExecContext& ctx) const = 0;
  virtual Status do_lookup6(Span<const Ip6> addrs, Span<NextHop> out, ExecContext& ctx) const = 0;

 private:
  Status host_only() const {
    return Status(Errc::kNotSupported, std::string(id()) + ": takes host memory only");
  }
  Status short_span(uint32_t items, uint32_t room) const {
    return Status(Errc::kInvalidArgument, std::string(id()) + ": output span of " +
                                              std::to_string(room) + " for " +
                                              std::to_string(items) + " addresses");
  }
};

/// Every lookup engine in this build, available here or not.
std::vector<EngineInfo> fib_engines();

/// Builds a Fib with engine `id` ("ref.lpm", "cpu.lpm.scalar", "cpu.lpm", "cpu.lpm.compressed",
/// "cuda.lpm", "auto", "cpu" (the CPU engine of the highest priority), "gpu", "ref",
/// "validate:<id>") from `table`. kNotFound for an unknown id, kNotSupported when the engine
/// cannot run here, kInvalidArgument for a route with a bad length or next hop.
Result<std::unique_ptr<Fib>> make_fib(std::string_view id, const RouteTable& table,
                                      const FibParams& params = {});

/// Applies one parsed update (announce = add, withdraw = remove). A withdrawal of an absent
/// route is counted in `*absent` (when given) and is not an error: the LINX update stream is
/// applied to a table that is not its base (data/routing/README.md).
Status apply_update(Fib& fib, const RouteUpdate& u, uint64_t* absent = nullptr);

}  // namespace warpath::lookup
