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

#include "openflow/core/flow_hash_core.hpp"
#include "openflow/flow_image_table.hpp"
#include "openflow/flow_lookup_body.hpp"  // lookup_with: the SSE2 instance here
#include "warpath/core/cpu_features.hpp"
#include "warpath/core/hd.hpp"
#include "warpath/openflow/flow_table.hpp"

namespace warpath::openflow {

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

/// publish()'s incremental steps on a copy of `current`: the changes since it collected by
/// mask, the modified flows' patch, the touched values answered afresh into the masks' recent
/// tables, the subtables ranked again. A step that returns false asks for a full build (the
/// change log went past what an incremental image may hold, the late buffer is full, or a flow
/// does not compile: a full build reports it).
struct FlowImage::Publish {
  const FlowImage& current;
  FlowTable& table;
  uint32_t port_count;
  Shared& shared;
  FlowImage& img;

  static constexpr size_t kExactSub = ~size_t(0);
  /// A mask touched since `current`, with its entry in subtables_ (kExactSub: exact_).
  struct Touched {
    size_t sub;
    packet::OfTuple mask;
    uint32_t wildcards;
    std::vector<packet::OfTuple> values;
  };
  std::vector<Touched> touched;
  std::vector<uint32_t> modified;  // ids MODIFY gave new actions since `current`

  /// The matches touched since `current`, by mask (an id is added at most once and removed at
  /// most once between full images: ids are not reused until then), each with its entry in
  /// subtables_, made when the image has none for the mask.
  bool collect_changes() {
    const auto& changes = table.changes();
    std::unordered_map<packet::OfTuple, size_t, TupleHash, TupleEq> sub_of;  // mask -> subtables_
    for (size_t k = 0; k < img.subtables_.size(); ++k) {
      const Sub& s = img.subtables_[k];
      sub_of.emplace((s.base ? s.base : s.over ? s.over : s.recent)->mask, k);
    }
    std::unordered_map<packet::OfTuple, size_t, TupleHash, TupleEq> touched_of;  // mask -> touched
    for (size_t c = current.log_pos_; c < changes.size(); ++c) {
      const FlowTable::Change& ch = changes[c];
      if (ch.id >= shared.programs.size()) return false;
      if (ch.kind == FlowTable::Change::kModified) {
        modified.push_back(ch.id);
        continue;
      }
      if (ch.exact) {
        if (ch.kind == FlowTable::Change::kAdded)
          ++img.exact_flows_;
        else
          --img.exact_flows_;
      }
      const Match& m   = table.last(ch.id).spec.match;
      const auto mask  = m.mask();
      auto [it, fresh] = touched_of.emplace(mask, touched.size());
      if (fresh) {
        size_t sub = kExactSub;
        if (!ch.exact) {
          auto [s, added] = sub_of.emplace(mask, img.subtables_.size());
          if (added) img.subtables_.push_back({});
          sub = s->second;
        }
        touched.push_back({sub, mask, m.wildcards, {}});
      }
      touched[it->second].values.push_back(m.value());
    }
    return true;
  }

  /// A flow's program with its rewrites in the late buffer (past what published images use);
  /// false when that buffer is full.
  Result<bool> compile_late(const FlowEntry& e, ActionProgram& q) {
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
  }

  /// The program (and rank) of a flow an image now answers with: written once per flow, into
  /// an id no published image maps a key to. False when the late buffer is full.
  Result<bool> ensure_program(const FlowEntry& e) {
    ActionProgram& prog = shared.programs[e.id];
    if (prog.order == e.order) return true;
    ActionProgram q;
    WARPATH_ASSIGN_OR_RETURN(bool ok, compile_late(e, q));
    if (!ok) return false;
    shared.ranks[e.id] = rank_of(e);
    prog               = q;
    return true;
  }

  /// Modified flows: the patch of `current`, with the programs of the flows modified since
  /// compiled again (a flow removed since is left out).
  bool patch_modified() {
    if (modified.empty()) return true;
    auto patch = std::make_shared<Patch>();
    std::sort(modified.begin(), modified.end());
    modified.erase(std::unique(modified.begin(), modified.end()), modified.end());
    if (current.patch_)
      for (size_t k = 0; k < current.patch_->ids.size(); ++k) {
        const uint32_t id  = current.patch_->ids[k];
        const FlowEntry* e = table.entry(id);
        if (e && e->order == current.patch_->programs[k].order &&
            !std::binary_search(modified.begin(), modified.end(), id)) {
          patch->ids.push_back(id);
          patch->programs.push_back(current.patch_->programs[k]);
        }
      }
    for (uint32_t id : modified) {
      const FlowEntry* e = table.entry(id);
      if (!e) continue;
      ActionProgram q;
      Result<bool> ok = compile_late(*e, q);
      if (!ok.is_ok() || !*ok) return false;
      patch->ids.push_back(id);
      patch->programs.push_back(q);
    }
    patch->build();
    img.patch_ = std::move(patch);
    return true;
  }

  /// The best live flow of a touched match, or kGone.
  Result<uint32_t> best_of(const packet::OfTuple& value, uint32_t wildcards) {
    uint32_t best = kGone;
    for (uint32_t id : table.same_match(make_match(packet::of_unpack(value), wildcards)))
      if (best == kGone || precedes(*table.entry(id), *table.entry(best))) best = id;
    if (best != kGone) {
      WARPATH_ASSIGN_OR_RETURN(bool ok, ensure_program(*table.entry(best)));
      if (!ok) return Status(Errc::kCapacity, "late rewrites full");
    }
    return best;
  }

  /// The values touched now, each answered afresh, go to the mask's recent table (a copy of
  /// the old one: its answers stand unless touched again); a recent table grown past a
  /// quarter of the override table is merged into it. max_rank only grows until the next full
  /// image (a bound is all the ranking needs).
  bool answer_touched() {
    const std::vector<uint64_t>& ranks = shared.ranks;
    for (const Touched& t : touched) {
      const bool wild = t.sub != kExactSub;
      Sub& sub        = wild ? img.subtables_[t.sub] : img.exact_;
      std::vector<Entry> now;
      uint64_t top = 0;
      for (const packet::OfTuple& v : t.values) {
        Result<uint32_t> best = best_of(v, t.wildcards);
        if (!best.is_ok()) return false;
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
    return true;
  }

  /// A mask without a base table whose override never held a live flow answers nothing:
  /// dropped. Then ranked again.
  void rank_subtables() {
    img.subtables_.erase(std::remove_if(img.subtables_.begin(), img.subtables_.end(),
                                        [](const Sub& s) { return s.max_rank == 0; }),
                         img.subtables_.end());
    std::stable_sort(img.subtables_.begin(), img.subtables_.end(),
                     [](const Sub& a, const Sub& b) { return a.max_rank > b.max_rank; });
  }
};

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
  Publish p{*current, table, port_count, shared, *img, {}, {}};
  if (!p.collect_changes() || !p.patch_modified() || !p.answer_touched()) return full();
  p.rank_subtables();
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

namespace {

/// The per-key steps as core defines them (SSE2 on x86-64).
struct Sse2Ops {
  static packet::OfTuple apply_mask(const packet::OfTuple& k, const packet::OfTuple& m) {
    return core::apply_mask(k, m);
  }
  static uint64_t hash_key(const packet::OfTuple& k) { return core::hash_key(k); }
  static uint32_t sig_matches(const core::Bucket& bk, uint32_t sig, bool& open) {
    return core::sig_matches(bk, sig, open);
  }
  static bool same_key(const packet::OfTuple& a, const packet::OfTuple& b) {
    return core::same_key(a, b);
  }
};

}  // namespace

bool FlowImage::has_isa(LookupIsa isa) noexcept {
  if (isa != LookupIsa::kAvx512) return true;
  const CpuFeatures& f = cpu_features();
  return kHaveAvx512Lookup && f.avx2 && f.avx512f && f.avx512vl;
}

void FlowImage::lookup(Span<const packet::OfTuple> keys, Span<uint32_t> ids) const {
  static const bool avx512 = has_isa(LookupIsa::kAvx512);
  if (avx512)
    lookup_avx512(keys, ids);
  else
    lookup_with<Sse2Ops>(keys, ids);
}

void FlowImage::lookup(Span<const packet::OfTuple> keys, Span<uint32_t> ids, LookupIsa isa) const {
  if (isa == LookupIsa::kAuto) return lookup(keys, ids);
  if (isa == LookupIsa::kAvx512 && has_isa(isa))
    lookup_avx512(keys, ids);
  else
    lookup_with<Sse2Ops>(keys, ids);
}

}  // namespace warpath::openflow
