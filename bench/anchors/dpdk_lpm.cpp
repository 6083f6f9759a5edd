// bench/anchors/dpdk_lpm.cpp: rte_lpm, rte_fib, rte_lpm6 and rte_fib6 as LookupAnchors.
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_malloc.h>
#include <rte_version.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "lookup_anchor.hpp"

namespace warpath::bench {

using lookup::Ip6;
using lookup::kNoRoute;
using lookup::NextHop;
using lookup::Route4;
using lookup::Route6;

namespace {

constexpr uint32_t kChunk       = 64;    // DPDK bulk calls, as in ANCHORS.md
constexpr uint32_t kSpareGroups = 1024;  // as warpath's FibParams::spare_groups

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

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

std::string unique_name(const char* kind) {
  static unsigned counter = 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "wp_%s_%u", kind, counter++);
  return buf;
}

Status dpdk_error(const std::string& what) {
  const int e = rte_errno;
  return Status(e == ENOMEM || e == ENOSPC ? Errc::kCapacity : Errc::kInvalidArgument,
                what + ": " + rte_strerror(e) +
                    (e == ENOMEM ? " (raise the EAL memory, -m)" : std::string()));
}

// tbl8 groups of a DIR-24-8 (rte_lpm, rte_fib dir24_8): one per /24 under a longer prefix.
uint32_t groups_needed4(const std::vector<Route4>& routes) {
  std::unordered_set<uint32_t> s;
  for (const auto& r : routes)
    if (r.len > 24) s.insert(r.prefix >> 8);
  return uint32_t(s.size());
}

// tbl8 groups of a 24-then-8-bit multibit trie (rte_lpm6, rte_fib6 trie): one per distinct
// b-bit prefix (b = 24, 32, ..., 120) above a longer route.
uint32_t groups_needed6(const std::vector<Route6>& routes) {
  struct Hash {
    size_t operator()(const Ip6& a) const { return size_t(a.hi * 0x9E3779B97F4A7C15ull ^ a.lo); }
  };
  uint64_t total = 0;
  for (unsigned b = 24; b < 128; b += 8) {
    std::unordered_set<Ip6, Hash> s;
    for (const auto& r : routes)
      if (r.len > b) s.insert(lookup::mask6(r.prefix, b));
    total += s.size();
  }
  return uint32_t(std::min<uint64_t>(total, 0x7FFF'FFFF));
}

// The most groups rte_fib6 can reserve: every route its levels below /24.
uint64_t groups_bound6(const std::vector<Route6>& routes) {
  uint64_t total = 0;
  for (const auto& r : routes)
    if (r.len > 24) total += (r.len + 7u) / 8 - 3;
  return total;
}

uint32_t max_nh4(const std::vector<Route4>& routes) {
  uint32_t m = 0;
  for (const auto& r : routes) m = std::max(m, r.nh);
  return m;
}
uint32_t max_nh6(const std::vector<Route6>& routes) {
  uint32_t m = 0;
  for (const auto& r : routes) m = std::max(m, r.nh);
  return m;
}

/// Route lists for rte_lpm / rte_lpm6, which reject depth 0: a default route becomes the two
/// /1 halves, each only where the table has no /1 of its own (same longest-prefix answers).
std::vector<Route4> without_default(const std::vector<Route4>& routes) {
  std::vector<Route4> out;
  out.reserve(routes.size() + 2);
  const Route4* def = nullptr;
  bool has_half[2]  = {false, false};
  for (const auto& r : routes) {
    if (r.len == 0) {
      def = &r;
      continue;
    }
    if (r.len == 1) has_half[r.prefix >> 31] = true;
    out.push_back(r);
  }
  if (def)
    for (uint32_t h = 0; h < 2; ++h)
      if (!has_half[h]) out.push_back(Route4{h << 31, 1, def->nh});
  return out;
}
std::vector<Route6> without_default(const std::vector<Route6>& routes) {
  std::vector<Route6> out;
  out.reserve(routes.size() + 2);
  const Route6* def = nullptr;
  bool has_half[2]  = {false, false};
  for (const auto& r : routes) {
    if (r.len == 0) {
      def = &r;
      continue;
    }
    if (r.len == 1) has_half[r.prefix.hi >> 63] = true;
    out.push_back(r);
  }
  if (def)
    for (uint64_t h = 0; h < 2; ++h)
      if (!has_half[h]) out.push_back(Route6{Ip6{h << 63, 0}, 1, def->nh});
  return out;
}

Status wrong_family(const std::string& name, bool v6) {
  return Status(Errc::kNotSupported, name + (v6 ? " is an IPv6 anchor" : " is an IPv4 anchor"));
}
Status nh_too_large(const std::string& name, uint32_t nh, uint64_t limit) {
  return Status(Errc::kNotSupported, name + ": next hop " + std::to_string(nh) +
                                         " does not fit (its largest is " + std::to_string(limit) +
                                         ")");
}

std::string variant_suffix(std::string_view variant, std::string_view structure) {
  if (variant == structure) return "";
  if (variant.size() > structure.size() + 1 && variant.substr(0, structure.size()) == structure &&
      variant[structure.size()] == '.')
    return std::string(variant.substr(structure.size() + 1));
  return "?";  // another structure's variant
}

Status not_variant_of(std::string_view variant, const std::string& structure) {
  return Status(Errc::kNotFound, "'" + std::string(variant) + "' is not a variant of " + structure);
}

// ---- rte_lpm ------------------------------------------------------------------------------

class RteLpm final : public LookupAnchor {
 public:
  ~RteLpm() override { rte_lpm_free(lpm_); }
  std::string structure() const override { return "rte_lpm"; }
  std::string name() const override { return x4_ ? "rte_lpm.x4" : "rte_lpm"; }
  bool is_v6() const override { return false; }
  std::string config() const override { return config_; }
  Status select(std::string_view variant) override {
    const std::string v = variant_suffix(variant, structure());
    if (v != "" && v != "x4") return not_variant_of(variant, structure());
    x4_ = v == "x4";
    return Status::ok();
  }

  Status build4(const std::vector<Route4>& in) override {
    rte_lpm_free(lpm_);
    lpm_                      = nullptr;
    const auto routes         = without_default(in);
    constexpr uint32_t kMaxNh = 0xFF'FFFF;  // 24 bits
    if (const uint32_t m = max_nh4(routes); m > kMaxNh) return nh_too_large(name(), m, kMaxNh);
    rte_lpm_config cfg{};
    cfg.max_rules = uint32_t(std::max<size_t>(routes.size(), 1));
    cfg.number_tbl8s =
        std::min<uint32_t>(groups_needed4(routes) + kSpareGroups, RTE_LPM_MAX_TBL8_NUM_GROUPS);
    config_ = "max_rules=" + std::to_string(cfg.max_rules) +
              " number_tbl8s=" + std::to_string(cfg.number_tbl8s);
    image_bytes_          = (uint64_t(RTE_LPM_TBL24_NUM_ENTRIES) + cfg.number_tbl8s * 256ull) * 4;
    const uint64_t before = heap_bytes();
    const auto t0         = Clock::now();
    lpm_                  = rte_lpm_create(unique_name("lpm").c_str(), SOCKET_ID_ANY, &cfg);
    if (!lpm_) return dpdk_error("rte_lpm_create");
    for (const auto& r : routes)
      if (const int rc = rte_lpm_add(lpm_, r.prefix, r.len, r.nh); rc < 0) {
        rte_errno = -rc;
        return dpdk_error("rte_lpm_add " + lookup::format_ipv4(r.prefix) + "/" +
                          std::to_string(r.len));
      }
    build_ms_     = ms_since(t0);
    memory_bytes_ = heap_bytes() - before;
    return Status::ok();
  }

  void lookup4(const uint32_t* addrs, NextHop* out, uint32_t n) const override {
    if (x4_) {
      uint32_t i = 0;
      for (; i + 4 <= n; i += 4) {
        const xmm_t ip = _mm_loadu_si128(reinterpret_cast<const __m128i*>(addrs + i));
        rte_lpm_lookupx4(lpm_, ip, out + i, kNoRoute);
      }
      for (; i < n; ++i)
        if (rte_lpm_lookup(lpm_, addrs[i], out + i) != 0) out[i] = kNoRoute;
      return;
    }
    uint32_t i = 0;
    for (; i + kChunk <= n; i += kChunk) {
      rte_lpm_lookup_bulk(lpm_, addrs + i, out + i, kChunk);
      fix(out + i, kChunk);
    }
    if (i < n) {
      rte_lpm_lookup_bulk_func(lpm_, addrs + i, out + i, n - i);
      fix(out + i, n - i);
    }
  }

 private:
  // Bulk results are raw entries: the next hop in 24 bits and a valid flag.
  static void fix(NextHop* e, uint32_t n) {
    for (uint32_t j = 0; j < n; ++j)
      e[j] = (e[j] & RTE_LPM_LOOKUP_SUCCESS) ? (e[j] & 0x00FF'FFFFu) : kNoRoute;
  }
  bool x4_      = false;
  rte_lpm* lpm_ = nullptr;
  std::string config_;
};

// ---- rte_fib dir24_8 -----------------------------------------------------------------------

struct FibLookupType {
  const char* suffix;
  rte_fib_lookup_type type;
};
constexpr FibLookupType kFibTypes[] = {
    {"macro", RTE_FIB_LOOKUP_DIR24_8_SCALAR_MACRO},
    {"inline", RTE_FIB_LOOKUP_DIR24_8_SCALAR_INLINE},
    {"uni", RTE_FIB_LOOKUP_DIR24_8_SCALAR_UNI},
    {"avx512", RTE_FIB_LOOKUP_DIR24_8_VECTOR_AVX512},
};

// rte_fib and rte_fib6 entries hold (nh << 1) or (group << 1 | 1): 2-byte entries keep next hops
// and groups below 2^15, and the largest next hop is the default ("no route").
constexpr uint64_t kMax2B = 0x7FFF, kMax4B = 0x7FFF'FFFF;

class RteFib final : public LookupAnchor {
 public:
  ~RteFib() override { rte_fib_free(fib_); }
  std::string structure() const override { return "rte_fib"; }
  std::string name() const override { return std::string("rte_fib.") + t_->suffix; }
  bool is_v6() const override { return false; }
  std::string config() const override { return config_; }
  Status select(std::string_view variant) override {
    const std::string v = variant_suffix(variant, structure());
    for (const auto& t : kFibTypes)
      if (v == t.suffix) {
        if (!fib_) return Status(Errc::kNotBuilt, "rte_fib: select after build");
        if (rte_fib_select_lookup(fib_, t.type) != 0)
          return Status(Errc::kNotSupported,
                        std::string(variant) + ": lookup type not available on this CPU");
        t_ = &t;
        return Status::ok();
      }
    return not_variant_of(variant, structure());
  }

  Status build4(const std::vector<Route4>& routes) override {
    rte_fib_free(fib_);
    fib_             = nullptr;
    const uint32_t m = max_nh4(routes);
    const uint32_t g = groups_needed4(routes) + kSpareGroups;
    rte_fib_conf cfg{};
    cfg.type             = RTE_FIB_DIR24_8;
    cfg.max_routes       = int(std::max<size_t>(routes.size(), 1));
    cfg.rib_ext_sz       = 0;
    const bool narrow    = m < kMax2B && g <= kMax2B;
    cfg.dir24_8.nh_sz    = narrow ? RTE_FIB_DIR24_8_2B : RTE_FIB_DIR24_8_4B;
    const unsigned bytes = narrow ? 2 : 4;
    default_             = narrow ? kMax2B : kMax4B;
    cfg.default_nh       = default_;
    if (m >= default_) return nh_too_large(name(), m, default_ - 1);
    cfg.dir24_8.num_tbl8 = g;
    config_              = "nh_sz=" + std::to_string(bytes) + "B num_tbl8=" + std::to_string(g) +
              " max_routes=" + std::to_string(cfg.max_routes);
    image_bytes_          = ((uint64_t(1) << 24) + uint64_t(g) * 256) * bytes;
    const uint64_t before = heap_bytes();
    const auto t0         = Clock::now();
    fib_                  = rte_fib_create(unique_name("fib").c_str(), SOCKET_ID_ANY, &cfg);
    if (!fib_) return dpdk_error("rte_fib_create");
    for (const auto& r : routes)
      if (const int rc = rte_fib_add(fib_, r.prefix, r.len, r.nh); rc < 0) {
        rte_errno = -rc;
        return dpdk_error("rte_fib_add " + lookup::format_ipv4(r.prefix) + "/" +
                          std::to_string(r.len));
      }
    build_ms_     = ms_since(t0);
    memory_bytes_ = heap_bytes() - before;
    return select(name());
  }

  void lookup4(const uint32_t* addrs, NextHop* out, uint32_t n) const override {
    uint64_t nh[kChunk];
    for (uint32_t i = 0; i < n; i += kChunk) {
      const uint32_t k = std::min(kChunk, n - i);
      rte_fib_lookup_bulk(fib_, const_cast<uint32_t*>(addrs + i), nh, int(k));
      for (uint32_t j = 0; j < k; ++j) out[i + j] = nh[j] == default_ ? kNoRoute : NextHop(nh[j]);
    }
  }

 private:
  const FibLookupType* t_ = &kFibTypes[0];
  rte_fib* fib_           = nullptr;
  uint64_t default_       = 0;
  std::string config_;
};

// ---- rte_lpm6 ------------------------------------------------------------------------------

void to_bytes(const Ip6& a, uint8_t* b) {
  for (int i = 0; i < 8; ++i) b[i] = uint8_t(a.hi >> (56 - 8 * i));
  for (int i = 0; i < 8; ++i) b[8 + i] = uint8_t(a.lo >> (56 - 8 * i));
}

class RteLpm6 final : public LookupAnchor {
 public:
  ~RteLpm6() override { rte_lpm6_free(lpm_); }
  std::string structure() const override { return "rte_lpm6"; }
  std::string name() const override { return "rte_lpm6"; }
  bool is_v6() const override { return true; }
  std::string config() const override { return config_; }
  Status select(std::string_view variant) override {
    return variant == "rte_lpm6" ? Status::ok() : not_variant_of(variant, structure());
  }

  Status build6(const std::vector<Route6>& in) override {
    rte_lpm6_free(lpm_);
    lpm_                      = nullptr;
    const auto routes         = without_default(in);
    constexpr uint32_t kMaxNh = (1u << 21) - 1;  // 21-bit next hops
    if (const uint32_t m = max_nh6(routes); m > kMaxNh) return nh_too_large(name(), m, kMaxNh);
    rte_lpm6_config cfg{};
    cfg.max_rules    = uint32_t(std::max<size_t>(routes.size(), 1));
    cfg.number_tbl8s = groups_needed6(routes) + kSpareGroups;
    config_          = "max_rules=" + std::to_string(cfg.max_rules) +
              " number_tbl8s=" + std::to_string(cfg.number_tbl8s);
    image_bytes_          = ((uint64_t(1) << 24) + cfg.number_tbl8s * 256ull) * 4;
    const uint64_t before = heap_bytes();
    const auto t0         = Clock::now();
    lpm_                  = rte_lpm6_create(unique_name("lpm6").c_str(), SOCKET_ID_ANY, &cfg);
    if (!lpm_) return dpdk_error("rte_lpm6_create");
    uint8_t ip[16];
    for (const auto& r : routes) {
      to_bytes(r.prefix, ip);
      if (const int rc = rte_lpm6_add(lpm_, ip, r.len, r.nh); rc < 0) {
        rte_errno = -rc;
        return dpdk_error("rte_lpm6_add " + lookup::format_ipv6(r.prefix) + "/" +
                          std::to_string(r.len));
      }
    }
    build_ms_     = ms_since(t0);
    memory_bytes_ = heap_bytes() - before;
    return Status::ok();
  }

  void lookup6(const Ip6Net* addrs, NextHop* out, uint32_t n) const override {
    // rte_lpm6 writes -1 for a miss: kNoRoute as an int32_t.
    auto* ips = reinterpret_cast<uint8_t(*)[RTE_LPM6_IPV6_ADDR_SIZE]>(const_cast<Ip6Net*>(addrs));
    auto* nhs = reinterpret_cast<int32_t*>(out);
    for (uint32_t i = 0; i < n; i += kChunk)
      rte_lpm6_lookup_bulk_func(lpm_, ips + i, nhs + i, std::min(kChunk, n - i));
  }

 private:
  rte_lpm6* lpm_ = nullptr;
  std::string config_;
};

// ---- rte_fib6 trie -------------------------------------------------------------------------

struct Fib6LookupType {
  const char* suffix;
  rte_fib6_lookup_type type;
};
constexpr Fib6LookupType kFib6Types[] = {
    {"scalar", RTE_FIB6_LOOKUP_TRIE_SCALAR},
    {"avx512", RTE_FIB6_LOOKUP_TRIE_VECTOR_AVX512},
};

class RteFib6 final : public LookupAnchor {
 public:
  ~RteFib6() override { rte_fib6_free(fib_); }
  std::string structure() const override { return "rte_fib6"; }
  std::string name() const override { return std::string("rte_fib6.") + t_->suffix; }
  bool is_v6() const override { return true; }
  std::string config() const override { return config_; }
  Status select(std::string_view variant) override {
    const std::string v = variant_suffix(variant, structure());
    for (const auto& t : kFib6Types)
      if (v == t.suffix) {
        if (!fib_) return Status(Errc::kNotBuilt, "rte_fib6: select after build");
        if (rte_fib6_select_lookup(fib_, t.type) != 0)
          return Status(Errc::kNotSupported,
                        std::string(variant) + ": lookup type not available on this CPU");
        t_ = &t;
        return Status::ok();
      }
    return not_variant_of(variant, structure());
  }

  Status build6(const std::vector<Route6>& routes) override {
    // rte_fib6 reserves groups for every route deeper than /24 as it is added (the 8-bit
    // levels below its covering route), more than the finished trie holds, and the order of
    // the adds decides how many. Start at twice the groups the trie holds and grow by 1.25x
    // on ENOSPC, up to the bound where every route reserves all its levels.
    const uint64_t bound = groups_bound6(routes) + kSpareGroups;
    uint64_t groups      = std::min<uint64_t>(2ull * groups_needed6(routes) + kSpareGroups, bound);
    for (unsigned retries = 0;; ++retries) {
      Status s = build_with(routes, uint32_t(std::min<uint64_t>(groups, kMax4B)));
      if (s.is_ok() && retries) config_ += " (" + std::to_string(retries) + " ENOSPC retries)";
      if (s.is_ok() || s.code() != Errc::kCapacity || rte_errno != ENOSPC || groups >= bound)
        return s;
      groups = std::min(bound, groups + groups / 4);
    }
  }

  void lookup6(const Ip6Net* addrs, NextHop* out, uint32_t n) const override {
    auto* ips = reinterpret_cast<uint8_t(*)[RTE_FIB6_IPV6_ADDR_SIZE]>(const_cast<Ip6Net*>(addrs));
    uint64_t nh[kChunk];
    for (uint32_t i = 0; i < n; i += kChunk) {
      const uint32_t k = std::min(kChunk, n - i);
      rte_fib6_lookup_bulk(fib_, ips + i, nh, int(k));
      for (uint32_t j = 0; j < k; ++j) out[i + j] = nh[j] == default_ ? kNoRoute : NextHop(nh[j]);
    }
  }

 private:
  Status build_with(const std::vector<Route6>& routes, uint32_t groups) {
    rte_fib6_free(fib_);
    fib_             = nullptr;
    const uint32_t m = max_nh6(routes);
    rte_fib6_conf cfg{};
    cfg.type             = RTE_FIB6_TRIE;
    cfg.max_routes       = int(std::max<size_t>(routes.size(), 1));
    cfg.rib_ext_sz       = 0;
    const bool narrow    = m < kMax2B && groups <= kMax2B;
    cfg.trie.nh_sz       = narrow ? RTE_FIB6_TRIE_2B : RTE_FIB6_TRIE_4B;
    const unsigned bytes = narrow ? 2 : 4;
    default_             = narrow ? kMax2B : kMax4B;
    cfg.default_nh       = default_;
    if (m >= default_) return nh_too_large(name(), m, default_ - 1);
    cfg.trie.num_tbl8 = groups;
    config_           = "nh_sz=" + std::to_string(bytes) + "B num_tbl8=" + std::to_string(groups) +
              " max_routes=" + std::to_string(cfg.max_routes);
    image_bytes_          = ((uint64_t(1) << 24) + uint64_t(groups) * 256) * bytes;
    const uint64_t before = heap_bytes();
    const auto t0         = Clock::now();
    fib_                  = rte_fib6_create(unique_name("fib6").c_str(), SOCKET_ID_ANY, &cfg);
    if (!fib_) return dpdk_error("rte_fib6_create");
    uint8_t ip[16];
    for (const auto& r : routes) {
      to_bytes(r.prefix, ip);
      if (const int rc = rte_fib6_add(fib_, ip, r.len, r.nh); rc < 0) {
        rte_errno = -rc;
        return dpdk_error("rte_fib6_add " + lookup::format_ipv6(r.prefix) + "/" +
                          std::to_string(r.len));
      }
    }
    build_ms_     = ms_since(t0);
    memory_bytes_ = heap_bytes() - before;
    return select(name());
  }

  const Fib6LookupType* t_ = &kFib6Types[0];
  rte_fib6* fib_           = nullptr;
  uint64_t default_        = 0;
  std::string config_;
};

// ---- EAL -----------------------------------------------------------------------------------

std::once_flag g_start_once;
Status g_start_status(Errc::kNotBuilt, "DPDK EAL not started");
std::string g_eal_args;
bool g_huge = false;  // EAL started on hugepages

// Free 2 MB hugepages EAL can use, in MB (see DpdkOptions::huge).
unsigned free_hugepages_mb() {
  bool mounted = false;
  if (std::FILE* f = std::fopen("/proc/mounts", "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, f))
      if (std::strstr(line, " hugetlbfs ") && !std::strstr(line, "pagesize=1G")) {
        char dir[256];
        if (std::sscanf(line, "%*s %255s", dir) == 1 && ::access(dir, W_OK) == 0) mounted = true;
      }
    std::fclose(f);
  }
  if (!mounted) return 0;
  unsigned long free_pages = 0, reserved = 0, page_kb = 0;
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[128];
    while (std::fgets(line, sizeof line, f)) {
      std::sscanf(line, "HugePages_Free: %lu", &free_pages);
      std::sscanf(line, "HugePages_Rsvd: %lu", &reserved);
      std::sscanf(line, "Hugepagesize: %lu kB", &page_kb);
    }
    std::fclose(f);
  }
  if (page_kb != 2048 || free_pages <= reserved) return 0;  // promised pages are not free
  return unsigned((free_pages - reserved) * 2);
}

}  // namespace

Status LookupAnchor::build4(const std::vector<Route4>&) { return wrong_family(name(), true); }
Status LookupAnchor::build6(const std::vector<Route6>&) { return wrong_family(name(), false); }
void LookupAnchor::lookup4(const uint32_t*, NextHop* out, uint32_t n) const {
  std::fill(out, out + n, kNoRoute);
}
void LookupAnchor::lookup6(const Ip6Net*, NextHop* out, uint32_t n) const {
  std::fill(out, out + n, kNoRoute);
}

Ip6Net to_network(Ip6 a) {
  Ip6Net n{};
  to_bytes(a, n.b);
  return n;
}
std::vector<Ip6Net> to_network(const std::vector<Ip6>& addrs) {
  std::vector<Ip6Net> out(addrs.size());
  for (size_t i = 0; i < addrs.size(); ++i) to_bytes(addrs[i], out[i].b);
  return out;
}

Status dpdk_start(const DpdkOptions& o) {
  std::call_once(g_start_once, [&] {
    g_huge = o.huge && free_hugepages_mb() >= o.memory_mb;
    if (!g_huge)
      std::fprintf(stderr,
                   "bench: DPDK runs on 4 KB pages here, not at its best: reserve %u hugepages "
                   "(echo N > /proc/sys/vm/nr_hugepages; a hugetlbfs mounted, e.g. on "
                   "/dev/hugepages) for its tables\n",
                   (o.memory_mb + 1) / 2);
    std::vector<std::string> args = {"warpath",
                                     "--no-pci",
                                     "--no-shconf",
                                     "--no-telemetry",
                                     "-m",
                                     std::to_string(o.memory_mb),
                                     "-l",
                                     std::to_string(o.lcore),
                                     "--log-level=" + std::to_string(o.log_level),
                                     "--force-max-simd-bitwidth=512"};
    // On hugepages, --in-memory: no rtemap files are left in the hugetlbfs holding their pages
    // after the process ends (the next run would find too few free and fall back).
    args.insert(args.begin() + 1, g_huge ? "--in-memory" : "--no-huge");
    for (size_t i = 1; i < args.size(); ++i) g_eal_args += (i > 1 ? " " : "") + args[i];
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // EAL parses a copy: getopt permutes argv.
    if (rte_eal_init(int(args.size()), argv.data()) < 0)
      g_start_status = Status(Errc::kNotSupported,
                              std::string("DPDK EAL did not start: ") + rte_strerror(rte_errno));
    else
      g_start_status = Status::ok();
  });
  return g_start_status;
}

std::string dpdk_eal_args() { return g_eal_args; }
const char* dpdk_pages_text() {
  return g_eal_args.empty() ? "" : g_huge ? "2 MB hugepages" : "4 KB pages (--no-huge)";
}
std::string dpdk_version() {
  std::string v = rte_version();  // "DPDK 22.11.11"
  return v.rfind("DPDK ", 0) == 0 ? v.substr(5) : v;
}

unsigned dpdk_memory_mb_for(const std::vector<Route4>& v4, const std::vector<Route6>& v6) {
  // One structure alive at a time: the largest of them, generously (EAL without hugepages
  // reserves address space; pages are only touched as DPDK uses them).
  const uint64_t g4   = groups_needed4(v4) + kSpareGroups;
  const uint64_t lpm  = (64ull << 20) + g4 * 1024 + v4.size() * 16;
  const uint64_t fib  = (64ull << 20) + g4 * 2048 + v4.size() * 2 * 128;
  const uint64_t g6   = v6.empty() ? 0 : groups_needed6(v6) + kSpareGroups;
  const uint64_t lpm6 = v6.empty() ? 0 : (64ull << 20) + g6 * 1024 + v6.size() * 256;
  const uint64_t fib6 =
      v6.empty() ? 0 : (64ull << 20) + (groups_bound6(v6) + kSpareGroups) * 1024 + v6.size() * 320;
  const uint64_t need = std::max({lpm, fib, lpm6, fib6});
  return unsigned((need * 3 / 2 >> 20) + 256);
}

std::vector<AnchorVariant> anchor_variants() {
  std::vector<AnchorVariant> out;
  const bool started            = g_start_status.is_ok();
  const std::string not_started = started ? "" : g_start_status.message();
  out.push_back({"rte_lpm", "rte_lpm", false, started, not_started});
  out.push_back({"rte_lpm.x4", "rte_lpm", false, started, not_started});
  // Probe each lookup function on a one-route structure.
  rte_fib* fib = nullptr;
  if (started) {
    rte_fib_conf cfg{};
    cfg.type             = RTE_FIB_DIR24_8;
    cfg.max_routes       = 4;
    cfg.default_nh       = kMax2B;
    cfg.dir24_8.nh_sz    = RTE_FIB_DIR24_8_2B;
    cfg.dir24_8.num_tbl8 = 4;
    fib                  = rte_fib_create(unique_name("probe").c_str(), SOCKET_ID_ANY, &cfg);
  }
  for (const auto& t : kFibTypes) {
    const bool ok = fib && rte_fib_select_lookup(fib, t.type) == 0;
    out.push_back({std::string("rte_fib.") + t.suffix, "rte_fib", false, ok,
                   ok ? "" : (started ? "lookup type not available on this CPU" : not_started)});
  }
  rte_fib_free(fib);
  out.push_back({"rte_lpm6", "rte_lpm6", true, started, not_started});
  rte_fib6* fib6 = nullptr;
  if (started) {
    rte_fib6_conf cfg{};
    cfg.type          = RTE_FIB6_TRIE;
    cfg.max_routes    = 4;
    cfg.default_nh    = kMax2B;
    cfg.trie.nh_sz    = RTE_FIB6_TRIE_2B;
    cfg.trie.num_tbl8 = 4;
    fib6              = rte_fib6_create(unique_name("probe6").c_str(), SOCKET_ID_ANY, &cfg);
  }
  for (const auto& t : kFib6Types) {
    const bool ok = fib6 && rte_fib6_select_lookup(fib6, t.type) == 0;
    out.push_back({std::string("rte_fib6.") + t.suffix, "rte_fib6", true, ok,
                   ok ? "" : (started ? "lookup type not available on this CPU" : not_started)});
  }
  rte_fib6_free(fib6);
  return out;
}

Result<std::unique_ptr<LookupAnchor>> make_anchor(std::string_view variant) {
  std::unique_ptr<LookupAnchor> a;
  if (variant_suffix(variant, "rte_lpm") != "?") a = std::make_unique<RteLpm>();
  if (variant_suffix(variant, "rte_fib") != "?") a = std::make_unique<RteFib>();
  if (variant_suffix(variant, "rte_lpm6") != "?") a = std::make_unique<RteLpm6>();
  if (variant_suffix(variant, "rte_fib6") != "?") a = std::make_unique<RteFib6>();
  if (!a) return Status(Errc::kNotFound, "unknown anchor '" + std::string(variant) + "'");
  if (!g_start_status.is_ok()) return g_start_status;
  // rte_lpm / rte_lpm6 select now; the rte_fib structures check the CPU after their build.
  if (a->structure() == "rte_lpm" || a->structure() == "rte_lpm6") WARPATH_TRY(a->select(variant));
  if (a->structure() == "rte_fib" || a->structure() == "rte_fib6") {
    bool known = false;
    for (const auto& v : anchor_variants()) known = known || v.name == variant;
    if (!known) return Status(Errc::kNotFound, "unknown anchor '" + std::string(variant) + "'");
  }
  return a;
}

}  // namespace warpath::bench
