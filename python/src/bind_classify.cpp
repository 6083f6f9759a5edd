// python/src/bind_classify.cpp: warpath.Classifier, packet classification of numpy key arrays
// (include/warpath/classify/classifier.hpp).
//
// Keys are an (n, k) uint32 array, k = 4 for 5-tuple rules (src, dst, sport << 16 | dport,
// proto) and 9 for OpenFlow rules. The engines read keys column by column (SoA), so an array
// in Fortran order (np.asfortranarray, or what load_keys gives) is read in place; a C-order
// array is transposed into a scratch buffer first (one copy, documented).
#include <nanobind/stl/string.h>

#include <atomic>
#include <mutex>

#include "common.hpp"
#include "warpath/classify/classifier.hpp"
#include "warpath/classify/rule_updates.hpp"
#include "warpath/core/memory.hpp"

namespace warpath::py {
namespace {

using classify::KeyLayout;
using Keys = nb::ndarray<const uint32_t, nb::ndim<2>, nb::device::cpu>;

class PyClassifier {
 public:
  PyClassifier(const std::string& path, const std::string& format, const std::string& algo,
               const std::string& engine, bool validate, bool updates)
      : format_(format) {
    rules_ = take(classify::load_rules(path, format));
    classify::ClassifyParams params;
    if (updates) {
      // As `warpath classify --updates`: ClassBench rules all get the same priority, so the
      // index (file position, or an insert's index) decides.
      if (rules_.layout == KeyLayout::kFiveTuple)
        for (auto& r : rules_.rules) r.priority = 0;
      params.updates = true;
    }
    const std::string id = take(classify::classifier_id(algo, engine));
    engine_ = take(classify::make_classifier(with_validate(id, validate), rules_, params));
  }

  std::string engine() const { return std::string(engine_->id()); }
  unsigned key_words() const { return classify::key_words(rules_.layout); }

  nb::object classify(const Keys& keys, nb::object out_obj, uint32_t threads,
                      uint32_t batch) const {
    const unsigned words = key_words();
    if (keys.shape(1) != words)
      invalid("keys have " + std::to_string(keys.shape(1)) + " columns; " +
              (rules_.layout == KeyLayout::kFiveTuple ? "5-tuple" : "OpenFlow") +
              " rules take " + std::to_string(words));
    const size_t n = keys.shape(0);
    if (n > 0xFFFF'FFF0u) invalid("at most 2^32 - 16 keys a call");
    if (batch == 0) invalid("batch must be at least 1");
    const Answers answers = answers_for(std::move(out_obj), n, "keys");
    {
      nb::gil_scoped_release unlocked;
      // Columns in place when the array is column-major (element strides 1 and >= n).
      PinnedVector<uint32_t> scratch;
      classify::KeyBatch kb{keys.data(), uint32_t(n), uint32_t(n), rules_.layout};
      const bool in_place = n == 0 || (keys.stride(0) == 1 && keys.stride(1) >= int64_t(n) &&
                                       keys.stride(1) <= int64_t(0xFFFF'FFFFu));
      if (in_place) {
        kb.stride = n ? uint32_t(keys.stride(1)) : 0;
      } else {
        copied_.fetch_add(n, std::memory_order_relaxed);
        scratch.resize(n * words);
        for (size_t i = 0; i < n; ++i)
          for (unsigned w = 0; w < words; ++w)
            scratch[w * n + i] = keys.data()[i * keys.stride(0) + w * keys.stride(1)];
        kb.words = scratch.data();
      }
      ExecContext ctx;
      ctx.threads = threads;
      for (uint64_t off = 0; off < kb.count; off += batch) {
        const auto k = uint32_t(std::min<uint64_t>(batch, kb.count - off));
        check(engine_->classify(kb.slice(uint32_t(off), k), {answers.data + off, k}, ctx));
      }
    }
    return answers.object;
  }

  /// "+ INDEX RULE" through the update parser (the rule in the rule file's format).
  void insert(uint32_t index, const std::string& rule) {
    nb::gil_scoped_release unlocked;  // before the lock: a waiter must not hold the GIL
    std::lock_guard lock(update_mutex_);
    auto u = take(classify::parse_rule_updates("+ " + std::to_string(index) + " " + rule,
                                               "<insert>", format_, uint32_t(rules_.rules.size())));
    for (auto& x : u) {
      if (rules_.layout == KeyLayout::kFiveTuple) x.rule.priority = 0;
      check(engine_->insert(x.priority, x.rule));
    }
  }
  void erase(uint32_t index) {
    nb::gil_scoped_release unlocked;
    std::lock_guard lock(update_mutex_);
    check(engine_->erase(index));
  }

  nb::dict stats() const {
    const classify::ClassifierStats s = engine_->stats();
    nb::dict d;
    d["engine"]       = engine();
    d["rules"]        = s.rules;
    d["entries"]      = s.entries;
    d["classes"]      = s.classes;
    d["memory_bytes"] = s.memory_bytes;
    d["build_ms"]     = s.build_ms;
    d["detail"]       = s.detail;
    return d;
  }
  size_t size() const { return rules_.rules.size(); }
  uint64_t keys_copied() const { return copied_.load(std::memory_order_relaxed); }
  std::string layout() const { return rules_.layout == KeyLayout::kFiveTuple ? "5-tuple" : "openflow"; }

 private:
  std::string format_;
  classify::RuleSet rules_;
  std::unique_ptr<classify::Classifier> engine_;
  std::mutex update_mutex_;
  mutable std::atomic<uint64_t> copied_{0};  ///< keys_copied()
};

/// A trace file's keys as an (n, k) array in Fortran order (the engines' layout).
Array<uint32_t> load_keys(const std::string& path, const std::string& format) {
  KeyLayout layout;
  if (format == "classbench") {
    layout = KeyLayout::kFiveTuple;
  } else if (format == "openflow") {
    layout = KeyLayout::kOpenFlow;
  } else {
    throw StatusError(Status(Errc::kInvalidArgument,
                             "format '" + format + "': classbench or openflow"));
  }
  auto keys = std::make_unique<classify::KeyBuffer>(take(classify::load_keys(path, layout)));
  const classify::KeyBatch v = keys->view();
  const size_t n = v.count, k = classify::key_words(layout);
  return owned<uint32_t>(std::move(keys), const_cast<uint32_t*>(v.words), {n, k},
                         {1, int64_t(n)});
}

}  // namespace

void bind_classify(nb::module_& m) {
  m.attr("NO_MATCH") = classify::kNoMatch;
  nb::class_<PyClassifier>(
      m, "Classifier",
      "A packet classifier: a rule set compiled for one engine.\n\n"
      "Rules come from a ClassBench filter file (``format='classbench'``) or an ovs-ofctl flow "
      "file (``'openflow'``); ``classify`` answers an (n, k) uint32 key array with the index "
      "of the best matching rule of each key (``NO_MATCH`` for none). Classification runs "
      "without the GIL and may run on many threads at once; one thread at a time may update.")
      .def(nb::init<const std::string&, const std::string&, const std::string&,
                    const std::string&, bool, bool>(),
           nb::arg("rules"), nb::arg("format") = "classbench", nb::arg("algo") = "auto",
           nb::arg("engine") = "auto", nb::arg("validate") = false, nb::arg("updates") = false,
           "Compiles the rule file ``rules``. ``algo``: linear, tuple, bloom, rfc, tic, split, "
           "tuplemerge, overlay or auto; ``engine``: cpu, gpu, ref, auto or an engine id from "
           "``engines('classify')``; ``validate`` checks every batch against the reference "
           "engine; ``updates`` picks an engine that inserts and erases rules in place.")
      .def_prop_ro("engine", &PyClassifier::engine, "The engine id that answers (``cpu.rfc``).")
      .def_prop_ro("key_words", &PyClassifier::key_words, "Columns a key has: 4 or 9.")
      .def_prop_ro("layout", &PyClassifier::layout, "``'5-tuple'`` or ``'openflow'``.")
      .def("__len__", &PyClassifier::size, "Rules in the rule file.")
      .def_prop_ro("keys_copied", &PyClassifier::keys_copied,
                   "Keys copied so far because their array was not column-major (0 when every "
                   "call's keys were read in place).")
      .def("classify", &PyClassifier::classify, nb::arg("keys").noconvert(), nb::arg("out") = nb::none(),
           nb::arg("threads") = 1, nb::arg("batch") = 1u << 20,
           "The best rule of each key: ``keys`` an (n, key_words) uint32 array (read in place "
           "in Fortran order, copied once otherwise). Returns a uint32 array of rule indices, "
           "or fills ``out`` and returns it. ``batch``: keys per engine call.")
      .def("insert", &PyClassifier::insert, nb::arg("index"), nb::arg("rule"),
           "Inserts (or replaces) the rule of index ``index``, given as a line of the rule "
           "file's format; the classifier must have been built with ``updates=True``.")
      .def("erase", &PyClassifier::erase, nb::arg("index"),
           "Erases the rule of index ``index``; ``NotFoundError`` when there is none.")
      .def("stats", &PyClassifier::stats, "The engine's figures: rules, image bytes, build time.");
  m.def("load_keys", &load_keys, nb::arg("path"), nb::arg("format") = "classbench",
        "The keys of a trace file (a ClassBench trace, or an OpenFlow trace) as an (n, k) "
        "uint32 array in Fortran order, which ``Classifier.classify`` reads in place.");
}

}  // namespace warpath::py
