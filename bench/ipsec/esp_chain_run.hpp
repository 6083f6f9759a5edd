// bench/ipsec/esp_chain_run.hpp: warpath-esp-bench's timing of rows (best_rate) and of whole
// paths (ChainRun: a chain of one module on a frame, copied or held in place, as `warpath run`
// runs it). Included by esp_bench.cpp only.
#pragma once
#include <immintrin.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "warpath/core/exec.hpp"
#include "warpath/core/packet_arena.hpp"
#include "runtime/thread_util.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/runtime/chain.hpp"

namespace warpath::bench::esp {

using Clock = std::chrono::steady_clock;

// Best rate (packets per second) of `repeat` passes of about `seconds` each.
template <class F>
double best_rate(F&& pass, int repeat, double seconds, const uint64_t* untimed_ns = nullptr) {
  double best = 0;
  for (int r = 0; r < repeat; ++r) {
    uint64_t packets    = 0;
    const uint64_t skip = untimed_ns ? *untimed_ns : 0;
    const auto t0       = Clock::now();
    double el           = 0;
    do {
      packets += pass();
      el = std::chrono::duration<double>(Clock::now() - t0).count();
    } while (el < seconds);
    // What the pass says it did for the device (a zero-copy path's packets written into their
    // buffers) is not the path's time.
    if (untimed_ns) el -= double(*untimed_ns - skip) * 1e-9;
    best = std::max(best, double(packets) / el);
  }
  return best;
}

// A chain of one module as `warpath run` runs it, on a frame of copies of `input`: the
// frame filled (the copy a port makes) and parsed (rx_parse_rate: what every packet of any
// chain pays), or filled and run through the chain (path_rate, which fails unless every
// packet went through).
//
// Zero copy (`buffers` set, the frame an arena batch): the packets are written into buffers
// of an arena slice laid out as mbufs are (128 bytes of headroom in 2,304), as a device writes
// them, untimed (`untimed_ns`); the frame holds them where they are (PacketBatch::attach): the
// rx a zero-copy dpdk port does, without the copy. --cold flushes the source bytes from the
// caches, untimed, in both kinds of path (what a copying port copies from and what a zero-copy
// frame holds: a device's write, which with DDIO would be in the LLC, here in memory).
struct ChainRun {
  runtime::Chain& chain;
  runtime::Frame& frame;
  const std::vector<std::vector<uint8_t>>& input;
  runtime::Chain::Scratch scratch{};
  ExecContext ctx{};
  ArenaSlice* buffers = nullptr;
  bool cold           = false;  // --cold: the packets' source bytes flushed from the caches
  uint64_t untimed_ns = 0;

  static void flush(const uint8_t* p, size_t n) {
    for (size_t off = 0; off < n; off += 64) _mm_clflush(p + off);
  }
  template <typename F>
  void flush_untimed(F&& f) {
    const auto t0 = Clock::now();
    f();
    _mm_mfence();
    untimed_ns += uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
  }
  static constexpr uint32_t kBufBytes = 2304, kBufHeadroom = 128;

  void fill() {
    frame.reset();
    if (!buffers) {
      if (cold) flush_untimed([&] {  // the bytes a copying port reads: a device's, uncached
        for (auto& fr : input) flush(fr.data(), fr.size());
      });
      for (auto& fr : input)
        frame.batch.append(fr.data(), uint32_t(fr.size()), uint32_t(fr.size()), 0);
      return;
    }
    flush_untimed([&] {  // the device's write
      for (size_t p = 0; p < input.size(); ++p)
        std::memcpy(buffers->data() + p * kBufBytes + kBufHeadroom, input[p].data(), input[p].size());
      if (cold)
        for (size_t p = 0; p < input.size(); ++p)
          flush(buffers->data() + p * kBufBytes, kBufHeadroom + input[p].size());
    });
    for (size_t p = 0; p < input.size(); ++p) {
      uint8_t* b = buffers->data() + p * kBufBytes;
      frame.batch.attach(b + kBufHeadroom, uint32_t(input[p].size()), uint32_t(input[p].size()), 0,
                         0, b, b + kBufBytes, b, [](void* const*, uint32_t) {});
    }
  }
  // --breakdown: ticks spent in each step over `passed` packets (the module's pre apart from
  // the parse that Chain::pre runs first).
  uint64_t t_fill = 0, t_pre = 0, t_module_pre = 0, t_shade = 0, t_post = 0, passed = 0;

  void pass() {
    uint64_t module[1] = {0};
    const uint64_t a   = runtime::ticks();
    fill();
    const uint64_t b = runtime::ticks();
    (void)chain.pre(frame, module);
    const uint64_t c = runtime::ticks();
    (void)chain.shade(frame, runtime::Place::kCpu, ctx);
    const uint64_t d = runtime::ticks();
    (void)chain.post(frame, scratch, nullptr);
    const uint64_t e = runtime::ticks();
    t_fill += b - a;
    t_pre += c - b;
    t_module_pre += module[0];
    t_shade += d - c;
    t_post += e - d;
    passed += frame.size();
  }
  /// The breakdown's line: ns per packet of each step.
  void print_breakdown(const char* what) const {
    if (!passed) return;
    const double k = runtime::ns_per_tick() / double(passed);
    std::fprintf(stderr,
                 "  %s: ns/packet: fill %.1f, parse %.1f, module pre %.1f, shade %.1f, post %.1f\n",
                 what, double(t_fill) * k, double(t_pre - t_module_pre) * k,
                 double(t_module_pre) * k, double(t_shade) * k, double(t_post) * k);
  }
  // The frame filled and parsed alone (the chain's pre also does a job-mode module's work):
  // what every packet of any chain pays. Packets a pass.
  uint64_t parse_pass(packet::Parser& parser) {
    fill();
    (void)parser.parse(frame.batch.view(), {frame.infos.data(), frame.size()}, ctx);
    return frame.size();
  }
  // pass(), counting the packets that did not go through in `stopped`. Packets a pass.
  uint64_t checked_pass() {
    pass();
    for (uint32_t p = 0; p < frame.size(); ++p)
      stopped += frame.reason[p] != runtime::kReasonNoVerdict;
    return frame.size();
  }
  uint64_t stopped = 0;
  /// Why the path is not measured (packets that did not go through), or ok.
  Status went_through() const {
    if (!stopped) return Status::ok();
    return Status(Errc::kInvalidArgument,
                  std::to_string(stopped) + " packets of the timed passes did not go through");
  }
  Result<double> rx_parse_rate(int repeat, double seconds) {
    WARPATH_ASSIGN_OR_RETURN(auto parser, packet::make_parser("cpu.parse"));
    return best_rate([&] { return parse_pass(*parser); }, repeat, seconds, &untimed_ns);
  }
  Result<double> path_rate(int repeat, double seconds) {
    const double pps = best_rate([&] { return checked_pass(); }, repeat, seconds, &untimed_ns);
    WARPATH_TRY(went_through());
    return pps;
  }
};

}  // namespace warpath::bench::esp
