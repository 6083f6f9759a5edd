// src/lookup/bsl6_image.cpp: builds the binary-search-on-lengths image (see bsl6_image.hpp).
#include "lookup/bsl6_image.hpp"

#include <algorithm>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>

namespace warpath::lookup::detail {
namespace {

using core::Bsl6Bucket;
using core::Bsl6Node;
using core::kBsl6MaxProbe;

// Share of a table's slots in use: half keeps overflow into a second line rare (measured on
// the full table: see cpu/bsl6_cpu.cpp) at about 25 bytes per entry.
constexpr double kLoad = 0.5;

// The traffic the search tree is shaped for: this share of lookups matches no prefix but ::/0
// (uniform random addresses, as in PacketShader's and the project's benchmarks); the rest fall
// under the table's prefixes, each prefix equally likely.
constexpr double kMissShare = 0.5;

struct Ip6Hash {
  size_t operator()(const Ip6& a) const noexcept { return core::bsl6_hash128(a.hi, a.lo); }
};

struct Entry {
  NextHop nh;
  bool prefix;
};
using Table = std::unordered_map<Ip6, Entry, Ip6Hash>;

std::string route_text(const Route6& r) {
  return format_ipv6(r.prefix) + "/" + std::to_string(unsigned(r.len));
}

uint64_t mask_hi(unsigned len) { return mask6(Ip6{~0ull, ~0ull}, len).hi; }
uint64_t mask_lo(unsigned len) { return mask6(Ip6{~0ull, ~0ull}, len).lo; }

// The search tree that minimises the expected number of probes (Knuth's optimal binary search
// tree; Waldvogel's "asymmetric binary search"). A search always ends at a gap between two
// lengths: an address whose longest match has length lens[i] ends in gap i + 1, one that
// matches nothing (or only ::/0) in gap 0. weights[g] is the share of lookups ending in gap g.
// Fills left/right of nodes [0, n) (n = terminal) and returns the root and the height.
uint32_t build_tree(std::vector<Bsl6Node>& nodes, const std::vector<double>& weights,
                    uint32_t& height) {
  const uint32_t n = uint32_t(weights.size()) - 1;
  // cost[i][j], best[i][j]: keys [i, j), gaps i..j; (n + 1)^2 entries of at most 129^2.
  std::vector<double> cost(size_t(n + 1) * (n + 1), 0.0), sum(n + 2, 0.0);
  std::vector<uint32_t> best(size_t(n + 1) * (n + 1), 0);
  for (uint32_t g = 0; g <= n; ++g) sum[g + 1] = sum[g] + weights[g];
  auto at = [n](uint32_t i, uint32_t j) { return size_t(i) * (n + 1) + j; };
  for (uint32_t width = 1; width <= n; ++width) {
    for (uint32_t i = 0; i + width <= n; ++i) {
      const uint32_t j = i + width;
      double low       = -1;
      // Ties go to the root nearest the middle, so equal weights give a balanced tree.
      auto off = [&](uint32_t r) { return 2 * r > i + j ? 2 * r - i - j : i + j - 2 * r; };
      for (uint32_t r = i; r < j; ++r) {
        const double c = cost[at(i, r)] + cost[at(r + 1, j)];
        if (low < 0 || c < low - 1e-9 || (c <= low + 1e-9 && off(r) < off(best[at(i, j)]))) {
          low            = c;
          best[at(i, j)] = r;
        }
      }
      cost[at(i, j)] = low + sum[j + 1] - sum[i];
    }
  }
  // Link the nodes; a range without keys is the terminal node n.
  struct Frame {
    uint32_t i, j, depth;
    uint32_t* link;
  };
  uint32_t root            = n;
  std::vector<Frame> stack = {{0, n, 1, &root}};
  std::vector<uint32_t> child(2 * n + 2, n);
  height = 0;
  while (!stack.empty()) {
    const Frame f = stack.back();
    stack.pop_back();
    if (f.i >= f.j) continue;
    const uint32_t r = best[at(f.i, f.j)];
    *f.link          = r;
    height           = std::max(height, f.depth);
    stack.push_back({f.i, r, f.depth + 1, &child[2 * r]});
    stack.push_back({r + 1, f.j, f.depth + 1, &child[2 * r + 1]});
  }
  for (uint32_t r = 0; r < n; ++r) {
    nodes[r].left  = uint8_t(child[2 * r]);
    nodes[r].right = uint8_t(child[2 * r + 1]);
  }
  return root;
}

struct Slot {
  Ip6 key;
  NextHop nh;
};

uint32_t& meta_of(Bsl6Bucket& b, bool wide) {
  return wide ? b.wide.vals[core::kBsl6WideSlots] : b.narrow.vals[core::kBsl6NarrowSlots];
}

// Hashes `slots` into `nb` home buckets (+ kBsl6MaxProbe - 1 spares) starting at out[0].
// False when a key cannot be placed within the probe bound or a probe run would exceed it.
bool place(const std::vector<Slot>& slots, bool wide, uint32_t nb, Bsl6Bucket* out) {
  const uint32_t cap = wide ? core::kBsl6WideSlots : core::kBsl6NarrowSlots;
  const uint32_t all = nb + kBsl6MaxProbe - 1;
  for (uint32_t b = 0; b < all; ++b) {
    if (wide)
      out[b].wide = core::Bsl6Wide{};
    else
      out[b].narrow = core::Bsl6Narrow{};
  }
  for (const Slot& s : slots) {
    const uint64_t h = wide ? core::bsl6_hash128(s.key.hi, s.key.lo) : core::bsl6_hash64(s.key.hi);
    const uint32_t home = core::bsl6_home(h, nb);
    uint32_t d          = 0;
    while (d < kBsl6MaxProbe && (meta_of(out[home + d], wide) & 0xFFu) == cap) ++d;
    if (d == kBsl6MaxProbe) return false;
    for (uint32_t k = 0; k < d; ++k) meta_of(out[home + k], wide) |= core::kBsl6Overflow;
    Bsl6Bucket& b    = out[home + d];
    const uint32_t i = meta_of(b, wide) & 0xFFu;
    if (wide) {
      b.wide.his[i]  = s.key.hi;
      b.wide.los[i]  = s.key.lo;
      b.wide.vals[i] = s.nh;
    } else {
      b.narrow.keys[i] = s.key.hi;
      b.narrow.vals[i] = s.nh;
    }
    meta_of(b, wide) += 1;
  }
  // A lookup walks on while the overflow flag is set: bound the longest such walk too.
  uint32_t run = 0;
  for (uint32_t b = 0; b < all; ++b) {
    run = (meta_of(out[b], wide) & core::kBsl6Overflow) ? run + 1 : 0;
    if (run >= kBsl6MaxProbe) return false;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<Bsl6Image>> Bsl6Image::build(const std::vector<Route6>& routes) {
  try {
    // Validate and collect the prefixes of each length.
    std::vector<Table> by_len(129);
    NextHop default_nh = kNoRoute;
    for (const Route6& r : routes) {
      if (r.len > 128)
        return Status(Errc::kInvalidArgument,
                      "route " + route_text(r) + ": prefix length above 128");
      if (r.nh > kMaxNextHop)
        return Status(Errc::kInvalidArgument, "route " + route_text(r) + ": next hop " +
                                                  std::to_string(r.nh) + " above the maximum " +
                                                  std::to_string(kMaxNextHop));
      if (mask6(r.prefix, r.len) != r.prefix)
        return Status(Errc::kInvalidArgument, "route " + route_text(r) + ": host bits set");
      if (!by_len[r.len].emplace(r.prefix, Entry{r.nh, true}).second)
        return Status(Errc::kInvalidArgument, "route " + route_text(r) + ": duplicate prefix");
      if (r.len == 0) default_nh = r.nh;
    }

    std::unique_ptr<Bsl6Image> img(new Bsl6Image());
    img->routes_     = routes.size();
    img->default_nh_ = default_nh;

    // Nodes: one per distinct length, in ascending order, then the terminal node.
    std::vector<unsigned> lens;
    for (unsigned len = 1; len <= 128; ++len)
      if (!by_len[len].empty()) lens.push_back(len);
    const uint32_t terminal = uint32_t(lens.size());
    img->terminal_          = terminal;
    img->nodes_.assign(terminal + 1, Bsl6Node{});
    for (uint32_t i = 0; i < terminal; ++i) {
      Bsl6Node& n = img->nodes_[i];
      n.len       = uint8_t(lens[i]);
      n.wide      = lens[i] > 64 ? 1 : 0;
      n.mask_hi   = mask_hi(lens[i]);
      n.mask_lo   = mask_lo(lens[i]);
    }
    Bsl6Node& term = img->nodes_[terminal];
    term.left = term.right = uint8_t(terminal);
    term.buckets           = 1;
    term.first_bucket      = 0;
    std::vector<double> weights(terminal + 1, 0.0);
    double prefixes = 0;
    for (uint32_t i = 0; i < terminal; ++i) {
      weights[i + 1] = double(by_len[lens[i]].size());
      prefixes += weights[i + 1];
    }
    weights[0] = prefixes * kMissShare / (1 - kMissShare);
    img->root_ = build_tree(img->nodes_, weights, img->height_);

    // Markers: the prefix cut to every length where its search path turns right.
    std::vector<Table> tables(terminal);
    for (uint32_t i = 0; i < terminal; ++i) tables[i] = by_len[lens[i]];
    for (unsigned len = 1; len <= 128; ++len) {
      for (const auto& [prefix, e] : by_len[len]) {
        uint32_t node = img->root_;
        while (img->nodes_[node].len != len) {
          const Bsl6Node& n = img->nodes_[node];
          if (n.len < len) {
            tables[node].try_emplace(mask6(prefix, n.len), Entry{kNoRoute, false});
            node = n.right;
          } else {
            node = n.left;
          }
        }
      }
    }
    // A marker's next hop: its best matching real prefix (::/0 included).
    for (uint32_t i = 0; i < terminal; ++i) {
      for (auto& [key, e] : tables[i]) {
        if (e.prefix) continue;
        ++img->markers_;
        e.nh = default_nh;
        for (uint32_t j = i; j-- > 0;) {
          const auto it = by_len[lens[j]].find(mask6(key, lens[j]));
          if (it != by_len[lens[j]].end()) {
            e.nh = it->second.nh;
            break;
          }
        }
      }
    }

    // Hash tables. Bucket 0 is the terminal node's, always empty.
    std::vector<std::vector<Slot>> slots(terminal);
    std::vector<uint32_t> nbs(terminal);
    uint64_t total = 1;
    for (uint32_t i = 0; i < terminal; ++i) {
      slots[i].reserve(tables[i].size());
      for (const auto& [key, e] : tables[i]) slots[i].push_back(Slot{key, e.nh});
      // Hash order, not unordered_map order, so the image is the same on every run.
      std::sort(slots[i].begin(), slots[i].end(), [](const Slot& a, const Slot& b) {
        return a.key.hi != b.key.hi ? a.key.hi < b.key.hi : a.key.lo < b.key.lo;
      });
      const uint32_t cap = lens[i] > 64 ? core::kBsl6WideSlots : core::kBsl6NarrowSlots;
      const double want  = double(slots[i].size()) / (cap * kLoad);
      if (want > double(1u << 31)) return Status(Errc::kCapacity, "IPv6 image too large");
      nbs[i] = std::max<uint32_t>(1, uint32_t(want + 1));
    }
    std::vector<Bsl6Bucket> scratch;
    for (uint32_t i = 0; i < terminal; ++i) {
      for (;;) {
        scratch.resize(size_t(nbs[i]) + kBsl6MaxProbe - 1);
        if (place(slots[i], lens[i] > 64, nbs[i], scratch.data())) break;
        const uint64_t grown = uint64_t(nbs[i]) + nbs[i] / 4 + 1;
        if (grown > (1u << 31)) return Status(Errc::kCapacity, "IPv6 image too large");
        nbs[i] = uint32_t(grown);
      }
      Bsl6Node& n    = img->nodes_[i];
      n.buckets      = nbs[i];
      n.first_bucket = uint32_t(total);
      total += uint64_t(nbs[i]) + kBsl6MaxProbe - 1;
      if (total > 0xFFFF'FFFFull) return Status(Errc::kCapacity, "IPv6 image too large");
    }
    img->buckets_.resize(total);
    img->buckets_[0].narrow = core::Bsl6Narrow{};
    for (uint32_t i = 0; i < terminal; ++i) {
      const Bsl6Node& n = img->nodes_[i];
      place(slots[i], lens[i] > 64, nbs[i], img->buckets_.data() + n.first_bucket);
    }
    return img;
  } catch (const std::bad_alloc&) {
    return Status(Errc::kOutOfMemory, "out of memory building the IPv6 image");
  }
}

core::Bsl6View Bsl6Image::view() const noexcept {
  core::Bsl6View v;
  v.nodes      = nodes_.data();
  v.buckets    = buckets_.data();
  v.root       = root_;
  v.terminal   = terminal_;
  v.height     = height_;
  v.default_nh = default_nh_;
  return v;
}

uint64_t Bsl6Image::memory_bytes() const noexcept {
  return nodes_.size() * sizeof(core::Bsl6Node) + buckets_.size() * sizeof(core::Bsl6Bucket);
}

}  // namespace warpath::lookup::detail
