// src/pattern/engines.hpp: factories of the pattern engines, used only by
// pattern_registry.cpp.
#pragma once
#include <memory>
#include <vector>

#include "warpath/pattern/pattern.hpp"

struct hs_database;  // Vectorscan's hs_database_t (hs/hs.h)
struct hs_scratch;   // hs_scratch_t

namespace warpath::pattern::detail {

struct AcImage;
struct DfaSet;

Result<std::unique_ptr<Matcher>> make_ref_matcher(const std::vector<Pattern>& patterns);
/// cpu.ac (states past kAcDenseDepth sparse) or, `full`, cpu.ac.full (every state a full row).
Result<std::unique_ptr<Matcher>> make_ac_cpu_matcher(const std::vector<Pattern>& patterns, bool full = false);
Result<std::unique_ptr<Matcher>> make_dfa_cpu_matcher(const std::vector<Pattern>& patterns);
/// What a GPU engine shares with its CPU twin (made by the factories above): cpu.ac's automaton,
/// cpu.dfa's groups and fallback (null when none), so they are built once.
const AcImage& ac_image_of(const Matcher& cpu_ac);
const DfaSet& dfa_set_of(const Matcher& cpu_dfa);
Matcher* dfa_fallback_of(const Matcher& cpu_dfa);
/// The matcher of the patterns no DFA takes: Vectorscan when built and it takes them all, else
/// ref.pattern; null for none.
Result<std::unique_ptr<Matcher>> make_dfa_fallback(const std::vector<Pattern>& rest);
/// 40 literals, "k10".."k49" (every fourth followed by "-spanning-key"), over which Debian's
/// Vectorscan 5.4.9 misses "k33" after a run of one byte at offsets 64-67, 76-91, ... in its
/// AVX-512 variant (its issue 317): cpu.hs's canary, and a regression test of every engine.
std::vector<Pattern> vectorscan_miss_patterns();
#if defined(WARPATH_HAVE_HS)
/// The Vectorscan block-mode database cpu.hs builds (hs_database_t; the caller frees it with
/// hs_free_database): for the benchmark's raw hs_scan anchor, the same database without warpath.
Result<::hs_database*> hs_block_database(const std::vector<Pattern>& patterns);
/// cpu.hs over `patterns`: the block database compiled now, the streaming one at the first
/// stream; or, with `streams`, the other way round.
Result<std::unique_ptr<Matcher>> make_hs_matcher(const std::vector<Pattern>& patterns,
                                                 bool streams = false);
/// Whether Vectorscan compiles `p` alone.
Status hs_supports(const Pattern& p);
/// The library's entry points cpu.hs calls (hs_matcher.cpp, hs_runtime): "dispatched" (hs_scan
/// and the rest, which pick a variant for the CPU), "avx2" (the fat build's AVX2 variants,
/// where the dispatched ones miss matches: Vectorscan 5.4.9's AVX-512 variant), or "none"
/// (neither finds them all: cpu.hs is not available). Decided at the first call.
const char* hs_entry_points();
bool hs_available();
const char* hs_library_version();  ///< hs_version(): "5.4.9 2024-...".
/// The hs_scan cpu.hs calls (the benchmarks' raw block-mode anchors call it, so that they find
/// what cpu.hs finds): hs_error_t f(db, data, len, flags, scratch, on_match, ctx).
using HsScanFn = int (*)(const ::hs_database*, const char*, unsigned, unsigned,
                         struct ::hs_scratch*,
                         int (*)(unsigned, unsigned long long, unsigned long long, unsigned, void*),
                         void*);
HsScanFn hs_scan_entry();
#endif
#if defined(WARPATH_HAVE_PCRE2)
Result<std::unique_ptr<Matcher>> make_pcre2_matcher(const std::vector<Pattern>& patterns);
#endif
#if defined(WARPATH_HAVE_CUDA)
Result<std::unique_ptr<Matcher>> make_ac_cuda_matcher(const std::vector<Pattern>& patterns);
Result<std::unique_ptr<Matcher>> make_dfa_cuda_matcher(const std::vector<Pattern>& patterns);
#endif

}  // namespace warpath::pattern::detail
