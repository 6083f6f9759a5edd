// tests/runtime/offload_policy_test.cpp: the auto offload policy (offload_policy.hpp) on a
// simulated worker, so that what it does under each load is checked exactly, without timing:
// packets arrive at `rate` into an RX ring of `ring` packets (what overflows it is lost,
// unseen by the worker, as on a real port); the worker takes chunks of `batch` packets, idling
// until one has arrived, and a chunk costs it c_common + c_cpu a packet when shaded on the CPU
// and c_common + c_off when offloaded.
#include "runtime/offload_policy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

namespace warpath::runtime {
namespace {

struct Worker {
  double c_common = 50, c_cpu = 50, c_off = 5;  // ns a packet
  double rate     = 1e6;                         // packets a second offered
  uint32_t batch  = 1024;
  double ring     = 8192;  // RX ring, packets
  double backlog  = 0;     // packets waiting in it
  uint64_t now    = 1;     // simulated ns
};

struct Window {
  double share = 0, u = 0, served = 0, lost = 0;  ///< at its end; served and lost per second
  uint64_t offloaded = 0, chunks = 0;
};

// Runs the worker for `windows` policy windows; returns what the last one saw.
Window run(OffloadPolicy& p, Worker& w, int windows) {
  Window last;
  for (int k = 0; k < windows; ++k) {
    const uint64_t start = w.now;
    double busy = 0, packets = 0, lost = 0;
    last.offloaded = last.chunks = 0;
    while (w.now - start < OffloadPolicy::kWindowNs) {
      if (w.backlog < w.batch) {  // idle until a chunk's packets are there
        const double wait = (w.batch - w.backlog) / w.rate * 1e9;
        p.on_idle(uint64_t(wait));
        w.now += uint64_t(wait);
        w.backlog = w.batch;
      }
      const bool off    = p.offload_next();
      const double cost = w.batch * (w.c_common + (off ? w.c_off : w.c_cpu));
      p.on_chunk(w.batch, !off, off ? 0 : uint64_t(w.batch * w.c_cpu));
      w.backlog += cost * w.rate / 1e9 - w.batch;
      if (w.backlog > w.ring) {
        lost += w.backlog - w.ring;
        w.backlog = w.ring;
      }
      busy += cost;
      packets += w.batch;
      last.offloaded += off;
      ++last.chunks;
      w.now += uint64_t(cost);
      p.tick(w.now);
    }
    const double span = double(w.now - start);
    last.u      = busy / span;
    last.served = packets * 1e9 / span;
    last.lost   = lost * 1e9 / span;
  }
  last.share = p.share();
  return last;
}

TEST(OffloadPolicy, FixedPoliciesNeverChange) {
  Worker w;
  w.rate = 50e6;  // overloaded
  OffloadPolicy cpu(Offload::kCpu, true), gpu(Offload::kGpu, true), none(Offload::kAuto, false);
  EXPECT_EQ(run(cpu, w, 20).offloaded, 0u);
  const Window g = run(gpu, w, 20);
  EXPECT_EQ(g.offloaded, g.chunks);
  EXPECT_EQ(run(none, w, 20).offloaded, 0u) << "auto without an offload master stays on the CPU";
}

// Light load keeps every chunk on the CPU (its latency is the lowest).
TEST(OffloadPolicy, LightLoadStaysOnTheCpu) {
  Worker w;
  w.rate = 2e6;  // u = 0.2 at 100 ns a packet
  OffloadPolicy p(Offload::kAuto, true);
  const Window last = run(p, w, 100);
  EXPECT_EQ(last.share, 0.0);
  EXPECT_EQ(last.offloaded, 0u);
  EXPECT_NEAR(last.u, 0.2, 0.01);
}

// Overload: the share rises until the worker keeps up again, inside the band or at its target.
TEST(OffloadPolicy, OverloadOffloadsTheShareThatBringsTheWorkerBackIntoTheBand) {
  for (double rate : {11e6, 13e6, 15e6}) {
    SCOPED_TRACE("offered " + std::to_string(rate / 1e6) + " Mpps");
    Worker w;
    w.rate = rate;  // 10 Mpps on the CPU alone: overloaded
    OffloadPolicy p(Offload::kAuto, true);
    const Window last = run(p, w, 60);
    EXPECT_GT(last.share, 0.0);
    EXPECT_GE(last.u, OffloadPolicy::kLow - 0.01);
    EXPECT_LE(last.u, OffloadPolicy::kHigh + 0.01);
    EXPECT_EQ(last.lost, 0.0) << "every packet offered is served";
    EXPECT_NEAR(last.served, rate, rate * 0.01);
    // Enough is offloaded that the worker keeps up; at 11 Mpps part of the chunks stay on the
    // CPU. (At 13 Mpps, where half would do, it offloads all: the window after the overload
    // still drains the RX ring at u = 1, and busy_cost_'s average still holds the all-CPU
    // cost, so the model overshoots. Noted in ADR 0005; the policy is unchanged here.)
    if (rate < 12e6) EXPECT_LT(last.share, 1.0);
  }
}

// Inside the band (0.6 <= u <= 0.9) nothing changes: a load that the CPU alone serves at
// u = 0.8 never moves a chunk, and a share reached under overload stays when the load eases
// into the band.
TEST(OffloadPolicy, InsideTheBandTheShareHolds) {
  Worker w;
  w.rate = 8e6;  // u = 0.8 on the CPU alone
  OffloadPolicy p(Offload::kAuto, true);
  EXPECT_EQ(run(p, w, 50).share, 0.0);
  w.rate = 14e6;
  const double high = run(p, w, 60).share;
  ASSERT_GT(high, 0.5);
  // 12 Mpps at that share: u = 12e6 * (50 + 50 (1 - s) + 5 s) ns, inside the band.
  w.rate               = 12e6;
  const Window settled = run(p, w, 5);
  ASSERT_GE(settled.u, OffloadPolicy::kLow);
  ASSERT_LE(settled.u, OffloadPolicy::kHigh);
  const double held = settled.share;
  EXPECT_EQ(run(p, w, 30).share, held);
}

// When the load falls below the band the share falls (by at least a step a window), so light
// load returns to the CPU.
TEST(OffloadPolicy, FallingLoadReturnsToTheCpu) {
  Worker w;
  w.rate = 15e6;
  OffloadPolicy p(Offload::kAuto, true);
  ASSERT_GT(run(p, w, 60).share, 0.5);
  w.rate = 1e6;
  const Window first = run(p, w, 1);
  EXPECT_LT(first.share, 1.0);
  const Window last = run(p, w, 15);
  EXPECT_EQ(last.share, 0.0);
  EXPECT_EQ(last.offloaded, 0u);
}

}  // namespace
}  // namespace warpath::runtime
