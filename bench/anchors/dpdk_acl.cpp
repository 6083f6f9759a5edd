// bench/anchors/dpdk_acl.cpp: DPDK rte_acl as the anchor of `warpath bench classify`.
#include <rte_acl.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <string>

#include "classify_anchor.hpp"

namespace warpath::bench {

using classify::KeyLayout;
using classify::kNoMatch;
using classify::Rule;
using classify::RuleSet;

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct AlgName {
  const char* name;
  enum rte_acl_classify_alg alg;
};
constexpr AlgName kAlgs[] = {
    {"rte_acl.scalar", RTE_ACL_CLASSIFY_SCALAR},
    {"rte_acl.sse", RTE_ACL_CLASSIFY_SSE},
    {"rte_acl.avx2", RTE_ACL_CLASSIFY_AVX2},
    {"rte_acl.avx512x16", RTE_ACL_CLASSIFY_AVX512X16},
    {"rte_acl.avx512x32", RTE_ACL_CLASSIFY_AVX512X32},
};

constexpr uint32_t kFiveTupleBytes = 16;
constexpr uint32_t kOpenFlowBytes  = 40;  // 1 pad byte (+3 unused), 9 words
constexpr uint32_t kMaxFields      = 10;

/// Bytes allocated from every DPDK malloc heap.
uint64_t heap_bytes() {
  uint64_t total = 0;
  for (unsigned i = 0; i < rte_socket_count(); ++i) {
    rte_malloc_socket_stats s{};
    if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &s) == 0)
      total += s.heap_allocsz_bytes;
  }
  return total;
}

/// A field of /proc/self/status in bytes ("VmHWM", "VmRSS", "VmSize"); 0 when unreadable.
uint64_t proc_status_bytes(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(f, line))
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':')
      return std::stoull(line.substr(n + 1)) * 1024;  // "VmHWM:   123456 kB"
  return 0;
}

/// Resets VmHWM to the current RSS (Linux >= 4.0); false when the kernel refuses.
bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return bool(f);
}

std::string unique_name() {
  static unsigned counter = 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "wp_acl_%u", counter++);
  return buf;
}

void store_be32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24), p[1] = uint8_t(v >> 16), p[2] = uint8_t(v >> 8), p[3] = uint8_t(v);
}

/// Prefix length of a contiguous high-bit mask of `bits` bits, -1 otherwise.
int prefix_len(uint32_t mask, unsigned bits) {
  const uint32_t full = bits == 32 ? 0xFFFF'FFFFu : (1u << bits) - 1;
  mask &= full;
  const uint32_t inv = ~mask & full;
  if ((inv & (inv + 1)) != 0) return -1;  // the clear bits are not the low ones
  return int(bits) - __builtin_popcount(inv);
}

/// One rule's fields as rte_acl wants them (host order), in the layout's field order.
struct AclFields {
  rte_acl_field f[kMaxFields];
  bool never = false;  // a port value/mask disjoint from its range: the rule matches nothing
};

/// The port range a half-word value/mask leaves, intersected with [lo, hi].
bool port_range(uint32_t value, uint32_t mask, uint16_t& lo, uint16_t& hi, bool& never) {
  if (mask == 0) return true;
  if (prefix_len(mask, 16) < 0) return false;
  const uint32_t vlo = value & mask, vhi = vlo | (~mask & 0xFFFFu);
  lo = uint16_t(std::max<uint32_t>(lo, vlo));
  hi = uint16_t(std::min<uint32_t>(hi, vhi));
  if (lo > hi) never = true;
  return true;
}

Status not_supported(const RuleSet& rs, uint32_t i, const std::string& why) {
  const Rule& r = rs.rules[i];
  return Status(Errc::kNotSupported,
                "rte_acl anchor: rule " + std::to_string(i) +
                    (r.line ? " (line " + std::to_string(r.line) + ")" : std::string()) + ": " +
                    why);
}

class AsLimit {
 public:
  /// Caps address-space growth at `extra` bytes from now (0: no cap).
  explicit AsLimit(uint64_t extra) {
    if (!extra || getrlimit(RLIMIT_AS, &old_) != 0) return;
    const uint64_t now = proc_status_bytes("VmSize");
    if (!now) return;
    rlimit lim   = old_;
    lim.rlim_cur = rlim_t(now + extra);
    if (old_.rlim_max != RLIM_INFINITY) lim.rlim_cur = std::min(lim.rlim_cur, old_.rlim_max);
    active_ = setrlimit(RLIMIT_AS, &lim) == 0;
  }
  ~AsLimit() {
    if (active_) setrlimit(RLIMIT_AS, &old_);
  }
  bool active() const { return active_; }

 private:
  rlimit old_{};
  bool active_ = false;
};

}  // namespace

// ---- keys ----------------------------------------------------------------------------------

AclKeys::AclKeys(const classify::KeyBatch& keys) {
  const bool five = keys.layout == KeyLayout::kFiveTuple;
  stride_         = five ? kFiveTupleBytes : kOpenFlowBytes;
  bytes_.assign(size_t(keys.count) * stride_ + 64, 0);
  // 64-byte aligned start inside the vector.
  const size_t skew = (64 - reinterpret_cast<uintptr_t>(bytes_.data()) % 64) % 64;
  uint8_t* base     = bytes_.data() + skew;
  ptrs_.resize(keys.count);
  for (uint32_t i = 0; i < keys.count; ++i) {
    uint8_t* p = base + size_t(i) * stride_;
    if (five) {
      p[0] = uint8_t(keys.word(3, i));
      store_be32(p + 4, keys.word(0, i));
      store_be32(p + 8, keys.word(1, i));
      store_be32(p + 12, keys.word(2, i));  // sport << 16 | dport: sport at 12, dport at 14
    } else {
      for (unsigned w = 0; w < 9; ++w) store_be32(p + 4 + 4 * w, keys.word(w, i));
    }
    ptrs_[i] = p;
  }
}

// ---- variants ------------------------------------------------------------------------------

std::vector<AclVariant> acl_variants() {
  std::vector<AclVariant> out;
  // EAL started? rte_lcore_count() is 0 before rte_eal_init.
  const bool started = rte_lcore_count() > 0;
  rte_acl_ctx* ctx   = nullptr;
  if (started) {
    rte_acl_param p{};
    const std::string name = unique_name();
    p.name                 = name.c_str();
    p.socket_id            = SOCKET_ID_ANY;
    p.rule_size            = RTE_ACL_RULE_SZ(1);
    p.max_rule_num         = 1;
    ctx                    = rte_acl_create(&p);
  }
  for (const auto& a : kAlgs) {
    AclVariant v{a.name, int(a.alg), false, ""};
    if (!started) {
      v.why_not = "DPDK EAL not started";
    } else if (!ctx) {
      v.why_not = std::string("rte_acl_create failed: ") + rte_strerror(rte_errno);
    } else {
      const int rc = rte_acl_set_ctx_classify(ctx, a.alg);
      v.available  = rc == 0;
      if (rc == -ENOTSUP)
        v.why_not = "not supported on this CPU / DPDK build (or EAL's max SIMD bitwidth)";
      else if (rc != 0)
        v.why_not = std::string("rte_acl_set_ctx_classify: ") + rte_strerror(-rc);
    }
    out.push_back(v);
  }
  rte_acl_free(ctx);
  return out;
}

// ---- the anchor ----------------------------------------------------------------------------

AclAnchor::~AclAnchor() { rte_acl_free(static_cast<rte_acl_ctx*>(ctx_)); }

Result<std::unique_ptr<AclAnchor>> AclAnchor::build(const RuleSet& rs,
                                                    const AclBuildOptions& options) {
  if (!(rte_lcore_count() > 0)) return Status(Errc::kNotBuilt, "DPDK EAL not started");
  const uint32_t n = uint32_t(rs.rules.size());
  if (n == 0) return Status(Errc::kInvalidArgument, "rte_acl anchor: empty rule set");
  if (n > uint32_t(RTE_ACL_MAX_PRIORITY))
    return Status(Errc::kNotSupported, "rte_acl anchor: more rules than rte_acl's priorities");
  const bool five = rs.layout == KeyLayout::kFiveTuple;

  // Field definitions.
  rte_acl_config cfg{};
  cfg.num_categories = 1;
  cfg.max_size       = 0;  // no limit on the run-time structures (as dpdk-test-acl's default)
  bool addr_prefixes = true;
  if (five)
    for (const auto& r : rs.rules)
      addr_prefixes =
          addr_prefixes && prefix_len(r.mask[0], 32) >= 0 && prefix_len(r.mask[1], 32) >= 0;
  if (five) {
    const uint8_t addr_type = addr_prefixes ? RTE_ACL_FIELD_TYPE_MASK : RTE_ACL_FIELD_TYPE_BITMASK;
    cfg.num_fields          = 5;
    cfg.defs[0]             = {RTE_ACL_FIELD_TYPE_BITMASK, 1, 0, 0, 0};
    cfg.defs[1]             = {addr_type, 4, 1, 1, 4};
    cfg.defs[2]             = {addr_type, 4, 2, 2, 8};
    cfg.defs[3]             = {RTE_ACL_FIELD_TYPE_RANGE, 2, 3, 3, 12};
    cfg.defs[4]             = {RTE_ACL_FIELD_TYPE_RANGE, 2, 4, 3, 14};
  } else {
    cfg.num_fields = 10;
    cfg.defs[0]    = {RTE_ACL_FIELD_TYPE_BITMASK, 1, 0, 0, 0};
    for (uint8_t w = 0; w < 9; ++w)
      cfg.defs[1 + w] = {RTE_ACL_FIELD_TYPE_BITMASK, 4, uint8_t(1 + w), uint8_t(1 + w),
                         uint32_t(4 + 4 * w)};
  }
  const uint32_t nf = cfg.num_fields;

  // Ranks: warpath's order (priority desc, then index asc).
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return rs.rules[a].priority > rs.rules[b].priority;
  });
  std::vector<uint32_t> rank(n);
  for (uint32_t r = 0; r < n; ++r) rank[order[r]] = r;

  // Rules, in rte_acl's layout.
  const size_t rule_sz = RTE_ACL_RULE_SZ(nf);
  std::vector<uint8_t> buf(size_t(n) * rule_sz, 0);
  uint32_t added = 0, never = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const Rule& r          = rs.rules[i];
    auto* ar               = reinterpret_cast<rte_acl_rule*>(buf.data() + size_t(added) * rule_sz);
    ar->data.category_mask = 1;
    ar->data.priority      = int32_t(n - rank[i]);
    ar->data.userdata      = i + 1;
    rte_acl_field* f       = ar->field;
    if (five) {
      if ((r.mask[3] & ~0xFFu) != 0 || (r.value[3] & ~0xFFu) != 0)
        return not_supported(rs, i, "protocol word wider than 8 bits");
      f[0].value.u8      = uint8_t(r.value[3]);
      f[0].mask_range.u8 = uint8_t(r.mask[3]);
      for (unsigned w = 0; w < 2; ++w) {
        f[1 + w].value.u32      = r.value[w] & r.mask[w];
        f[1 + w].mask_range.u32 = addr_prefixes ? uint32_t(prefix_len(r.mask[w], 32)) : r.mask[w];
      }
      uint16_t slo = r.sport_lo, shi = r.sport_hi, dlo = r.dport_lo, dhi = r.dport_hi;
      bool empty = slo > shi || dlo > dhi;
      if (!port_range(r.value[2] >> 16, r.mask[2] >> 16, slo, shi, empty) ||
          !port_range(r.value[2] & 0xFFFF, r.mask[2] & 0xFFFF, dlo, dhi, empty))
        return not_supported(rs, i, "port mask that is not a prefix of each port");
      if (empty) {  // matches no key: leave it out
        ++never;
        continue;
      }
      f[3].value.u16 = slo, f[3].mask_range.u16 = shi;
      f[4].value.u16 = dlo, f[4].mask_range.u16 = dhi;
    } else {
      if (r.sport_lo != 0 || r.sport_hi != 0xFFFF || r.dport_lo != 0 || r.dport_hi != 0xFFFF)
        return not_supported(rs, i, "port range in an OpenFlow rule (ports are value/mask)");
      f[0].value.u8 = 0, f[0].mask_range.u8 = 0;
      for (unsigned w = 0; w < 9; ++w) {
        f[1 + w].value.u32      = r.value[w] & r.mask[w];
        f[1 + w].mask_range.u32 = r.mask[w];
      }
    }
    ++added;
  }

  std::unique_ptr<AclAnchor> a(new AclAnchor);
  a->config_ =
      (five ? std::string("5-tuple, dpdk-test-acl ipv4_defs (proto bitmask, addresses ") +
                  (addr_prefixes ? "mask/prefix" : "bitmask") + ", ports range)"
            : std::string("OpenFlow, pad byte + 9 x 32-bit bitmask words")) +
      ", " + std::to_string(added) + " rules" +
      (never ? " (" + std::to_string(never) + " that match nothing left out)" : std::string());

  const uint64_t heap_before = heap_bytes();
  const bool peak_ok         = reset_peak_rss();
  const uint64_t rss_before  = proc_status_bytes("VmRSS");
  const auto t0              = Clock::now();
  rte_acl_param p{};
  const std::string name = unique_name();
  p.name                 = name.c_str();
  p.socket_id            = SOCKET_ID_ANY;
  p.rule_size            = uint32_t(rule_sz);
  p.max_rule_num         = std::max(added, 1u);
  auto* ctx              = rte_acl_create(&p);
  if (!ctx)
    return Status(Errc::kCapacity, std::string("rte_acl_create: ") + rte_strerror(rte_errno) +
                                       " (raise the EAL memory, -m)");
  a->ctx_ = ctx;
  if (added)
    if (const int rc =
            rte_acl_add_rules(ctx, reinterpret_cast<const rte_acl_rule*>(buf.data()), added);
        rc != 0)
      return Status(rc == -ENOMEM ? Errc::kCapacity : Errc::kInvalidArgument,
                    std::string("rte_acl_add_rules: ") + rte_strerror(-rc));
  std::vector<uint8_t>().swap(buf);
  int rc      = 0;
  bool capped = false;
  {
    AsLimit limit(options.max_build_mb << 20);
    capped = limit.active();
    rc     = rte_acl_build(ctx, &cfg);
  }
  a->build_ms_ = ms_since(t0);
  if (rc != 0) {
    if (rc == -ENOMEM)
      return Status(Errc::kCapacity, "rte_acl_build ran out of memory after " +
                                         std::to_string(int(a->build_ms_ / 1000)) + " s: " +
                                         (capped ? "its build needs more than the cap of " +
                                                       std::to_string(options.max_build_mb) +
                                                       " MB (--max-acl-mb, bounded by MemAvailable)"
                                                 : std::string("out of memory")) +
                                         ", or the EAL heap (-m) is too small for the tries");
    return Status(Errc::kInvalidArgument, std::string("rte_acl_build: ") + rte_strerror(-rc));
  }
  a->memory_bytes_ = heap_bytes() - heap_before;
  if (peak_ok) {
    const uint64_t hwm   = proc_status_bytes("VmHWM");
    a->build_peak_bytes_ = hwm > rss_before ? hwm - rss_before : 0;
  }
  WARPATH_TRY(a->select("rte_acl.scalar"));
  return a;
}

Status AclAnchor::select(std::string_view variant) {
  for (const auto& a : kAlgs)
    if (variant == a.name) {
      const int rc = rte_acl_set_ctx_classify(static_cast<rte_acl_ctx*>(ctx_), a.alg);
      if (rc != 0)
        return Status(Errc::kNotSupported,
                      std::string(variant) + ": not available here (" + rte_strerror(-rc) + ")");
      alg_     = int(a.alg);
      variant_ = a.name;
      return Status::ok();
    }
  return Status(Errc::kNotFound, "unknown rte_acl variant '" + std::string(variant) + "'");
}

void AclAnchor::classify(const AclKeys& keys, uint32_t offset, uint32_t n, uint32_t* out) const {
  rte_acl_classify_alg(static_cast<const rte_acl_ctx*>(ctx_),
                       const_cast<const uint8_t**>(keys.data() + offset), out, n, 1,
                       static_cast<enum rte_acl_classify_alg>(alg_));
  for (uint32_t i = 0; i < n; ++i) out[i] = out[i] ? out[i] - 1 : kNoMatch;
}

unsigned acl_memory_mb_for(const RuleSet& rules) {
  // Run-time tries: a few KB per rule on the hard sets (the build's C-heap peak is separate).
  const uint64_t n  = rules.rules.size();
  const uint64_t mb = 1024 + n * (rules.layout == KeyLayout::kFiveTuple ? 48 : 96) / 1024;
  return unsigned(std::min<uint64_t>(mb, 16384));
}

}  // namespace warpath::bench
