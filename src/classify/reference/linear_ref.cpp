// ref.linear: the oracle. Every rule, every field, through rule_matches(), keeping the best by
// (priority, index). Updates replace the rule vector under a lock. Deliberately plain.
#include <mutex>
#include <shared_mutex>

#include "classify/engines.hpp"

namespace warpath::classify::detail {
namespace {

class RefLinear final : public Classifier {
 public:
  explicit RefLinear(const RuleSet& rules) : layout_(rules.layout) {
    for (const Rule& r : rules.rules) rules_.push_back({true, r});
  }
  std::string_view id() const noexcept override { return "ref.linear"; }

  Status do_classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext&) const override {
    if (keys.layout != layout_)
      return Status(Errc::kInvalidArgument, "key layout differs from the rule set's");
    std::shared_lock lock(mutex_);
    uint32_t key[kMaxKeyWords];
    for (uint32_t i = 0; i < keys.count; ++i) {
      for (unsigned w = 0; w < key_words(layout_); ++w) key[w] = keys.word(w, i);
      uint32_t best = kNoMatch;
      for (uint32_t r = 0; r < rules_.size(); ++r) {
        if (!rules_[r].present || !rule_matches(rules_[r].rule, layout_, key)) continue;
        if (best == kNoMatch ||
            better(rules_[r].rule.priority, r, rules_[best].rule.priority, best))
          best = r;
      }
      out[i] = best;
    }
    return Status::ok();
  }

  Status insert(uint32_t index, const Rule& rule) override {
    std::unique_lock lock(mutex_);
    if (index >= rules_.size()) rules_.resize(size_t(index) + 1);
    rules_[index] = {true, rule};
    return Status::ok();
  }
  Status erase(uint32_t index) override {
    std::unique_lock lock(mutex_);
    if (index >= rules_.size() || !rules_[index].present)
      return Status(Errc::kNotFound, "no rule " + std::to_string(index));
    rules_[index].present = false;
    return Status::ok();
  }

  ClassifierStats stats() const override {
    std::shared_lock lock(mutex_);
    ClassifierStats s;
    for (const auto& r : rules_) s.rules += r.present;
    s.entries      = s.rules;
    s.memory_bytes = rules_.size() * sizeof(Slot);
    return s;
  }

 private:
  struct Slot {
    bool present = false;
    Rule rule;
  };
  KeyLayout layout_;
  std::vector<Slot> rules_;
  mutable std::shared_mutex mutex_;
};

}  // namespace

Made make_ref_linear(const RuleSet& rules) {
  return std::unique_ptr<Classifier>(std::make_unique<RefLinear>(rules));
}

}  // namespace warpath::classify::detail
