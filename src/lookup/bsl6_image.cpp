// src/lookup/bsl6_image.cpp: builds the binary-search-on-lengths image (see bsl6_image.hpp).
#include "lookup/bsl6_image.hpp"

#include <algorithm>
#include <cmath>
#include <map>
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

// The traffic a leaf's search tree is shaped for: each prefix under the leaf equally likely
// (on the full table this takes the mean search under a random prefix from 2.29 probes with
// the table-wide length counts to 1.93), plus this share (of the leaf's prefixes' weight) for
// addresses that match nothing longer than the leaf. Uniform random addresses rarely reach a leaf
// with a tree (59 of 8,192 /16s of 2000::/3 hold longer prefixes in the full table) and the initial
// array answers them, so the miss gap gets a small weight, enough to keep a miss path short in a
// sparse leaf.
constexpr double kLeafMissShare = 0.1;
// Every gap also gets this share of the mean weight, which bounds the tail: on the full table
// the longest search falls from 9 probes to 6 (3 % of lookups took 7 to 9) while the mean
// stays 2.29. A lockstep burst waits for its longest search, and so does a GPU warp.
constexpr double kGapFloor = 0.5;

constexpr uint32_t kNoBlock = ~0u;

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
// tree; Waldvogel's "asymmetric binary search") over n = weights.size() - 1 sorted lengths. A
// search always ends at a gap between two lengths: an address whose longest match has length
// lens[i] ends in gap i + 1, one that matches nothing longer than the leaf in gap 0.
// weights[g] is the share of lookups ending in gap g. Returns the root (n for an empty tree)
// and fills left/right (n: the terminal node) and the height.
struct Tree {
  uint32_t root = 0, height = 0;
  std::vector<uint32_t> left, right;
};
Tree build_tree(const std::vector<double>& weights) {
  const uint32_t n = uint32_t(weights.size()) - 1;
  // cost[i][j], best[i][j]: keys [i, j), gaps i..j; (n + 1)^2 entries of at most 112^2.
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
  struct Frame {
    uint32_t i, j, depth;
    uint32_t* link;
  };
  Tree t;
  t.root = n;
  t.left.assign(n, n);
  t.right.assign(n, n);
  std::vector<Frame> stack = {{0, n, 1, &t.root}};
  while (!stack.empty()) {
    const Frame f = stack.back();
    stack.pop_back();
    if (f.i >= f.j) continue;
    const uint32_t r = best[at(f.i, f.j)];
    *f.link          = r;
    t.height         = std::max(t.height, f.depth);
    stack.push_back({f.i, r, f.depth + 1, &t.left[r]});
    stack.push_back({r + 1, f.j, f.depth + 1, &t.right[r]});
  }
  return t;
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

// The leaf (index into starts) an address under prefix p falls in, given the /16's block.
uint32_t leaf_of(Ip6 p, const std::vector<uint32_t>& block_of) {
  const uint32_t top = uint32_t(p.hi >> 48);
  if (block_of[top] == kNoBlock) return top;
  return core::kBsl6TopEntries + (block_of[top] << core::kBsl6BlockBits) +
         (uint32_t(p.hi >> 40) & 0xFFu);
}
unsigned leaf_depth(uint32_t leaf) { return leaf < core::kBsl6TopEntries ? 16 : 24; }

// One hash table entry of a leaf: a prefix or a marker at `len`.
struct LeafEntry {
  unsigned len;
  Ip6 key;
  NextHop nh;
  bool prefix;
};

// A single-route update may touch at most this many leaves (a route of length <= 24 repaints
// the leaves under it); more, and the image is rebuilt.
constexpr size_t kMaxUpdateLeaves = 1024;

}  // namespace

// What the writer keeps beside the image to update it one route at a time: the routes by
// length, the block layout, each leaf's longer routes, the trees by profile and the hash table
// geometry. Shared by the images derived from one build; only the newest is ever updated.
struct Bsl6Writer {
  std::vector<Table> by_len = std::vector<Table>(129);  // every route (Entry::prefix true)
  std::vector<unsigned> lens;                           // lengths with routes, ascending
  std::vector<uint32_t> block_of = std::vector<uint32_t>(core::kBsl6TopEntries, kNoBlock);
  std::vector<uint32_t> blocks;                                   // block -> its /16
  std::unordered_map<uint32_t, std::vector<Route6>> leaf_routes;  // routes longer than the leaf
  std::map<std::vector<uint32_t>, uint32_t> tree_of;              // profile -> root
  std::vector<unsigned> node_len = {0};                           // node -> length (0: terminal)
  uint32_t first_bucket[129] = {}, nbs[129] = {};                 // tables (nbs 0: none)
  size_t built_nodes = 0;     // nodes after the build (bounds garbage from updates)
  bool valid         = true;  // false after a failed update: rebuild

  void refresh_lens() {
    lens.clear();
    for (unsigned len = 0; len <= 128; ++len)
      if (!by_len[len].empty()) lens.push_back(len);
  }
  // Next hop of the longest route of length < `below` covering `key` (::/0 included).
  NextHop best_below(Ip6 key, unsigned below) const {
    for (size_t j = lens.size(); j-- > 0;) {
      if (lens[j] >= below) continue;
      const auto it = by_len[lens[j]].find(mask6(key, lens[j]));
      if (it != by_len[lens[j]].end()) return it->second.nh;
    }
    return kNoRoute;
  }
  Ip6 leaf_address(uint32_t leaf) const {
    if (leaf < core::kBsl6TopEntries) return Ip6{uint64_t(leaf) << 48, 0};
    const uint32_t sub = leaf - core::kBsl6TopEntries;
    return Ip6{uint64_t(blocks[sub >> core::kBsl6BlockBits]) << 48 | uint64_t(sub & 0xFFu) << 40,
               0};
  }
  // The root of the leaf's tree, made (appended to nodes) if its profile is new.
  Result<uint32_t> root_of(uint32_t leaf, std::vector<Bsl6Node>& nodes, uint32_t& height,
                           uint32_t& trees) {
    const auto lr = leaf_routes.find(leaf);
    if (lr == leaf_routes.end() || lr->second.empty()) return core::kBsl6Terminal;
    uint32_t count[129] = {};
    for (const Route6& r : lr->second) ++count[r.len];
    std::vector<unsigned> tl;
    std::vector<uint32_t> profile;  // length, rounded 2 log2 count, length, ...
    for (unsigned len = 17; len <= 128; ++len) {
      if (count[len] == 0) continue;
      tl.push_back(len);
      profile.push_back(len);
      profile.push_back(uint32_t(std::lround(2 * std::log2(double(count[len])))));
    }
    auto [it, fresh] = tree_of.try_emplace(profile, 0);
    if (!fresh) return it->second;
    std::vector<double> weights(tl.size() + 1, 0.0);
    double total = 0;
    for (size_t i = 0; i < tl.size(); ++i)
      total += weights[i + 1] = std::exp2(profile[2 * i + 1] / 2.0);
    weights[0] = total * kLeafMissShare;
    for (double& w : weights) w += kGapFloor * total / double(tl.size() + 1);
    const Tree t     = build_tree(weights);
    const uint32_t n = uint32_t(tl.size()), base = uint32_t(nodes.size());
    if (uint64_t(base) + n >= core::kBsl6Block) {
      tree_of.erase(it);
      return Status(Errc::kCapacity, "IPv6 image too large");
    }
    auto global = [&](uint32_t local) { return local == n ? core::kBsl6Terminal : base + local; };
    for (uint32_t i = 0; i < n; ++i) {
      Bsl6Node node{};
      node.mask_hi      = mask_hi(tl[i]);
      node.mask_lo      = mask_lo(tl[i]);
      node.left         = global(t.left[i]);
      node.right        = global(t.right[i]);
      node.first_bucket = first_bucket[tl[i]];
      node.buckets      = nbs[tl[i]];
      nodes.push_back(node);
      node_len.push_back(tl[i]);
    }
    it->second = global(t.root);
    height     = std::max(height, t.height);
    ++trees;
    return it->second;
  }
  // The hash table entries of a leaf whose tree (in `nodes`) has root `root`: its routes, and
  // the markers of their search paths with their best matching prefixes. Keys are unique per
  // length.
  void entries(uint32_t leaf, uint32_t root, const std::vector<Bsl6Node>& nodes,
               std::vector<LeafEntry>& out) const {
    out.clear();
    const auto lr = leaf_routes.find(leaf);
    if (lr == leaf_routes.end()) return;
    std::unordered_map<Ip6, size_t, Ip6Hash> at[129];
    for (const Route6& r : lr->second) {
      at[r.len][r.prefix] = out.size();
      out.push_back(LeafEntry{r.len, r.prefix, r.nh, true});
    }
    for (const Route6& r : lr->second)
      for (uint32_t node = root; node_len[node] != r.len;) {
        const unsigned l = node_len[node];
        if (l < r.len) {
          const Ip6 key = mask6(r.prefix, l);
          if (at[l].try_emplace(key, out.size()).second)
            out.push_back(LeafEntry{l, key, best_below(key, l), false});
          node = nodes[node].right;
        } else {
          node = nodes[node].left;
        }
      }
  }
};

namespace {

// Bucket surgery on a private copy of an image (updates). Home of a key in table `len`.
Bsl6Bucket* home_of(Bsl6Bucket* buckets, const Bsl6Writer& w, unsigned len, Ip6 key) {
  const uint64_t h = len > 64 ? core::bsl6_hash128(key.hi, key.lo) : core::bsl6_hash64(key.hi);
  return buckets + w.first_bucket[len] + core::bsl6_home(h, w.nbs[len]);
}
// The slot holding `key` within kBsl6MaxProbe buckets of its home, or false.
bool find_slot(Bsl6Bucket* home, bool wide, Ip6 key, Bsl6Bucket*& b, uint32_t& i) {
  for (uint32_t d = 0; d < kBsl6MaxProbe; ++d) {
    b                  = home + d;
    const uint32_t cnt = meta_of(*b, wide) & 0xFFu;
    for (i = 0; i < cnt; ++i)
      if (wide ? b->wide.his[i] == key.hi && b->wide.los[i] == key.lo : b->narrow.keys[i] == key.hi)
        return true;
  }
  return false;
}

/// The routes of each length, validated; the default route's next hop in `default_nh`.
Status collect_routes(const std::vector<Route6>& routes, Bsl6Writer& w, NextHop& default_nh) {
  for (const Route6& r : routes) {
    if (r.len > 128)
      return Status(Errc::kInvalidArgument, "route " + route_text(r) + ": prefix length above 128");
    if (r.nh > kMaxNextHop)
      return Status(Errc::kInvalidArgument, "route " + route_text(r) + ": next hop " +
                                                std::to_string(r.nh) + " above the maximum " +
                                                std::to_string(kMaxNextHop));
    if (mask6(r.prefix, r.len) != r.prefix)
      return Status(Errc::kInvalidArgument, "route " + route_text(r) + ": host bits set");
    if (!w.by_len[r.len].emplace(r.prefix, Entry{r.nh, true}).second)
      return Status(Errc::kInvalidArgument, "route " + route_text(r) + ": duplicate prefix");
    if (r.len == 0) default_nh = r.nh;
  }
  w.refresh_lens();
  return Status::ok();
}

/// Blocks: the /16s holding prefixes longer than 16, most such prefixes first, up to
/// max_blocks (the rest keep one tree over all their lengths), in address order.
void choose_blocks(Bsl6Writer& w, uint32_t max_blocks) {
  std::vector<uint32_t> longer(core::kBsl6TopEntries, 0);
  for (unsigned len = 17; len <= 128; ++len)
    for (const auto& [prefix, e] : w.by_len[len]) ++longer[prefix.hi >> 48];
  std::vector<uint32_t>& dense = w.blocks;
  for (uint32_t top = 0; top < core::kBsl6TopEntries; ++top)
    if (longer[top] > 0) dense.push_back(top);
  std::stable_sort(dense.begin(), dense.end(),
                   [&](uint32_t x, uint32_t y) { return longer[x] > longer[y]; });
  if (dense.size() > max_blocks) dense.resize(max_blocks);
  std::sort(dense.begin(), dense.end());
  for (uint32_t b = 0; b < dense.size(); ++b) w.block_of[dense[b]] = b;
}

/// The initial array: the /16 leaves painted with routes of length <= 16, shortest first, then
/// each block with its /16's bmp and the routes of length 17..24 under it.
void paint_starts(const Bsl6Writer& w, NextHop default_nh, std::vector<core::Bsl6Start>& starts) {
  const std::vector<uint32_t>& dense = w.blocks;
  starts.assign(core::kBsl6TopEntries + (size_t(dense.size()) << core::kBsl6BlockBits),
                core::Bsl6Start{default_nh, core::kBsl6Terminal});
  for (unsigned len = 1; len <= 16; ++len)
    for (const auto& [prefix, e] : w.by_len[len]) {
      const uint32_t first = uint32_t(prefix.hi >> 48), count = 1u << (16 - len);
      for (uint32_t k = 0; k < count; ++k) starts[first + k].bmp = e.nh;
    }
  for (uint32_t b = 0; b < dense.size(); ++b) {
    core::Bsl6Start* blk = &starts[core::kBsl6TopEntries + (size_t(b) << core::kBsl6BlockBits)];
    for (uint32_t k = 0; k < (1u << core::kBsl6BlockBits); ++k) blk[k].bmp = starts[dense[b]].bmp;
    starts[dense[b]].node = core::kBsl6Block | b;
  }
  for (unsigned len = 17; len <= 24; ++len)
    for (const auto& [prefix, e] : w.by_len[len]) {
      const uint32_t top = uint32_t(prefix.hi >> 48);
      if (w.block_of[top] == kNoBlock) continue;
      const uint32_t first = leaf_of(prefix, w.block_of), count = 1u << (24 - len);
      for (uint32_t k = 0; k < count; ++k) starts[first + k].bmp = e.nh;
    }
}

/// Each leaf's longer routes (into the writer) and the lengths that need a table (`used`);
/// the leaves with routes, in index order so that node numbering (and the image) is the same
/// on every run.
std::vector<uint32_t> leaves_with_routes(Bsl6Writer& w, bool (&used)[129]) {
  for (unsigned len = 17; len <= 128; ++len)
    for (const auto& [prefix, e] : w.by_len[len]) {
      const uint32_t leaf = leaf_of(prefix, w.block_of);
      if (len <= leaf_depth(leaf)) continue;
      w.leaf_routes[leaf].push_back(Route6{prefix, uint8_t(len), e.nh});
      used[len] = true;
    }
  std::vector<uint32_t> leaves;
  leaves.reserve(w.leaf_routes.size());
  for (auto& [leaf, rs] : w.leaf_routes) {
    leaves.push_back(leaf);
    // Route order fixes marker order, hence (with sorted slots) nothing; sorted for clarity.
    std::sort(rs.begin(), rs.end(), [](const Route6& x, const Route6& y) {
      return x.len != y.len ? x.len < y.len
                            : (x.prefix.hi != y.prefix.hi ? x.prefix.hi < y.prefix.hi
                                                          : x.prefix.lo < y.prefix.lo);
    });
  }
  std::sort(leaves.begin(), leaves.end());
  return leaves;
}

/// Hash tables, one per length in use, with room for updates, filled with `slots`. Bucket 0
/// is the terminal node's, always empty. `lengths` counts the tables.
Status place_tables(std::vector<std::vector<Slot>>& slots, const bool (&used)[129], Bsl6Writer& w,
                    std::vector<Bsl6Bucket>& buckets, uint32_t& lengths) {
  uint64_t total = 1;
  std::vector<Bsl6Bucket> scratch;
  for (unsigned len = 17; len <= 128; ++len) {
    if (!used[len]) continue;
    ++lengths;
    std::vector<Slot>& sl = slots[len];
    // Key order, not unordered_map order, so the image is the same on every run.
    std::sort(sl.begin(), sl.end(), [](const Slot& x, const Slot& y) {
      return x.key.hi != y.key.hi ? x.key.hi < y.key.hi : x.key.lo < y.key.lo;
    });
    const bool wide    = len > 64;
    const uint32_t cap = wide ? core::kBsl6WideSlots : core::kBsl6NarrowSlots;
    const double want  = double(sl.size()) / (cap * kLoad);
    if (want > double(1u << 31)) return Status(Errc::kCapacity, "IPv6 image too large");
    uint32_t nb = std::max<uint32_t>(1, uint32_t(want + 1));
    for (;;) {
      scratch.resize(size_t(nb) + kBsl6MaxProbe - 1);
      if (place(sl, wide, nb, scratch.data())) break;
      const uint64_t grown = uint64_t(nb) + nb / 4 + 1;
      if (grown > (1u << 31)) return Status(Errc::kCapacity, "IPv6 image too large");
      nb = uint32_t(grown);
    }
    w.nbs[len]          = nb;
    w.first_bucket[len] = uint32_t(total);
    total += uint64_t(nb) + kBsl6MaxProbe - 1;
    if (total > 0xFFFF'FFFFull) return Status(Errc::kCapacity, "IPv6 image too large");
  }
  buckets.resize(total);
  buckets[0].narrow = core::Bsl6Narrow{};
  for (unsigned len = 17; len <= 128; ++len)
    if (w.nbs[len] != 0) place(slots[len], len > 64, w.nbs[len], buckets.data() + w.first_bucket[len]);
  return Status::ok();
}

/// The leaves whose entries a change of `r` can change: the route's own leaf when it is longer
/// than the leaf's depth (`painted` false), else every leaf it covers (their bmp and their
/// markers' bmps). kCapacity past kMaxUpdateLeaves.
Result<std::vector<uint32_t>> leaves_of_change(const Bsl6Writer& w, const Route6& r, bool& painted) {
  const uint32_t top = uint32_t(r.prefix.hi >> 48);
  std::vector<uint32_t> leaves;
  painted = r.len <= 16 || (r.len <= 24 && w.block_of[top] != kNoBlock);
  if (!painted) {
    leaves.push_back(leaf_of(r.prefix, w.block_of));
    return leaves;
  }
  const uint32_t tops = r.len <= 16 ? 1u << (16 - r.len) : 1u;
  for (uint32_t k = 0; k < tops && leaves.size() <= kMaxUpdateLeaves; ++k) {
    const uint32_t t16 = top + k;
    if (w.block_of[t16] == kNoBlock) {
      leaves.push_back(t16);
      continue;
    }
    const uint32_t first = r.len <= 16 ? 0 : (uint32_t(r.prefix.hi >> 40) & 0xFFu);
    const uint32_t count = r.len <= 16 ? 256u : 1u << (24 - r.len);
    leaves.push_back(t16);  // its bmp (unused by lookups, kept right)
    for (uint32_t j = 0; j < count; ++j)
      leaves.push_back(core::kBsl6TopEntries + (w.block_of[t16] << core::kBsl6BlockBits) + first +
                       j);
  }
  if (leaves.size() > kMaxUpdateLeaves)
    return Status(Errc::kCapacity, "IPv6 update covers too many leaves: rebuild");
  return leaves;
}

/// The change in the writer's leaf routes of an unpainted route's leaf.
Status change_leaf_routes(Bsl6Writer& w, uint32_t leaf, const Route6& r, bool remove) {
  std::vector<Route6>& rs = w.leaf_routes[leaf];
  const auto it           = std::find_if(rs.begin(), rs.end(), [&](const Route6& x) {
    return x.len == r.len && x.prefix == r.prefix;
  });
  if (it != rs.end()) {
    if (remove)
      rs.erase(it);
    else
      it->nh = r.nh;
  } else if (!remove) {
    if (w.nbs[r.len] == 0) return Status(Errc::kCapacity, "IPv6 update: new length");
    rs.push_back(r);
  }
  return Status::ok();
}

/// Removes entry `e` from its bucket: the bucket's last used slot moves into its place.
/// Overflow flags stay (they only make a miss look one bucket further).
Status erase_entry(Bsl6Bucket* buckets, const Bsl6Writer& w, const LeafEntry& e) {
  Bsl6Bucket* b;
  uint32_t slot;
  const bool wide = e.len > 64;
  if (!find_slot(home_of(buckets, w, e.len, e.key), wide, e.key, b, slot))
    return Status(Errc::kCapacity, "IPv6 update: entry not found (a bug; rebuilt)");
  uint32_t& meta      = meta_of(*b, wide);
  const uint32_t last = (meta & 0xFFu) - 1;
  if (wide) {
    b->wide.his[slot] = b->wide.his[last], b->wide.los[slot] = b->wide.los[last];
    b->wide.vals[slot] = b->wide.vals[last];
    b->wide.his[last] = b->wide.los[last] = 0, b->wide.vals[last] = 0;
  } else {
    b->narrow.keys[slot] = b->narrow.keys[last], b->narrow.vals[slot] = b->narrow.vals[last];
    b->narrow.keys[last] = 0, b->narrow.vals[last] = 0;
  }
  meta -= 1;
  return Status::ok();
}

/// Sets the next hop of entry `e`, which its bucket holds.
Status set_entry(Bsl6Bucket* buckets, const Bsl6Writer& w, const LeafEntry& e, NextHop nh) {
  Bsl6Bucket* b;
  uint32_t slot;
  const bool wide = e.len > 64;
  if (!find_slot(home_of(buckets, w, e.len, e.key), wide, e.key, b, slot))
    return Status(Errc::kCapacity, "IPv6 update: entry not found (a bug; rebuilt)");
  (wide ? b->wide.vals : b->narrow.vals)[slot] = nh;
  return Status::ok();
}

/// Writes entry `e` into the first bucket with room from its home, marking the buckets passed
/// as overflowed; kCapacity when none is within the probe bound or the overflow run through
/// them would reach it.
Status insert_entry(Bsl6Bucket* buckets, const Bsl6Writer& w, const LeafEntry& e) {
  const bool wide    = e.len > 64;
  const uint32_t cap = wide ? core::kBsl6WideSlots : core::kBsl6NarrowSlots;
  if (w.nbs[e.len] == 0) return Status(Errc::kCapacity, "IPv6 update: new length");
  Bsl6Bucket* home = home_of(buckets, w, e.len, e.key);
  uint32_t d       = 0;
  while (d < kBsl6MaxProbe && (meta_of(home[d], wide) & 0xFFu) == cap) ++d;
  if (d == kBsl6MaxProbe) return Status(Errc::kCapacity, "IPv6 update: table full");
  for (uint32_t k = 0; k < d; ++k) meta_of(home[k], wide) |= core::kBsl6Overflow;
  // The longest overflow run through these buckets must stay below the probe bound.
  Bsl6Bucket* const first = buckets + w.first_bucket[e.len];
  Bsl6Bucket* const end   = first + w.nbs[e.len] + kBsl6MaxProbe - 1;
  Bsl6Bucket* lo          = home;
  while (lo > first && (meta_of(lo[-1], wide) & core::kBsl6Overflow)) --lo;
  uint32_t run = 0;
  for (Bsl6Bucket* q = lo; q < end && (meta_of(*q, wide) & core::kBsl6Overflow); ++q) ++run;
  if (run >= kBsl6MaxProbe) return Status(Errc::kCapacity, "IPv6 update: probe run");
  Bsl6Bucket& b     = home[d];
  uint32_t& meta    = meta_of(b, wide);
  const uint32_t i2 = meta & 0xFFu;
  if (wide) {
    b.wide.his[i2] = e.key.hi, b.wide.los[i2] = e.key.lo, b.wide.vals[i2] = e.nh;
  } else {
    b.narrow.keys[i2] = e.key.hi, b.narrow.vals[i2] = e.nh;
  }
  meta += 1;
  return Status::ok();
}

/// A leaf's entries from `before` to `after`, diffed by (length, key): what is gone removed,
/// what is new or changed written. `markers` follows the marker entries.
Status apply_diff(Bsl6Bucket* buckets, const Bsl6Writer& w, const std::vector<LeafEntry>& before,
                  const std::vector<LeafEntry>& after, uint64_t& markers) {
  std::unordered_map<Ip6, const LeafEntry*, Ip6Hash> now[129];
  for (const LeafEntry& e : after) now[e.len][e.key] = &e;
  for (const LeafEntry& e : before) {
    const auto it = now[e.len].find(e.key);
    if (it != now[e.len].end() && it->second->prefix == e.prefix && it->second->nh == e.nh) {
      now[e.len].erase(it);  // unchanged
      continue;
    }
    if (it != now[e.len].end()) {  // same key, new next hop
      WARPATH_TRY(set_entry(buckets, w, e, it->second->nh));
      markers += (it->second->prefix ? 0 : 1) - (e.prefix ? 0 : 1);
      now[e.len].erase(it);
      continue;
    }
    WARPATH_TRY(erase_entry(buckets, w, e));
    markers -= e.prefix ? 0 : 1;
  }
  for (const LeafEntry& e : after) {
    if (now[e.len].find(e.key) == now[e.len].end()) continue;
    WARPATH_TRY(insert_entry(buckets, w, e));
    markers += e.prefix ? 0 : 1;
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Bsl6Image>> Bsl6Image::build(const std::vector<Route6>& routes,
                                                    uint32_t max_blocks) {
  try {
    auto writer        = std::make_shared<Bsl6Writer>();
    Bsl6Writer& w      = *writer;
    NextHop default_nh = kNoRoute;
    WARPATH_TRY(collect_routes(routes, w, default_nh));
    std::unique_ptr<Bsl6Image> img(new Bsl6Image());
    img->routes_     = routes.size();
    img->default_nh_ = default_nh;
    img->writer_     = writer;
    choose_blocks(w, max_blocks);
    img->blocks_ = uint32_t(w.blocks.size());
    auto& starts = img->starts_;
    paint_starts(w, default_nh, starts);
    bool used[129]                     = {};
    const std::vector<uint32_t> leaves = leaves_with_routes(w, used);

    // Search trees (nodes get their table geometry once the tables are placed).
    auto& nodes = img->nodes_;
    nodes.assign(1, Bsl6Node{});  // the terminal node: masks 0, bucket 0, children 0
    nodes[0].buckets = 1;
    for (const uint32_t leaf : leaves) {
      WARPATH_ASSIGN_OR_RETURN(const uint32_t root,
                               w.root_of(leaf, nodes, img->height_, img->trees_));
      starts[leaf].node = root;
    }
    w.built_nodes = nodes.size();

    // Table contents: every leaf's routes and markers, then the tables.
    std::vector<std::vector<Slot>> slots(129);
    std::vector<LeafEntry> es;
    for (const uint32_t leaf : leaves) {
      w.entries(leaf, starts[leaf].node, nodes, es);
      for (const LeafEntry& e : es) {
        slots[e.len].push_back(Slot{e.key, e.nh});
        img->markers_ += e.prefix ? 0 : 1;
      }
    }
    WARPATH_TRY(place_tables(slots, used, w, img->buckets_, img->lengths_));
    for (size_t i = 1; i < nodes.size(); ++i) {
      nodes[i].first_bucket = w.first_bucket[w.node_len[i]];
      nodes[i].buckets      = w.nbs[w.node_len[i]];
    }
    return img;
  } catch (const std::bad_alloc&) {
    return Status(Errc::kOutOfMemory, "out of memory building the IPv6 image");
  }
}

Result<std::unique_ptr<Bsl6Image>> Bsl6Image::updated(const Route6& r, bool remove) const {
  try {
    if (!writer_ || !writer_->valid) return Status(Errc::kCapacity, "IPv6 image: rebuild");
    Bsl6Writer& w = *writer_;
    if (r.len > 128 || mask6(r.prefix, r.len) != r.prefix || r.nh > kMaxNextHop)
      return Status(Errc::kInvalidArgument, "route " + route_text(r) + ": invalid");
    Table& t         = w.by_len[r.len];
    const auto found = t.find(r.prefix);
    if (remove && found == t.end()) return Status(Errc::kNotFound, "no route " + route_text(r));
    bool painted = false;
    WARPATH_ASSIGN_OR_RETURN(const std::vector<uint32_t> leaves, leaves_of_change(w, r, painted));
    // A painted block's /16 leaf keeps only its bmp: no entries.
    auto bmp_only = [&](uint32_t leaf) {
      return painted && leaf < core::kBsl6TopEntries && w.block_of[leaf] != kNoBlock;
    };

    // Entries before the change.
    std::vector<std::vector<LeafEntry>> before(leaves.size());
    for (size_t i = 0; i < leaves.size(); ++i)
      if (!bmp_only(leaves[i])) w.entries(leaves[i], starts_[leaves[i]].node, nodes_, before[i]);

    // The change, in the writer's state (undone by a rebuild if anything below fails).
    w.valid = false;
    if (remove) {
      t.erase(found);
    } else {
      t.insert_or_assign(r.prefix, Entry{r.nh, true});
    }
    w.refresh_lens();
    if (!painted) WARPATH_TRY(change_leaf_routes(w, leaves[0], r, remove));

    std::unique_ptr<Bsl6Image> img(new Bsl6Image(*this));
    std::vector<LeafEntry> after;
    for (size_t i = 0; i < leaves.size(); ++i) {
      const uint32_t leaf = leaves[i];
      core::Bsl6Start& s  = img->starts_[leaf];
      s.bmp               = w.best_below(w.leaf_address(leaf), leaf_depth(leaf) + 1);
      if (bmp_only(leaf)) continue;
      WARPATH_ASSIGN_OR_RETURN(s.node, w.root_of(leaf, img->nodes_, img->height_, img->trees_));
      if (img->nodes_.size() > 2 * w.built_nodes + 4096)
        return Status(Errc::kCapacity, "IPv6 update: too many retired trees");
      w.entries(leaf, s.node, img->nodes_, after);
      WARPATH_TRY(apply_diff(img->buckets_.data(), w, before[i], after, img->markers_));
    }
    if (r.len == 0) img->default_nh_ = remove ? kNoRoute : r.nh;
    img->routes_ = 0;
    for (const Table& tl : w.by_len) img->routes_ += tl.size();
    w.valid = true;
    return img;
  } catch (const std::bad_alloc&) {
    return Status(Errc::kOutOfMemory, "out of memory updating the IPv6 image");
  }
}

core::Bsl6View Bsl6Image::view() const noexcept {
  core::Bsl6View v;
  v.starts     = starts_.data();
  v.nodes      = nodes_.data();
  v.buckets    = buckets_.data();
  v.height     = height_;
  v.default_nh = default_nh_;
  return v;
}

uint64_t Bsl6Image::memory_bytes() const noexcept {
  return starts_.size() * sizeof(core::Bsl6Start) + nodes_.size() * sizeof(core::Bsl6Node) +
         buckets_.size() * sizeof(core::Bsl6Bucket);
}

}  // namespace warpath::lookup::detail
