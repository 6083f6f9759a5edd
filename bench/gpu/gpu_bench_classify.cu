// bench/gpu/gpu_bench_classify.cu: warpath-gpu-bench's classification rows: GSwitch's sweeps and the ClassBench sets (gpu_bench.cuh).
#include "gpu/gpu_bench.cuh"

namespace warpath::gpu_bench {

Status classify_point(const std::string& engine, const std::string& sweep,
                      const classify::SyntheticParams& p, const std::vector<uint32_t>& batches,
                      int repeat, std::vector<ClassifyRow>& rows) {
  WARPATH_ASSIGN_OR_RETURN(auto set, classify::synthetic_rules(p));
  WARPATH_ASSIGN_OR_RETURN(auto gpu, classify::make_classifier(engine, set.rules));
  WARPATH_ASSIGN_OR_RETURN(auto ref, classify::make_classifier("ref.linear", set.rules));
  // Correctness first, on the first 4,096 keys.
  classify::KeyBuffer probe(set.keys.layout(), std::min<uint32_t>(4096, set.keys.size()));
  uint32_t key[classify::kMaxKeyWords];
  for (uint32_t i = 0; i < probe.size(); ++i) {
    set.keys.get(i, key);
    probe.set(i, key);
  }
  const std::string diff = classify::compare_classifier(*gpu, *ref, probe, {probe.size()});
  if (!diff.empty())
    return Status(Errc::kInvalidArgument, engine + " on " + set.rules.name + ": " + diff);
  PinnedVector<uint32_t> out(set.keys.size());
  ExecContext ctx;
  PinnedVector<uint32_t> words;
  const classify::KeyBatch all = classify::pinned_copy(set.keys.view(), words);
  for (uint32_t batch : batches) {
    batch       = std::min(batch, all.count);
    double best = 1e30;
    for (int r = 0; r < repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      WARPATH_TRY(gpu->classify(all.slice(0, batch), {out.data(), batch}, ctx));
      best = std::min(
          best,
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    rows.push_back({engine, sweep, p.rules, p.classes, p.full, p.matching, p.fields, batch, best,
                    batch / best});
  }
  return Status::ok();
}

// GSwitch Figures 5(b), 6(c), 7(a-c) and 8, with its defaults N = 1K, C = F = 128, Cm = 1,
// f = 12, 64K tuples per batch.
Status run_classify(int repeat, std::vector<ClassifyRow>& rows) {
  const std::vector<uint32_t> big = {65536};
  for (const std::string engine : {"cuda.linear", "cuda.tuple", "cuda.bloom", "cuda.tuplemerge"}) {
    classify::SyntheticParams base;
    base.rules = 1024, base.classes = 128, base.full = 128, base.matching = 1, base.fields = 12;
    base.tuples = 65536;
    WARPATH_TRY(
        classify_point(engine, "batch", base, {256, 1024, 4096, 16384, 65536}, repeat, rows));
    for (uint32_t c : {1u, 4u, 16u, 64u, 256u}) {  // Fig 6(c): full classes of 256 rules (to 64K)
      if (engine == "cuda.linear" && c > 64) continue;  // O(N) per key: the figure stops there
      auto p    = base;
      p.classes = p.full = c, p.rules = 256 * c;
      WARPATH_TRY(classify_point(engine, "rules", p, big, repeat, rows));
    }
    for (uint32_t c : {128u, 256u, 512u, 1024u}) {  // Fig 7(a): N = 32K
      if (engine == "cuda.linear") break;
      auto p  = base;
      p.rules = 32768, p.classes = p.full = c;
      WARPATH_TRY(classify_point(engine, "classes", p, big, repeat, rows));
    }
    for (uint32_t f : {4u, 16u, 64u, 128u}) {  // Fig 7(b)
      auto p = base;
      p.full = f;
      WARPATH_TRY(classify_point(engine, "full", p, big, repeat, rows));
    }
    for (uint32_t cm : {1u, 8u, 32u, 128u}) {  // Fig 7(c)
      auto p     = base;
      p.matching = cm;
      WARPATH_TRY(classify_point(engine, "matching", p, big, repeat, rows));
    }
    for (uint32_t fields : {5u, 12u}) {  // Fig 8
      auto p   = base;
      p.fields = fields;
      WARPATH_TRY(classify_point(engine, "fields", p, big, repeat, rows));
    }
  }
  return Status::ok();
}

Result<std::string> read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status(Errc::kNotFound, path + ": cannot open");
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The first b of n device-resident keys (columns of n words) as a batch of their own (columns
// of b words, the layout a resident call and launch_image read), in `compact` unless b == n.
Result<const uint32_t*> first_keys(const DeviceArray& keys, uint32_t n, uint32_t b,
                                   DeviceArray& compact) {
  if (b == n) return keys.as<uint32_t>();
  WARPATH_TRY(compact.reserve(size_t(b) * 16));
  WARPATH_CUDA_TRY(cudaMemcpy2D(compact.ptr, size_t(b) * 4, keys.ptr, size_t(n) * 4, size_t(b) * 4,
                                4, cudaMemcpyDeviceToDevice));
  return compact.as<uint32_t>();
}

// Kernel-only rows of one image engine: the image uploaded once, keys device-resident.
template <class Image, class View, class Lookup>
Status image_kernel_rows(const std::string& set, const char* engine, const classify::RuleSet& rules,
                         const DeviceArray& keys, uint32_t n, const std::vector<uint32_t>& want,
                         int repeat, std::vector<ClassBenchRow>& rows) {
  auto img = Image::build(rules, classify::detail::kRfcMaxImageBytes);
  if (!img.is_ok()) {
    rows.push_back({set, engine, "skipped", 0, 0, 0, 0, 0, img.status().message()});
    return Status::ok();
  }
  DeviceArray image, out, compact;
  WARPATH_TRY(image.reserve((*img)->bytes()));
  WARPATH_TRY(out.reserve(size_t(n) * sizeof(uint32_t)));
  WARPATH_CUDA_TRY(cudaMemcpy(image.ptr, (*img)->data(), (*img)->bytes(), cudaMemcpyHostToDevice));
  const View v = (*img)->view(image.as<uint8_t>());
  WARPATH_TRY((classify::detail::launch_image<View, Lookup>(v, keys.as<uint32_t>(), n,
                                                            out.as<uint32_t>(), nullptr)));
  std::vector<uint32_t> got(n);
  WARPATH_CUDA_TRY(cudaMemcpy(got.data(), out.ptr, size_t(n) * 4, cudaMemcpyDeviceToHost));
  for (uint32_t i = 0; i < n; ++i)
    if (got[i] != want[i]) {
      rows.push_back({set, engine, "mismatch", 0, 0, 0, 0, 0,
                      "kernel differs from the CPU at key " + std::to_string(i)});
      return Status::ok();
    }
  // A batch of b < n keys is the first b keys of each row, copied into rows of b words (the
  // layout launch_image reads); then the kernel alone is timed.
  for (uint32_t b = 1u << 16;; b = std::min(b * 4, n)) {
    WARPATH_ASSIGN_OR_RETURN(const uint32_t* k, first_keys(keys, n, b, compact));
    WARPATH_ASSIGN_OR_RETURN(float ms, time_kernel(
                                           repeat,
                                           [&] {
                                             return classify::detail::launch_image<View, Lookup>(
                                                 v, k, b, out.as<uint32_t>(), nullptr);
                                           },
                                           launches_for(b)));
    rows.push_back({set, engine, "kernel", b, ms * 1e3, b / (ms * 1e3), 0, (*img)->bytes(), ""});
    if (b == n) break;
  }
  return Status::ok();
}

// Resident rows of one engine: its classify call on keys and answers already in device memory
// (ExecContext::resident, the offload master's path: no copies; the launch and the wait
// included), the kernel-only figure for the engines whose kernels have no launch function of
// their own (linear, tuple, bloom, tuplemerge). First the resident answers to all n keys are
// checked against the CPU's: the resident path is not the one the end-to-end rows take.
Status resident_rows(const std::string& set, const std::string& engine,
                     const classify::Classifier& gpu, const DeviceArray& keys, uint32_t n,
                     const std::vector<uint32_t>& want, int repeat,
                     std::vector<ClassBenchRow>& rows) {
  if (!gpu.takes_device_memory()) return Status::ok();
  DeviceArray out, compact;
  WARPATH_TRY(out.reserve(size_t(n) * 4));
  ExecContext ctx;
  ctx.resident                     = true;
  const classify::KeyLayout layout = classify::KeyLayout::kFiveTuple;
  WARPATH_TRY(gpu.classify({keys.as<uint32_t>(), n, n, layout}, {out.as<uint32_t>(), n}, ctx));
  std::vector<uint32_t> got(n);
  WARPATH_CUDA_TRY(cudaMemcpy(got.data(), out.ptr, size_t(n) * 4, cudaMemcpyDeviceToHost));
  for (uint32_t i = 0; i < n; ++i)
    if (got[i] != want[i]) {
      rows.push_back({set, engine, "mismatch", 0, 0, 0, 0, 0,
                      "resident call differs from the CPU at key " + std::to_string(i) + ": " +
                          std::to_string(got[i]) + " vs " + std::to_string(want[i])});
      return Status::ok();
    }
  for (uint32_t b = 256; b <= n; b *= 4) {
    WARPATH_ASSIGN_OR_RETURN(const uint32_t* k, first_keys(keys, n, b, compact));
    // cuda.linear is O(rules) per key: a few rounds are enough for a minimum.
    WARPATH_ASSIGN_OR_RETURN(
        float ms, time_kernel(
                      std::min(repeat, 5),
                      [&] {
                        return gpu.classify({k, b, b, layout}, {out.as<uint32_t>(), b}, ctx);
                      },
                      launches_for(b)));
    rows.push_back(
        {set, engine, "resident", b, ms * 1e3, b / (ms * 1e3), 0, gpu.stats().memory_bytes, ""});
  }
  return Status::ok();
}

Status run_classbench(const std::string& data, int repeat, std::vector<ClassBenchRow>& rows) {
  constexpr uint32_t kKeys = 1u << 20;
  for (const std::string set : {"acl1_10K", "fw1_10K", "ipc1_10K"}) {
    const std::string path = data + "/classbench/wustl_5tuple/" + set;
    auto rule_text         = read_text(path);
    auto trace_text        = read_text(path + "_trace");
    if (!rule_text.is_ok() || !trace_text.is_ok()) {
      rows.push_back({set, "-", "skipped", 0, 0, 0, 0, 0,
                      (rule_text.is_ok() ? trace_text : rule_text).status().message()});
      continue;
    }
    WARPATH_ASSIGN_OR_RETURN(auto cb, io::parse_classbench_rules(*rule_text, path));
    WARPATH_ASSIGN_OR_RETURN(auto trace, io::parse_trace(*trace_text, path + "_trace"));
    const classify::RuleSet rules  = classify::from_classbench(cb, set);
    const classify::KeyBuffer base = classify::keys_from_trace(trace);
    classify::KeyBuffer keys(classify::KeyLayout::kFiveTuple, kKeys);
    uint32_t key[classify::kMaxKeyWords];
    for (uint32_t i = 0; i < kKeys; ++i) {
      base.get(i % base.size(), key);
      keys.set(i, key);
    }
    // The answers: the best CPU engine (auto's pick among cpu.*).
    WARPATH_ASSIGN_OR_RETURN(auto cpu, classify::make_best_classifier(rules, "cpu."));
    std::vector<uint32_t> want(kKeys);
    PinnedVector<uint32_t> got(kKeys);
    PinnedVector<uint32_t> pinned_words;
    const classify::KeyBatch pk = classify::pinned_copy(keys.view(), pinned_words);
    ExecContext ctx;
    DeviceArray d_keys;  // the keys on the device, for the resident and kernel-only rows
    WARPATH_TRY(d_keys.reserve(size_t(kKeys) * 16));
    WARPATH_CUDA_TRY(cudaMemcpy2D(d_keys.ptr, size_t(kKeys) * 4, pk.words, size_t(pk.stride) * 4,
                                  size_t(kKeys) * 4, 4, cudaMemcpyHostToDevice));
    WARPATH_TRY(cpu->classify(keys.view(), {want.data(), kKeys}, ctx));
    for (const std::string engine :
         {"cuda.linear", "cuda.tuple", "cuda.bloom", "cuda.rfc", "cuda.tic", "cuda.split",
          "cuda.tuplemerge"}) {
      const auto t0 = std::chrono::steady_clock::now();
      auto gpu      = classify::make_classifier(engine, rules);
      const double build_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (!gpu.is_ok()) {
        rows.push_back({set, engine, "skipped", 0, 0, 0, 0, 0, gpu.status().message()});
        continue;
      }
      WARPATH_TRY((*gpu)->classify(pk, {got.data(), kKeys}, ctx));
      // A wrong answer is a row of its own (and a failed run), so the other engines still run.
      uint32_t bad = kKeys;
      for (uint32_t k = 0; k < kKeys && bad == kKeys; ++k)
        if (got[k] != want[k]) bad = k;
      if (bad != kKeys) {
        rows.push_back({set, engine, "mismatch", 0, 0, 0, 0, 0,
                        "differs from " + std::string(cpu->id()) + " at key " +
                            std::to_string(bad) + ": " + std::to_string(got[bad]) + " vs " +
                            std::to_string(want[bad])});
        continue;
      }
      for (uint32_t b = 256; b <= kKeys; b *= 4) {
        double best = 1e30;
        // cuda.linear is O(rules) per key: a few passes of 1M keys are enough for a minimum.
        for (int r = 0; r < std::min(repeat, 5); ++r) {
          const auto t1 = std::chrono::steady_clock::now();
          WARPATH_TRY((*gpu)->classify(pk.slice(0, b), {got.data(), b}, ctx));
          best = std::min(
              best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t1)
                        .count());
        }
        rows.push_back({set, engine, "end_to_end", b, best, b / best, build_ms,
                        (*gpu)->stats().memory_bytes, ""});
      }
      WARPATH_TRY(resident_rows(set, engine, **gpu, d_keys, kKeys, want, repeat, rows));
    }
    using namespace classify::detail;
    namespace core = classify::core;
    WARPATH_TRY((image_kernel_rows<RfcImage, core::RfcView, RfcLookup>(
        set, "cuda.rfc", rules, d_keys, kKeys, want, repeat, rows)));
    WARPATH_TRY((image_kernel_rows<TicImage, core::TicView, TicLookup>(
        set, "cuda.tic", rules, d_keys, kKeys, want, repeat, rows)));
    WARPATH_TRY((image_kernel_rows<SplitImage, core::SplitView, SplitLookup>(
        set, "cuda.split", rules, d_keys, kKeys, want, repeat, rows)));
  }
  return Status::ok();
}

}  // namespace warpath::gpu_bench
