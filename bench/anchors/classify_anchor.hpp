// bench/anchors/classify_anchor.hpp
//
// DPDK's rte_acl as the benchmark anchor of `warpath bench classify`.
//
// What
//   An AclAnchor builds one rte_acl context from a warpath RuleSet and classifies the same keys
//   as the warpath classifier engines, giving the same answers (the index of the best matching
//   rule, kNoMatch for none), so the harness times them side by side and cross-checks every
//   answer. Only the benchmark uses this library; it is built when CMake finds DPDK
//   (WARPATH_HAVE_DPDK) and this header needs no DPDK header. EAL is started by dpdk_start()
//   (lookup_anchor.hpp), shared with the lookup anchors.
//
// Variants (names are what --engines accepts; one build serves them all)
//   rte_acl.scalar     rte_acl_classify_alg(..., RTE_ACL_CLASSIFY_SCALAR)
//   rte_acl.sse        ... RTE_ACL_CLASSIFY_SSE        (SSE4.1)
//   rte_acl.avx2       ... RTE_ACL_CLASSIFY_AVX2       (AVX2)
//   rte_acl.avx512x16  ... RTE_ACL_CLASSIFY_AVX512X16  (AVX-512, 16 flows at a time)
//   rte_acl.avx512x32  ... RTE_ACL_CLASSIFY_AVX512X32  (AVX-512, 32 flows at a time)
//   acl_variants() probes each with rte_acl_set_ctx_classify on a one-rule context after EAL
//   starts (the AVX-512 ones need EAL --force-max-simd-bitwidth=512, which dpdk_start passes).
//
// Field layouts (input bytes in network order, as rte_acl expects)
//   KeyLayout::kFiveTuple: dpdk-test-acl's ipv4_defs (app/test-acl/main.c), a 16-byte buffer
//     offset 0  proto     1 byte   RTE_ACL_FIELD_TYPE_BITMASK  input 0
//     offset 4  src IPv4  4 bytes  RTE_ACL_FIELD_TYPE_MASK     input 1  (prefix length)
//     offset 8  dst IPv4  4 bytes  RTE_ACL_FIELD_TYPE_MASK     input 2
//     offset 12 sport     2 bytes  RTE_ACL_FIELD_TYPE_RANGE    input 3
//     offset 14 dport     2 bytes  RTE_ACL_FIELD_TYPE_RANGE    input 3
//     A set whose address masks are not all prefixes uses BITMASK for the addresses (config()
//     says so); a port value/mask (rather than a range) becomes a range when each 16-bit half
//     of the mask is a prefix, otherwise the set is kNotSupported.
//   KeyLayout::kOpenFlow: a 40-byte buffer: offset 0 one pad byte (0 in every key, wildcarded
//     by every rule: rte_acl's first field must be 1 byte), then key word w (w = 0..8, the
//     GSwitch 288-bit tuple of rule.hpp) as a 4-byte RTE_ACL_FIELD_TYPE_BITMASK field at offset
//     4 + 4w, input index 1 + w. Rules with port ranges that are not full are kNotSupported
//     (OpenFlow 1.0 ports are value/mask, carried in word 8).
//
// Priorities and answers
//   rte_acl returns the matching rule with the highest priority (equal priorities: unspecified),
//   so rules are ranked by warpath's order (priority, then lower index) and rule of rank r gets
//   priority rules - r (1..rules, all distinct; ClassBench files: rule i gets rules - i).
//   userdata = index + 1; rte_acl answers 0 for no match, which maps to kNoMatch.
//
// Build time and memory
//   build_ms covers rte_acl_create + rte_acl_add_rules + rte_acl_build. memory_bytes is the
//   growth of DPDK's malloc heaps across the build (rules and the run-time tries, what the
//   context keeps); build_peak_bytes is the growth of the process's peak RSS (VmHWM, reset
//   before the build) - rte_acl builds its tries with the C heap, which is where fw1_100K's
//   ~10 GB go. AclBuildOptions::max_build_mb caps that: the build runs under an address-space
//   limit (RLIMIT_AS = current size + the cap); when rte_acl's build allocator fails it
//   returns -ENOMEM cleanly and build() answers kCapacity naming the cap.
//
// Thread safety: build once, single-threaded; classify is const.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lookup_anchor.hpp"  // dpdk_start, DpdkOptions, dpdk_eal_args, dpdk_version
#include "warpath/classify/rule.hpp"
#include "warpath/core/status.hpp"

namespace warpath::bench {

struct AclVariant {
  std::string name;    ///< "rte_acl.avx2"
  int alg        = 0;  ///< enum rte_acl_classify_alg
  bool available = false;
  std::string why_not;  ///< empty when available
};
/// Every rte_acl classify function, with whether it runs here (probe after dpdk_start).
std::vector<AclVariant> acl_variants();

struct AclBuildOptions {
  uint64_t max_build_mb = 12000;  ///< cap on the C-heap growth of the build (0: none)
};

/// Keys laid out as the byte buffers rte_acl reads, with the pointer array it takes. Built once,
/// outside any timed loop.
class AclKeys {
 public:
  AclKeys() = default;
  explicit AclKeys(const classify::KeyBatch& keys);
  uint32_t size() const { return uint32_t(ptrs_.size()); }
  const uint8_t* const* data() const { return ptrs_.data(); }
  uint32_t bytes_per_key() const { return stride_; }

 private:
  std::vector<uint8_t> bytes_;
  std::vector<const uint8_t*> ptrs_;
  uint32_t stride_ = 0;
};

class AclAnchor {
 public:
  ~AclAnchor();
  AclAnchor(const AclAnchor&)            = delete;
  AclAnchor& operator=(const AclAnchor&) = delete;

  /// Builds a context from `rules`. kNotSupported for a rule rte_acl cannot express (see the
  /// header comment) or more rules than rte_acl's priority range, kCapacity when the build
  /// runs out of memory (the cap or EAL's -m), kNotBuilt when EAL did not start.
  static Result<std::unique_ptr<AclAnchor>> build(const classify::RuleSet& rules,
                                                  const AclBuildOptions& options = {});

  /// Selects the classify function (a name acl_variants() lists as available).
  Status select(std::string_view variant);
  std::string name() const { return variant_; }

  /// out[i] = index of the best rule matching key `offset + i` of `keys`, kNoMatch when none;
  /// one rte_acl_classify_alg call for the n keys (the harness passes bursts of --batch).
  void classify(const AclKeys& keys, uint32_t offset, uint32_t n, uint32_t* out) const;

  double build_ms() const { return build_ms_; }
  uint64_t memory_bytes() const { return memory_bytes_; }
  uint64_t build_peak_bytes() const { return build_peak_bytes_; }
  /// "5-tuple test-acl ipv4_defs (proto bitmask, addresses mask, ports range), 9311 rules".
  std::string config() const { return config_; }

 private:
  AclAnchor()                = default;
  void* ctx_                 = nullptr;  // rte_acl_ctx*
  int alg_                   = 1;        // RTE_ACL_CLASSIFY_SCALAR
  std::string variant_       = "rte_acl.scalar", config_;
  double build_ms_           = 0;
  uint64_t memory_bytes_     = 0;
  uint64_t build_peak_bytes_ = 0;
};

/// EAL memory (MB, -m) for an rte_acl context of this set, generously: without hugepages EAL
/// only reserves address space, pages are touched as DPDK allocates.
unsigned acl_memory_mb_for(const classify::RuleSet& rules);

}  // namespace warpath::bench
