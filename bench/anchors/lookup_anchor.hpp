// bench/anchors/lookup_anchor.hpp
//
// DPDK's longest-prefix-match libraries as benchmark anchors for `warpath bench lookup`.
//
// What
//   A LookupAnchor wraps one DPDK LPM structure with one lookup function: rte_lpm (DIR-24-8,
//   24-bit next hops), rte_fib dir24_8, rte_lpm6 and rte_fib6 trie. It is built from the same
//   warpath route vectors as the warpath engines and answers the same addresses with the same
//   next hops (kNoRoute for a miss), so the harness times them side by side and cross-checks
//   every answer. Only the benchmark uses this library; it is built when CMake finds DPDK
//   (WARPATH_HAVE_DPDK) and this header needs no DPDK header.
//
// Variants (names are what --engines accepts)
//   IPv4  rte_lpm          rte_lpm_lookup_bulk in chunks of 64 (the inline bulk function)
//         rte_lpm.x4       rte_lpm_lookupx4, four addresses per SSE call
//         rte_fib.macro    rte_fib dir24_8, RTE_FIB_LOOKUP_DIR24_8_SCALAR_MACRO, chunks of 64
//         rte_fib.inline   ... RTE_FIB_LOOKUP_DIR24_8_SCALAR_INLINE
//         rte_fib.uni      ... RTE_FIB_LOOKUP_DIR24_8_SCALAR_UNI
//         rte_fib.avx512   ... RTE_FIB_LOOKUP_DIR24_8_VECTOR_AVX512 (AVX-512F CPUs)
//   IPv6  rte_lpm6         rte_lpm6_lookup_bulk_func in chunks of 64
//         rte_fib6.scalar  rte_fib6 trie, RTE_FIB6_LOOKUP_TRIE_SCALAR, chunks of 64
//         rte_fib6.avx512  ... RTE_FIB6_LOOKUP_TRIE_VECTOR_AVX512 (AVX-512F CPUs)
//   anchor_variants() lists those this CPU and this DPDK build can run (each is probed with
//   rte_fib_select_lookup / rte_fib6_select_lookup after EAL starts).
//
// Sizing, memory and build time
//   Every structure is sized from the table it is given: max_rules / max_routes = the number of
//   routes; tbl8 groups = the groups the table needs (distinct /24s under longer prefixes for
//   IPv4, distinct 8-bit steps below /24 for IPv6) plus 1,024 spare groups, as warpath's
//   FibParams reserves (rte_fib6 builds need about twice the groups the finished trie holds:
//   it starts there and doubles on ENOSPC). rte_fib / rte_fib6 entries are 2 bytes wide unless
//   the next hops or the group count need 4 (an entry holds a next hop or a group index in 15
//   bits), like warpath's 16-bit DIR-24-8 entries. memory_bytes is the growth of DPDK's malloc
//   heaps across the build (rte_malloc_get_socket_stats): everything DPDK allocated, tables,
//   rules, the RIB of rte_fib and its mempool; image_bytes is the lookup tables alone.
//   build_ms covers create + every add. rte_lpm keeps its rules in one array per length and
//   scans it on every add, so a full IPv4 table takes minutes to build (O(n^2)).
//
// Next hops
//   A miss is kNoRoute. rte_lpm stores 24-bit next hops and rte_lpm6 21-bit ones; rte_fib's
//   limit depends on the entry width (2 bytes: 0..32,766; the largest value is its default,
//   mapped to kNoRoute). build4/build6 fail with kNotSupported when a next hop does not fit.
//
// Thread safety
//   dpdk_start() once per process, before any anchor; lookups are const and may run
//   concurrently; build and destruction are single-threaded.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/lookup/route.hpp"

namespace warpath::bench {

/// An IPv6 address in network byte order, the form DPDK's IPv6 lookups take.
struct Ip6Net {
  uint8_t b[16];
};
Ip6Net to_network(lookup::Ip6 a);
std::vector<Ip6Net> to_network(const std::vector<lookup::Ip6>& addrs);

/// One DPDK lookup structure ("rte_lpm", "rte_fib", "rte_lpm6", "rte_fib6") and the lookup
/// function of one of its variants. The variants of a structure share one build: select()
/// switches the lookup function of the built structure (rte_lpm's build of a full table takes
/// minutes, so it is built once per run).
class LookupAnchor {
 public:
  virtual ~LookupAnchor() = default;
  /// "rte_lpm", "rte_fib", ...
  virtual std::string structure() const = 0;
  /// The selected variant: "rte_lpm", "rte_fib.avx512", ...
  virtual std::string name() const = 0;
  /// True for the IPv6 anchors.
  virtual bool is_v6() const = 0;
  /// How the structure was sized ("nh_sz=2B num_tbl8=1475 max_routes=901899"), for reports.
  virtual std::string config() const = 0;
  /// Selects a variant of this structure (a name anchor_variants() lists). kNotFound for a
  /// variant of another structure, kNotSupported when this CPU cannot run it, kNotBuilt before
  /// a build for the rte_fib structures.
  virtual Status select(std::string_view variant) = 0;

  /// Builds the structure from `routes` (replacing any previous one); sets build_ms and the
  /// memory figures. kNotSupported for a family the anchor does not serve or a next hop that
  /// does not fit, kCapacity when DPDK cannot allocate (EAL memory, -m), kInvalidArgument for
  /// a route DPDK rejects.
  virtual Status build4(const std::vector<lookup::Route4>& routes);
  virtual Status build6(const std::vector<lookup::Route6>& routes);

  /// out[i] = next hop of the longest prefix matching addrs[i], kNoRoute when none.
  /// Addresses are host order (IPv4) and network order (IPv6, see to_network).
  virtual void lookup4(const uint32_t* addrs, lookup::NextHop* out, uint32_t n) const;
  virtual void lookup6(const Ip6Net* addrs, lookup::NextHop* out, uint32_t n) const;

  /// Everything the build took from DPDK's heaps (tables, rules, RIB, mempools).
  uint64_t memory_bytes() const { return memory_bytes_; }
  /// The lookup tables alone (tbl24 and the tbl8 groups as configured), the figure comparable
  /// with warpath's FibStats::memory_bytes (which excludes the RIB).
  uint64_t image_bytes() const { return image_bytes_; }
  double build_ms() const { return build_ms_; }

 protected:
  uint64_t memory_bytes_ = 0;
  uint64_t image_bytes_  = 0;
  double build_ms_       = 0;
};

/// How EAL is started: `--in-memory|--no-huge --no-pci -m <memory_mb> --log-level=<log_level>
/// --force-max-simd-bitwidth=512 --no-shconf --no-telemetry -l <lcore>`.
struct DpdkOptions {
  unsigned memory_mb = 1024;
  int lcore          = 0;  ///< the CPU the caller benchmarks on (EAL pins its main thread there)
  int log_level      = 3;  ///< RTE_LOG_ERR
  /// On 2 MB hugepages (--in-memory) when a writable hugetlbfs has memory_mb of them free
  /// (HugePages_Free less HugePages_Rsvd), as DPDK runs at its best; else, or when false,
  /// --no-huge (4 KB pages), with a hint on stderr saying how to reserve them.
  bool huge = true;
};

/// Where the anchors' memory came from, for reports ("2 MB hugepages" or "4 KB pages
/// (--no-huge)"); "" before dpdk_start ran.
const char* dpdk_pages_text();

/// Starts EAL (once per process; later calls return the first call's outcome).
Status dpdk_start(const DpdkOptions& options);
/// The EAL arguments dpdk_start used ("" before it ran), for reports.
std::string dpdk_eal_args();
/// "22.11.11".
std::string dpdk_version();

/// EAL memory (MB) the anchors need for these tables, one structure alive at a time, with
/// margin.
unsigned dpdk_memory_mb_for(const std::vector<lookup::Route4>& v4,
                            const std::vector<lookup::Route6>& v6);

/// Every anchor variant, with whether it can run here (after dpdk_start) and why not.
struct AnchorVariant {
  std::string name;       ///< "rte_fib.avx512"
  std::string structure;  ///< "rte_fib"
  bool v6        = false;
  bool available = false;
  std::string why_not;  ///< empty when available
};
std::vector<AnchorVariant> anchor_variants();

/// A new, unbuilt anchor for the structure of `variant` ("rte_fib.avx512" -> an rte_fib), with
/// `variant` to be selected after the build. kNotFound for an unknown name, kNotSupported when
/// EAL did not start.
Result<std::unique_ptr<LookupAnchor>> make_anchor(std::string_view variant);

}  // namespace warpath::bench
