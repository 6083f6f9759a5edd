// The generator port (gen:RATE[:COUNT]): a benchmark source that behaves like a NIC.
//
// Frames
//   Each RX queue q owns a pool of kPoolFrames frames built once by gen::generate_traffic()
//   (seed = options.seed + q, kPoolFlows flows, the profile's mix) and replays it cyclically:
//   rx_burst() is one memcpy per packet into the batch and one clock read per burst, so the
//   port costs little next to what it feeds. Frames longer than options.frame_bytes are cut
//   to it (caplen; len keeps the wire length), as a snap length would.
//
// Rate model
//   At a set rate (split evenly over the queues) packet s of a queue arrives s / rate seconds
//   after the queue's first rx_burst() (steady clock) and its timestamp is that arrival time on
//   CLOCK_REALTIME. Packets that have arrived but were not read wait in a modelled RX ring of
//   options.ring_frames packets; beyond that they are lost and counted as rx_dropped (the pool
//   cursor skips them, as a NIC ring overflowing loses them). With no rate every rx_burst()
//   fills what it is asked for, stamped with the time of the call.
//   When nothing is due, rx_burst() returns 0 at once.
//
// COUNT
//   Split over the queues (the remainder to queue 0). A queue ends (rx_done) once the packets
//   it delivered plus those it dropped reach its share.
//
// Profiles (options.gen_profile): modifiers joined by '+', applied to the defaults of
//   gen::TrafficParams (IMIX sizes, 25 % IPv6 flows, 10 % 802.1Q, TCP/UDP/ICMP 6:3:1):
//   default | imix | uniform | min (64-byte frames) | max (1518-byte frames) | ipv4 | ipv6 |
//   novlan | tcp | udp        e.g. "ipv4+udp+min" for PacketShader's 64-byte IPv4 UDP load.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "runtime/ports/port_impl.hpp"
#include "warpath/gen/traffic.hpp"

namespace warpath::runtime::detail {

namespace {

constexpr uint32_t kPoolFrames = 4096;
constexpr uint32_t kPoolFlows  = 1024;
constexpr uint32_t kMaxQueues  = 256;

Status apply_profile(std::string_view name, std::string_view profile, gen::TrafficParams& p) {
  if (profile.empty()) return Status::ok();
  size_t start = 0;
  for (;;) {
    const size_t plus        = profile.find('+', start);
    const std::string_view t = profile.substr(
        start, plus == std::string_view::npos ? std::string_view::npos : plus - start);
    if (t == "default" || t == "imix") {
      if (t == "imix") p.sizes = gen::SizeMix::kImix;
    } else if (t == "uniform") {
      p.sizes = gen::SizeMix::kUniform;
    } else if (t == "min" || t == "64") {
      p.sizes    = gen::SizeMix::kFixed;
      p.min_size = 64;
    } else if (t == "max" || t == "1518") {
      p.sizes    = gen::SizeMix::kFixed;
      p.min_size = 1518;
    } else if (t == "ipv4") {
      p.ipv6_share = 0;
    } else if (t == "ipv6") {
      p.ipv6_share = 1;
    } else if (t == "novlan") {
      p.vlan_share = 0;
    } else if (t == "tcp" || t == "udp") {
      p.tcp_share  = t == "tcp" ? 1 : 0;
      p.udp_share  = t == "udp" ? 1 : 0;
      p.icmp_share = 0;
    } else {
      return port_error(Errc::kInvalidArgument, name,
                        "gen: unknown traffic profile '" + std::string(t) + "' in '" +
                            std::string(profile) +
                            "' (modifiers joined by '+': default, imix, uniform, min, max, ipv4, "
                            "ipv6, novlan, tcp, udp)");
    }
    if (plus == std::string_view::npos) return Status::ok();
    start = plus + 1;
  }
}

uint64_t steady_ns() noexcept {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

struct Frame {
  const uint8_t* data;
  uint32_t caplen, len;
};

// One RX queue. Everything but `done` is touched only by the queue's thread.
struct GenQueue {
  packet::PacketBatch pool;
  std::vector<Frame> frames;
  uint32_t cursor       = 0;
  bool bounded          = false;
  uint64_t limit        = 0;  // packets delivered + dropped before the queue ends (when bounded)
  uint64_t seq          = 0;  // packets delivered + dropped so far
  double rate           = 0;  // packets per second; 0 = as fast as asked
  double period_ns      = 0;
  bool started          = false;
  uint64_t start_steady = 0, start_real = 0;
  std::atomic<bool> done{false};
};

class GenPort final : public Port {
 public:
  GenPort(std::string_view name, const PortSpec& spec, const PortOptions& options)
      : name_(name),
        spec_(spec),
        options_(options),
        counters_(std::clamp(options.rx_queues, 1u, kMaxQueues), options.workers) {}

  Status init(const gen::TrafficParams& base) {
    const uint32_t nq = std::clamp(options_.rx_queues, 1u, kMaxQueues);
    for (uint32_t q = 0; q < nq; ++q) {
      auto queue           = std::make_unique<GenQueue>();
      gen::TrafficParams p = base;
      p.seed               = options_.seed + q;
      p.port               = options_.index;
      auto pool            = gen::batch_for(p.count, std::max(p.max_size, p.min_size));
      if (!pool.is_ok()) return port_error(pool.status().code(), name_, pool.status().message());
      queue->pool = std::move(pool).value();
      if (Status s = gen::generate_traffic(p, queue->pool); !s.is_ok())
        return port_error(s.code(), name_, "gen: " + s.message());
      for (uint32_t i = 0; i < queue->pool.size(); ++i) {
        const packet::PacketMeta& m = queue->pool.meta(i);
        queue->frames.push_back(
            {queue->pool.data(i), std::min(m.caplen, options_.frame_bytes), m.len});
      }
      if (spec_.count > 0) {
        queue->bounded = true;
        queue->limit   = spec_.count / nq + (q == 0 ? spec_.count % nq : 0);
        if (queue->limit == 0) queue->done.store(true, std::memory_order_relaxed);
      }
      if (spec_.rate_pps > 0) {
        queue->rate      = spec_.rate_pps / nq;
        queue->period_ns = 1e9 / queue->rate;
      }
      queues_.push_back(std::move(queue));
    }
    return Status::ok();
  }

  const std::string& name() const noexcept override { return name_; }

  std::string describe() const override {
    std::string d = "gen ";
    if (spec_.rate_pps > 0) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.6g pps", spec_.rate_pps);
      d += buf;
    } else {
      d += "max rate";
    }
    d += spec_.count ? ", " + std::to_string(spec_.count) + " packets" : ", unbounded";
    d += ", " + std::to_string(queues_.size()) + (queues_.size() == 1 ? " queue" : " queues");
    d += ", profile " + options_.gen_profile + ", seed " + std::to_string(options_.seed);
    return d;
  }

  uint32_t rx_queue_count() const noexcept override { return uint32_t(queues_.size()); }

  Result<uint32_t> rx_burst(uint32_t q, packet::PacketBatch& batch, uint32_t max) override {
    if (q >= queues_.size())
      return port_error(Errc::kInvalidArgument, name_, "no RX queue " + std::to_string(q));
    GenQueue& Q = *queues_[q];
    if (max == 0 || Q.done.load(std::memory_order_relaxed)) return 0u;

    uint64_t want = max;
    if (Q.bounded) want = std::min(want, Q.limit - Q.seq);
    uint64_t ts = 0;
    if (Q.rate > 0) {
      const uint64_t now = steady_ns();
      if (!Q.started) {
        Q.started      = true;
        Q.start_steady = now;
        Q.start_real   = realtime_ns();
      }
      // Packets 0 .. due-1 have arrived (packet s arrives at s * period).
      const double elapsed = double(now - Q.start_steady);
      uint64_t due         = uint64_t(elapsed / Q.period_ns) + 1;
      if (Q.bounded) due = std::min(due, Q.limit);
      uint64_t waiting = due > Q.seq ? due - Q.seq : 0;
      if (waiting > options_.ring_frames) {
        const uint64_t lost = waiting - options_.ring_frames;
        Q.seq += lost;
        Q.cursor = uint32_t((Q.cursor + lost) % Q.frames.size());
        counters_.rx_dropped(q, lost);
        waiting = options_.ring_frames;
      }
      want = std::min(want, waiting);
      if (want == 0) {
        // Nothing has arrived: return at once (a wait here would stall the worker's other
        // queues; the worker backs off itself when all of them are idle).
        if (Q.bounded && Q.seq >= Q.limit) Q.done.store(true, std::memory_order_relaxed);
        return 0u;
      }
    } else {
      ts = realtime_ns();
    }

    uint32_t n               = 0;
    uint64_t bytes           = 0;
    const uint32_t pool_size = uint32_t(Q.frames.size());
    for (; n < want; ++n) {
      const Frame& f = Q.frames[Q.cursor];
      if (Q.rate > 0) ts = Q.start_real + uint64_t(double(Q.seq + n) * Q.period_ns);
      uint8_t* dst = batch.append_uninitialized(f.caplen, f.len, ts, options_.index);
      if (!dst) break;
      std::memcpy(dst, f.data, f.caplen);
      bytes += f.len;
      Q.cursor = Q.cursor + 1 == pool_size ? 0 : Q.cursor + 1;
    }
    Q.seq += n;
    counters_.rx(q, n, bytes);
    if (Q.bounded && Q.seq >= Q.limit) Q.done.store(true, std::memory_order_relaxed);
    return n;
  }

  bool rx_done(uint32_t q) const noexcept override {
    return q >= queues_.size() || queues_[q]->done.load(std::memory_order_relaxed);
  }

  uint32_t tx_burst(uint32_t worker, packet::PacketBatch& batch,
                    Span<const uint32_t> which) override {
    return counters_.discard(worker, batch, which);
  }

  PortStats stats() const override { return counters_.sum(); }

 private:
  std::string name_;
  PortSpec spec_;
  PortOptions options_;
  PortCounters counters_;
  std::vector<std::unique_ptr<GenQueue>> queues_;
};

}  // namespace

Result<std::unique_ptr<Port>> open_gen_port(std::string_view name, const PortSpec& spec,
                                            const PortOptions& options) {
  if (spec.rate_pps < 0 || !std::isfinite(spec.rate_pps))
    return port_error(Errc::kInvalidArgument, name, "gen: rate must be a finite number >= 0");
  if (options.rx_queues > kMaxQueues)
    return port_error(Errc::kInvalidArgument, name,
                      "gen: at most " + std::to_string(kMaxQueues) + " RX queues (asked for " +
                          std::to_string(options.rx_queues) + ")");
  if (options.frame_bytes == 0)
    return port_error(Errc::kInvalidArgument, name, "gen: frame_bytes must be positive");
  gen::TrafficParams params;
  params.count = kPoolFrames;
  params.flows = kPoolFlows;
  WARPATH_TRY(apply_profile(name, options.gen_profile, params));
  auto port = std::make_unique<GenPort>(name, spec, options);
  WARPATH_TRY(port->init(params));
  return std::unique_ptr<Port>(std::move(port));
}

}  // namespace warpath::runtime::detail
