// include/warpath/runtime/frame.hpp
//
// A frame: the unit a chain of modules processes (PacketShader's chunk, VPP's frame). A worker
// owns a small pool of frames, reused for the whole run; nothing here allocates per packet.
//
// Per-packet metadata: one fixed layout (Click's annotations, VPP's buffer opaque), columns of
// `capacity` entries. Modules read and set these and nothing else of the frame's; what a module
// needs on top (its keys and answers) lives in its own slot (module.hpp: ModuleSlot).
//
//   column     field (module.hpp)  what
//   batch      -                   the packets, in the order they were received (bytes may be
//                                  rewritten in place by a module that sets kBytes)
//   rx_ns      -                   monotonic receive time (latency is measured from it)
//   infos      kParse              parse results (the chain's head, the parser)
//   flow       kFlow               flow id (0 = none), set by a flow-tracking module
//   context    kContext            context key (GASPP section 3.1): 0 = the default context; a
//                                  module sets another (an ACL rule's goto:NAME) and later
//                                  modules declared `when=NAME` run only on those packets
//   reason     kVerdict            kContinue while no module has decided, else the id of the
//                                  reason that decided (reasons.hpp), which gives the verdict
//   out        kVerdict            output port of a forwarded packet, or kOutMany
//   out_mask   kVerdict            the ports of a kOutMany packet (one copy out of each): bit p
//                                  port p, kOutSlowPathBit a copy to the slow path as well (an
//                                  OpenFlow flood, several outputs, output plus controller)
//   frag_mtu   kVerdict            0, or the IP MTU a forwarded packet larger than it is
//                                  fragmented to on output (forward/fragment.hpp): set by a
//                                  module that may make a packet too large for its path and
//                                  whose rules let it be fragmented (esp-out: an IPv4 packet
//                                  without DF, RFC 4301 8.1); a single-port packet only
//
// The verdicts: continue (the next module sees the packet), forward out of `out`, drop or slow
// path (with a reason). A decided packet is not shown to later modules.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/packet/batch.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::runtime {

/// out[i] of a forwarded packet sent out of every port of out_mask[i].
inline constexpr uint16_t kOutMany = 0xFFFE;
/// out_mask[i]: a copy to the slow path too; ports 0..62 have bits of their own.
inline constexpr uint64_t kOutSlowPathBit = uint64_t(1) << 63;
inline constexpr uint32_t kMaxMaskPorts   = 63;

/// reason[i] of a packet no module has decided yet.
inline constexpr uint16_t kContinue = 0xFFFF;
/// context[i] of a packet nothing has tagged.
inline constexpr uint16_t kDefaultContext = 0;

/// What a stateful module keeps per worker (a flow table): made once per worker by
/// Module::make_state and reached from every frame of that worker through its slot. A worker
/// finishes its frames in arrival order, so a module's post sees the worker's packets in order.
/// `stats` are the counters the report shows for the module (Module::stat_names order): the
/// owner writes them with relaxed stores, the progress snapshot reads them at any time.
struct ModuleState {
  explicit ModuleState(size_t count = 0)
      : stats(std::make_unique<std::atomic<uint64_t>[]>(count)), stat_count(count) {}
  virtual ~ModuleState() = default;
  std::unique_ptr<std::atomic<uint64_t>[]> stats;
  size_t stat_count;
};

/// What a module keeps per frame (keys, answers): made by Module::make_slot. `state` is the
/// worker's ModuleState of the module (nullptr for a stateless module).
struct ModuleSlot {
  virtual ~ModuleSlot() = default;
  ModuleState* state = nullptr;
};

struct Frame {
  explicit Frame(packet::PacketBatch b)
      : batch(std::move(b)),
        capacity(batch.max_packets()),
        rx_ns(capacity),
        infos(capacity),
        flow(capacity),
        context(capacity),
        reason(capacity),
        out(capacity),
        out_mask(capacity),
        frag_mtu(capacity) {}

  packet::PacketBatch batch;
  uint32_t capacity;
  std::vector<uint64_t> rx_ns;
  std::vector<packet::PacketInfo> infos;
  std::vector<uint32_t> flow;
  std::vector<uint16_t> context;
  std::vector<uint16_t> reason;
  std::vector<uint16_t> out;
  std::vector<uint64_t> out_mask;
  std::vector<uint16_t> frag_mtu;
  /// One per module of the chain, by position (nullptr for a module without one).
  std::vector<std::unique_ptr<ModuleSlot>> slots;

  // Pipeline bookkeeping (worker.cpp, master.cpp).
  bool offloaded    = false;
  uint64_t shade_ns = 0;  ///< time the shade stage took where it ran
  /// Offloaded frames: when the master took it into a launch and when that launch completed:
  /// the launch's round trip, which sizes the worker's frames (frame_window.hpp), without the
  /// frame's wait in the submit ring (queueing at a busy master, which more frames would only
  /// lengthen).
  uint64_t staged_ns = 0, done_ns = 0;
  std::atomic<bool> done{false};
  Status error;  ///< set by the shade stage on failure (read after done)

  uint32_t size() const noexcept { return batch.size(); }
  /// Empties the frame for reuse (its batch, offload flag, completion and error). The packets'
  /// metadata is reset per packet by Chain::pre, which knows how many there are.
  void reset() {
    batch.clear();
    offloaded = false;
    done.store(false, std::memory_order_relaxed);
    error = Status::ok();
  }
};

}  // namespace warpath::runtime
