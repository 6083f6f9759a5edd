// Differential check of a lookup engine against ref.lpm on fresh random tables, for
// `warpath selftest` and the tests: nested IPv4 and IPv6 prefixes (with /0, /32 and /128
// routes), addresses drawn under the prefixes and uniformly, every burst size, then a round of
// random adds and removes and the same comparison again.
#include "warpath/lookup/check.hpp"

#include <algorithm>
#include <random>
#include <set>
#include <tuple>
#include <unordered_set>

#include "lookup/engines.hpp"

namespace warpath::lookup {
namespace {

Ip6 random_ip6(std::mt19937_64& rng) { return Ip6{rng(), rng()}; }

}  // namespace

RouteTable random_route_table(uint64_t seed, uint32_t routes4, uint32_t routes6) {
  std::mt19937_64 rng(seed);
  RouteTable t;
  t.source = NextHopSource::kNumeric;
  std::unordered_set<uint64_t> seen4;
  std::set<std::tuple<uint64_t, uint64_t, unsigned>> seen6;
  // Chains of nested prefixes around a few anchors, plus random prefixes of every length.
  std::vector<uint32_t> anchors4;
  std::vector<Ip6> anchors6;
  for (int i = 0; i < 8; ++i) {
    anchors4.push_back(uint32_t(rng()));
    anchors6.push_back(random_ip6(rng));
  }
  while (t.v4.size() < routes4) {
    const unsigned len = unsigned(rng() % 33);
    const uint32_t base =
        rng() % 2 ? anchors4[rng() % anchors4.size()] ^ uint32_t(rng() % 4096) : uint32_t(rng());
    const uint32_t p = mask4(base, len);
    if (!seen4.insert(uint64_t(p) << 8 | len).second) continue;
    t.v4.push_back({p, uint8_t(len), NextHop(rng() % 1000)});
  }
  while (t.v6.size() < routes6) {
    const unsigned len = unsigned(rng() % 129);
    Ip6 base           = random_ip6(rng);
    if (rng() % 2) {
      base = anchors6[rng() % anchors6.size()];
      base.lo ^= rng() % 4096;
      if (rng() % 2) base.hi ^= rng() % 4096;
    }
    const Ip6 p = mask6(base, len);
    if (!seen6.emplace(p.hi, p.lo, len).second) continue;
    t.v6.push_back({p, uint8_t(len), NextHop(rng() % 1000)});
  }
  return t;
}

RouteTable synthetic_full_table(uint64_t seed, uint32_t routes4, uint32_t routes6) {
  // data/routing/README.md: IPv4 /8../32 counts of the 2024 table; IPv6 main lengths.
  static const double w4[33] = {0,     0,     0,     0,     0,      0,     0,      0,     16,
                                13,    38,    103,   299,   581,    1203,  2100,   13490, 8235,
                                13798, 24870, 42611, 50750, 108623, 96510, 537698, 20,    3,
                                11,    18,    17,    3,     3,      886};
  std::vector<double> w6(129, 0.0);
  w6[29] = 4371, w6[32] = 22548, w6[40] = 13418, w6[44] = 14365, w6[48] = 75488, w6[36] = 3000;
  w6[64] = 184, w6[56] = 1000, w6[128] = 40, w6[112] = 20, w6[24] = 200, w6[28] = 300;
  std::mt19937_64 rng(seed);
  std::discrete_distribution<unsigned> len4(std::begin(w4), std::end(w4)),
      len6(w6.begin(), w6.end());
  RouteTable t;
  t.source = NextHopSource::kAssigned;
  std::unordered_set<uint64_t> seen4;
  std::set<std::tuple<uint64_t, uint64_t, unsigned>> seen6;
  std::vector<uint32_t> blocks4(4096);
  std::vector<uint64_t> blocks6(2048);
  for (auto& b : blocks4) b = uint32_t(rng()) & 0xFFFF0000u;
  for (auto& b : blocks6) b = (0x2000000000000000ull | (rng() >> 4)) & ~0xFFFFFFFFull;
  while (t.v4.size() < routes4) {
    const unsigned len = len4(rng);
    const uint32_t a =
        len <= 16 ? uint32_t(rng()) : blocks4[rng() % blocks4.size()] | uint32_t(rng() & 0xFFFF);
    const uint32_t p = mask4(a, len);
    if (!seen4.insert(uint64_t(p) << 8 | len).second) continue;
    t.v4.push_back({p, uint8_t(len), NextHop(rng() % kAssignedNhs)});
  }
  while (t.v6.size() < routes6) {
    const unsigned len = len6(rng);
    const Ip6 a{blocks6[rng() % blocks6.size()] | (rng() & 0xFFFFFFFFull), rng()};
    const Ip6 p = mask6(a, len);
    if (!seen6.emplace(p.hi, p.lo, len).second) continue;
    t.v6.push_back({p, uint8_t(len), NextHop(rng() % kAssignedNhs)});
  }
  return t;
}

void random_addresses(const RouteTable& t, uint64_t seed, uint32_t count, std::vector<uint32_t>& a4,
                      std::vector<Ip6>& a6) {
  std::mt19937_64 rng(seed ^ 0x5bd1e995u);
  a4.resize(count);
  a6.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t pick = rng();
    if (pick % 2 == 0 && !t.v4.empty()) {
      const Route4& r = t.v4[(pick >> 1) % t.v4.size()];
      a4[i]           = r.prefix | (uint32_t(rng()) & ~mask4(0xFFFF'FFFFu, r.len));
    } else {
      a4[i] = uint32_t(rng());
    }
    const uint64_t pick6 = rng();
    if (pick6 % 2 == 0 && !t.v6.empty()) {
      const Route6& r   = t.v6[(pick6 >> 1) % t.v6.size()];
      const Ip6 noise   = random_ip6(rng);
      const Ip6 netmask = mask6(Ip6{~0ull, ~0ull}, r.len);
      a6[i] = Ip6{r.prefix.hi | (noise.hi & ~netmask.hi), r.prefix.lo | (noise.lo & ~netmask.lo)};
    } else {
      a6[i] = random_ip6(rng);
    }
  }
}

std::string compare_engine(Fib& engine, Fib& ref, const std::vector<uint32_t>& a4,
                           const std::vector<Ip6>& a6, const std::vector<uint32_t>& sizes) {
  ExecContext ctx;
  for (int fam = 0; fam < 2; ++fam) {
    const auto n = uint32_t(fam == 0 ? a4.size() : a6.size());
    auto lookup  = [&](Fib& f, uint32_t off, uint32_t k, NextHop* out) {
      return fam == 0 ? f.lookup4({a4.data() + off, k}, {out, k}, ctx)
                       : f.lookup6({a6.data() + off, k}, {out, k}, ctx);
    };
    std::vector<NextHop> want(n), got(n);
    if (Status s = lookup(ref, 0, n, want.data()); !s.is_ok()) return s.message();
    for (uint32_t size : sizes) {
      // Bursts are consecutive slices over the size's cover (check_cover: every address at
      // large sizes, a prefix at small ones); a burst of 0 must write nothing.
      std::fill(got.begin(), got.end(), 0xDEADBEEFu);
      if (size == 0) {
        if (Status s = lookup(engine, 0, 0, got.data()); !s.is_ok())
          return "burst 0: " + s.message();
        if (std::any_of(got.begin(), got.end(), [](NextHop x) { return x != 0xDEADBEEFu; }))
          return "burst 0 wrote results";
        continue;
      }
      const uint32_t cover = check_cover(n, size);
      for (uint32_t off = 0; off < cover; off += size) {
        const uint32_t k = std::min(size, cover - off);
        if (Status s = lookup(engine, off, k, got.data() + off); !s.is_ok())
          return "burst " + std::to_string(size) + ": " + s.message();
      }
      for (uint32_t i = 0; i < cover; ++i)
        if (got[i] != want[i])
          return std::string(fam == 0 ? "IPv4 " : "IPv6 ") + "address " +
                 (fam == 0 ? format_ipv4(a4[i]) : format_ipv6(a6[i])) + " at burst " +
                 std::to_string(size) + ": got " + std::to_string(int64_t(int32_t(got[i]))) +
                 ", reference " + std::to_string(int64_t(int32_t(want[i])));
    }
  }
  return {};
}

std::string random_updates(Fib& engine, Fib& ref, RouteTable& t, uint64_t seed, uint32_t count) {
  std::mt19937_64 rng(seed ^ 0xfeedu);
  for (uint32_t k = 0; k < count; ++k) {
    const bool v6  = rng() % 4 == 0;
    const bool add = rng() % 2 == 0 || (v6 ? t.v6.empty() : t.v4.empty());
    Status a, b;
    if (!v6) {
      if (add) {
        const unsigned len = unsigned(rng() % 33);
        Route4 r{mask4(t.v4.empty() ? uint32_t(rng())
                                    : t.v4[rng() % t.v4.size()].prefix ^ uint32_t(rng() % 65536),
                       len),
                 uint8_t(len), NextHop(rng() % 1000)};
        a = engine.add4(r);
        b = ref.add4(r);
      } else {
        const size_t i = rng() % t.v4.size();
        const Route4 r = t.v4[i];
        t.v4[i]        = t.v4.back();
        t.v4.pop_back();
        a = engine.remove4(r.prefix, r.len);
        b = ref.remove4(r.prefix, r.len);
      }
    } else {
      if (add) {
        const unsigned len = unsigned(rng() % 129);
        Ip6 base           = t.v6.empty() ? random_ip6(rng) : t.v6[rng() % t.v6.size()].prefix;
        base.lo ^= rng() % 65536;
        Route6 r{mask6(base, len), uint8_t(len), NextHop(rng() % 1000)};
        a = engine.add6(r);
        b = ref.add6(r);
      } else {
        const size_t i = rng() % t.v6.size();
        const Route6 r = t.v6[i];
        t.v6[i]        = t.v6.back();
        t.v6.pop_back();
        a = engine.remove6(r.prefix, r.len);
        b = ref.remove6(r.prefix, r.len);
      }
    }
    if (a.code() != b.code())
      return "update " + std::to_string(k) + ": engine '" + a.to_string() + "', reference '" +
             b.to_string() + "'";
  }
  return {};
}

CheckReport check_fib_engine(std::string_view id, uint64_t seed, uint64_t items) {
  CheckReport report{"lookup", std::string(id), seed, 0, false, {}};
  const auto n     = uint32_t(std::clamp<uint64_t>(items, 1, 1u << 22));
  RouteTable table = random_route_table(seed, 2000, 2000);
  auto engine      = make_fib(id, table);
  if (!engine.is_ok()) {
    report.skipped = engine.status().code() == Errc::kNotSupported;
    report.detail  = engine.status().message();
    return report;
  }
  auto ref = detail::make_ref_fib(table);
  if (!ref.is_ok()) {
    report.detail = ref.status().message();
    return report;
  }
  std::vector<uint32_t> a4;
  std::vector<Ip6> a6;
  random_addresses(table, seed, n, a4, a6);
  const std::vector<uint32_t> sizes = {0, 1, 31, 32, 33, 255, 256, 257, 4096, n};
  report.detail                     = compare_engine(**engine, **ref, a4, a6, sizes);
  if (report.detail.empty()) report.detail = random_updates(**engine, **ref, table, seed, 200);
  if (report.detail.empty()) report.detail = compare_engine(**engine, **ref, a4, a6, {n});
  // A variant of the table or the image: the engine against ref.lpm on a few burst sizes,
  // updates, and again; the detail names the variant.
  const std::vector<uint32_t> few = {0, 1, 257, std::min<uint32_t>(n, 4096)};
  auto variant                    = [&](const char* name, RouteTable t, const FibParams& params,
                     uint64_t update_seed) {
    if (!report.detail.empty()) return;
    auto e = make_fib(id, t, params);
    auto r = detail::make_ref_fib(t);
    if (!e.is_ok() || !r.is_ok()) {
      report.detail = (e.is_ok() ? r.status() : e.status()).message();
    } else if (const unsigned bits = (*e)->stats().entry_bits;
               params.entry_bits && bits && bits != params.entry_bits) {
      report.detail = "asked for " + std::to_string(params.entry_bits) + "-bit entries, got " +
                      std::to_string(bits) + "-bit";
    } else {
      report.detail = compare_engine(**e, **r, a4, a6, few);
      if (report.detail.empty()) report.detail = random_updates(**e, **r, t, update_seed, 50);
      if (report.detail.empty()) report.detail = compare_engine(**e, **r, a4, a6, few);
    }
    if (!report.detail.empty()) report.detail = std::string(name) + ": " + report.detail;
  };
  // An IPv6-only table (no IPv4 image at all): every IPv4 address has no route, until updates
  // add the first IPv4 routes.
  RouteTable six = table;
  six.v4.clear();
  variant("IPv6-only table", six, {}, seed + 1);
  // 32-bit IPv4 entries (the width a table with more than 32,767 next hops gets; the kernels
  // and CPU bodies have a path of their own for it).
  FibParams wide;
  wide.entry_bits = 32;
  variant("32-bit entries", table, wide, seed + 2);
  report.items = 2ull * n;
  return report;
}

}  // namespace warpath::lookup
