// cpu.overlay: the fastest static engine over a snapshot of the rules, with TupleMerge
// overlays for the changes since, merged by rebuilding the snapshot in the background.
//
// Why: TupleMerge takes millions of updates a second but on the 10K ClassBench sets looks up
// at 0.5-0.9x rte_acl, while RFC, TIC and the address split run at 1.4-2.4x and cannot change
// (docs/adr/0014). Rule sets change now and then far more often than all the time: here a
// rule set answers at the static engine's speed between changes, takes every change at once,
// and folds the changes into a new snapshot within milliseconds.
//
// State (a View, published by pointer; replaced whole by the builder):
//   base     the best cpu.* static engine (make_best_classifier) over the rules alive at
//            version `snap`, sorted by index (so equal priorities tie as everywhere);
//   death    per base rule, the version from which it is gone (erased, or replaced);
//   delta    a TmSet of the rules inserted after `snap`, versioned like cpu.tuplemerge's;
// and, beside every view, `full`: a TmSet of every rule (the fallback).
// A reader takes version v (at least the view's snap) and its view once per batch. Per key: the
// base's answer, if alive at v, is the best so far and the delta can only beat it (its tables
// whose best is below it are skipped; an empty delta costs nothing); a base answer dead at v
// sends the key to `full`. So a batch sees exactly the rule set of version v.
// Writer (one at a time): an update goes to `full` and to the view's delta/death at version
// v + 1, then v + 1 is published; while a build is running it is also logged. The builder
// thread, woken by changes, waits max(kMinInterval, 4 x its last build), snapshots the rules
// at version vs (writer mutex held, a copy), builds without the lock, then (mutex held)
// replays the logged updates into the new view's delta/death with their own versions and
// publishes it. Old views are freed after a grace period (ReadGuard), with the TmSets'
// retired memory every kTmCollectEvery updates.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "classify/cpu/tmerge_probe.hpp"
#include "classify/engines.hpp"
#include "classify/tmerge_image.hpp"
#include "warpath/core/read_guard.hpp"

namespace warpath::classify::detail {
namespace {

using Clock                 = std::chrono::steady_clock;
constexpr auto kMinInterval = std::chrono::milliseconds(20);

template <unsigned NW>
struct View {
  std::unique_ptr<Classifier> base;
  std::vector<uint32_t> index_of;  ///< base answer -> rule index
  std::vector<uint64_t> key_of;    ///< base answer -> order key
  std::unordered_map<uint32_t, uint32_t> pos_of;  ///< rule index -> base answer (writer)
  std::unique_ptr<std::atomic<uint64_t>[]> death;
  uint64_t snap   = 0;
  uint64_t deaths = 0;  ///< base rules dead (writer)
  /// Set (before the version that first kills a base rule is published) once any has died.
  std::atomic<bool> any_death{false};
  bool identity = false;  ///< base answer p is rule index p
  TmSet<NW> delta;
};

template <unsigned NW>
class OverlayCpu final : public Classifier {
 public:
  explicit OverlayCpu(KeyLayout layout) : layout_(layout) {}
  ~OverlayCpu() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (builder_.joinable()) builder_.join();
    delete view_.load();
  }

  Status init(const RuleSet& rules) {
    full_.set_building(true);
    for (uint32_t i = 0; i < rules.rules.size(); ++i) {
      WARPATH_TRY(full_.insert(i, rules.rules[i], 0));
      rules_[i] = rules.rules[i];
    }
    full_.publish_list();
    full_.set_building(false);
    WARPATH_ASSIGN_OR_RETURN(auto view, make_view(snapshot(), 0));
    view_.store(view.release());
    builder_ = std::thread([this] { build_loop(); });
    return Status::ok();
  }

  std::string_view id() const noexcept override { return "cpu.overlay"; }

  Status do_classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext& ctx) const override {
    if (keys.layout != layout_)
      return Status(Errc::kInvalidArgument, std::string(id()) + ": key layout differs from rules");
    ReadGuard::Section section(guard_);
    // seq_cst: ordered after the section's entry on every architecture (ReadGuard's contract).
    uint64_t version    = version_.load(std::memory_order_seq_cst);
    const View<NW>& v   = *view_.load(std::memory_order_seq_cst);
    version             = std::max(version, v.snap);
    WARPATH_TRY(v.base->classify(keys, out, ctx));
    const TmList<NW>& delta = *v.delta.list();
    // Between changes (nothing dead, nothing inserted) the snapshot's answers are the answers.
    if (delta.tables.empty() && !v.any_death.load(std::memory_order_acquire)) {
      if (!v.identity)
        for (uint32_t i = 0; i < keys.count; ++i)
          if (out[i] != kNoMatch) out[i] = v.index_of[out[i]];
      return Status::ok();
    }
    thread_local std::vector<uint64_t> best;
    thread_local std::vector<uint32_t> live, dead;
    best.resize(keys.count);
    live.clear(), dead.clear();
    for (uint32_t i = 0; i < keys.count; ++i) {
      const uint32_t p = out[i];
      if (p != kNoMatch && v.death[p].load(std::memory_order_relaxed) <= version) {
        dead.push_back(i);
        continue;
      }
      best[live.size()] = p == kNoMatch ? 0 : v.key_of[p];
      live.push_back(i);
    }
    if (!delta.tables.empty())
      tm_lookup<NW>(delta, version, keys, live.data(), uint32_t(live.size()), best.data());
    for (size_t j = 0; j < live.size(); ++j) out[live[j]] = core::order_index(best[j]);
    if (!dead.empty()) {
      std::fill(best.begin(), best.begin() + dead.size(), 0);
      tm_lookup<NW>(*full_.list(), version, keys, dead.data(), uint32_t(dead.size()), best.data());
      for (size_t j = 0; j < dead.size(); ++j) out[dead[j]] = core::order_index(best[j]);
    }
    return Status::ok();
  }

  Status insert(uint32_t index, const Rule& rule) override { return update(true, index, &rule); }
  Status erase(uint32_t index) override { return update(false, index, nullptr); }

  ClassifierStats stats() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    ClassifierStats s     = tm_stats(full_);
    const View<NW>& v     = *view_.load();
    const ClassifierStats b = v.base->stats();
    s.memory_bytes += b.memory_bytes + v.delta.memory_bytes() + v.index_of.size() * 20;
    char buf[160];
    std::snprintf(buf, sizeof buf, "base %.*s (%zu rules, %llu gone), overlay %llu rules, %llu builds",
                  int(v.base->id().size()), v.base->id().data(), v.index_of.size(),
                  static_cast<unsigned long long>(v.deaths),
                  static_cast<unsigned long long>(v.delta.rules()),
                  static_cast<unsigned long long>(builds_));
    s.detail = buf;
    return s;
  }

 private:
  struct Logged {
    bool insert;
    uint32_t index;
    Rule rule;
    uint64_t version;
  };

  // The rules now (mutex held), sorted by index, and their indices.
  std::pair<RuleSet, std::vector<uint32_t>> snapshot() const {
    std::pair<RuleSet, std::vector<uint32_t>> s;
    s.first.layout = layout_;
    s.first.rules.reserve(rules_.size());
    s.second.reserve(rules_.size());
    for (const auto& [i, r] : rules_) s.first.rules.push_back(r), s.second.push_back(i);  // by index
    return s;
  }

  static Result<std::unique_ptr<View<NW>>> make_view(std::pair<RuleSet, std::vector<uint32_t>> s,
                                                    uint64_t snap) {
    auto v = std::make_unique<View<NW>>();
    WARPATH_ASSIGN_OR_RETURN(v->base, make_best_classifier(s.first, "cpu."));  // static only
    v->index_of = std::move(s.second);
    v->key_of.resize(v->index_of.size());
    v->death = std::make_unique<std::atomic<uint64_t>[]>(v->index_of.size());
    v->identity = true;
    for (uint32_t p = 0; p < v->index_of.size(); ++p) {
      v->key_of[p] = order_key(s.first.rules[p].priority, v->index_of[p]);
      v->pos_of[v->index_of[p]] = p;
      v->death[p].store(core::kTmNever, std::memory_order_relaxed);
      v->identity &= v->index_of[p] == p;
    }
    v->snap = snap;
    v->delta.publish_list();
    return v;
  }

  // One update to a view's delta and deaths at `version` (mutex held).
  static Status apply(View<NW>& v, bool insert, uint32_t index, const Rule* rule,
                      uint64_t version) {
    const auto p    = v.pos_of.find(index);
    auto kill_base  = [&] {
      if (p != v.pos_of.end() && v.death[p->second].load(std::memory_order_relaxed) == core::kTmNever) {
        v.death[p->second].store(version, std::memory_order_relaxed);
        v.any_death.store(true, std::memory_order_release);
        ++v.deaths;
      }
    };
    if (insert) {
      kill_base();
      WARPATH_TRY(v.delta.insert(index, *rule, version));
    } else if (v.delta.contains(index)) {
      WARPATH_TRY(v.delta.erase(index, version));
    } else {
      kill_base();
    }
    v.delta.publish_list();
    return Status::ok();
  }

  Status update(bool insert, uint32_t index, const Rule* rule) {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t next = version_.load(std::memory_order_relaxed) + 1;
    WARPATH_TRY(insert ? full_.insert(index, *rule, next) : full_.erase(index, next));
    full_.publish_list();
    View<NW>& v = *view_.load(std::memory_order_relaxed);
    WARPATH_TRY(apply(v, insert, index, rule, next));
    if (insert) rules_[index] = *rule;
    else rules_.erase(index);
    if (building_) log_.push_back({insert, index, insert ? *rule : Rule{}, next});
    version_.store(next, std::memory_order_release);
    if (++since_collect_ >= kTmCollectEvery ||
        full_.retired_bytes() + v.delta.retired_bytes() >= kTmMaxRetiredBytes)
      collect(next);
    if (!changed_) {  // the builder sleeps until the first change (no wake-up per update)
      changed_ = true;
      wake_.notify_one();
    }
    return Status::ok();
  }

  // Mutex held: after a grace period, frees what was retired and collects dead entries.
  void collect(uint64_t version) {
    guard_.synchronize();
    full_.free_retired();
    full_.collect(version);
    View<NW>& v = *view_.load(std::memory_order_relaxed);
    v.delta.free_retired();
    v.delta.collect(version);
    since_collect_ = 0;
  }

  void build_loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    auto last_build = std::chrono::milliseconds(0);
    while (true) {
      wake_.wait(lock, [&] { return stop_ || changed_; });
      if (stop_) return;
      // Let changes gather: at most a fifth of the time goes to building.
      wake_.wait_for(lock, std::max<Clock::duration>(kMinInterval, 4 * last_build),
                     [&] { return stop_; });
      if (stop_) return;
      changed_        = false;
      const uint64_t vs = version_.load(std::memory_order_relaxed);
      auto snap       = snapshot();
      building_       = true;
      log_.clear();
      lock.unlock();
      const auto t0 = Clock::now();
      Result<std::unique_ptr<View<NW>>> made = Status(Errc::kNotBuilt, "no view");
      try {
        made = make_view(std::move(snap), vs);
      } catch (const std::exception& e) {  // bad_alloc: keep the current view
        made = Status(Errc::kOutOfMemory, e.what());
      }
      last_build = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
      lock.lock();
      building_ = false;
      bool ok   = made.is_ok();
      std::unique_ptr<View<NW>> view;
      if (ok) view = std::move(made).value();
      try {
        for (size_t i = 0; ok && i < log_.size(); ++i) {
          const Logged& l = log_[i];
          ok = apply(*view, l.insert, l.index, l.insert ? &l.rule : nullptr, l.version).is_ok();
        }
      } catch (const std::exception&) {
        ok = false;
      }
      log_.clear();
      if (!ok) {  // the current view (its overlay holds every change) stays; try again later
        std::fprintf(stderr, "cpu.overlay: rebuild failed%s%s\n", made.is_ok() ? "" : ": ",
                     made.is_ok() ? "" : made.status().message().c_str());
        changed_ = true;
        continue;
      }
      ++builds_;
      std::unique_ptr<View<NW>> old(view_.exchange(view.release(), std::memory_order_acq_rel));
      // Readers may hold the old view until a grace period; the writer need not wait for it.
      lock.unlock();
      guard_.synchronize();
      old.reset();
      lock.lock();
    }
  }

  KeyLayout layout_;
  TmSet<NW> full_;
  std::map<uint32_t, Rule> rules_;
  std::atomic<uint64_t> version_{0};
  std::atomic<View<NW>*> view_{nullptr};
  ReadGuard guard_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::thread builder_;
  std::vector<Logged> log_;
  uint64_t builds_        = 0;
  uint32_t since_collect_ = 0;
  bool building_ = false, changed_ = false, stop_ = false;
};

}  // namespace

Made make_cpu_overlay(const RuleSet& rules, const ClassifyParams& params) {
  (void)params;
  return make_by_width<OverlayCpu>(rules);
}

}  // namespace warpath::classify::detail
