// src/modules/defrag_module.cpp: the `defrag` module: IP defragmentation in a chain
// (include/warpath/defrag/defrag.hpp has the rules: overlap policies, RFC 5722, tiny
// fragments, the bounds).
//
// What: fragments are held until their datagram completes; the whole datagram then goes on in
// the place of the fragment that completed it (its bytes moved to the frame's tail room:
// PacketBatch::relocate, parsed again), as `warpath defrag` writes a capture, so the modules
// after it (acl, flow, stream, nids, esp-in) see datagrams, not fragments. A held fragment is
// counted as "defrag_held" (it leaves as part of its datagram), a refused one as "defrag_drop"
// (the engine's counters say why), and a datagram the frame has no room left for as
// "defrag_no_room" (`room` sizes that room: 8 KiB per packet of the frame by default, at least
// one datagram of 64 KiB, at most 16 MiB).
// So every fragment received is accounted for: rx = tx + drops + slow path still holds.
//
// State: one defragmenter per worker (fragments of a datagram reach one worker when RX queues
// are hashed by addresses, as RSS and AF_PACKET fanout hash fragments). post() adds the
// worker's packets in arrival order, whatever the chain's scheduling order. Its clock is the
// fragments' timestamps; an idle worker moves it on by the time that passed (idle()), so
// unfinished datagrams time out on a quiet link too.
//
// Contract: reads parse; sets parse, bytes and verdict (a stage ends after it: the modules after
// it gather their keys from the datagrams).
#include <algorithm>
#include <cstring>

#include "modules/module_helpers.hpp"
#include "packet/core/parse_core.hpp"
#include "warpath/defrag/defrag.hpp"
#include "warpath/runtime/module.hpp"

namespace warpath::runtime {
namespace {

// The kind's contract, declared once (ModuleInfo) and kept by every instance.
ModuleContract defrag_contract() {
  return {field_bit(Field::kParse),
          field_bit(Field::kParse) | field_bit(Field::kBytes) | field_bit(Field::kVerdict)};
}

// The stats, in stat_names() order.
enum Stat : size_t {
  kFragments,
  kCompleted,
  kHeldNow,
  kBufferedBytes,
  kOverlaps,
  kIpv6Overlap,
  kTiny,
  kTooLarge,
  kTooMany,
  kTimeout,
  kMemcap,
  kMaxDatagrams,
  kMalformed,
  kStatCount
};

struct DefragWorkerState : ModuleState {
  DefragWorkerState() : ModuleState(kStatCount) {}
  std::unique_ptr<defrag::Defragmenter> engine;
  std::vector<uint8_t> whole;  ///< the datagram last completed
  uint64_t clock = 0;          ///< the packets' clock (their timestamps), as the engine's
  uint64_t mono  = 0;          ///< Frame::rx_ns of the last packet, for idle()
};

/// A frame's tail room at least: one datagram of the largest size (65,535 bytes of IP payload
/// behind its headers and link layer) in 2,048-byte cells.
constexpr size_t kMinTailRoom = 36 * 2048;
/// ... and at most this (a frame of 8,192 packets would otherwise keep 64 MiB).
constexpr size_t kMaxTailRoom = size_t(16) << 20;

struct Reasons {
  uint16_t held, dropped, no_room;
};

class DefragModule final : public Module {
 public:
  DefragModule(std::string engine, defrag::DefragConfig config, uint32_t room, Reasons r)
      : engine_(std::move(engine)), config_(config), room_(room), r_(r) {}
  std::string_view kind() const noexcept override { return "defrag"; }
  ModuleContract contract() const override { return defrag_contract(); }
  std::string describe() const override {
    return engine_ + ", policy " + defrag::frag_policy_name(config_.policy) + ", timeout " +
           std::to_string(config_.timeout_s) + " s, memcap " + std::to_string(config_.memcap >> 20) +
           " MiB per worker";
  }
  std::string engines(Place) const override { return engine_; }
  size_t tail_room(uint32_t batch) const noexcept override {
    return std::max(kMinTailRoom, std::min(kMaxTailRoom, size_t(batch) * room_));
  }
  std::vector<std::string> stat_names() const override {
    return {"fragments", "completed",   "held_now",  "buffered_bytes", "overlaps",
            "ipv6_overlap_dropped", "tiny_dropped", "too_large_dropped", "too_many_dropped",
            "timed_out", "memcap_dropped", "datagram_limit_dropped", "malformed"};
  }

  Result<std::unique_ptr<ModuleState>> make_state() const override {
    auto st = std::make_unique<DefragWorkerState>();
    WARPATH_ASSIGN_OR_RETURN(st->engine, defrag::make_defragmenter(engine_, config_));
    return std::unique_ptr<ModuleState>(std::move(st));
  }

  void post(Frame& f, ModuleSlot* slot, const Selection& sel) const override {
    auto& st = static_cast<DefragWorkerState&>(*slot->state);
    for (uint32_t i = 0, n = f.size(); i < n; ++i) {  // arrival order
      if (!sel.contains(i) || !(f.infos[i].flags & packet::kFragment)) continue;
      const packet::PacketMeta m = f.batch.meta(i);
      st.clock                   = std::max(st.clock, m.timestamp_ns);
      st.mono                    = f.rx_ns[i];
      st.whole.clear();
      switch (st.engine->add(f.infos[i], f.batch.data(i), m.caplen, m.timestamp_ns, st.whole)) {
        case defrag::FragResult::kNotFragment: break;
        case defrag::FragResult::kHeld: f.reason[i] = r_.held; break;
        case defrag::FragResult::kDropped: f.reason[i] = r_.dropped; break;
        case defrag::FragResult::kCompleted: {
          // In the fragment's own cells when it fits there, else in fresh ones at the tail.
          const auto size = uint32_t(st.whole.size());
          uint8_t* to     = nullptr;
          if (size <= f.batch.room(i)) {
            to                     = f.batch.data(i);
            f.batch.meta(i).caplen = size;
            f.batch.meta(i).len    = size;
          } else if (!(to = f.batch.relocate(i, size, size))) {
            f.reason[i] = r_.no_room;
            break;
          }
          std::memcpy(to, st.whole.data(), size);
          packet::core::parse_packet_into(to, size, size, f.infos[i]);
          break;
        }
      }
    }
    publish(st);
  }

  // No packet for a while: unfinished datagrams of a quiet link time out and give back their
  // memory.
  void idle(ModuleState& state, uint64_t mono_ns) const override {
    auto& st = static_cast<DefragWorkerState&>(state);
    if (!advance_idle_clock(st.clock, st.mono, mono_ns)) return;
    st.engine->advance(st.clock);
    publish(st);
  }

  Status finish(ModuleState& state) const override {
    auto& st = static_cast<DefragWorkerState&>(state);
    publish(st);
    return st.engine->status();  // a validate: engine's first difference fails the run
  }

 private:
  static void publish(DefragWorkerState& st) {
    const defrag::DefragCounters c = st.engine->counters();
    const uint64_t v[kStatCount]   = {c.fragments, c.completed, c.datagrams,     c.buffered_bytes,
                                      c.overlaps,  c.ipv6_overlap, c.tiny,      c.too_large,
                                      c.too_many,  c.timeout,   c.memcap,       c.max_datagrams,
                                      c.malformed};
    for (size_t s = 0; s < kStatCount; ++s) st.stats[s].store(v[s], std::memory_order_relaxed);
  }

  std::string engine_;
  defrag::DefragConfig config_;
  uint32_t room_;
  Reasons r_;
};

}  // namespace

ModuleInfo defrag_module_info() {
  ModuleInfo i;
  i.kind    = "defrag";
  i.summary = "IPv4/IPv6 defragmentation: datagrams go on whole, in place of their last fragment";
  i.args    = {
      {"engine", "auto", "defrag engine: auto, cpu.defrag, ref.defrag, validate:cpu.defrag"},
      {"policy", "bsd", "overlapping bytes: first, last, bsd, linux, windows, solaris"},
      {"timeout", "60", "seconds a datagram may take to complete, 1..3600"},
      {"ipv6_overlap", "drop", "overlapping IPv6 fragments: drop the datagram (RFC 5722) or policy"},
      {"max_datagrams", "65536", "datagrams held at once per worker"},
      {"max_fragments", "256", "fragments per datagram"},
      {"memcap", "33554432", "bytes held per worker (payloads and first fragments' headers)"},
      {"room", "8192", "bytes per packet of a frame kept for datagrams larger than their last "
                       "fragment (a frame gets at least 72 KiB, one datagram of 64 KiB, and at most 16 MiB), "
                       "0..1048576"},
  };
  i.contract = defrag_contract();
  i.make  = [](const ModuleArgs& args, BuildEnv& env) -> Result<std::unique_ptr<Module>> {
    defrag::DefragConfig c;
    WARPATH_ASSIGN_OR_RETURN(c.policy, defrag::parse_frag_policy(args.get("policy", "bsd")));
    WARPATH_ASSIGN_OR_RETURN(const uint64_t timeout, args.get_u64("timeout", 60, 3600));
    const std::string v6 = args.get("ipv6_overlap", "drop");
    if (v6 != "drop" && v6 != "policy")
      return Status(Errc::kInvalidArgument, "ipv6_overlap=" + v6 + ": expected drop or policy");
    WARPATH_ASSIGN_OR_RETURN(const uint64_t datagrams,
                             args.get_u64("max_datagrams", c.max_datagrams, 1u << 24));
    WARPATH_ASSIGN_OR_RETURN(const uint64_t fragments,
                             args.get_u64("max_fragments", c.max_fragments, 8192));
    WARPATH_ASSIGN_OR_RETURN(c.memcap, args.get_u64("memcap", c.memcap, uint64_t(1) << 40));
    WARPATH_ASSIGN_OR_RETURN(const uint64_t room, args.get_u64("room", 8192, 1u << 20));
    c.timeout_s         = uint32_t(timeout);
    c.ipv6_overlap_drop = v6 == "drop";
    c.max_datagrams     = uint32_t(datagrams);
    c.max_fragments     = uint32_t(fragments);
    // Built once here so a bad engine or configuration fails the chain, not a worker; its id
    // is the engine "auto" resolved to.
    WARPATH_ASSIGN_OR_RETURN(auto probe, defrag::make_defragmenter(args.get("engine", "auto"), c));
    const std::string engine(probe->id());
    Reasons r;
    WARPATH_ASSIGN_OR_RETURN(r.held, env.reasons->add("defrag_held", Verdict::kDrop, env.position));
    WARPATH_ASSIGN_OR_RETURN(r.dropped, env.reasons->add("defrag_drop", Verdict::kDrop, env.position));
    WARPATH_ASSIGN_OR_RETURN(r.no_room,
                             env.reasons->add("defrag_no_room", Verdict::kDrop, env.position));
    return std::unique_ptr<Module>(std::make_unique<DefragModule>(engine, c, uint32_t(room), r));
  };
  return i;
}

WARPATH_REGISTER_MODULE(defrag_module_info);

}  // namespace warpath::runtime
