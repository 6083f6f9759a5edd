// src/runtime/worker.hpp
//
// A worker thread: RX from its own queues into frames (closed when full or when the oldest
// packet has waited the delay bound), the chain's pre-shade, its shade here or handed to the
// master (offload policy), then, strictly in frame order, the chain's post-shade and TX. Counters are written only by the
// worker (relaxed atomics, so the progress display can read them at any time).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "runtime/frame_window.hpp"
#include "runtime/latency_histogram.hpp"
#include "runtime/master.hpp"
#include "runtime/offload_policy.hpp"
#include "warpath/runtime/chain.hpp"
#include "warpath/runtime/port.hpp"

namespace warpath::runtime {

struct WorkerCounters {
  std::atomic<uint64_t> rx{0}, rx_bytes{0}, tx_bytes{0};
  std::atomic<uint64_t> chunks{0}, cpu_chunks{0}, gpu_chunks{0}, cpu_packets{0}, gpu_packets{0};
  std::atomic<uint64_t> shade_cpu_ns{0};
  /// Cycle-clock ticks of the worker's own stages (thread_util.hpp: ticks()): receiving
  /// (rx bursts that brought packets), parsing, sending (verdicts to ports, the slow path and
  /// replies), and every loop iteration that did work (`busy`: the rest is bookkeeping). The
  /// modules' own time is ModuleCounters::ticks. RunReport::stages turns them into ns a packet.
  std::atomic<uint64_t> rx_ticks{0}, parse_ticks{0}, tx_ticks{0}, busy_ticks{0};
  /// Router-originated ICMP Time Exceeded errors (outside rx = tx + dropped + slow_path).
  std::atomic<uint64_t> icmp_sent{0}, icmp_suppressed{0};
  std::atomic<uint64_t> originated{0};  ///< copies of module-originated packets sent (PACKET_OUT)
  std::atomic<uint64_t> copies{0};      ///< frames sent beyond one per forwarded kOutMany packet
  /// Forwarded packets sent as IP fragments, and the fragments the ports took (RunReport's).
  std::atomic<uint64_t> fragmented{0}, fragments{0};
  std::unique_ptr<std::atomic<uint64_t>[]> by_reason;  ///< one per reason of the chain
  std::unique_ptr<ModuleCounters[]> modules;           ///< one per module of the chain
  std::atomic<double> share{0};
  /// The auto policy's measured worker cost a packet of each path (0: not measured) and
  /// whether it declined the GPU path (offload_policy.hpp).
  std::atomic<double> cost_cpu{0}, cost_offload{0};
  std::atomic<bool> declined{false};
  /// The worker's frames (frame_window.hpp): how many it has, how many its rate and the
  /// offload's round trip ask for (0 until an offloaded frame came back; not capped), the two
  /// estimates, and how often it found none free (a wait begins when a frame was wanted and
  /// none was free; it ends when one is taken).
  std::atomic<uint64_t> frames{0}, frames_needed{0}, round_trip_ns{0}, close_interval_ns{0};
  std::atomic<uint64_t> frame_waits{0};
};

/// Packet buffer bytes of one frame of `batch` packets: `batch` standard 2 KiB cells, and at
/// least room for one record of the largest capture (262,144 bytes: jumbo, GSO and jumbogram
/// frames fit small batches too). Worker::init allocates it; the pipeline checks the total up
/// front.
inline size_t frame_buffer_bytes(uint32_t batch) {
  return std::max<size_t>(size_t(batch) * packet::PacketBatch::kDefaultCellBytes,
                          size_t(262144) + packet::PacketBatch::kDefaultCellBytes);
}

struct WorkerSetup {
  uint32_t id           = 0;
  const Chain* chain    = nullptr;
  OffloadMaster* master = nullptr;  ///< nullptr: everything on the CPU
  Offload policy        = Offload::kCpu;
  std::vector<Port*> ports;                           ///< numbered ports (index = port number)
  std::vector<std::pair<Port*, uint32_t>> rx_queues;  ///< this worker's (port, queue)
  Port* slow_path = nullptr;
  /// in_flight: the most frames the worker keeps in flight (it has one more, filling). With a
  /// master it starts with at most kStartInFlight of them and adds frames as its rate times
  /// the offload's round trip asks (frame_window.hpp); without one it has them all from init.
  uint32_t batch = 1024, delay_us = 200, in_flight = 4;
  bool pinned_memory            = false;
  /// Frames in the packet arena, so ports may lend them packets (PacketBatch::attach); they
  /// fall back to their own memory when the arena has no room.
  bool zero_copy                = false;
  int cpu                       = -1;
  const std::atomic<bool>* stop = nullptr;
};

class Worker {
 public:
  /// Frames in flight a worker with a master starts with (the cpu policy's number).
  static constexpr uint32_t kStartInFlight = 4;
  explicit Worker(WorkerSetup setup);
  /// Allocates the chunk pool; kOutOfMemory when it cannot.
  Status init();
  /// The thread body: returns when stopped (or its sources ended) and everything is sent.
  void run();
  const Status& error() const noexcept { return error_; }
  /// Whether this worker parses its frames (the chain's modules read headers, or a port's MTU
  /// is checked against them).
  bool parses() const noexcept { return cfg_.chain->parses() || parse_for_mtu_; }
  const WorkerCounters& counters() const noexcept { return counters_; }
  /// Valid after run() returned.
  const LatencyHistogram& latency() const noexcept { return latency_; }
  /// The stateful modules' per-worker states (their stats are read by the snapshot).
  const Chain::States& states() const noexcept { return states_; }

 private:
  bool receive(Frame& c, uint64_t& now);
  Status close(Frame* c);
  Status finish(Frame& c);
  void send_replies(Frame& c);
  void send_whole(Frame& c, size_t port, Span<const uint32_t> run, uint64_t& tx_bytes,
                  uint64_t& many_copies);
  void fragment_out(Frame& c, size_t port, Span<const uint32_t> run, uint64_t& tx_bytes);
  Frame* take_free();
  /// One more frame in the pool (init, and take_free when the window asks for more).
  Status add_frame();
  /// An offloaded frame's launch took `ns` (Frame::staged_ns to done_ns): the window and its
  /// counters.
  void note_round_trip(uint64_t ns);
  void publish_policy();
  void add_module_ticks();

  WorkerSetup cfg_;
  OffloadPolicy policy_;
  FrameWindow window_;
  bool waiting_for_frame_ = false;
  static constexpr uint32_t kRoundTripWarmup = 4;  ///< first round trips not counted
  uint32_t round_trips_                      = 0;
  bool growth_failed_     = false;  ///< an added frame could not be allocated: no more tries
  std::vector<std::unique_ptr<Frame>> pool_;
  std::vector<Frame*> free_;
  /// Closed frames in order, each with the worker's own time for it so far (close(): the pre
  /// stage and the CPU shade or the submit; measured only where the policy wants it).
  struct Pending {
    Frame* frame;
    uint64_t worker_ns;
  };
  std::deque<Pending> pending_;
  Chain::States states_;
  static constexpr uint64_t kIdleCallNs = 100'000'000;  ///< Module::idle at most every 100 ms
  uint64_t last_idle_call_ = 0;
  Chain::Scratch selection_;
  std::vector<uint64_t> module_ticks_;  ///< per module, added to the counters after each frame
  /// Indices of a frame's packets, at most a frame's worth (sized once): push_back without
  /// the vector's capacity test, in the loop that sorts a frame's packets by way out.
  struct IndexList {
    std::vector<uint32_t> at;
    uint32_t n = 0;
    void reset(uint32_t capacity) { at.assign(capacity, 0), n = 0; }
    void clear() noexcept { n = 0; }
    void push_back(uint32_t i) noexcept { at[n++] = i; }
    bool empty() const noexcept { return n == 0; }
    uint32_t size() const noexcept { return n; }
    const uint32_t* data() const noexcept { return at.data(); }
    const uint32_t* begin() const noexcept { return at.data(); }
    const uint32_t* end() const noexcept { return at.data() + n; }
    uint32_t operator[](size_t k) const noexcept { return at[k]; }
  };
  std::vector<IndexList> out_lists_;
  IndexList slow_list_;
  void send_originated();
  packet::PacketBatch origin_;          ///< worker 0: packets modules originate
  std::vector<uint64_t> origin_masks_;
  IndexList many_list_;               ///< packets sent out of several ports (kOutMany)
  std::vector<uint8_t> many_failed_;  ///< per packet: a copy could not be sent
  std::vector<uint32_t> first_port_;  ///< per kOutMany packet: its first port (latency sample)
  packet::PacketBatch icmp_;  ///< replies (Time Exceeded) of the frame being finished
  packet::PacketBatch frag_;  ///< fragments of the frame's packets larger than their MTU
  std::vector<uint32_t> frag_index_;
  std::vector<uint32_t> link_mtu_;  ///< per port: its link's MTU (PortLink::mtu; 0 none)
  bool parse_for_mtu_ = false;      ///< the chain does not parse, but a port has an MTU
  struct FragPending {
    uint32_t packet, first, count;  ///< a packet of the frame and its fragments in frag_
  };
  std::vector<FragPending> frag_pending_;
  uint32_t frag_ident_ = 0;  ///< IPv6 Fragment header identification (RFC 8200 4.5)
  std::vector<std::vector<uint32_t>> port_lists_;  ///< per port: ICMP replies or originated packets
  uint64_t send_port_lists(packet::PacketBatch& batch);
  std::vector<uint8_t> icmp_frame_;
  std::vector<uint64_t> reason_scratch_;
  WorkerCounters counters_;
  LatencyHistogram latency_;
  Status error_;
  uint32_t next_queue_ = 0;
};

}  // namespace warpath::runtime
