// The classifier engine registry: the only list of classifier engines (see
// include/warpath/classify/classifier.hpp) and the validating wrapper.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "classify/engines.hpp"
#include "core/engine_table.hpp"
#include "core/validating.hpp"
#include "warpath/classify/check.hpp"
#include "warpath/core/cuda_device.hpp"
#include "warpath/core/registry.hpp"

namespace warpath::classify {
namespace {

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
                                              const RuleSet& rules, const ClassifyParams&) {
  WARPATH_ASSIGN_OR_RETURN(auto ref, detail::make_ref_linear(rules));
  return std::unique_ptr<Classifier>(
      std::make_unique<ValidatingClassifier>(std::move(engine), std::move(ref)));
}

// What auto and the make path need to know of an engine besides building it.
struct ClassifierTraits {
  bool five_tuple_only  = false;  ///< takes 5-tuple rules only, not OpenFlow's 12 fields
  bool updates          = false;  ///< inserts and erases rules without a rebuild
  bool for_updates_only = false;  ///< auto picks it only when updates are expected
};

using ClassifierTable = EngineTable<Classifier(const RuleSet&, const ClassifyParams&), ClassifierTraits>;

const ClassifierTable& classifier_table() {
  constexpr ClassifierTraits kAny{}, kFive{true, false, false}, kUpdates{false, true, false};
  using P = const ClassifyParams&;
  using R = const RuleSet&;
  static const ClassifierTable table(
      "classifier",
      {
          {{"ref.linear", "every rule, every field, in order (the oracle)", 0, engine_always},
           [](R r, P) { return detail::make_ref_linear(r); },
           kUpdates},
          {{"cpu.linear", "GSwitch linear search, vectorised scan over SoA rule blocks", 3,
            engine_always},
           [](R r, P p) { return detail::make_cpu_linear(r, p); },
           kAny},
          {{"cpu.tuple", "tuple space search, cuckoo hash per class, classes ranked by hits", 7,
            engine_always},
           [](R r, P p) { return detail::make_cpu_tuple(r, p, false); },
           kUpdates},
          {{"cpu.bloom", "tuple search with a Bloom filter per class (k=2)", 8, engine_always},
           [](R r, P p) { return detail::make_cpu_tuple(r, p, true); },
           kUpdates},
          {{"cpu.rfc", "Recursive Flow Classification, 4 phases (5-tuple)", 12, engine_always},
           [](R r, P p) { return detail::make_cpu_rfc(r, p); },
           kFive},
          {{"cpu.tic", "RFC on addresses + range interpreter over 64-byte blocks (5-tuple)", 11,
            engine_always},
           [](R r, P p) { return detail::make_cpu_tic(r, p); },
           kFive},
          {{"cpu.split",
            "address split: rules filed under one address prefix, B+ tree of intervals, short "
            "runs; the rest by RFC (5-tuple)",
            10, engine_always},
           [](R r, P p) { return detail::make_cpu_split(r, p); },
           kFive},
          {{"cpu.tuplemerge",
            "TupleMerge: rules whole in few relaxed-tuple hash tables; versioned updates while "
            "classifying",
            9, engine_always},
           [](R r, P p) { return detail::make_cpu_tuplemerge(r, p); },
           kUpdates},
          {{"cpu.overlay",
            "the best static engine over a snapshot, TupleMerge overlays of the changes, rebuilt "
            "in the background (5-tuple; picked by auto when updates are expected)",
            10, engine_always},
           [](R r, P p) { return detail::make_cpu_overlay(r, p); },
           {true, true, true}},
#if defined(WARPATH_HAVE_CUDA)
          // The CUDA engines rank among themselves (the `gpu` alias, the offload place) as the
          // CPU engines do on this machine's measurements (rfc, tic, split, tuplemerge, bloom,
          // tuple, linear), all below the CPU's best so that `auto` stays on the CPU: end to end a
          // call pays its copies (bench/README.md, "GPU results"); the offload master's
          // resident path is where they pay off, and warpath-gpu-bench's ClassBench rows rank them.
          {{"cuda.linear", "GSwitch Algorithm 1: shared-memory rules, SoA keys", 1,
            cuda_engine_available},
           [](R r, P p) { return detail::make_cuda_linear(r, p); },
           kAny},
          {{"cuda.tuple", "GSwitch Algorithm 4: a block per class (split at 256 rules)", 2,
            cuda_engine_available},
           [](R r, P p) { return detail::make_cuda_tuple(r, p, false); },
           kUpdates},
          {{"cuda.bloom", "GSwitch Algorithm 5: Bloom filter then cuckoo probe", 3,
            cuda_engine_available},
           [](R r, P p) { return detail::make_cuda_tuple(r, p, true); },
           kUpdates},
          {{"cuda.rfc", "RFC phases in CUDA (5-tuple)", 7, cuda_engine_available},
           [](R r, P p) { return detail::make_cuda_rfc(r, p); },
           kFive},
          {{"cuda.tic", "TIC range interpreter in CUDA (5-tuple)", 6, cuda_engine_available},
           [](R r, P p) { return detail::make_cuda_tic(r, p); },
           kFive},
          {{"cuda.split", "address split in CUDA, a thread per key (5-tuple)", 5,
            cuda_engine_available},
           [](R r, P p) { return detail::make_cuda_split(r, p); },
           kFive},
          {{"cuda.tuplemerge",
            "TupleMerge in CUDA, a thread per key; updates upload small deltas", 4,
            cuda_engine_available},
           [](R r, P p) { return detail::make_cuda_tuplemerge(r, p); },
           kUpdates},
#endif
      },
      &validated);
  return table;
}

}  // namespace

bool takes_updates(std::string_view id) {
  const auto* e = classifier_table().find(id);
  return e && e->traits.updates;
}

bool takes_layout(std::string_view id, KeyLayout layout) {
  if (layout == KeyLayout::kFiveTuple) return true;
  const auto* e = classifier_table().find(id);
  return e && !e->traits.five_tuple_only;
}

std::vector<EngineInfo> classifier_engines() { return classifier_table().infos(); }

Result<std::unique_ptr<Classifier>> make_classifier(std::string_view requested,
                                                    const RuleSet& rules,
                                                    const ClassifyParams& params) {
  bool validating = false;
  if (const std::string_view plain = strip_validate(requested, validating);
      plain.rfind("auto:", 0) == 0) {  // the best engine of a device, checked or not
    detail::Made engine = make_best_classifier(rules, plain.substr(5), params);
    if (!engine.is_ok() || !validating) return engine;
    return validated(std::move(engine).value(), rules, params);
  }
  validating = false;
  WARPATH_ASSIGN_OR_RETURN(
      const std::string id,
      resolve_engine(classifier_table().infos(), "classifier", requested, validating, false));
  if (id == "auto") {  // classification's own order: the best engine that can build the set
    detail::Made engine = make_best_classifier(rules, "", params);
    if (!engine.is_ok() || !validating) return engine;
    return validated(std::move(engine).value(), rules, params);
  }
  if (!takes_layout(id, rules.layout))
    return Status(Errc::kNotSupported, id + " classifies 5-tuple rules only, not OpenFlow rules");
  return classifier_table().make_resolved(id, validating, rules, params);
}

Result<std::string> classifier_id(std::string_view algo, std::string_view engine) {
  const std::string e(engine), a(algo);
  if (e.find('.') != std::string::npos) return e;  // a full id, or validate:<id>
  if (e == "ref") return std::string("ref.linear");
  if (e != "cpu" && e != "gpu" && e != "auto")
    return Status(Errc::kNotFound, "unknown engine '" + e + "' (cpu, gpu, ref, auto or an id)");
  if (a == "auto") return std::string(e == "auto" ? "auto" : e == "cpu" ? "auto:cpu." : "auto:cuda.");
  if (e == "cpu") return "cpu." + a;
  if (e == "gpu") return "cuda." + a;
  return (cuda_device_count() > 0 ? "cuda." : "cpu.") + a;
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
  std::vector<const ClassifierTable::Entry*> engines;
  for (const auto& e : classifier_table().entries()) engines.push_back(&e);
  std::stable_sort(engines.begin(), engines.end(), [](const auto* a, const auto* b) {
    return a->info.priority > b->info.priority;
  });
  ClassifyParams limited = params;
  if (!limited.max_image_bytes) limited.max_image_bytes = kAutoImageBytes;
  std::string tried;
  Status last(Errc::kNotSupported,
              "no " + std::string(prefix) + "* classifier engine for this rule set is available" +
                  (prefix == "cuda." ? ": " + cuda_unavailable_reason() : std::string()));
  for (const ClassifierTable::Entry* entry : engines) {
    const EngineInfo& e           = entry->info;
    const ClassifierTraits& traits = entry->traits;
    if (e.id == "ref.linear" || e.id.substr(0, prefix.size()) != prefix) continue;
    if (!takes_layout(e.id, rules.layout) || !e.available()) continue;
    if (params.updates && !traits.updates) continue;
    // The overlay is for updates only (and its snapshot is built by this same function).
    if (!params.updates && traits.for_updates_only) continue;
    auto made = make_classifier(e.id, rules, limited);
    if (made.is_ok() ||
        (made.status().code() != Errc::kCapacity && made.status().code() != Errc::kNotSupported))
      return made;
    tried += (tried.empty() ? "" : "; ") + made.status().message();
    last = Status(made.status().code(), "no classifier engine could build this rule set: " + tried);
  }
  return last;
}

// The family in `warpath info` and `warpath selftest` (core/registry.hpp).
WARPATH_REGISTER_ENGINE_FAMILY(classify, "classify", 30, &classifier_engines,
                               &check_classifier_engine);

}  // namespace warpath::classify
