// src/runtime/pipeline.cpp: run() wires ports, the chain of modules, workers and the offload
// master together, shows progress, stops and drains (pipeline.hpp).
#include "warpath/runtime/pipeline.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "runtime/master.hpp"
#include "runtime/thread_util.hpp"
#include "runtime/worker.hpp"
#include "warpath/core/cuda_device.hpp"

namespace warpath::runtime {
namespace {

constexpr uint32_t kInFlightPerWorker = 4;
/// Packets a worker keeps in flight to the offload master: a launch's round trip (100-300 us on
/// a GPU, more under load) is covered only if the frames a worker fills in that time can wait
/// for it, so small batches get more frames (4,096 packets' worth, 4 to 64 frames).
constexpr uint32_t kInFlightPackets = 4096;
constexpr uint32_t kMaxInFlightFrames = 64;

/// Frames each worker keeps in flight (worker.hpp: in_flight; it holds one more, filling): 4
/// under the cpu policy, where a frame completes in the worker that closed it; with offload,
/// at most enough for kInFlightPackets packets: the cap a worker's frames grow to as its rate
/// times the round trip asks (frame_window.hpp), which the ports' buffers, the packet arena,
/// the master's launch size and the memory check are sized for.
uint32_t frames_in_flight(const RunConfig& c) {
  if (c.engine == Offload::kCpu) return kInFlightPerWorker;
  const uint32_t want = (kInFlightPackets + c.batch - 1) / std::max(c.batch, 1u);
  return std::clamp(want, kInFlightPerWorker, kMaxInFlightFrames);
}

// One worker's frames into the report's (RunReport::Frames: the most, the longest round trip,
// the shortest interval, the waits summed).
void add_frames(RunReport::Frames& f, const WorkerCounters& c) {
  f.most   = std::max(f.most, uint32_t(c.frames.load(std::memory_order_relaxed)));
  f.needed = std::max(f.needed, uint32_t(c.frames_needed.load(std::memory_order_relaxed)));
  f.round_trip_us =
      std::max(f.round_trip_us, double(c.round_trip_ns.load(std::memory_order_relaxed)) / 1e3);
  if (const uint64_t i = c.close_interval_ns.load(std::memory_order_relaxed))
    f.interval_us = f.interval_us > 0 ? std::min(f.interval_us, double(i) / 1e3) : double(i) / 1e3;
  f.waits += c.frame_waits.load(std::memory_order_relaxed);
}

RunReport snapshot(const RunConfig& cfg, const Chain& chain,
                   const std::vector<std::unique_ptr<Worker>>& workers, const RunInputs& in,
                   const OffloadMaster* master, double seconds) {
  RunReport r;
  r.seconds = seconds;
  r.app      = cfg.chain.empty() ? cfg.app : "chain";
  r.chain   = chain.describe();
  r.schedule = chain.schedule_sort() ? "sort" : "none";
  r.parsed   = chain.parses();
  for (const auto& w : workers) r.parsed = r.parsed || w->parses();
  r.workers = uint32_t(workers.size());
  r.frames.cap             = frames_in_flight(cfg) + 1;
  const ReasonTable& table = chain.reasons();
  std::vector<uint64_t> reasons(table.size());
  std::vector<uint64_t> module_ticks(chain.size());
  r.modules.resize(chain.size());
  for (size_t m = 0; m < chain.size(); ++m) {
    r.modules[m].position = uint32_t(m + 1);
    r.modules[m].kind     = std::string(chain.module(m).kind());
    r.modules[m].describe = chain.module(m).describe();
  }
  std::vector<std::vector<std::string>> stat_names(chain.size());
  for (size_t m = 0; m < chain.size(); ++m) stat_names[m] = chain.module(m).stat_names();
  uint64_t shade_ns = 0;
  double share      = 0;
  double cost_cpu = 0, cost_off = 0;
  uint32_t n_cpu = 0, n_off = 0;
  uint64_t rx_ticks = 0, parse_ticks = 0, tx_ticks = 0, busy_ticks = 0, all_module_ticks = 0;
  for (const auto& w : workers) {
    const Chain::States& states = w->states();
    for (size_t m = 0; m < states.size() && m < chain.size(); ++m)
      if (states[m])
        for (size_t k = 0; k < stat_names[m].size() && k < states[m]->stat_count; ++k)
          r.modules[m].stats[stat_names[m][k]] +=
              states[m]->stats[k].load(std::memory_order_relaxed);
    const WorkerCounters& c = w->counters();
    add_frames(r.frames, c);
    r.rx += c.rx.load(std::memory_order_relaxed);
    r.rx_bytes += c.rx_bytes.load(std::memory_order_relaxed);
    r.tx_bytes += c.tx_bytes.load(std::memory_order_relaxed);
    r.chunks += c.chunks.load(std::memory_order_relaxed);
    r.cpu_chunks += c.cpu_chunks.load(std::memory_order_relaxed);
    r.gpu_chunks += c.gpu_chunks.load(std::memory_order_relaxed);
    r.cpu_packets += c.cpu_packets.load(std::memory_order_relaxed);
    r.gpu_packets += c.gpu_packets.load(std::memory_order_relaxed);
    shade_ns += c.shade_cpu_ns.load(std::memory_order_relaxed);
    rx_ticks += c.rx_ticks.load(std::memory_order_relaxed);
    parse_ticks += c.parse_ticks.load(std::memory_order_relaxed);
    tx_ticks += c.tx_ticks.load(std::memory_order_relaxed);
    busy_ticks += c.busy_ticks.load(std::memory_order_relaxed);
    r.icmp_sent += c.icmp_sent.load(std::memory_order_relaxed);
    r.icmp_suppressed += c.icmp_suppressed.load(std::memory_order_relaxed);
    r.originated += c.originated.load(std::memory_order_relaxed);
    r.copies += c.copies.load(std::memory_order_relaxed);
    r.fragmented += c.fragmented.load(std::memory_order_relaxed);
    r.fragments += c.fragments.load(std::memory_order_relaxed);
    share += c.share.load(std::memory_order_relaxed);
    if (const double v = c.cost_cpu.load(std::memory_order_relaxed); v > 0) cost_cpu += v, ++n_cpu;
    if (const double v = c.cost_offload.load(std::memory_order_relaxed); v > 0)
      cost_off += v, ++n_off;
    r.auto_declined += c.declined.load(std::memory_order_relaxed);
    for (size_t k = 0; k < reasons.size(); ++k)
      reasons[k] += c.by_reason[k].load(std::memory_order_relaxed);
    for (size_t m = 0; m < chain.size(); ++m) {
      r.modules[m].in += c.modules[m].in.load(std::memory_order_relaxed);
      r.modules[m].out += c.modules[m].out.load(std::memory_order_relaxed);
      r.modules[m].forwarded += c.modules[m].forwarded.load(std::memory_order_relaxed);
      module_ticks[m] += c.modules[m].ticks.load(std::memory_order_relaxed);
    }
  }
  const uint64_t packets = r.cpu_packets + r.gpu_packets;
  for (size_t m = 0; m < chain.size(); ++m) {
    r.modules[m].ns_per_packet =
        packets ? double(module_ticks[m]) * ns_per_tick() / double(packets) : 0;
    all_module_ticks += module_ticks[m];
  }
  if (packets) {
    const double per = ns_per_tick() / double(packets);
    const uint64_t known = rx_ticks + parse_ticks + all_module_ticks + tx_ticks;
    r.stages = {double(rx_ticks) * per, double(parse_ticks) * per, double(all_module_ticks) * per,
                double(tx_ticks) * per, busy_ticks > known ? double(busy_ticks - known) * per : 0};
  }
  r.batch_fill =
      r.chunks ? double(r.cpu_packets + r.gpu_packets) / double(r.chunks) / cfg.batch : 0;
  r.cpu_ns_per_pkt = r.cpu_packets ? double(shade_ns) / double(r.cpu_packets) : 0;
  r.gpu_share      = workers.empty() ? 0 : share / double(workers.size());
  r.auto_cost_cpu_ns     = n_cpu ? cost_cpu / n_cpu : 0;
  r.auto_cost_offload_ns = n_off ? cost_off / n_off : 0;
  if (master) {
    r.gpu_launches          = master->launches();
    r.gpu_resident_launches = master->resident_launches();
    r.gpu_direct_launches   = master->direct_launches();
    r.gpu_max_in_flight     = master->max_in_flight();
  }
  // Every finished packet has exactly one reason: the totals are the reasons' sums.
  r.tx = reasons[kReasonForwarded];
  for (size_t k = 0; k < reasons.size(); ++k) {
    if (!reasons[k] || k == kReasonForwarded) continue;
    const ReasonTable::Entry& e = table[uint16_t(k)];
    const bool slow             = e.verdict == Verdict::kSlowPath;
    (slow ? r.slow_path : r.dropped) += reasons[k];
    (slow ? r.slow_path_by_reason : r.drops_by_reason)[e.name] += reasons[k];
    if (e.module >= 1) {
      ModuleReport& mr = r.modules[size_t(e.module - 1)];
      (slow ? mr.slow_path : mr.drops)[e.name] += reasons[k];
    }
  }
  const uint64_t out  = r.tx + r.dropped + r.slow_path;
  r.in_flight         = r.rx > out ? r.rx - out : 0;
  uint64_t ring_drops = 0;
  for (const auto& p : in.ports) {
    PortReport pr{p->name(), p->describe(), p->stats()};
    ring_drops += pr.stats.rx_dropped;
    r.ports.push_back(std::move(pr));
  }
  if (ring_drops) {
    r.rx += ring_drops;
    r.dropped += ring_drops;
    r.drops_by_reason["rx_queue_full"] += ring_drops;
  }
  return r;
}

}  // namespace

Status RunReport::check() const {
  if (rx != tx + dropped + slow_path + in_flight)
    return Status(Errc::kInvalidArgument, "counters do not add up: rx " + std::to_string(rx) +
                                              " != tx " + std::to_string(tx) + " + dropped " +
                                              std::to_string(dropped) + " + slow_path " +
                                              std::to_string(slow_path) + " + in flight " +
                                              std::to_string(in_flight));
  if (final && in_flight)
    return Status(Errc::kInvalidArgument,
                  std::to_string(in_flight) + " packets still in flight at the end");
  uint64_t by_reason = 0;
  for (const auto& [k, v] : drops_by_reason) by_reason += v;
  if (by_reason != dropped)
    return Status(Errc::kInvalidArgument, "drops by reason sum to " + std::to_string(by_reason) +
                                              ", dropped is " + std::to_string(dropped));
  by_reason = 0;
  for (const auto& [k, v] : slow_path_by_reason) by_reason += v;
  if (by_reason != slow_path)
    return Status(Errc::kInvalidArgument, "slow path by reason sums to " +
                                              std::to_string(by_reason) + ", slow_path is " +
                                              std::to_string(slow_path));
  return Status::ok();
}

/// The frames' memory, known before any frame is allocated: each worker holds
/// frames_in_flight + 1 frames (frame_buffer_bytes and the chain's tail room) plus per-packet
/// metadata and module slots (counted as 512 bytes a packet). More than 3/4 of the machine's
/// memory is refused with the numbers, instead of a slow death by swapping.
Status check_frame_memory(const RunConfig& c, uint64_t tail_room) {
  const uint64_t per_frame = frame_buffer_bytes(c.batch) + tail_room + uint64_t(c.batch) * 512;
  const uint64_t need      = uint64_t(c.workers) * (frames_in_flight(c) + 1) * per_frame;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const uint64_t have = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
  if (have == 0 || need <= have / 4 * 3) return Status::ok();
  auto gib = [](uint64_t b) {
    return std::to_string(b >> 30) + "." + std::to_string((b >> 20) % 1024 * 10 / 1024) + " GiB";
  };
  return Status(Errc::kCapacity,
                "workers " + std::to_string(c.workers) + " x batch " + std::to_string(c.batch) +
                    " needs " + gib(need) + " of frame memory (" +
                    std::to_string(frames_in_flight(c) + 1) +
                    " frames per worker), more than 3/4 of this machine's " + gib(have) +
                    "; lower workers or batch");
}

// The run's chain: the configured one, or the preset of `app` (taking the tables the caller
// loaded), built for the offload place when the run offloads.
Result<std::unique_ptr<Chain>> build_run_chain(const RunConfig& config, const RunInputs& in,
                                               bool offload) {
  BuildEnv env;
  env.port_count     = uint16_t(in.ports.size());
  for (const auto& p : in.ports) env.links.push_back(p->link());
  env.offload        = offload;
  env.offload_device = config.offload_device;
  env.seed           = config.seed;
  env.tables         = &in;  // its TableSource part
  const bool preset  = config.chain.empty();
  env.use_preloaded  = preset;
  const std::vector<ModuleSpec> specs = preset ? preset_chain(config, in) : config.chain;
  if (specs.empty())
    return Status(Errc::kNotSupported, "no chain: this program has no preset for app " +
                                           config.app +
                                           " (the chain modules' library builds them)");
  WARPATH_ASSIGN_OR_RETURN(std::unique_ptr<Chain> chain, Chain::build(specs, env));
  WARPATH_TRY(check_frame_memory(config, chain->tail_room(config.batch)));
  chain->set_schedule_sort(config.schedule == "sort");
  return chain;
}

// The offload master: launches of up to every worker's frames in flight, a core per lane (those
// --cpus lists after the workers', else core 0 and the core after the workers' when there is one).
std::unique_ptr<OffloadMaster> make_master(const RunConfig& config, const Chain& chain,
                                           unsigned cpus) {
  const uint32_t max_launch = std::max<uint32_t>(
      config.batch,
      uint32_t(std::min<uint64_t>(65536, uint64_t(config.batch) * config.workers *
                                                 frames_in_flight(config))));
  // A core per lane: those --cpus lists after the workers', else core 0 (the workers take
  // 1..W) and the core after the workers' when the machine has one.
  std::vector<int> lane_cpus;
  if (config.pin_threads) {
    if (!config.cpus.empty()) {
      for (size_t c = config.workers; c < config.cpus.size(); ++c)
        lane_cpus.push_back(config.cpus[c]);
    } else {
      lane_cpus.push_back(0);
      if (config.workers + 1 < cpus) lane_cpus.push_back(int(config.workers + 1));
    }
  }
  auto master = std::make_unique<OffloadMaster>(chain, max_launch, std::move(lane_cpus));
  master->set_launch_depth(config.offload_depth);
  master->set_min_round_trip_ns(uint64_t(config.offload_delay_us) * 1000);
  return master;
}

uint32_t packets_held(const RunConfig& config) {
  const uint64_t n = uint64_t(config.workers) * (frames_in_flight(config) + 1) * config.batch;
  return uint32_t(std::min<uint64_t>(n, UINT32_MAX));
}

Result<RunReport> run(const RunConfig& config, RunInputs& in, const RunHooks& hooks) {
  WARPATH_TRY(config.validate());
  if (in.ports.empty()) return Status(Errc::kInvalidArgument, "no ports");
  if (in.ports.size() > 65535) return Status(Errc::kInvalidArgument, "more than 65535 ports");
  const bool want_offload = config.engine != Offload::kCpu;
  const bool have_device  = config.offload_device == "cpu" || cuda_device_count() > 0;
  if (config.engine == Offload::kGpu && !have_device)
    return Status(Errc::kNotSupported,
                  "--engine gpu: no usable CUDA device (" + cuda_unavailable_reason() + ")");
  const bool offload = want_offload && have_device;

  WARPATH_ASSIGN_OR_RETURN(std::unique_ptr<Chain> chain, build_run_chain(config, in, offload));

  (void)ns_per_tick();  // calibrated here, not on the first progress report
  std::atomic<bool> stop{false};
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  std::unique_ptr<OffloadMaster> master = offload ? make_master(config, *chain, cpus) : nullptr;

  // RX queues round robin over the workers: every (port, queue) pair has one owner.
  std::vector<std::vector<std::pair<Port*, uint32_t>>> queues(config.workers);
  uint32_t k = 0;
  for (auto& p : in.ports)
    for (uint32_t q = 0; q < p->rx_queue_count(); ++q)
      queues[k++ % config.workers].push_back({p.get(), q});

  std::vector<Port*> ports;
  for (auto& p : in.ports) ports.push_back(p.get());
  std::vector<std::unique_ptr<Worker>> workers;
  for (uint32_t w = 0; w < config.workers; ++w) {
    WorkerSetup s;
    s.id            = w;
    s.chain         = chain.get();
    s.master        = master.get();
    s.policy        = config.engine;
    s.ports         = ports;
    s.rx_queues     = queues[w];
    s.slow_path     = in.slow_path.get();
    s.batch         = config.batch;
    s.delay_us      = config.delay_us;
    s.in_flight     = frames_in_flight(config);
    // Pinned packet memory pays when the master moves packet bytes (a packet job's, ESP's) on
    // a device: then frames are page-locked (arena slices registered with CUDA) and their
    // bytes go up and down as one DMA a frame (master.hpp, direct launches). Keys go through
    // the master's own pinned slabs either way.
    s.pinned_memory = master && master->moves_packet_bytes();
    s.zero_copy     = config.zero_copy;
    s.cpu           = !config.pin_threads   ? -1
                      : config.cpus.empty() ? int((w + 1) % cpus)
                                            : config.cpus[w % config.cpus.size()];
    s.stop          = &stop;
    workers.push_back(std::make_unique<Worker>(std::move(s)));
    WARPATH_TRY(workers.back()->init());
  }

  const std::string engines         = chain->engines(Place::kCpu);
  const std::string offload_engines = offload ? chain->engines(Place::kOffload) : std::string();
  auto label                        = [&](RunReport& r) {
    r.engine         = std::string(offload_name(config.engine)) + ": " +
                       (engines.empty() ? std::string("no engines (nothing to shade)") : engines);
    r.offload_engine = offload_engines;
  };

  std::shared_ptr<void> attached;
  if (hooks.attach) {
    WARPATH_ASSIGN_OR_RETURN(attached, hooks.attach(*chain, ports));
  }

  if (master) master->start();
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed  = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::vector<std::thread> threads;
  std::atomic<uint32_t> running{uint32_t(workers.size())};
  for (auto& w : workers)
    threads.emplace_back([&running, wp = w.get()] {
      wp->run();
      running.fetch_sub(1, std::memory_order_release);
    });

  double next_progress = hooks.progress_interval_s;
  while (running.load(std::memory_order_acquire) > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const double t = elapsed();
    if ((hooks.stop && hooks.stop->load()) || (config.duration_s > 0 && t >= config.duration_s))
      stop.store(true);
    if (hooks.reload && hooks.reload->exchange(false))
      for (const std::string& line : chain->reload())
        if (hooks.notice) hooks.notice(line);
    for (auto& w : workers)
      if (!w->error().is_ok()) stop.store(true);
    if (hooks.progress && t >= next_progress) {
      RunReport r = snapshot(config, *chain, workers, in, master.get(), t);
      label(r);
      hooks.progress(r);
      next_progress = t + hooks.progress_interval_s;
    }
  }
  for (auto& th : threads) th.join();
  attached.reset();
  if (master) master->stop();
  const double seconds = elapsed();

  // Failures after the start are reported with the counters, not instead of them.
  std::vector<std::string> errors, warnings = chain->warnings();
  for (auto& w : workers)
    if (!w->error().is_ok()) errors.push_back(w->error().message());
  for (auto& p : in.ports) {
    Status s = p->flush();
    if (!s.is_ok()) errors.push_back(s.message());
    for (std::string& text : p->warnings()) warnings.push_back(std::move(text));
  }
  if (in.slow_path) {
    Status s = in.slow_path->flush();
    if (!s.is_ok()) errors.push_back(s.message());
  }

  RunReport r = snapshot(config, *chain, workers, in, master.get(), seconds);
  r.errors    = std::move(errors);
  r.warnings  = std::move(warnings);
  label(r);
  r.final = true;
  if (r.chunks) r.gpu_share = double(r.gpu_chunks) / double(r.chunks);
  LatencyHistogram lat;
  for (auto& w : workers) lat.merge(w->latency());
  r.latency.count   = lat.count();
  r.latency.mean_us = lat.mean() / 1e3;
  r.latency.p50_us  = double(lat.quantile(0.5)) / 1e3;
  r.latency.p99_us  = double(lat.quantile(0.99)) / 1e3;
  r.latency.p999_us = double(lat.quantile(0.999)) / 1e3;
  r.latency.max_us  = double(lat.max()) / 1e3;
  return r;
}

}  // namespace warpath::runtime
