// src/runtime/ports/port_impl.hpp: what the port implementations share (not a public header).
//
// Each kind of port lives in its own file and is reached only through its open_*_port()
// function: the built-in kinds (gen, null, afpacket) from open_builtin_port() in warpath_runtime,
// pcap and afxdp from open_port() in warpath_runtime_sys (they need libpcap and libxdp).
//
// Counters are per RX queue and per TX worker, each on its own cache line: every slot has one
// writer (the queue's or the worker's thread), which stores with relaxed atomics once per burst,
// so stats() may read them from any thread at any time without locks.
#pragma once
#include <time.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "warpath/runtime/port.hpp"

namespace warpath::runtime::detail {

/// "port NAME: what".
inline Status port_error(Errc code, std::string_view name, std::string_view what) {
  std::string m = "port ";
  m.append(name).append(": ").append(what);
  return Status(code, std::move(m));
}

/// CLOCK_REALTIME in nanoseconds (the PacketMeta::timestamp_ns clock).
inline uint64_t realtime_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

/// One counter slot: a single writer adds with add() (a relaxed load and store, no locked
/// instruction); any thread reads.
struct alignas(64) CounterSlot {
  std::atomic<uint64_t> packets{0}, bytes{0}, other{0};  // other: rx_dropped or tx_errors

  static void add(std::atomic<uint64_t>& c, uint64_t v) noexcept {
    c.store(c.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
  }
};

/// Wire bytes of the packets `which` of `batch`.
inline uint64_t wire_bytes(const packet::PacketBatch& batch, Span<const uint32_t> which) noexcept {
  uint64_t bytes = 0;
  for (uint32_t i : which) bytes += batch.meta(i).len;
  return bytes;
}

/// Per-queue RX and per-worker TX counters of one port. A tx_burst() with a worker id beyond
/// `workers` (a caller error, but not worth a crash) shares slot id % workers with fetch_add.
class PortCounters {
 public:
  PortCounters(uint32_t rx_queues, uint32_t workers)
      : rx_(std::make_unique<CounterSlot[]>(rx_queues ? rx_queues : 1)),
        tx_(std::make_unique<CounterSlot[]>(workers ? workers : 1)),
        rx_n_(rx_queues ? rx_queues : 1),
        tx_n_(workers ? workers : 1) {}

  void rx(uint32_t q, uint64_t packets, uint64_t bytes) noexcept {
    CounterSlot::add(rx_[q].packets, packets);
    CounterSlot::add(rx_[q].bytes, bytes);
  }
  void rx_dropped(uint32_t q, uint64_t packets) noexcept {
    CounterSlot::add(rx_[q].other, packets);
  }
  void tx(uint32_t worker, uint64_t packets, uint64_t bytes, uint64_t errors) noexcept {
    if (worker < tx_n_) {
      CounterSlot& s = tx_[worker];
      CounterSlot::add(s.packets, packets);
      CounterSlot::add(s.bytes, bytes);
      CounterSlot::add(s.other, errors);
    } else {
      CounterSlot& s = tx_[worker % tx_n_];
      s.packets.fetch_add(packets, std::memory_order_relaxed);
      s.bytes.fetch_add(bytes, std::memory_order_relaxed);
      s.other.fetch_add(errors, std::memory_order_relaxed);
    }
  }
  /// tx_burst of a port that discards what it is given (null, gen): counted as sent.
  uint32_t discard(uint32_t worker, const packet::PacketBatch& batch,
                   Span<const uint32_t> which) noexcept {
    tx(worker, which.size, wire_bytes(batch, which), 0);
    return which.size;
  }
  PortStats sum() const noexcept {
    PortStats s;
    for (uint32_t q = 0; q < rx_n_; ++q) {
      s.rx += rx_[q].packets.load(std::memory_order_relaxed);
      s.rx_bytes += rx_[q].bytes.load(std::memory_order_relaxed);
      s.rx_dropped += rx_[q].other.load(std::memory_order_relaxed);
    }
    for (uint32_t w = 0; w < tx_n_; ++w) {
      s.tx += tx_[w].packets.load(std::memory_order_relaxed);
      s.tx_bytes += tx_[w].bytes.load(std::memory_order_relaxed);
      s.tx_errors += tx_[w].other.load(std::memory_order_relaxed);
    }
    return s;
  }

 private:
  std::unique_ptr<CounterSlot[]> rx_, tx_;
  uint32_t rx_n_, tx_n_;
};

/// The link of live interface `iface` (SIOCGIFHWADDR for its MAC, all zero when that fails;
/// getifaddrs for its IPv4 and IPv6 addresses).
PortLink interface_link(const std::string& iface, bool promiscuous);

// The kinds. `spec.kind` is already known to be the function's kind.
Result<std::unique_ptr<Port>> open_tap_port(std::string_view name, const PortSpec& spec,
                                            const PortOptions& options);
Result<std::unique_ptr<Port>> open_gen_port(std::string_view name, const PortSpec& spec,
                                            const PortOptions& options);
Result<std::unique_ptr<Port>> open_null_port(std::string_view name, const PortOptions& options);
Result<std::unique_ptr<Port>> open_afpacket_port(std::string_view name, const PortSpec& spec,
                                                 const PortOptions& options);
// In warpath_runtime_sys.
Result<std::unique_ptr<Port>> open_pcap_port(std::string_view name, const PortSpec& spec,
                                             const PortOptions& options);
Result<std::unique_ptr<Port>> open_afxdp_port(std::string_view name, const PortSpec& spec,
                                              const PortOptions& options);

}  // namespace warpath::runtime::detail
