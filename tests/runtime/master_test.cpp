// tests/runtime/master_test.cpp: the offload master's launches (master.hpp): a launch's key
// jobs and packet jobs laid out in one slab, answers and bytes back in their frames, and the
// resident path (one upload, every module's jobs on the device copy, one download) run on host
// memory standing in for a device, so that a machine without a GPU checks its layout.
#include "runtime/master.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "runtime/core/schedule_key.hpp"
#include "runtime/thread_util.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/runtime/chain.hpp"

namespace warpath::runtime {
namespace {

// A stand-in stream: the downloads queued on it (a late device runs them only when a query
// finds the stream finished), and how many more queries answer "not yet".
struct FakeStream {
  std::vector<std::function<void()>> pending;
  int polls_left = 0;
  uint64_t launch = 0;  // the order in which streams took work
};

// The stand-in device: host allocations it remembers, so a job can tell whether a pointer it
// is given lies in "device" memory; copies and waits counted. Late (`late` > 0): a download is
// queued on its stream and done only when a query finds the stream finished, which takes
// 0..late queries drawn per launch, so launches finish late and out of order; every
// `fail_every`-th launch's query fails.
struct FakeDevice {
  std::mutex mu;
  std::map<const uint8_t*, size_t> blocks;
  uint64_t uploads = 0, downloads = 0, syncs = 0, sorts = 0, completions = 0;
  int late = 0;
  uint64_t fail_every = 0;
  std::mt19937 rng{7};
  uint64_t launches = 0, busy = 0, max_busy = 0;
  std::vector<uint64_t> completed;  // stream launch numbers in the order they finished
  // Runs a stream's queued work (under mu).
  void finish(FakeStream& s) {
    if (s.pending.empty()) return;
    for (auto& f : s.pending) f();
    s.pending.clear();
    --busy;
    completed.push_back(s.launch);
  }
  bool inside(const void* p, size_t bytes) {
    std::lock_guard<std::mutex> g(mu);
    const auto* q = static_cast<const uint8_t*>(p);
    auto it       = blocks.upper_bound(q);
    if (it == blocks.begin()) return false;
    --it;
    return q >= it->first && q + bytes <= it->first + it->second;
  }
};
FakeDevice* g_device = nullptr;

const OffloadMaster::DeviceOps kFakeOps{
    [](size_t bytes) noexcept -> void* {
      auto* p = new (std::nothrow) uint8_t[bytes];
      std::lock_guard<std::mutex> g(g_device->mu);
      if (p) g_device->blocks[p] = bytes;
      return p;
    },
    [](void* p) noexcept {
      if (!p) return;
      {
        std::lock_guard<std::mutex> g(g_device->mu);
        g_device->blocks.erase(static_cast<uint8_t*>(p));
      }
      delete[] static_cast<uint8_t*>(p);
    },
    [](void* dst, const void* src, size_t bytes, bool to_device, void* stream,
       const char**) noexcept {
      std::lock_guard<std::mutex> g(g_device->mu);
      ++(to_device ? g_device->uploads : g_device->downloads);
      auto* s = static_cast<FakeStream*>(stream);
      if (to_device || !g_device->late || !s) {
        std::memcpy(dst, src, bytes);
        return true;
      }
      if (s->pending.empty()) {  // the stream's launch: when it will be found finished
        s->polls_left = int(g_device->rng() % uint32_t(g_device->late + 1));
        s->launch     = g_device->launches++;
        g_device->max_busy = std::max(g_device->max_busy, ++g_device->busy);
      }
      s->pending.push_back([=] { std::memcpy(dst, src, bytes); });
      return true;
    },
    [](void* stream, const char**) noexcept {
      std::lock_guard<std::mutex> g(g_device->mu);
      ++g_device->syncs;
      if (stream) g_device->finish(*static_cast<FakeStream*>(stream));
      return true;
    },
    [](const uint16_t* keys, uint32_t* order, uint32_t n, unsigned bits, void*,
       const char**) noexcept {
      for (uint32_t i = 0; i < n; ++i) order[i] = i;
      const uint16_t mask = uint16_t((1u << bits) - 1);
      std::stable_sort(order, order + n,
                       [&](uint32_t a, uint32_t b) { return (keys[a] & mask) < (keys[b] & mask); });
      std::lock_guard<std::mutex> g(g_device->mu);
      ++g_device->sorts;
      return true;
    },
    [](const uint8_t* src, uint8_t* dst, const uint32_t* order, uint32_t n, uint32_t row, void*,
       const char**) noexcept {
      for (uint32_t r = 0; r < n; ++r)
        std::memcpy(dst + size_t(r) * row, src + size_t(order[r]) * row, row);
      return true;
    },
    [](const uint8_t* src, uint8_t* dst, const uint32_t* order, uint32_t n, uint32_t row, void*,
       const char**) noexcept {
      for (uint32_t r = 0; r < n; ++r)
        std::memcpy(dst + size_t(order[r]) * row, src + size_t(r) * row, row);
      return true;
    },
    []() noexcept -> void* { return new (std::nothrow) FakeStream; },
    [](void* stream) noexcept { delete static_cast<FakeStream*>(stream); },
    [](void* stream, const char** why) noexcept -> int {
      std::lock_guard<std::mutex> g(g_device->mu);
      auto* s = static_cast<FakeStream*>(stream);
      if (s && s->polls_left > 0) {
        --s->polls_left;
        return 0;
      }
      const bool had = s && !s->pending.empty();
      const uint64_t launch = had ? s->launch : 0;
      if (s) g_device->finish(*s);
      ++g_device->completions;
      if (had && g_device->fail_every && launch % g_device->fail_every == 1) {
        if (why) *why = "fake device: the launch failed";
        return -1;
      }
      return 1;
    },
    true};  // copies_any_host_memory

// The same device copying only page-locked memory at full speed, as CUDA does: resident
// launches over pageable frames gather their packet bytes.
const OffloadMaster::DeviceOps kFakePinnedOnlyOps = [] {
  OffloadMaster::DeviceOps ops = kFakeOps;
  ops.copies_any_host_memory   = false;
  return ops;
}();

// A packet job's key: its bytes (the IP packet past the Ethernet header) and their length.
struct PacketKey {
  uint8_t* bytes;
  uint32_t len, seed;
  uint32_t residue;  ///< the host address of `bytes` mod 16, which a direct launch keeps
};

struct TwinSlot final : ModuleSlot {
  explicit TwinSlot(uint32_t cap)
      : cap(cap), cols(size_t(cap) * 2), sum(cap), keys(cap), lens(cap), sums(cap) {}
  uint32_t cap;
  std::vector<uint32_t> cols, sum;  ///< job 0: two key columns (cap apart) and the answers
  std::vector<PacketKey> keys;      ///< job 1: one key per even packet
  std::vector<uint32_t> lens;
  std::vector<uint8_t> sums;  ///< job 1's answers: the bytes' sum before the transform
  uint32_t n0 = 0, n1 = 0;
};

bool g_sorted   = false;         // packet job rows must come sorted by length (scheduling)
bool g_direct   = false;         // packet bytes must keep their host alignment mod 16
bool g_fail     = false;         // the packet job fails
bool g_resident = false;         // what job_resident answers
std::atomic<uint64_t> g_bad{0};  // a job found its data where it should not be
std::atomic<uint64_t> g_kept{0};  // what deferred calls handed to their launch, released

// Job 0: sum[k] = a[k] * 31 + b[k]. Job 1, a packet job: each key's bytes XOR its seed's low
// byte, in place; the answer is their sum before. Both check that they are given device memory
// exactly when the master says the launch is resident.
class TwinModule final : public Module {
 public:
  std::string_view kind() const noexcept override { return "test-twin"; }
  ModuleContract contract() const override { return {field_bit(Field::kParse), 0, {}}; }
  std::unique_ptr<ModuleSlot> make_slot(uint32_t cap) const override {
    return std::make_unique<TwinSlot>(cap);
  }
  Status pre(Frame& f, ModuleSlot* slot) const override {
    auto& s = static_cast<TwinSlot&>(*slot);
    s.n0 = s.n1 = 0;
    for (uint32_t i = 0; i < f.size(); ++i) {
      const packet::PacketMeta& m = f.batch.meta(i);
      uint32_t head               = 0;
      std::memcpy(&head, f.batch.data(i), std::min<uint32_t>(4, m.caplen));
      s.cols[s.n0] = head, s.cols[s.cap + s.n0] = m.len, ++s.n0;
      if (i % 2 == 0 && m.caplen > 14) {
        s.keys[s.n1] = {f.batch.data(i) + 14, m.caplen - 14, i * 7 + 1,
                        uint32_t(reinterpret_cast<uintptr_t>(f.batch.data(i) + 14) & 15)};
        s.lens[s.n1] = m.caplen - 14;
        ++s.n1;
      }
    }
    return Status::ok();
  }
  uint32_t job_count() const noexcept override { return 2; }
  JobShape job_shape(uint32_t j) const override {
    if (j == 0) return {2, 4, 4};
    return {1, uint32_t(sizeof(PacketKey)), 1, int32_t(offsetof(PacketKey, bytes))};
  }
  JobData job_data(Frame&, ModuleSlot* slot, uint32_t j) const override {
    auto& s = static_cast<TwinSlot&>(*slot);
    if (j == 0)
      return {reinterpret_cast<const uint8_t*>(s.cols.data()), size_t(s.cap) * 4,
              reinterpret_cast<uint8_t*>(s.sum.data()), s.n0};
    return {reinterpret_cast<const uint8_t*>(s.keys.data()), 0, s.sums.data(), s.n1, s.lens.data()};
  }
  Status run_job(Place, uint32_t j, const JobData& d, ExecContext& ctx) const override {
    if (ctx.resident != g_resident) ++g_bad;
    if (ctx.keep && !ctx.resident) ++g_bad;  // only resident calls may defer
    if (ctx.keep && ctx.stream && g_device) {
      // As a CUDA engine leaves its scratch lease: released only once the stream finished.
      ctx.keep->push_back(std::shared_ptr<void>(ctx.stream, [](void* st) {
        std::lock_guard<std::mutex> g(g_device->mu);
        if (!static_cast<FakeStream*>(st)->pending.empty()) ++g_bad;
        ++g_kept;
      }));
    }
    const JobShape shape = job_shape(j);
    if (g_resident && g_device &&
        (!g_device->inside(d.keys, size_t(d.count) * shape.columns * shape.key_bytes) ||
         !g_device->inside(d.answers, size_t(d.count) * shape.answer_bytes)))
      ++g_bad;
    if (j == 0) {
      auto* out = reinterpret_cast<uint32_t*>(d.answers);
      for (uint32_t k = 0; k < d.count; ++k) {
        uint32_t a, b;
        std::memcpy(&a, d.keys + size_t(k) * 4, 4);
        std::memcpy(&b, d.keys + d.column_stride + size_t(k) * 4, 4);
        out[k] = a * 31 + b;
      }
      return Status::ok();
    }
    if (g_fail) return Status(Errc::kCudaError, "test-twin: the packet job failed");
    uint16_t last = 0;
    for (uint32_t k = 0; k < d.count; ++k) {
      PacketKey key;
      std::memcpy(&key, d.keys + size_t(k) * sizeof(PacketKey), sizeof key);
      if (g_sorted) {
        if (core::length_key(key.len) < last) ++g_bad;
        last = core::length_key(key.len);
      }
      if (g_resident && g_device && !g_device->inside(key.bytes, key.len)) ++g_bad;
      if (g_direct && (reinterpret_cast<uintptr_t>(key.bytes) & 15) != key.residue) ++g_bad;
      uint8_t sum = 0;
      for (uint32_t x = 0; x < key.len; ++x) {
        sum += key.bytes[x];
        key.bytes[x] ^= uint8_t(key.seed);
      }
      d.answers[k] = sum;
    }
    return Status::ok();
  }
  bool job_resident(uint32_t) const override { return g_resident; }
  void post(Frame&, ModuleSlot*, const Selection&) const override {}
};

std::unique_ptr<Chain> twin_chain() {
  ModuleInfo info;
  info.kind  = "test-twin";
  info.contract.reads = field_bit(Field::kParse);
  info.make  = [](const ModuleArgs&, BuildEnv&) -> Result<std::unique_ptr<Module>> {
    return std::unique_ptr<Module>(std::make_unique<TwinModule>());
  };
  (void)register_module_kind(info);  // (again when the test repeats)
  auto specs = parse_chain("test-twin");
  EXPECT_TRUE(specs.is_ok());
  BuildEnv env;
  env.offload        = true;
  env.offload_device = "cpu";
  auto chain         = Chain::build(*specs, env);
  EXPECT_TRUE(chain.is_ok()) << chain.status().message();
  return chain.is_ok() ? std::move(*chain) : nullptr;
}

packet::PacketBatch traffic(uint32_t n, uint64_t seed) {
  gen::TrafficParams p;
  p.count = n;
  p.seed  = seed;
  auto in = gen::batch_for(std::max<uint32_t>(n, 1));
  EXPECT_TRUE(in.is_ok());
  if (n) EXPECT_TRUE(gen::generate_traffic(p, *in).is_ok());
  return std::move(*in);
}

// A frame of room for `cap` packets holding `n` generated ones (seed), the chain's pre stage
// run on it; nullptr (and a test failure) if any step fails.
std::unique_ptr<Frame> filled_frame(const Chain& chain, uint32_t cap, uint32_t n, uint64_t seed) {
  auto b = packet::PacketBatch::create(cap, 2048);
  EXPECT_TRUE(b.is_ok());
  if (!b.is_ok()) return nullptr;
  auto f = std::make_unique<Frame>(std::move(*b));
  chain.make_slots(*f);
  const packet::PacketBatch in = traffic(n, seed);
  for (uint32_t i = 0; i < n; ++i)
    if (!f->batch.append(in.data(i), in.meta(i).caplen, in.meta(i).len, 0, 0)) {
      ADD_FAILURE() << "packet " << i << " does not fit";
      return nullptr;
    }
  const Status s = chain.pre(*f);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return s.is_ok() ? std::move(f) : nullptr;
}

// Checks frame `f` after its launch: job 0's answer of every packet and job 1's bytes and sums
// of every even packet, against the packets in[from..) it was filled with.
void expect_frame_right(Frame& f, const packet::PacketBatch& in, uint32_t from) {
  auto& s = static_cast<TwinSlot&>(*f.slots[0]);
  ASSERT_EQ(s.n0, f.size());
  uint32_t k1 = 0;
  for (uint32_t i = 0; i < f.size(); ++i) {
    const uint32_t at           = from + i;
    const packet::PacketMeta& m = in.meta(at);
    uint32_t head               = 0;
    std::memcpy(&head, in.data(at), std::min<uint32_t>(4, m.caplen));
    ASSERT_EQ(s.sum[i], head * 31 + m.len) << "packet " << i;
    const bool moved = i % 2 == 0 && m.caplen > 14;
    uint8_t sum      = 0;
    for (uint32_t x = 0; x < m.caplen; ++x) {
      const uint8_t was = in.data(at)[x];
      if (moved && x >= 14) sum += was;
      const uint8_t want = moved && x >= 14 ? uint8_t(was ^ uint8_t(i * 7 + 1)) : was;
      ASSERT_EQ(f.batch.data(i)[x], want) << "packet " << i << " byte " << x;
    }
    if (moved) ASSERT_EQ(s.sums[k1++], sum) << "packet " << i;
  }
  ASSERT_EQ(k1, s.n1);
}

// Frames of `batch` packets, `per_launch` of them submitted at once, through a master on the
// given device: every answer and every transformed byte where the module's own loop puts them.
// span_ratio: the master's max_span_ratio (0: packet bytes gathered into the slab and
// scattered back; 1e9: always straight from their frames, a span each).
// pinned_only: the device copies only page-locked memory at full speed (CUDA's rule); the
// test's frames are pageable, so resident launches then gather.
void check_launches(uint32_t batch, uint32_t per_launch, bool resident, bool schedule = false,
                    double span_ratio = 0, bool* direct_expected = nullptr,
                    bool pinned_only = false) {
  SCOPED_TRACE("batch " + std::to_string(batch) + ", " + std::to_string(per_launch) +
               " frames a launch, " + (resident ? "resident" : "on the slab") +
               (schedule ? ", scheduled" : "") + (span_ratio > 0 ? ", direct" : ", gathered"));
  auto chain = twin_chain();
  ASSERT_TRUE(chain);
  ASSERT_EQ(chain->jobs().size(), 2u);
  chain->set_schedule_sort(schedule);
  uint64_t packet_rows = 0, frames_with_bytes = 0, span_total = 0, useful = 0;
  FakeDevice device;
  g_device                     = &device;
  g_resident                   = resident;
  g_bad                        = 0;
  const packet::PacketBatch in = traffic(batch * per_launch, batch + per_launch);
  std::vector<std::unique_ptr<Frame>> frames;
  uint32_t next = 0;
  for (uint32_t k = 0; k < per_launch; ++k) {
    auto b = packet::PacketBatch::create(std::max<uint32_t>(batch, 1), 2048);
    ASSERT_TRUE(b.is_ok());
    frames.push_back(std::make_unique<Frame>(std::move(*b)));
    Frame& f = *frames.back();
    chain->make_slots(f);
    for (uint32_t i = 0; i < batch; ++i, ++next)
      ASSERT_TRUE(f.batch.append(in.data(next), in.meta(next).caplen, in.meta(next).len, 0, 0));
    ASSERT_TRUE(chain->pre(f).is_ok());
    const auto& s = static_cast<TwinSlot&>(*f.slots[0]);
    packet_rows += s.n1;
    frames_with_bytes += s.n1 > 0;
    // The frame's span as the master takes it: from the first buffer's start, aligned down to
    // 16, to the last one's end.
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (uint32_t k = 0; k < s.n1; ++k) {
      lo = std::min(lo, reinterpret_cast<uintptr_t>(s.keys[k].bytes));
      hi = std::max(hi, reinterpret_cast<uintptr_t>(s.keys[k].bytes) + s.keys[k].len);
      useful += s.keys[k].len;
    }
    if (s.n1) span_total += hi - (lo & ~uintptr_t(15));
  }
  // The master's rule (master.hpp, set_max_span_ratio).
  const bool direct =
      span_ratio > 0 && packet_rows > 0 &&
      (!resident || (!pinned_only && double(span_total) <= span_ratio * double(useful) + 4096.0));
  if (direct_expected) *direct_expected = direct;
  g_direct = direct && resident;
  // Scheduled rows are sorted exactly when the launch is resident and sorts.
  g_sorted = resident && schedule && packet_rows > 1;
  {
    OffloadMaster master(*chain, std::max<uint32_t>(batch, 1) * per_launch, {}, 1,
                         !resident     ? OffloadMaster::cuda_device_ops()
                         : pinned_only ? kFakePinnedOnlyOps
                                       : kFakeOps);
    master.set_max_span_ratio(span_ratio);
    std::vector<Frame*> group;
    for (auto& f : frames) group.push_back(f.get());
    master.submit(group);
    master.start();
    for (Frame* f : group) {
      while (!f->done.load(std::memory_order_acquire)) std::this_thread::yield();
      ASSERT_TRUE(f->error.is_ok()) << f->error.message();
    }
    master.stop();
    EXPECT_EQ(master.launches(), 1u);
    const bool any = batch > 0;
    EXPECT_EQ(master.resident_launches(), resident && any ? 1u : 0u);
    EXPECT_EQ(master.scheduled_jobs(), g_sorted ? 1u : 0u);
    EXPECT_EQ(master.direct_launches(), direct ? 1u : 0u);
  }
  EXPECT_EQ(device.sorts, g_sorted ? 1u : 0u);
  g_sorted = false;
  g_direct = false;
  EXPECT_EQ(g_bad.load(), 0u);
  if (resident && batch) {
    // The keys up and the answers down, and when direct each frame's span of packet bytes.
    const uint64_t spans = direct ? frames_with_bytes : 0;
    EXPECT_EQ(device.uploads, 1u + spans);
    EXPECT_EQ(device.downloads, 1u + spans);
    EXPECT_EQ(device.syncs, 0u) << "no wait for a launch: the lane polls its stream";
    EXPECT_GE(device.completions, 1u);
  } else {
    EXPECT_EQ(device.uploads + device.downloads, 0u);
  }
  EXPECT_TRUE(device.blocks.empty()) << "the master freed its device memory";
  next = 0;
  for (auto& fp : frames) {
    expect_frame_right(*fp, in, next);
    next += fp->size();
  }
  g_device = nullptr;
}

TEST(OffloadMaster, LaunchesPutAnswersAndBytesBackOnTheSlab) {
  for (uint32_t batch : {0u, 1u, 31u, 32u, 33u, 1024u})
    for (uint32_t per_launch : {1u, 3u}) check_launches(batch, per_launch, false);
}

TEST(OffloadMaster, ResidentLaunchesUploadOnceRunEveryJobOnTheDeviceAndDownloadOnce) {
  for (uint32_t batch : {0u, 1u, 31u, 32u, 33u, 1024u})
    for (uint32_t per_launch : {1u, 3u}) check_launches(batch, per_launch, true);
}

// Packet scheduling on the device: a packet job's rows reach the module sorted by length,
// and every answer still lands on its own packet. Without residence the rows keep their order.
TEST(OffloadMaster, ScheduledLaunchesSortPacketJobRowsByLengthAndPutAnswersBack) {
  for (uint32_t batch : {1u, 33u, 1024u})
    for (uint32_t per_launch : {1u, 3u}) {
      check_launches(batch, per_launch, true, true);
      check_launches(batch, per_launch, false, true);
    }
}

// Packet bytes straight from their frames: on the device, one span a frame up and one down,
// each buffer at its place in its span (the module checks that it is given device memory);
// on the slab path, in place. The same answers and bytes as the gathered launches above.
TEST(OffloadMaster, DirectLaunchesMovePacketBytesAsOneSpanAFrame) {
  for (uint32_t batch : {1u, 31u, 32u, 33u, 1024u})
    for (uint32_t per_launch : {1u, 3u}) {
      check_launches(batch, per_launch, true, false, 1e9);
      check_launches(batch, per_launch, false, false, 1e9);
      check_launches(batch, per_launch, true, true, 1e9);
    }
}

// The default ratio (4) on launches of 1 to 1,024 packets a frame, every other packet a job's:
// whichever way the rule goes (check_launches predicts it from the frames and checks the
// master's count), the answers and bytes are right; a ratio under 1 gathers a large launch.
TEST(OffloadMaster, SpanRatioDecidesAsDocumented) {
  bool direct = true;
  for (uint32_t batch : {1u, 33u, 1024u}) check_launches(batch, 3, true, false, 4.0, &direct);
  check_launches(1024, 3, true, false, 0.1, &direct);
  EXPECT_FALSE(direct);
}

// CUDA copies pageable memory through a bounce buffer and blocks: a resident launch over
// pageable frames gathers even where the ratio would let it go direct.
TEST(OffloadMaster, PageableFramesAreGatheredForADeviceThatCopiesOnlyPinnedMemory) {
  bool direct = true;
  for (uint32_t batch : {1u, 1024u}) {
    check_launches(batch, 3, true, false, 1e9, &direct, true);
    EXPECT_FALSE(direct);
  }
}

struct AsyncRun {
  uint64_t frames = 0, failed = 0, max_in_flight = 0, launches = 0;
};

// `producers` threads, as workers do, each keeping `keep` frames of `batch` packets in flight
// through a master of `lanes` lanes and `depth` launches a lane (one frame a launch), on the
// fake device `device`; every frame checked when its worker takes it back, in its own order.
AsyncRun run_async(FakeDevice& device, uint32_t lanes, uint32_t depth, uint32_t producers,
                   uint32_t keep, uint32_t rounds, uint32_t batch) {
  auto chain = twin_chain();
  EXPECT_TRUE(chain);
  AsyncRun out;
  if (!chain) return out;
  g_device   = &device;
  g_resident = true;
  g_bad      = 0;
  g_kept     = 0;
  const packet::PacketBatch in = traffic(batch * 8, 11);
  std::atomic<uint64_t> frames{0}, failed{0};
  {
    OffloadMaster master(*chain, batch, {}, lanes, kFakeOps);
    master.set_max_span_ratio(1e9);  // packet bytes as a span a frame: their download is late too
    master.set_launch_depth(depth);
    master.start();
    std::vector<std::thread> threads;
    for (uint32_t p = 0; p < producers; ++p)
      threads.emplace_back([&, p] {
        std::vector<std::unique_ptr<Frame>> ring;
        std::vector<uint32_t> from;
        for (uint32_t r = 0; r < rounds; ++r) {
          if (ring.size() == keep) {  // the oldest back first, as a worker takes them
            Frame& f = *ring.front();
            while (!f.done.load(std::memory_order_acquire)) std::this_thread::yield();
            if (f.error.is_ok()) {
              expect_frame_right(f, in, from.front());
            } else {
              EXPECT_EQ(f.error.code(), Errc::kCudaError) << f.error.message();
              ++failed;
            }
            ++frames;
            ring.erase(ring.begin());
            from.erase(from.begin());
          }
          const uint32_t at = ((p + r) % 8) * batch;
          auto b            = packet::PacketBatch::create(batch, 2048);
          ASSERT_TRUE(b.is_ok());
          auto f = std::make_unique<Frame>(std::move(*b));
          chain->make_slots(*f);
          for (uint32_t i = 0; i < batch; ++i)
            ASSERT_TRUE(f->batch.append(in.data(at + i), in.meta(at + i).caplen,
                                        in.meta(at + i).len, 0, 0));
          ASSERT_TRUE(chain->pre(*f).is_ok());
          master.submit(f.get());
          ring.push_back(std::move(f));
          from.push_back(at);
        }
        for (size_t k = 0; k < ring.size(); ++k) {
          Frame& f = *ring[k];
          while (!f.done.load(std::memory_order_acquire)) std::this_thread::yield();
          if (f.error.is_ok())
            expect_frame_right(f, in, from[k]);
          else
            ++failed;
          ++frames;
        }
      });
    for (auto& t : threads) t.join();
    master.stop();
    out.max_in_flight = master.max_in_flight();
    out.launches      = master.launches();
  }
  EXPECT_TRUE(device.blocks.empty()) << "the master freed its device memory";
  EXPECT_EQ(g_bad.load(), 0u);
  g_device   = nullptr;
  g_resident = false;
  out.frames = frames;
  out.failed = failed;
  return out;
}

// The asynchronous master on a device that finishes late and out of order: each lane keeps up
// to its depth of launches queued, completes each when a query finds its stream finished (never
// a wait), and only then puts answers and bytes back and hands the frames to their workers;
// what the engines' deferred calls kept lives until then.
TEST(OffloadMaster, AsynchronousLaunchesCompleteLateAndOutOfOrderWithEveryAnswerInPlace) {
  for (uint32_t lanes : {1u, 2u})
    for (uint32_t batch : {1u, 33u}) {
      SCOPED_TRACE(std::to_string(lanes) + " lanes, batch " + std::to_string(batch));
      FakeDevice device;
      device.late      = 24;
      const AsyncRun r = run_async(device, lanes, 4, 3, 4, 60, batch);
      EXPECT_EQ(r.frames, 3u * 60u);
      EXPECT_EQ(r.failed, 0u);
      EXPECT_EQ(device.syncs, 0u) << "no launch was waited for";
      EXPECT_LE(device.max_busy, lanes * 4u) << "at most lanes x depth launches in flight";
      EXPECT_LE(r.max_in_flight, lanes * 4u);
      if (lanes == 1) {
        // 12 frames outstanding against one lane: it keeps several launches queued.
        EXPECT_GT(device.max_busy, 1u) << "the lane kept more than one launch in flight";
        EXPECT_GT(r.max_in_flight, 1u);
      }
      EXPECT_EQ(g_kept.load(), 2 * r.launches) << "both jobs of every launch deferred";
      size_t inversions = 0;
      for (size_t i = 1; i < device.completed.size(); ++i)
        inversions += device.completed[i] < device.completed[i - 1];
      EXPECT_GT(inversions, 0u) << "launches finished out of order";
    }
}

// Depth 1: a lane waits for each launch before it takes the next (the master before it was
// asynchronous), so no more launches are in flight than there are lanes.
TEST(OffloadMaster, LaunchDepthBoundsTheLaunchesInFlight) {
  for (uint32_t lanes : {1u, 2u}) {
    FakeDevice device;
    device.late      = 8;
    const AsyncRun r = run_async(device, lanes, 1, 3, 3, 30, 16);
    EXPECT_EQ(r.frames, 90u);
    EXPECT_LE(device.max_busy, lanes);
    EXPECT_LE(r.max_in_flight, lanes);
  }
}

// A launch whose stream reports a failure: its frames come back with the error, the lane goes
// on, and every other launch's answers are right.
TEST(OffloadMaster, AFailedLaunchAmongOthersInFlightFailsOnlyItsFrames) {
  FakeDevice device;
  device.late       = 6;
  device.fail_every = 5;
  const AsyncRun r  = run_async(device, 2, 4, 2, 4, 40, 8);
  EXPECT_EQ(r.frames, 80u);
  EXPECT_GT(r.failed, 0u);
  EXPECT_LT(r.failed, r.frames);
}

// Frames submitted together are one launch whichever lane takes them, started or not, while
// frames submitted one by one to a busy master may share launches.
TEST(OffloadMaster, FramesSubmittedTogetherAreOneLaunchOnAnyLane) {
  auto chain = twin_chain();
  ASSERT_TRUE(chain);
  g_resident = false;
  const packet::PacketBatch in = traffic(4 * 8, 3);
  std::vector<std::unique_ptr<Frame>> frames;
  for (uint32_t k = 0; k < 5 * 4; ++k) {
    frames.push_back(filled_frame(*chain, 8, 8, 100 + k));
    ASSERT_TRUE(frames.back());
  }
  OffloadMaster master(*chain, 5 * 8, {}, 2);
  master.start();
  for (uint32_t round = 0; round < 4; ++round) {
    std::vector<Frame*> group;
    for (uint32_t k = 0; k < 5; ++k) group.push_back(frames[round * 5 + k].get());
    master.submit(group);
  }
  for (auto& f : frames) {
    while (!f->done.load(std::memory_order_acquire)) std::this_thread::yield();
    ASSERT_TRUE(f->error.is_ok()) << f->error.message();
  }
  master.stop();
  EXPECT_EQ(master.launches(), 4u);
}

// A failed job in a direct launch: the frames come back with the error only after the stream
// has finished with their spans (one wait), never while a copy may still write into them.
TEST(OffloadMaster, AFailedDirectLaunchWaitsForItsCopiesBeforeGivingFramesBack) {
  auto chain = twin_chain();
  ASSERT_TRUE(chain);
  FakeDevice device;
  g_device   = &device;
  g_resident = true;
  g_fail     = true;
  auto fp = filled_frame(*chain, 64, 64, 9);
  ASSERT_TRUE(fp);
  Frame& f = *fp;
  {
    OffloadMaster master(*chain, 64, {}, 1, kFakeOps);
    master.set_max_span_ratio(1e9);
    master.submit(&f);
    master.start();
    while (!f.done.load(std::memory_order_acquire)) std::this_thread::yield();
    master.stop();
    EXPECT_EQ(master.direct_launches(), 0u) << "a failed launch is not counted";
  }
  g_fail = false;
  g_device = nullptr;
  EXPECT_EQ(f.error.code(), Errc::kCudaError);
  EXPECT_GE(device.uploads, 2u) << "the keys and the frame's span went up";
  EXPECT_EQ(device.syncs, 1u) << "the master waited for the stream before failing";
}

// The emulated round trip (set_min_round_trip_ns; RunConfig::offload_delay_us): a launch on the
// slab finishes as it is staged, yet its frames come back no sooner than the round trip after
// it was staged, and it holds its slot meanwhile, so that a lane keeps up to its depth of them
// in flight, as it would on a device.
TEST(OffloadMaster, AnEmulatedRoundTripHoldsEachLaunchThatLongInItsSlot) {
  auto chain = twin_chain();
  ASSERT_TRUE(chain);
  g_resident                    = false;
  g_bad                         = 0;
  constexpr uint64_t kRoundTrip = 40'000'000;  // 40 ms: far above a loaded machine's jitter
  constexpr uint32_t kFrames = 8, kBatch = 16;
  std::vector<std::unique_ptr<Frame>> frames;
  for (uint32_t k = 0; k < kFrames; ++k) {
    frames.push_back(filled_frame(*chain, kBatch, kBatch, 100 + k));
    ASSERT_TRUE(frames.back());
  }
  OffloadMaster master(*chain, kBatch, {}, 1,
                       OffloadMaster::cuda_device_ops());  // a frame a launch
  master.set_launch_depth(4);
  master.set_min_round_trip_ns(kRoundTrip);
  master.start();
  const uint64_t t0 = mono_ns();
  for (auto& f : frames) master.submit(f.get());
  for (auto& f : frames) {
    while (!f->done.load(std::memory_order_acquire)) std::this_thread::yield();
    ASSERT_TRUE(f->error.is_ok()) << f->error.message();
    EXPECT_GE(f->staged_ns, t0) << "stamped when the master took it";
    EXPECT_GE(f->done_ns - f->staged_ns, kRoundTrip) << "completed before its round trip";
  }
  const uint64_t took = mono_ns() - t0;
  master.stop();
  EXPECT_EQ(master.launches(), kFrames);
  EXPECT_EQ(master.max_in_flight(), 4u) << "held launches fill the lane's four slots";
  EXPECT_GE(took, 2 * kRoundTrip) << "8 launches through 4 slots take two round trips";
  EXPECT_EQ(g_bad.load(), 0u);
  for (uint32_t k = 0; k < kFrames; ++k)
    expect_frame_right(*frames[k], traffic(kBatch, 100 + k), 0);
}

// A module that breaks JobData's contract (more keys than packets) fails the launch with its
// name, not the process.
TEST(OffloadMaster, AJobWithMoreKeysThanPacketsFailsTheLaunch) {
  auto chain = twin_chain();
  ASSERT_TRUE(chain);
  g_resident = false;
  auto fp = filled_frame(*chain, 4, 2, 5);
  ASSERT_TRUE(fp);
  Frame& f = *fp;
  static_cast<TwinSlot&>(*f.slots[0]).n0 = 3;  // three keys for two packets
  OffloadMaster master(*chain, 4, {}, 1);
  master.submit(&f);
  master.start();
  while (!f.done.load(std::memory_order_acquire)) std::this_thread::yield();
  master.stop();
  EXPECT_EQ(f.error.code(), Errc::kInvalidArgument);
  EXPECT_NE(f.error.message().find("test-twin"), std::string::npos) << f.error.message();
}

}  // namespace
}  // namespace warpath::runtime
