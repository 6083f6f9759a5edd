// src/openflow/flow_image.cpp: the data side of the flow table (flow_table.hpp: FlowImage):
// compiled from a FlowTable, looked up in batches.
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>

#include "core/huge_pages.hpp"
#include "openflow/core/flow_hash_core.hpp"
#include "warpath/core/hd.hpp"
#include "warpath/openflow/flow_table.hpp"

namespace warpath::openflow {

namespace {

// The big arrays of an image are on huge pages (core/huge_pages.hpp): a million-flow table
// then costs a handful of TLB entries instead of thousands.
using warpath::detail::LargeVector;

}  // namespace

struct FlowImage::Table {
  LargeVector<core::Bucket> buckets;
  LargeVector<core::Record> records;  ///< by slot
  packet::OfTuple mask{};
  uint64_t max_rank = 0;

  core::HashView view() const {
    return {buckets.data(), uint32_t(buckets.size() - 1), records.data(), mask};
  }
  size_t size() const { return records.size(); }
  void append(const packet::OfTuple& value, uint32_t flow) { records.push_back({value, flow}); }
  void build() {
    size_t n = 1;
    while (n * core::kBucketWays < 2 * records.size()) n <<= 1;  // at most half full
    buckets.assign(n, core::Bucket{});
    for (uint32_t s = 0; s < records.size(); ++s) place(s);
  }
  /// Whether `count` slots fit at most half full (place() needs a free way somewhere).
  bool room_for(size_t count) const { return count * 2 <= buckets.size() * core::kBucketWays; }
  /// Files slot s (records[s]) in its first bucket with a free way.
  void place(uint32_t s) {
    const uint32_t bmask = uint32_t(buckets.size() - 1);
    const uint64_t h     = core::hash_key(records[s].key);
    for (uint32_t b = uint32_t(h) & bmask;; b = (b + 1) & bmask) {
      core::Bucket& bk = buckets[b];
      uint32_t j       = 0;
      while (j < core::kBucketWays && bk.sig[j]) ++j;
      if (j == core::kBucketWays) continue;
      bk.sig[j]  = core::signature(h);
      bk.slot[j] = s;
      return;
    }
  }
  /// The slot holding `masked`, or core::kMiss.
  uint32_t find(const packet::OfTuple& masked) const {
    return buckets.empty() ? core::kMiss : core::find_slot(view(), masked, core::hash_key(masked));
  }
};

// What a full image and the incremental images built on it share. `programs` and `ranks` have
// room for ids past the full image's (a quarter more, at least 1,024): an incremental image
// writes the program and rank of each flow it adds into their (never reused,
// FlowTable::rebuilt) ids before it is published, which images already published never read.
// Their rewrites go to `late`, a buffer of fixed capacity written only past what published
// images use.
struct FlowImage::Shared {
  std::vector<ActionProgram> programs;
  std::vector<uint64_t> ranks;
  std::vector<Action> rewrites;
  std::unique_ptr<Action[]> late;
  uint32_t late_capacity = 0, late_used = 0;
  uint32_t full_id_limit = 0;  ///< the full image's
  size_t full_flows      = 0;  ///< the full image's flows
};

// Programs by flow id for the flows modified since the full image: an open-addressing index
// (a power of two of slots, each the position + 1 of its id, 0 empty) over two arrays.
struct FlowImage::Patch {
  std::vector<uint32_t> ids;
  std::vector<ActionProgram> programs;
  std::vector<uint32_t> index;
  static uint32_t home(uint32_t id, size_t slots) { return uint32_t((id * 0x9E37'79B9u) & (slots - 1)); }
  void build() {
    size_t n = 8;
    while (n < 2 * ids.size()) n <<= 1;
    index.assign(n, 0);
    for (uint32_t k = 0; k < ids.size(); ++k) {
      uint32_t s = home(ids[k], n);
      while (index[s]) s = uint32_t((s + 1) & (n - 1));
      index[s] = k + 1;
    }
  }
  const ActionProgram* find(uint32_t id) const noexcept {
    for (uint32_t s = home(id, index.size());; s = uint32_t((s + 1) & (index.size() - 1))) {
      const uint32_t k = index[s];
      if (k == 0) return nullptr;
      if (ids[k - 1] == id) return &programs[k - 1];
    }
  }
};

const ActionProgram* FlowImage::patched(uint32_t id) const noexcept { return patch_->find(id); }

FlowImage::FlowImage()  = default;
FlowImage::~FlowImage() = default;

const Action* FlowImage::rewrites(const ActionProgram& p) const noexcept {
  return (p.special & kLateRewrites ? shared_->late.get() : shared_->rewrites.data()) + p.first;
}

namespace {

// Larger is better: priority, then the earlier install (orders below 2^40).
uint64_t rank_of(const FlowEntry& e) {
  const uint64_t order = std::min<uint64_t>(e.order, (1ull << 40) - 1);
  return uint64_t(e.spec.priority) << 40 | ((1ull << 40) - 1 - order);
}

bool is_output(const Action& a) {
  return a.type == ActionType::kOutput || a.type == ActionType::kEnqueue;
}

}  // namespace

Result<ActionProgram> compile_actions(const std::vector<Action>& actions, uint32_t port_count,
                                      std::vector<Action>& rewrites) {
  ActionProgram p;
  p.first    = uint32_t(rewrites.size());
  int last   = -1;
  int first  = -1;
  for (size_t i = 0; i < actions.size(); ++i)
    if (is_output(actions[i])) {
      last = int(i);
      if (first < 0) first = int(i);
    }
  for (int i = 0; i < last; ++i) {
    const Action& a = actions[size_t(i)];
    if (is_output(a)) continue;
    if (i > first)
      return Status(Errc::kInvalidArgument,
                    "actions=" + format_actions(actions) +
                        ": headers change between two outputs (each copy would need its own "
                        "headers; not supported yet)");
    rewrites.push_back(a);
    ++p.rewrites;
  }
  for (int i = 0; i <= last; ++i) {
    const Action& a = actions[size_t(i)];
    if (!is_output(a)) continue;
    switch (a.port) {
      case kPortInPort: p.special |= kToInPort; break;
      case kPortFlood: p.special |= kToFlood; break;
      case kPortAll: p.special |= kToAll; break;
      case kPortController:
        p.special |= kToController;
        p.max_len = std::max(p.max_len, a.max_len);
        break;
      case kPortNormal: p.special |= kToNormal; break;
      case kPortLocal: p.special |= kToLocal; break;
      default:
        if (a.port >= 1 && a.port <= port_count)
          p.ports |= uint64_t(1) << (a.port - 1);
        else
          p.special |= kNoSuchPort;
    }
  }
  return p;
}

namespace {

struct TupleHash {
  size_t operator()(const packet::OfTuple& t) const noexcept { return size_t(core::hash_key(t)); }
};
struct TupleEq {
  bool operator()(const packet::OfTuple& a, const packet::OfTuple& b) const noexcept {
    return core::same_key(a, b);
  }
};

}  // namespace

// One pass over the live entries (no precedence sort: within a subtable the entry of best rank
// wins its masked value, and ranks are total); a subtable is filled as it goes, finding equal
// values with its own buckets: a million exact flows build in about a third of the time a
// sorted pass took, and wildcard flows in 40-50% of the time a hash map of their values took.
Result<std::shared_ptr<const FlowImage>> FlowImage::build(const FlowTable& table,
                                                          uint32_t port_count) {
  if (port_count > 64)
    return Status(Errc::kInvalidArgument,
                  "the switch handles at most 64 ports, not " + std::to_string(port_count));
  auto img      = std::shared_ptr<FlowImage>(new FlowImage());
  img->version_ = table.version();
  img->id_limit_ = table.id_limit();
  auto shared    = std::make_shared<Shared>();
  const size_t id_room = table.id_limit() + std::max<uint32_t>(1024, table.id_limit() / 4);
  shared->programs.assign(id_room, ActionProgram{});
  shared->ranks.assign(id_room, 0);
  shared->late_capacity = 16384;
  shared->late          = std::make_unique<Action[]>(shared->late_capacity);
  shared->full_id_limit = table.id_limit();
  auto exact            = std::make_shared<Table>();
  exact->mask           = exact_mask();
  std::vector<std::shared_ptr<Table>> subtables;
  std::unordered_map<packet::OfTuple, size_t, TupleHash, TupleEq> by_mask;
  for (uint32_t id = 0; id < table.id_limit(); ++id) {
    const FlowEntry* e = table.entry(id);
    if (!e) continue;
    ++img->flows_;
    Result<ActionProgram> p = compile_actions(e->spec.actions, port_count, shared->rewrites);
    if (!p.is_ok())
      return Status(Errc::kInvalidArgument,
                    "flow " + format_flow(e->spec) + ": " + p.status().message());
    shared->programs[id]       = *p;
    shared->programs[id].order = e->order;
    const uint64_t rank        = rank_of(*e);
    shared->ranks[id]          = rank;
    const packet::OfTuple value = e->spec.match.value();
    if (e->spec.match.exact()) {  // at most one flow per exact match (priority 65535)
      exact->append(value, id);
      ++img->exact_flows_;
      continue;
    }
    auto [it, fresh] = by_mask.emplace(e->spec.match.mask(), subtables.size());
    if (fresh) {
      subtables.push_back(std::make_shared<Table>());
      subtables.back()->mask = it->first;
      subtables.back()->build();  // filled as it goes: the table itself finds equal values
    }
    Table& t   = *subtables[it->second];
    t.max_rank = std::max(t.max_rank, rank);
    const uint32_t at = t.find(value);
    if (at == core::kMiss) {
      t.append(value, id);
      if (t.room_for(t.size()))
        t.place(uint32_t(t.size() - 1));
      else
        t.build();  // twice the buckets
    } else if (rank > shared->ranks[t.records[at].flow]) {
      t.records[at].flow = id;  // the same masked value: the better flow answers
    }
  }
  exact->build();
  for (auto& t : subtables) img->subtables_.push_back({t, nullptr, nullptr, t->max_rank});
  std::stable_sort(img->subtables_.begin(), img->subtables_.end(),
                   [](const Sub& a, const Sub& b) { return a.max_rank > b.max_rank; });
  img->exact_.base = std::move(exact);
  shared->full_flows = img->flows_;
  img->programs_     = shared->programs.data();
  img->ranks_        = &shared->ranks;
  img->shared_       = std::move(shared);
  return std::shared_ptr<const FlowImage>(std::move(img));
}

namespace {

constexpr uint32_t kGone = 0xFFFF'FFFEu;  ///< an override table's tombstone (no live flow)
/// A mask's recent table is merged into its override table once it holds more than a quarter
/// of that (at least this many): a publish copies the small recent table, and each entry is
/// copied into the override table a bounded number of times.
constexpr size_t kRecentMin = 512;

using Entry = std::pair<packet::OfTuple, uint32_t>;  // masked value, flow (or kGone)

}  // namespace

// A copy of `old` (or an empty table) with `entries` laid over it: a value it has takes the
// entry's flow, others are appended (the last entry of a value wins); its buckets are kept
// while they have room, so only the appended slots are placed.
static std::shared_ptr<FlowImage::Table> overlay(const FlowImage::Table* old, const packet::OfTuple& mask,
                                                 const std::vector<Entry>& entries) {
  auto t  = std::make_shared<FlowImage::Table>();
  t->mask = mask;
  if (old) {
    t->records  = old->records;
    t->max_rank = old->max_rank;
  }
  const size_t had = t->size();
  std::unordered_map<packet::OfTuple, uint32_t, TupleHash, TupleEq> appended;
  for (const auto& [value, flow] : entries) {
    uint32_t slot = old ? old->find(value) : core::kMiss;
    if (slot == core::kMiss) {
      auto [it, fresh] = appended.emplace(value, uint32_t(t->size()));
      if (fresh) {
        t->append(value, flow);
        continue;
      }
      slot = it->second;
    }
    t->records[slot].flow = flow;
  }
  if (old && old->room_for(t->size())) {
    t->buckets = old->buckets;
    for (uint32_t s = uint32_t(had); s < t->size(); ++s) t->place(s);
  } else {
    t->build();
  }
  return t;
}

Result<std::shared_ptr<const FlowImage>> FlowImage::publish(const std::shared_ptr<const FlowImage>& current,
                                                            FlowTable& table, uint32_t port_count) {
  auto full = [&]() -> Result<std::shared_ptr<const FlowImage>> {
    WARPATH_ASSIGN_OR_RETURN(std::shared_ptr<const FlowImage> img, build(table, port_count));
    table.rebuilt();
    return img;
  };
  if (!current) return full();
  if (current->version_ == table.version()) return current;
  Shared& shared      = *current->shared_;
  const auto& changes = table.changes();
  if (table.needs_full() || changes.size() > std::max<size_t>(4096, shared.full_flows / 16) ||
      changes.size() < current->log_pos_)
    return full();
  auto img          = std::shared_ptr<FlowImage>(new FlowImage());
  img->exact_       = current->exact_;
  img->subtables_   = current->subtables_;
  img->shared_      = current->shared_;
  img->programs_    = current->programs_;
  img->ranks_       = current->ranks_;
  img->version_     = table.version();
  img->id_limit_    = std::max(shared.full_id_limit, table.id_limit());
  img->flows_       = table.size();
  img->exact_flows_ = current->exact_flows_;
  img->log_pos_     = changes.size();
  img->incremental_ = true;
  img->patch_       = current->patch_;
  // The matches touched since `current`, by mask (an id is added at most once and removed at
  // most once between full images: ids are not reused until then), each with its entry in
  // subtables_ (kExactSub: exact_), made when the image has none for the mask.
  constexpr size_t kExactSub = ~size_t(0);
  std::unordered_map<packet::OfTuple, size_t, TupleHash, TupleEq> sub_of;  // mask -> subtables_
  for (size_t k = 0; k < img->subtables_.size(); ++k) {
    const Sub& s = img->subtables_[k];
    sub_of.emplace((s.base ? s.base : s.over ? s.over : s.recent)->mask, k);
  }
  struct Touched {
    size_t sub;
    packet::OfTuple mask;
    uint32_t wildcards;
    std::vector<packet::OfTuple> values;
  };
  std::vector<Touched> touched;
  std::unordered_map<packet::OfTuple, size_t, TupleHash, TupleEq> touched_of;  // mask -> touched
  std::vector<uint32_t> modified;  // ids MODIFY gave new actions since `current`
  for (size_t c = current->log_pos_; c < changes.size(); ++c) {
    const FlowTable::Change& ch = changes[c];
    if (ch.id >= shared.programs.size()) return full();
    if (ch.kind == FlowTable::Change::kModified) {
      modified.push_back(ch.id);
      continue;
    }
    if (ch.exact) {
      if (ch.kind == FlowTable::Change::kAdded)
        ++img->exact_flows_;
      else
        --img->exact_flows_;
    }
    const Match& m   = table.last(ch.id).spec.match;
    const auto mask  = m.mask();
    auto [it, fresh] = touched_of.emplace(mask, touched.size());
    if (fresh) {
      size_t sub = kExactSub;
      if (!ch.exact) {
        auto [s, added] = sub_of.emplace(mask, img->subtables_.size());
        if (added) img->subtables_.push_back({});
        sub = s->second;
      }
      touched.push_back({sub, mask, m.wildcards, {}});
    }
    touched[it->second].values.push_back(m.value());
  }
  // A flow's program with its rewrites in the late buffer (past what published images use);
  // false when that buffer is full.
  auto compile_late = [&](const FlowEntry& e, ActionProgram& q) -> Result<bool> {
    std::vector<Action> rw;
    WARPATH_ASSIGN_OR_RETURN(q, compile_actions(e.spec.actions, port_count, rw));
    if (shared.late_used + rw.size() > shared.late_capacity) return false;
    q.order = e.order;
    if (!rw.empty()) {  // (none: first stays 0, inside either buffer)
      q.first = shared.late_used;
      q.special |= kLateRewrites;
    }
    std::copy(rw.begin(), rw.end(), shared.late.get() + shared.late_used);
    shared.late_used += uint32_t(rw.size());
    return true;
  };
  // The program (and rank) of a flow an image now answers with: written once per flow, into an
  // id no published image maps a key to. False when the late buffer is full.
  auto ensure_program = [&](const FlowEntry& e) -> Result<bool> {
    ActionProgram& prog = shared.programs[e.id];
    if (prog.order == e.order) return true;
    ActionProgram q;
    WARPATH_ASSIGN_OR_RETURN(bool ok, compile_late(e, q));
    if (!ok) return false;
    shared.ranks[e.id] = rank_of(e);
    prog               = q;
    return true;
  };
  // Modified flows: the patch of `current`, with the programs of the flows modified since
  // compiled again (a flow removed since is left out).
  if (!modified.empty()) {
    auto patch = std::make_shared<Patch>();
    std::sort(modified.begin(), modified.end());
    modified.erase(std::unique(modified.begin(), modified.end()), modified.end());
    if (current->patch_)
      for (size_t k = 0; k < current->patch_->ids.size(); ++k) {
        const uint32_t id  = current->patch_->ids[k];
        const FlowEntry* e = table.entry(id);
        if (e && e->order == current->patch_->programs[k].order &&
            !std::binary_search(modified.begin(), modified.end(), id)) {
          patch->ids.push_back(id);
          patch->programs.push_back(current->patch_->programs[k]);
        }
      }
    for (uint32_t id : modified) {
      const FlowEntry* e = table.entry(id);
      if (!e) continue;
      ActionProgram q;
      Result<bool> ok = compile_late(*e, q);
      if (!ok.is_ok() || !*ok) return full();  // a full build reports a flow it cannot compile
      patch->ids.push_back(id);
      patch->programs.push_back(q);
    }
    patch->build();
    img->patch_ = std::move(patch);
  }
  // The best live flow of a touched match, or kGone.
  auto best_of = [&](const packet::OfTuple& value, uint32_t wildcards) -> Result<uint32_t> {
    uint32_t best = kGone;
    for (uint32_t id : table.same_match(make_match(packet::of_unpack(value), wildcards)))
      if (best == kGone || precedes(*table.entry(id), *table.entry(best))) best = id;
    if (best != kGone) {
      WARPATH_ASSIGN_OR_RETURN(bool ok, ensure_program(*table.entry(best)));
      if (!ok) return Status(Errc::kCapacity, "late rewrites full");
    }
    return best;
  };
  const std::vector<uint64_t>& ranks = shared.ranks;
  for (const Touched& t : touched) {
    const bool wild = t.sub != kExactSub;
    Sub& sub        = wild ? img->subtables_[t.sub] : img->exact_;
    // The values touched now, each answered afresh, go to the mask's recent table (a copy of
    // the old one: its answers stand unless touched again); a recent table grown past a
    // quarter of the override table is merged into it. max_rank only grows until the next full
    // image (a bound is all the ranking needs).
    std::vector<Entry> now;
    uint64_t top = 0;
    for (const packet::OfTuple& v : t.values) {
      Result<uint32_t> best = best_of(v, t.wildcards);
      if (!best.is_ok()) return full();  // a full build reports a flow it cannot compile
      if (*best != kGone && wild) top = std::max(top, ranks[*best]);
      now.emplace_back(v, *best);
    }
    std::shared_ptr<Table> recent = overlay(sub.recent.get(), t.mask, now);
    recent->max_rank              = std::max(recent->max_rank, top);
    if (recent->size() > std::max(kRecentMin, (sub.over ? sub.over->size() : 0) / 4)) {
      std::vector<Entry> all(recent->size());
      for (size_t i = 0; i < all.size(); ++i)
        all[i] = {recent->records[i].key, recent->records[i].flow};
      std::shared_ptr<Table> over = overlay(sub.over.get(), t.mask, all);
      over->max_rank              = std::max(over->max_rank, recent->max_rank);
      sub.over                    = std::move(over);
      sub.recent                  = nullptr;
    } else {
      sub.recent = std::move(recent);
    }
    if (wild)
      for (const Table* l : {sub.base.get(), sub.over.get(), sub.recent.get()})
        if (l) sub.max_rank = std::max(sub.max_rank, l->max_rank);
  }
  // A mask without a base table whose override never held a live flow answers nothing: dropped.
  // Then ranked again.
  img->subtables_.erase(std::remove_if(img->subtables_.begin(), img->subtables_.end(),
                                       [](const Sub& s) { return s.max_rank == 0; }),
                        img->subtables_.end());
  std::stable_sort(img->subtables_.begin(), img->subtables_.end(),
                   [](const Sub& a, const Sub& b) { return a.max_rank > b.max_rank; });
  return std::shared_ptr<const FlowImage>(std::move(img));
}

std::vector<FlowImage::TableData> FlowImage::tables() const {
  std::vector<TableData> out;
  auto add = [&](const Table& t) {
    out.push_back({t.buckets.data(), uint32_t(t.buckets.size()), t.records.data(),
                   uint32_t(t.size()), t.mask, t.max_rank});
  };
  add(*exact_.base);
  for (const Sub& s : subtables_)
    if (s.base) add(*s.base);
  return out;
}

uint32_t FlowImage::lookup_one(const packet::OfTuple& key) const {
  uint32_t id = kNoFlow;
  lookup({&key, 1}, {&id, 1});
  return id;
}

// Per chunk of keys and per table: hash every key and prefetch its bucket; then read each
// bucket's matching way and prefetch that slot's key; then compare (G-Opt's staged prefetch:
// a key's two memory accesses overlap the other keys' work). A bucket that overflowed, or a
// signature that matched the wrong key, takes the plain probe.
void FlowImage::lookup(Span<const packet::OfTuple> keys, Span<uint32_t> ids) const {
  constexpr uint32_t kChunk = 64, kSmallTable = 16384;
  // cand[q] codes besides a slot: no entry, the plain probe, the layers' answer.
  constexpr uint32_t kNone = 0xFFFF'FFFFu, kSlow = 0xFFFF'FFFEu, kOverridden = 0xFFFF'FFFDu;
  uint64_t h[kChunk], best[kChunk];
  uint32_t cand[kChunk], todo[kChunk], said[kChunk];
  packet::OfTuple mk[kChunk];
  const std::vector<uint64_t>& ranks = *ranks_;
  // One mask's tables for `count` keys. kFirst: the exact-match table, keys q = 0..count, every
  // key's answer set (no memset per chunk, whose cost shows at bursts of 32). kWild: a
  // subtable, for keys todo[q]. Keys are masked and hashed once: the layers over table t (an
  // incremental image's recent and override tables: small, in cache, probed directly) answer
  // first, in order, and t (its bucket prefetched meanwhile) for the keys they do not know. A
  // tombstone is no answer.
  enum Mode { kFirst, kWild };
  auto run = [&](const Table& t, const Table* layer1, const Table* layer2, const packet::OfTuple* k,
                 uint32_t* out, uint32_t count, Mode mode) __attribute__((always_inline)) {
    const core::HashView v = t.view();
    for (uint32_t q = 0; q < count; ++q) {
      mk[q] = core::apply_mask(k[mode == kFirst ? q : todo[q]], v.mask);
      h[q]  = core::hash_key(mk[q]);
      WARPATH_PREFETCH(&v.buckets[uint32_t(h[q]) & v.bucket_mask]);
    }
    if (layer1) {
      const core::HashView a = layer1->view();
      for (uint32_t q = 0; q < count; ++q) said[q] = core::probe(a, mk[q], h[q]);
      if (layer2) {
        const core::HashView b = layer2->view();
        for (uint32_t q = 0; q < count; ++q)
          if (said[q] == core::kMiss) said[q] = core::probe(b, mk[q], h[q]);
      }
    }
    for (uint32_t q = 0; q < count; ++q) {
      if (layer1 && said[q] != core::kMiss) {
        cand[q] = kOverridden;
        continue;
      }
      const core::Bucket& bk = v.buckets[uint32_t(h[q]) & v.bucket_mask];
      bool open              = false;
      const uint32_t m       = core::sig_matches(bk, core::signature(h[q]), open);
      if (m && !(m & (m - 1))) {
        cand[q] = bk.slot[__builtin_ctz(m)];
        WARPATH_PREFETCH(&v.records[cand[q]]);
      } else {
        cand[q] = m || !open ? kSlow : kNone;
      }
    }
    for (uint32_t q = 0; q < count; ++q) {
      uint32_t f = core::kMiss;
      if (cand[q] < kOverridden && core::same_key(v.records[cand[q]].key, mk[q]))
        f = v.records[cand[q]].flow;
      else if (cand[q] == kOverridden)
        f = said[q];
      else if (cand[q] != kNone)
        f = core::probe(v, mk[q], h[q]);
      if (f == kGone) f = core::kMiss;
      if (mode == kFirst) {
        out[q]  = f == core::kMiss ? kNoFlow : f;
        best[q] = f == core::kMiss ? 0 : ~0ull;  // exact beats every subtable
        continue;
      }
      if (f == core::kMiss) continue;
      const uint32_t i = todo[q];
      if (ranks[f] > best[i]) {
        best[i] = ranks[f];
        out[i]  = f;
      }
    }
  };
  // A mask's tables, the one probed by bucket last: recent, override, full image's.
  auto layered = [&](const Sub& s, const packet::OfTuple* k, uint32_t* out, uint32_t count, Mode mode)
      __attribute__((always_inline)) {
    const Table* l[3];
    int n = 0;
    if (s.recent) l[n++] = s.recent.get();
    if (s.over) l[n++] = s.over.get();
    if (s.base) l[n++] = s.base.get();
    run(*l[n - 1], n > 1 ? l[0] : nullptr, n > 2 ? l[1] : nullptr, k, out, count, mode);
  };
  const bool has_exact = exact_.base->size() || exact_.over || exact_.recent;
  // Keys per stage: 64 keep enough bucket and record misses in flight for a big table; a small
  // exact-match table (its records, 64 bytes a flow, in L2) misses little, and there the keys'
  // own lines, when they stream from memory, are what the hashing loop waits on: chunks of 32
  // prefetch the second half of a burst of 64 while the first is hashed (Xeon VM, keys from
  // memory: 1K flows 7.3 -> 6.7 ns a key; at 1M, 32 loses: 16.5 -> 20 ns; 100K even). Tables
  // with wildcard subtables keep 64 (not measured with 32).
  const uint32_t chunk =
      subtables_.empty() && exact_.base->size() <= kSmallTable ? kChunk / 2 : kChunk;
  // The keys of the chunk at `base`: the first chunk's at the start, each next one's while this
  // chunk's buckets load (keys read from a big array in memory otherwise stall the hashing loop
  // on each of their lines).
  auto prefetch_keys = [&](uint32_t base) __attribute__((always_inline)) {
    if (base >= keys.size) return;
    const char* from   = reinterpret_cast<const char*>(keys.data + base);
    const size_t bytes = std::min(chunk, keys.size - base) * sizeof(packet::OfTuple);
    for (size_t at = 0; at < bytes; at += 64) WARPATH_PREFETCH(from + at);
  };
  prefetch_keys(0);
  for (uint32_t base = 0; base < keys.size; base += chunk) {
    const uint32_t n         = std::min(chunk, keys.size - base);
    const packet::OfTuple* k = keys.data + base;
    uint32_t* out            = ids.data + base;
    prefetch_keys(base + chunk);
    if (has_exact) {
      layered(exact_, k, out, n, kFirst);
    } else {
      for (uint32_t i = 0; i < n; ++i) out[i] = kNoFlow, best[i] = 0;
    }
    for (const Sub& s : subtables_) {
      uint32_t count = 0;
      for (uint32_t i = 0; i < n; ++i)
        if (best[i] < s.max_rank) todo[count++] = i;
      if (count == 0) break;  // ranked: no later subtable can beat what every key has
      layered(s, k, out, count, kWild);
    }
  }
}

}  // namespace warpath::openflow
