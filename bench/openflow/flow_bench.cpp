// bench/openflow/flow_bench.cpp: warpath-flow-bench, the OpenFlow switch's flow table beside
// DPDK's rte_hash.
//
// What it measures, one core (pin it: taskset -c 1), per table size (--flows, default 1K,
// 100K and 1M exact-match flows of random 12-tuples):
//   rte_hash.bulk32 / .bulk64   rte_hash_lookup_bulk_data over the same 36-byte keys, bursts of
//                               32 / 64 (the anchor; bench/anchors/dpdk_hash.cpp, -O3
//                               -march=native)
//   rte_hash.k48.bulk32 / 64    the same keys padded to 48 bytes, queries padded before timing
//                               (rte_hash's key slots are then one cache line, not 48 bytes
//                               that cross one half the time: hash_anchor.hpp); the best
//                               rte_hash row of a size is the anchor
//   warpath.exact.bN            FlowImage::lookup (the switch module's lookup: hash, prefetch,
//                               compare; exact-match table first, then the wildcard subtables,
//                               of which there are none here) in bursts of N = 32, 64, 256,
//                               with the per-key steps of the best instruction set the CPU
//                               has (AVX-512VL, else SSE2)
//   warpath.exact.sse2.b64      the same with the SSE2 steps (where AVX-512VL was picked)
// over the same uniformly random sequence of hits (--lookups, default 4M: cold, the keys
// streamed from memory, on huge pages unless --key-pages 4k: KeySeq), and again (".hot" rows)
// over its first 16,384 keys repeated (in L2, as a frame's keys are when the switch looks them
// up; fewer distinct flows touched). Every row's answers are checked against the keys' flow
// ids before it is timed. Each row runs --repeat times (default 3) for --seconds (default 0.5)
// each; the best run is reported (the machine's noise only ever slows a run), with the ratio
// to the best rte_hash row of the same size.
// Also measured: building the image (FlowImage::build) per size: what one published flow_mod
// costs the agent when a change forces a full build, and wildcard tables (--subtables masks
// of 1,000 and of 10,000 flows each) in bursts of 64, without an anchor, before and after a
// churn of delete+add pairs each published incrementally (wildcard_rows()).
//
// Output (bench/harness/report.hpp): a markdown table on stdout, and with --json FILE the
// rows with the machine, the commit and the command (bench/results/ keeps them).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "core/huge_pages.hpp"
#include "harness/report.hpp"
#include "warpath/classify/classifier.hpp"
#include "warpath/core/version.hpp"
#include "warpath/openflow/flow_table.hpp"

#ifdef WARPATH_HAVE_DPDK
#include "hash_anchor.hpp"
#include "lookup_anchor.hpp"
#endif

namespace {

using namespace warpath;
using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<uint32_t> flows = {1000, 100000, 1000000};
  uint32_t lookups            = 4u << 20;
  uint32_t subtables          = 16;
  double seconds              = 0.5;
  int repeat                  = 3;
  int lcore                   = 1;
  bool huge_keys              = true;  ///< --key-pages huge (else 4k)
  std::string json;
};

// What the key sequence was on: huge pages are advice (madvise), which a machine with
// transparent huge pages off does not take.
std::string key_pages_text(const Options& o) {
  if (!o.huge_keys) return "4 KB pages";
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode((std::istreambuf_iterator<char>(thp)), std::istreambuf_iterator<char>());
  if (mode.find("[never]") != std::string::npos)
    return "4 KB pages (transparent huge pages are off here)";
  return "transparent huge pages (" +
         std::string(mode.find("[always]") != std::string::npos ? "always" : "madvise") + ")";
}

// The sequence of keys looked up: on transparent huge pages (--key-pages huge, the default), as
// a DPDK application's packets are (mbufs on hugepages, where rte_hash's tables are too), or on
// 4 KB pages (--key-pages 4k). Streamed from memory, 4 KB pages cost warpath about a tenth at
// 1K flows (a page walk and a restarted hardware prefetch every 113 keys) and rte_hash's best
// burst nothing measurable (bench/results/flow-cpu-2026-11-26-*-keypages.md).
template <class Key>
class KeySeqOf {
 public:
  KeySeqOf(size_t n, bool huge) : huge_(huge) { huge ? big_.resize(n) : small_.resize(n); }
  KeySeqOf(const KeySeqOf& from, size_t n) : KeySeqOf(n, from.huge_) {  // its first n, alike
    std::copy(from.data(), from.data() + n, data());
  }
  Key* data() { return huge_ ? big_.data() : small_.data(); }
  const Key* data() const { return huge_ ? big_.data() : small_.data(); }
  size_t size() const { return huge_ ? big_.size() : small_.size(); }
  Key& operator[](size_t i) { return data()[i]; }
  const Key& operator[](size_t i) const { return data()[i]; }
  Key* begin() { return data(); }
  Key* end() { return data() + size(); }

 private:
  bool huge_;
  detail::LargeVector<Key> big_;
  std::vector<Key> small_;
};
using KeySeq = KeySeqOf<packet::OfTuple>;

using bench::Row;

/// A row of `flows` flows: its workload says the size and whether the keys were hot (the
/// anchor of a row is the fastest rte_hash row of its workload).
Row flow_row(size_t flows, const std::string& kind, const std::string& engine, double rate,
             bool anchor = false) {
  Row r;
  r.workload = std::to_string(flows) + (kind.empty() ? "" : " " + kind);
  r.engine   = engine;
  r.anchor   = anchor;
  r.unit     = "lookups";
  r.rate     = rate;
  r.with("flows", int64_t(flows));
  return r;
}

packet::OfTuple random_exact_key(std::mt19937_64& rng) {
  packet::OfFields f;
  f.in_port = uint16_t(1 + rng() % 8);
  f.dl_vlan = packet::kOfNoVlan;
  for (int i = 0; i < 6; ++i) f.dl_src[i] = uint8_t(rng()), f.dl_dst[i] = uint8_t(rng());
  f.dl_type  = openflow::kEthIp;
  f.nw_proto = rng() % 2 ? 6 : 17;
  f.nw_tos   = uint8_t(rng() & 0xfc);
  f.nw_src   = uint32_t(rng());
  f.nw_dst   = uint32_t(rng());
  f.tp_src   = uint16_t(rng());
  f.tp_dst   = uint16_t(rng());
  return packet::of_pack(f);
}

// Best lookups/s of `fn(keys, n)` over the sequence, in bursts.
template <class Seq, class Fn>
double best_rate(const Options& o, const Seq& seq, uint32_t burst, Fn fn) {
  std::vector<uint32_t> ids(burst);
  double best = 0;
  for (int r = 0; r < o.repeat; ++r) {
    uint64_t done = 0;
    size_t at     = 0;
    const auto t0 = Clock::now();
    double el     = 0;
    do {
      for (int k = 0; k < 64; ++k) {
        if (at + burst > seq.size()) at = 0;
        fn(&seq[at], burst, ids.data());
        at += burst;
        done += burst;
      }
      el = std::chrono::duration<double>(Clock::now() - t0).count();
    } while (el < o.seconds);
    best = std::max(best, double(done) / el);
  }
  return best;
}

bool parse_list(const char* s, std::vector<uint32_t>& out) {
  out.clear();
  std::string t = s;
  size_t p      = 0;
  while (p <= t.size()) {
    size_t e = t.find(',', p);
    if (e == std::string::npos) e = t.size();
    const std::string item = t.substr(p, e - p);
    char* end              = nullptr;
    const unsigned long v  = std::strtoul(item.c_str(), &end, 10);
    if (item.empty() || *end || v == 0 || v > (1u << 24)) return false;
    out.push_back(uint32_t(v));
    p = e + 1;
  }
  return !out.empty();
}


// A wildcard table of `subtables` masks with `per_mask` flows each (random priorities), looked
// up in bursts of 64 by keys that hit it; then churned as a proactive controller churns it:
// one flow deleted (strictly) and a new one of the same mask added, an image published after
// each pair (FlowImage::publish, as the agent does at a barrier), until just before the
// changes would force a full build. Reported: the publish time per pair (mean, p99, max)
// beside a full build's, and the lookups on the last incremental image (its override tables
// hold every change).
void wildcard_rows(const Options& o, uint32_t per_mask, std::vector<Row>& rows,
                   std::vector<std::string>& notes) {
  std::mt19937_64 rng(77 + per_mask);
  openflow::FlowTable table;
  std::vector<uint32_t> wcs;
  for (uint32_t t = 0; t < o.subtables; ++t) {
    const uint32_t wc = uint32_t(rng()) & (openflow::kWcInPort | openflow::kWcDlSrc | openflow::kWcDlDst |
                                           openflow::kWcTpSrc | openflow::kWcTpDst | openflow::kWcNwTos);
    const unsigned src_len = unsigned(8 + rng() % 25), dst_len = unsigned(8 + rng() % 25);
    wcs.push_back(wc | (32 - src_len) << openflow::kWcNwSrcShift | (32 - dst_len) << openflow::kWcNwDstShift);
  }
  auto flow = [&](uint32_t mask_index, packet::OfTuple& key) {
    key = random_exact_key(rng);
    openflow::FlowSpec s;
    s.match    = openflow::make_match(packet::of_unpack(key), wcs[mask_index]);
    s.priority = uint16_t(1 + rng() % 1000);
    s.actions.push_back(openflow::Action{});
    s.actions[0].port = 1;
    return s;
  };
  std::vector<packet::OfTuple> keys;
  std::vector<openflow::FlowSpec> live;
  for (uint32_t t = 0; t < o.subtables; ++t)
    for (uint32_t i = 0; i < per_mask; ++i) {
      packet::OfTuple k;
      openflow::FlowSpec s = flow(t, k);
      if (table.apply(openflow::FlowModCommand::kAdd, s, 0).added) keys.push_back(k), live.push_back(s);
    }
  const auto b0 = Clock::now();
  Result<std::shared_ptr<const openflow::FlowImage>> img = openflow::FlowImage::publish(nullptr, table, 8);
  const double build_us = std::chrono::duration<double, std::micro>(Clock::now() - b0).count();
  if (!img.is_ok() || keys.empty()) return;
  KeySeq seq(o.lookups, o.huge_keys);
  for (auto& k : seq) k = keys[rng() % keys.size()];
  auto measure = [&](const openflow::FlowImage& im, const std::string& name) {
    const double r = best_rate(o, seq, 64, [&](const packet::OfTuple* k, uint32_t c, uint32_t* ids) {
      im.lookup({k, c}, {ids, c});
    });
    rows.push_back(flow_row(table.size(), "wildcard", name, r));
  };
  measure(**img, "warpath.wildcard.b64 (" + std::to_string((*img)->subtables()) + " subtables)");
  // The same flows as classification rules (OpenFlow layout) in the updatable classifier of
  // the classify module: TupleMerge, measured on the same keys.
  {
    classify::RuleSet rs;
    rs.layout = classify::KeyLayout::kOpenFlow;
    const std::vector<const openflow::FlowEntry*> by_rank = table.entries();  // index: precedence
    for (const openflow::FlowEntry* e : by_rank) {
      classify::Rule r;
      const packet::OfTuple v = e->spec.match.value(), m = e->spec.match.mask();
      for (int w = 0; w < packet::kOfWords; ++w) r.value[w] = v.w[w], r.mask[w] = m.w[w];
      r.priority = e->spec.priority;
      rs.rules.push_back(r);
    }
    classify::ClassifyParams params;
    params.updates = true;
    auto tm        = classify::make_classifier("cpu.tuplemerge", rs, params);
    if (tm.is_ok()) {
      classify::KeyBuffer kb(classify::KeyLayout::kOpenFlow, uint32_t(seq.size()));
      for (uint32_t i = 0; i < seq.size(); ++i) kb.set(i, seq[i].w);
      const classify::KeyBatch all = kb.view();
      ExecContext ctx;
      // Checked before it is timed: the same flow as the flow image's for every key.
      const uint32_t checked = std::min<uint32_t>(uint32_t(seq.size()), 4096);
      std::vector<uint32_t> out(checked), ids(checked);
      (void)(*tm)->classify(all.slice(0, checked), {out.data(), checked}, ctx);
      (*img)->lookup({seq.data(), checked}, {ids.data(), checked});
      for (uint32_t i = 0; i < checked; ++i)
        if ((out[i] == classify::kNoMatch ? openflow::kNoFlow : by_rank[out[i]]->id) != ids[i]) {
          std::fprintf(stderr, "warpath-flow-bench: cpu.tuplemerge and the flow image differ on key %u\n", i);
          std::exit(1);
        }
      size_t at = 0;
      const double r = best_rate(o, seq, 64, [&](const packet::OfTuple*, uint32_t c, uint32_t*) {
        if (at + c > seq.size()) at = 0;
        (void)(*tm)->classify(all.slice(uint32_t(at), c), {out.data(), c}, ctx);
        at += c;
      });
      const std::string name = "classify cpu.tuplemerge.b64 (" + std::to_string((*tm)->stats().classes) + " tables)";
      rows.push_back(flow_row(table.size(), "wildcard", name, r));
    }
  }
  std::shared_ptr<const openflow::FlowImage> cur = *img;
  std::vector<double> us;
  size_t changes = 0;
  const size_t limit = std::max<size_t>(4096, table.size() / 16);
  while (changes + 2 <= limit) {
    const size_t victim = rng() % live.size();
    openflow::FlowSpec del = live[victim];
    del.actions.clear();
    table.apply(openflow::FlowModCommand::kDeleteStrict, del, 0);
    packet::OfTuple k;
    live[victim] = flow(uint32_t(rng() % o.subtables), k);
    table.apply(openflow::FlowModCommand::kAdd, live[victim], 0);
    changes += 2;
    const auto t0 = Clock::now();
    Result<std::shared_ptr<const openflow::FlowImage>> next = openflow::FlowImage::publish(cur, table, 8);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (!next.is_ok() || !(*next)->incremental()) {
      std::fprintf(stderr, "warpath-flow-bench: a wildcard change was not published incrementally\n");
      std::exit(1);
    }
    cur = *next;
  }
  // Checked before it is timed: the churned image answers as the reference does.
  for (size_t i = 0; i < 2000; ++i) {
    const packet::OfTuple& k = seq[i];
    const openflow::FlowEntry* e = table.lookup(k);
    if (cur->lookup_one(k) != (e ? e->id : openflow::kNoFlow)) {
      std::fprintf(stderr, "warpath-flow-bench: the churned wildcard image answers key %zu wrongly\n", i);
      std::exit(1);
    }
  }
  measure(*cur, "warpath.wildcard.b64 incremental (" + std::to_string(changes) + " changes)");
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double u : us) sum += u;
  char line[256];
  std::snprintf(line, sizeof line,
                "%zu wildcard flows: full build %.0f us; %zu delete+add pairs published incrementally: "
                "mean %.1f us, p99 %.1f us, max %.1f us",
                table.size(), build_us, us.size(), sum / double(us.size()),
                us[std::min(us.size() - 1, us.size() * 99 / 100)], us.back());
  notes.push_back(line);
}

/// The exact-match rows of one table size: rte_hash (when `anchors`) and warpath's lookups,
/// cold and hot. Its image build time goes in the notes.
void exact_rows(const Options& o, uint32_t n, bool anchors, std::vector<Row>& rows,
                std::vector<std::string>& notes) {
  std::mt19937_64 rng(n);
  std::vector<packet::OfTuple> keys;
  keys.reserve(n);
  openflow::FlowTable table(std::max<uint32_t>(n, 1));
  for (uint32_t i = 0; i < n; ++i) {
    const packet::OfTuple k = random_exact_key(rng);
    openflow::FlowSpec s;
    s.match = openflow::make_match(packet::of_unpack(k), 0);
    s.actions.push_back(openflow::Action{});
    s.actions[0].port = 1;
    if (!table.apply(openflow::FlowModCommand::kAdd, s, 0).ok()) continue;
    keys.push_back(k);  // id = keys.size() - 1 (a fresh table hands out ids in order)
  }
  const auto b0 = Clock::now();
  Result<std::shared_ptr<const openflow::FlowImage>> img = openflow::FlowImage::build(table, 8);
  const double build_ms = std::chrono::duration<double, std::milli>(Clock::now() - b0).count();
  if (!img.is_ok()) {
    std::fprintf(stderr, "warpath-flow-bench: %s\n", img.status().message().c_str());
    std::exit(1);
  }
  notes.push_back(std::to_string(keys.size()) + " flows: image built in " +
                  std::to_string(int(build_ms)) + " ms");
  KeySeq seq(o.lookups, o.huge_keys);
  std::vector<uint32_t> want(o.lookups);
  for (uint32_t i = 0; i < o.lookups; ++i) {
    want[i] = uint32_t(rng() % keys.size());
    seq[i]  = keys[want[i]];
  }
  auto check_on = [&](const auto& keys_seq, auto fn, uint32_t burst, const std::string& name) {
    std::vector<uint32_t> ids(burst);
    for (uint32_t at = 0; at + burst <= std::min<uint32_t>(o.lookups, 1u << 16); at += burst) {
      fn(&keys_seq[at], burst, ids.data());
      for (uint32_t k = 0; k < burst; ++k)
        if (ids[k] != want[at + k]) {
          std::fprintf(stderr, "warpath-flow-bench: %s answers %u for key %u, not %u\n",
                       name.c_str(), ids[k], at + k, want[at + k]);
          std::exit(1);
        }
    }
  };
#ifdef WARPATH_HAVE_DPDK
  // The 36-byte keys as they are, and padded to 48 bytes (hash_anchor.hpp): a row each.
  std::unique_ptr<bench::HashAnchor> anchor_table[2];
  KeySeqOf<bench::PaddedOfTuple> padded_seq(anchors ? o.lookups : 0, o.huge_keys);
  for (size_t i = 0; i < padded_seq.size(); ++i) padded_seq[i].key = seq[i];
  for (int padded = 0; padded < 2 && anchors; ++padded) {
    Result<std::unique_ptr<bench::HashAnchor>> h = bench::HashAnchor::build(keys, padded);
    if (h.is_ok())
      anchor_table[padded] = std::move(*h);
    else
      std::fprintf(stderr, "warpath-flow-bench: rte_hash: %s\n", h.status().message().c_str());
  }
#else
  (void)anchors;
#endif
  const openflow::FlowImage& im = **img;
  // Cold: the whole sequence (keys streamed from memory, as 20M random lookups are); hot: its
  // first 16,384 keys over and over (in L2, as a frame's keys are when a switch looks them up).
  for (const bool hot : {false, true}) {
    const KeySeq part(seq, hot ? std::min<uint32_t>(o.lookups, 16384) : o.lookups);
    const std::string suffix = hot ? ".hot" : "";
    // Checked on the whole sequence (when cold), then timed on the part.
    auto measure = [&](const auto& all, const auto& timed, auto fn, uint32_t burst,
                       const std::string& name, bool anchor) {
      if (!hot) check_on(all, fn, burst, name);
      rows.push_back(flow_row(keys.size(), hot ? "hot" : "", name,
                              best_rate(o, timed, burst, fn), anchor));
    };
#ifdef WARPATH_HAVE_DPDK
    const KeySeqOf<bench::PaddedOfTuple> padded_part(
        padded_seq, std::min<size_t>(padded_seq.size(), part.size()));
    for (int padded = 0; padded < 2; ++padded) {
      if (!anchor_table[padded]) continue;
      for (uint32_t burst : {32u, 64u}) {
        if (hot && burst == 32) continue;
        const bench::HashAnchor& a = *anchor_table[padded];
        auto fn = [&](const auto* k, uint32_t c, uint32_t* ids) { a.lookup_bulk(k, c, ids); };
        const std::string name = std::string(padded ? "rte_hash.k48.bulk" : "rte_hash.bulk") +
                                 std::to_string(burst) + suffix;
        if (padded)
          measure(padded_seq, padded_part, fn, burst, name, true);
        else
          measure(seq, part, fn, burst, name, true);
      }
    }
#endif
    for (uint32_t burst : {32u, 64u, 256u}) {
      if (hot && burst != 64) continue;
      auto fn = [&](const packet::OfTuple* k, uint32_t c, uint32_t* ids) {
        im.lookup({k, c}, {ids, c});
      };
      measure(seq, part, fn, burst, "warpath.exact.b" + std::to_string(burst) + suffix, false);
    }
    // The SSE2 steps beside the AVX-512 ones lookup() picks on this CPU (one burst).
    if (openflow::FlowImage::has_isa(openflow::FlowImage::LookupIsa::kAvx512)) {
      auto fn = [&](const packet::OfTuple* k, uint32_t c, uint32_t* ids) {
        im.lookup({k, c}, {ids, c}, openflow::FlowImage::LookupIsa::kSse2);
      };
      measure(seq, part, fn, 64, "warpath.exact.sse2.b64" + suffix, false);
    }
  }
}

/// The options; exits 2 (with the usage) on a bad one, 0 on --help.
Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next           = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "warpath-flow-bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--flows") {
      if (!parse_list(next(), o.flows)) {
        std::fprintf(stderr, "warpath-flow-bench: --flows: a list of sizes 1..16777216\n");
        std::exit(2);
      }
    } else if (a == "--lookups") {
      o.lookups = uint32_t(std::strtoul(next(), nullptr, 10));
    } else if (a == "--subtables") {
      o.subtables = uint32_t(std::strtoul(next(), nullptr, 10));
    } else if (a == "--seconds") {
      o.seconds = std::strtod(next(), nullptr);
    } else if (a == "--repeat") {
      o.repeat = std::max(1, std::atoi(next()));
    } else if (a == "--lcore") {
      o.lcore = std::atoi(next());
    } else if (a == "--key-pages") {
      const std::string v = next();
      if (v != "huge" && v != "4k") {
        std::fprintf(stderr, "warpath-flow-bench: --key-pages: huge or 4k\n");
        std::exit(2);
      }
      o.huge_keys = v == "huge";
    } else if (a == "--json") {
      o.json = next();
    } else {
      std::fprintf(stderr,
                   "usage: warpath-flow-bench [--flows 1000,100000,1000000] [--lookups N] "
                   "[--subtables N] [--seconds S] [--repeat N] [--lcore CPU] [--key-pages huge|4k] "
                   "[--json FILE]\n");
      std::exit(a == "--help" ? 0 : 2);
    }
  }
  if (o.lookups < 256 || o.seconds <= 0) {
    std::fprintf(stderr, "warpath-flow-bench: --lookups >= 256 and --seconds > 0\n");
    std::exit(2);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  if (!bench::writable_or_say("warpath-flow-bench", o.json))
    return 1;  // at once, not after the passes
#ifdef WARPATH_HAVE_DPDK
  // rte_hash at its best: on hugepages when this machine has them free (`echo 1024 >
  // /proc/sys/vm/nr_hugepages` and a hugetlbfs mount), as DPDK deployments run.
  bench::DpdkOptions dpdk;
  dpdk.lcore       = o.lcore;
  dpdk.memory_mb   = 1024;
  const Status eal = bench::dpdk_start(dpdk);
  if (!eal.is_ok())
    std::fprintf(stderr, "warpath-flow-bench: %s (no anchor rows)\n", eal.message().c_str());
  const bool anchors            = eal.is_ok();
  const std::string memory_note = std::string("rte_hash memory: ") + bench::dpdk_pages_text() +
                                  "; warpath's tables: transparent huge pages (madvise)";
#else
  const bool anchors            = false;
  const std::string memory_note = "no DPDK in this build: no rte_hash rows";
#endif
  std::vector<Row> rows;
  std::vector<std::string> notes = {memory_note + "; the key sequence: " + key_pages_text(o)};
  for (uint32_t n : o.flows) {
    std::fprintf(stderr, "warpath-flow-bench: %u exact-match flows\n", n);
    exact_rows(o, n, anchors, rows, notes);
  }
  for (uint32_t per_mask : {1000u, 10000u}) {
    std::fprintf(stderr, "warpath-flow-bench: wildcard flows, %u a mask\n", per_mask);
    wildcard_rows(o, per_mask, rows, notes);
  }
  bench::ratios_to_best_anchor(rows);
  bench::print_table(stdout,
                     {bench::workload_column("flows"), bench::engine_column(),
                      bench::rate_column("M lookups/s"), bench::ns_column("ns/lookup"),
                      bench::ratio_column("vs best rte_hash")},
                     rows);
  for (const std::string& n : notes) std::printf("\n%s", n.c_str());
  std::printf("\n");
  if (!o.json.empty() &&
      !bench::write_results(o.json, bench::provenance("warpath-flow-bench", argc, argv, o.lcore),
                            {{"lookups", int64_t(o.lookups)},
                             {"seconds", o.seconds},
                             {"repeat", int64_t(o.repeat)},
                             {"subtables", int64_t(o.subtables)}},
                            notes, rows))
    return 1;
  return 0;
}
