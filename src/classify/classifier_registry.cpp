// The classifier engine registry: the only list of classifier engines (see
// include/warpath/classify/classifier.hpp) and the validating wrapper.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "classify/engines.hpp"
#include "core/validating.hpp"
#include "warpath/core/cuda_device.hpp"

namespace warpath::classify {
namespace {

bool always() { return true; }
bool have_gpu() { return cuda_device_count() > 0; }

std::string key_text(const KeyBatch& keys, uint32_t i) {
  std::string t = "[";
  for (unsigned w = 0; w < key_words(keys.layout); ++w) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%s%08x", w ? " " : "", keys.word(w, i));
    t += buf;
  }
  return t + "]";
}

std::string answer_text(uint32_t a) { return a == kNoMatch ? "-1" : std::to_string(a); }

// An engine beside ref.linear (core/validating.hpp): updates go to both, every batch is
// compared.
class ValidatingClassifier final : public ValidatingPair<Classifier> {
 public:
  ValidatingClassifier(std::unique_ptr<Classifier> engine, std::unique_ptr<Classifier> ref)
      : ValidatingPair(std::move(engine), std::move(ref), "ref.linear") {}
  Status do_classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext& ctx) const override {
    std::shared_lock lock(mutex_);
    WARPATH_TRY(engine_->classify(keys, out, ctx));
    std::vector<uint32_t> want(keys.count);
    WARPATH_TRY(ref_->classify(keys, {want.data(), keys.count}, ctx));
    return first_difference(keys.count, "key", [&](uint32_t i) { return out[i] == want[i]; },
                            [&](uint32_t i) {
                              return " " + key_text(keys, i) + ": got rule " +
                                     answer_text(out[i]) + ", reference rule " +
                                     answer_text(want[i]);
                            });
  }
  Status insert(uint32_t index, const Rule& rule) override {
    return update_both([&](Classifier& c) { return c.insert(index, rule); });
  }
  Status erase(uint32_t index) override {
    return update_both([&](Classifier& c) { return c.erase(index); });
  }
  ClassifierStats stats() const override { return engine_->stats(); }
};

/// `engine` beside ref.linear (validate:<id>).
Result<std::unique_ptr<Classifier>> validated(std::unique_ptr<Classifier> engine,
                                              const RuleSet& rules) {
  WARPATH_ASSIGN_OR_RETURN(auto ref, detail::make_ref_linear(rules));
  return std::unique_ptr<Classifier>(
      std::make_unique<ValidatingClassifier>(std::move(engine), std::move(ref)));
}

}  // namespace

bool takes_updates(std::string_view id) {
  for (std::string_view e : {".tuple", ".bloom", ".tuplemerge", ".overlay", "ref.linear"})
    if (id.size() >= e.size() && id.substr(id.size() - e.size()) == e) return true;
  return false;
}

bool takes_layout(std::string_view id, KeyLayout layout) {
  if (layout == KeyLayout::kFiveTuple) return true;
  for (std::string_view five : {".rfc", ".tic", ".split", ".overlay"})
    if (id.find(five) != std::string_view::npos) return false;
  return true;
}

std::vector<EngineInfo> classifier_engines() {
  std::vector<EngineInfo> engines = {
      {"ref.linear", "every rule, every field, in order (the oracle)", 0, &always},
      {"cpu.linear", "GSwitch linear search, vectorised scan over SoA rule blocks", 3, &always},
      {"cpu.tuple", "tuple space search, cuckoo hash per class, classes ranked by hits", 7,
       &always},
      {"cpu.bloom", "tuple search with a Bloom filter per class (k=2)", 8, &always},
      {"cpu.rfc", "Recursive Flow Classification, 4 phases (5-tuple)", 12, &always},
      {"cpu.tic", "RFC on addresses + range interpreter over 64-byte blocks (5-tuple)", 11,
       &always},
      {"cpu.split",
       "address split: rules filed under one address prefix, B+ tree of intervals, short runs; "
       "the rest by RFC (5-tuple)",
       10, &always},
      {"cpu.tuplemerge",
       "TupleMerge: rules whole in few relaxed-tuple hash tables; versioned updates while "
       "classifying",
       9, &always},
      {"cpu.overlay",
       "the best static engine over a snapshot, TupleMerge overlays of the changes, rebuilt in "
       "the background (5-tuple; picked by auto when updates are expected)",
       10, &always},
  };
#if defined(WARPATH_HAVE_CUDA)
  for (EngineInfo e : std::vector<EngineInfo>{
           {"cuda.linear", "GSwitch Algorithm 1: shared-memory rules, SoA keys", 1, &have_gpu},
           {"cuda.tuple", "GSwitch Algorithm 4: a block per class (split at 256 rules)", 2,
            &have_gpu},
           {"cuda.bloom", "GSwitch Algorithm 5: Bloom filter then cuckoo probe", 2, &have_gpu},
           {"cuda.rfc", "RFC phases in CUDA (5-tuple)", 2, &have_gpu},
           {"cuda.tic", "TIC range interpreter in CUDA (5-tuple)", 2, &have_gpu},
           {"cuda.split", "address split in CUDA, a thread per key (5-tuple)", 2, &have_gpu},
           {"cuda.tuplemerge", "TupleMerge in CUDA, a thread per key; updates re-upload the image",
            2, &have_gpu},
       })
    engines.push_back(e);
#else
  (void)&have_gpu;
#endif
  return engines;
}

Result<std::unique_ptr<Classifier>> make_classifier(std::string_view requested,
                                                    const RuleSet& rules,
                                                    const ClassifyParams& params) {
  bool validating = false;
  WARPATH_ASSIGN_OR_RETURN(
      const std::string id,
      resolve_engine(classifier_engines(), "classifier", requested, validating, false));
  detail::Made engine = Status(Errc::kNotFound, "no factory for classifier engine " + id);
  if (id == "auto") {  // classification's own order: the best engine that can build the set
    engine = make_best_classifier(rules, "", params);
    if (!engine.is_ok() || !validating) return engine;
    return validated(std::move(engine).value(), rules);
  }
  if (!takes_layout(id, rules.layout))
    return Status(Errc::kNotSupported, id + " classifies 5-tuple rules only, not OpenFlow rules");
  if (id == "ref.linear") engine = detail::make_ref_linear(rules);
  if (id == "cpu.linear") engine = detail::make_cpu_linear(rules, params);
  if (id == "cpu.tuple") engine = detail::make_cpu_tuple(rules, params, false);
  if (id == "cpu.bloom") engine = detail::make_cpu_tuple(rules, params, true);
  if (id == "cpu.rfc") engine = detail::make_cpu_rfc(rules, params);
  if (id == "cpu.tic") engine = detail::make_cpu_tic(rules, params);
  if (id == "cpu.split") engine = detail::make_cpu_split(rules, params);
  if (id == "cpu.tuplemerge") engine = detail::make_cpu_tuplemerge(rules, params);
  if (id == "cpu.overlay") engine = detail::make_cpu_overlay(rules, params);
#if defined(WARPATH_HAVE_CUDA)
  if (id == "cuda.linear") engine = detail::make_cuda_linear(rules, params);
  if (id == "cuda.tuple") engine = detail::make_cuda_tuple(rules, params, false);
  if (id == "cuda.bloom") engine = detail::make_cuda_tuple(rules, params, true);
  if (id == "cuda.rfc") engine = detail::make_cuda_rfc(rules, params);
  if (id == "cuda.tic") engine = detail::make_cuda_tic(rules, params);
  if (id == "cuda.split") engine = detail::make_cuda_split(rules, params);
  if (id == "cuda.tuplemerge") engine = detail::make_cuda_tuplemerge(rules, params);
#endif
  if (!engine.is_ok() || !validating) return engine;
  return validated(std::move(engine).value(), rules);
}

std::vector<std::string> classifier_algorithms() {
  std::vector<std::string> v = engine_algorithms(classifier_engines(), "cpu");
  v.emplace_back("auto");
  return v;
}

std::string classifier_algorithm_list() {
  std::string s;
  for (const std::string& a : classifier_algorithms()) s += (s.empty() ? "" : ", ") + a;
  return s;
}

Result<std::unique_ptr<Classifier>> make_best_classifier(const RuleSet& rules,
                                                         std::string_view prefix,
                                                         const ClassifyParams& params) {
  std::vector<EngineInfo> engines = classifier_engines();
  std::stable_sort(engines.begin(), engines.end(), [](const EngineInfo& a, const EngineInfo& b) {
    return a.priority > b.priority;
  });
  ClassifyParams limited = params;
  if (!limited.max_image_bytes) limited.max_image_bytes = kAutoImageBytes;
  std::string tried;
  Status last(Errc::kNotSupported,
              "no " + std::string(prefix) + "* classifier engine for this rule set is available" +
                  (prefix == "cuda." ? ": " + cuda_unavailable_reason() : std::string()));
  for (const EngineInfo& e : engines) {
    if (e.id == "ref.linear" || e.id.substr(0, prefix.size()) != prefix) continue;
    if (!takes_layout(e.id, rules.layout) || !e.available()) continue;
    if (params.updates && !takes_updates(e.id)) continue;
    // The overlay is for updates only (and its snapshot is built by this same function).
    if (!params.updates && e.id.size() >= 8 && e.id.substr(e.id.size() - 8) == ".overlay") continue;
    auto made = make_classifier(e.id, rules, limited);
    if (made.is_ok() ||
        (made.status().code() != Errc::kCapacity && made.status().code() != Errc::kNotSupported))
      return made;
    tried += (tried.empty() ? "" : "; ") + made.status().message();
    last = Status(made.status().code(), "no classifier engine could build this rule set: " + tried);
  }
  return last;
}

}  // namespace warpath::classify
