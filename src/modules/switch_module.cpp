// src/modules/switch_module.cpp: the `switch` module, PacketShader's OpenFlow switch:
// one OpenFlow 1.0 flow table (include/warpath/openflow/flow_table.hpp) applied to every packet.
//
// Ports: OpenFlow port N is the pipeline's port N-1 (`warpath run --port` order, from 1).
//
// Contract: reads parse; sets verdict and bytes (the flows' header rewrites; the parse result of
// a rewritten packet is updated with it).
// Stages
//   pre    each packet's OpenFlow 12-tuple (in_port, Ethernet, VLAN, IPv4/ARP, ports) and its
//          flow, looked up in the image published when the frame began (so a frame sees one
//          table, before or after a reload, never a mix)
//   post   per selected packet: the flow's counters (per worker, by flow id), its rewrites
//          (RFC 1624 checksums), then its outputs: one port (forwarded), several (one copy
//          each: kOutMany), the controller and LOCAL (the slow path; a copy when the packet
//          also goes out of ports), `normal` (an L2 learning switch per worker: source MACs
//          learnt with their port for mac_aging seconds, known unicast out of its port,
//          unknown and multicast flooded). A packet that hits no flow gets the table-miss
//          behaviour: miss=controller (the slow path, OpenFlow 1.0's), drop or normal.
//   Reasons: flow_drop (the flow's actions are empty), no_output (every output was the
//   ingress port or a port the switch does not have), table_miss (drop), to_controller and
//   to_local (slow path), no_headroom (a VLAN push found no room: cannot happen with the
//   pipeline's frames, which keep 64 bytes), port_no_recv (the ingress port is down or
//   no_recv: PORT_MOD). Ports' configs also take no_flood ports out of FLOOD and `normal`'s
//   flooding, no_fwd and down ports out of every output, and no_packet_in ports' packets away
//   from the controller.
// State per worker: the flows' counters and the MAC table. finish() adds the counters to the
// module's table; with dump=FILE the table is written there as `ovs-ofctl dump-flows` prints
// it (one line per flow: cookie, duration, n_packets, n_bytes, timeouts, priority, match,
// actions), after each worker finishes (the last write holds every worker's counters).
// SIGHUP (reload): the flow file is read again; the new table starts with zero counters.
// The OpenFlow agent (runtime/openflow_agent.hpp) drives the module through
// openflow::SwitchControl: flow_mods, statistics with the workers' live counters, expiry,
// PACKET_IN copies (queued only while a connection listens) and PACKET_OUTs, which worker 0
// sends through originate().
#include <array>
#include <atomic>
#include <functional>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "warpath/runtime/module.hpp"
#include "openflow/core/action_core.hpp"
#include "packet/core/key_core.hpp"
#include "packet/core/parse_core.hpp"
#include "modules/switch_state.hpp"
#include "runtime/thread_util.hpp"
#include "warpath/core/hd.hpp"
#include "warpath/openflow/flow_table.hpp"
#include "warpath/openflow/session.hpp"

namespace warpath::runtime {
namespace {

// The kind's contract, declared once (ModuleInfo) and kept by every instance.
ModuleContract switch_contract() {
  return {field_bit(Field::kParse),
          field_bit(Field::kVerdict) | field_bit(Field::kBytes)};
}

using openflow::FlowImage;
using openflow::FlowTable;
using namespace switch_detail;

enum class Miss : uint8_t { kController, kDrop, kNormal };

// Ports' configs (PORT_MOD) as masks (bit p: port p) the data path reads once per frame.
struct PortMasks {
  uint64_t no_recv, flood, no_fwd, no_packet_in;
};

struct SwitchSlot final : ModuleSlot {
  explicit SwitchSlot(uint32_t cap) : keys(cap), ids(cap) {}
  std::vector<packet::OfTuple> keys;
  std::vector<uint32_t> ids;
  std::shared_ptr<const FlowImage> image;
};

class SwitchModule final : public Module, public openflow::SwitchControl {
 public:
  std::string_view kind() const noexcept override { return "switch"; }
  ModuleContract contract() const override { return switch_contract(); }
  std::string describe() const override {
    std::lock_guard<std::mutex> lock(table_mutex_);
    return describe_;
  }
  uint32_t headroom() const noexcept override { return 64; }  // VLAN pushes
  std::vector<std::string> stat_names() const override {
    return {"hits", "misses", "flooded", "to_controller", "macs_learned"};
  }
  std::unique_ptr<ModuleSlot> make_slot(uint32_t cap) const override {
    return std::make_unique<SwitchSlot>(cap);
  }
  Result<std::unique_ptr<ModuleState>> make_state() const override {
    auto st = std::make_unique<SwitchState>(capacity_);
    std::lock_guard<std::mutex> lock(table_mutex_);
    states_.push_back(st.get());
    return std::unique_ptr<ModuleState>(std::move(st));
  }

  Status pre(Frame& f, ModuleSlot* slot) const override {
    auto& s          = static_cast<SwitchSlot&>(*slot);
    s.image          = image_.load(std::memory_order_acquire);
    const uint32_t n = f.size();
    for (uint32_t i = 0; i < n; ++i) {
      const packet::PacketMeta& m = f.batch.meta(i);
      s.keys[i] = packet::core::of_tuple(f.batch.data(i), m.caplen, uint16_t(m.port + 1), f.infos[i]);
    }
    s.image->lookup({s.keys.data(), n}, {s.ids.data(), n});
    return Status::ok();
  }

  void post(Frame& f, ModuleSlot* slot, const Selection& sel) const override {
    auto& s             = static_cast<SwitchSlot&>(*slot);
    auto& st            = static_cast<SwitchState&>(*slot->state);
    const FlowImage& im = *s.image;
    const PortMasks ports_now = port_masks();
    for (uint32_t i : sel.list) {
      const uint32_t id = s.ids[i];
      packet::PacketMeta& m = f.batch.meta(i);
      const uint16_t in     = m.port;
      const uint64_t now    = f.rx_ns[i];
      if (ports_now.no_recv >> in & 1) {  // PORT_MOD: down or no_recv
        f.reason[i] = r_.port_no_recv;
        continue;
      }
      if (m.caplen >= 12) st.macs.learn(mac_at(f.batch.data(i) + 6), in, now);
      if (id == openflow::kNoFlow) {
        ++st.misses;
        switch (miss_) {
          case Miss::kController:
            f.reason[i] = r_.controller;
            ++st.to_controller;
            if (!(ports_now.no_packet_in >> in & 1)) to_controller(f, i, 0, 0);
            break;
          case Miss::kDrop: f.reason[i] = r_.miss; break;
          case Miss::kNormal:
            decide(f, i, out_ports(kNormal, in, ports_now, f.batch.data(i), m.caplen, st, now), false,
                   kNormal);
            break;
        }
        continue;
      }
      ++st.hits;
      const openflow::ActionProgram& p = im.program(id);
      count(st, id, p.order, m.len, now);
      if (p.rewrites && !rewrite(f.batch, i, f.infos[i], im.rewrites(p), p.rewrites)) {
        f.reason[i] = r_.no_headroom;
        continue;
      }
      const bool slow      = p.special & (openflow::kToController | openflow::kToLocal);
      const uint64_t ports = out_ports(p, in, ports_now, f.batch.data(i), m.caplen, st, now);
      if (p.special & openflow::kToController) {
        ++st.to_controller;
        if (!(ports_now.no_packet_in >> in & 1)) to_controller(f, i, 1, p.max_len);
      }
      decide(f, i, ports, slow, p);
    }
    auto set = [&](Stat k, uint64_t v) { st.stats[k].store(v, std::memory_order_relaxed); };
    set(kHits, st.hits);
    set(kMisses, st.misses);
    set(kFlooded, st.flooded);
    set(kToController, st.to_controller);
    set(kLearned, st.macs.learned);
  }

  Status finish(ModuleState& state) const override {
    auto& st = static_cast<SwitchState&>(state);
    std::lock_guard<std::mutex> lock(table_mutex_);
    fold(st);
    if (dump_.empty()) return Status::ok();
    return write_dump(mono_ns());
  }

  // --- SwitchControl (the OpenFlow agent) ---
  openflow::FlowModResult flow_mod(openflow::FlowModCommand cmd,
                                   const openflow::FlowSpec& spec) const override {
    if (cmd != openflow::FlowModCommand::kDelete && cmd != openflow::FlowModCommand::kDeleteStrict) {
      std::vector<openflow::Action> scratch;
      if (!openflow::compile_actions(spec.actions, port_count_, scratch).is_ok()) {
        openflow::FlowModResult r;
        r.error = openflow::FlowModError::kUnsupported;
        return r;
      }
    }
    std::lock_guard<std::mutex> lock(table_mutex_);
    fold_all();  // counters of flows a DELETE removes, and of modified ones, are current
    openflow::FlowModResult r = table_.apply(cmd, spec, mono_ns());
    return r;
  }
  Status publish() const override {
    std::lock_guard<std::mutex> lock(table_mutex_);
    return publish_locked();
  }
  std::vector<openflow::FlowEntry> flows(const openflow::Match& filter,
                                         uint16_t out_port) const override {
    std::lock_guard<std::mutex> lock(table_mutex_);
    fold_all();
    std::vector<openflow::FlowEntry> out;
    for (const openflow::FlowEntry* e : table_.select(filter, out_port)) out.push_back(*e);
    return out;
  }
  openflow::TableStats table_stats() const override {
    std::lock_guard<std::mutex> lock(table_mutex_);
    openflow::TableStats t;
    t.active      = uint32_t(table_.size());
    t.max_entries = table_.capacity();
    for (const SwitchState* st : states_) {
      const uint64_t hits = st->stats[kHits].load(std::memory_order_relaxed);
      t.matched += hits;
      t.lookups += hits + st->stats[kMisses].load(std::memory_order_relaxed);
    }
    return t;
  }
  std::vector<openflow::RemovedFlow> expire() const override {
    std::lock_guard<std::mutex> lock(table_mutex_);
    if (table_.timed() == 0) return {};  // the agent asks every 100 ms: no fold for nothing
    fold_all();
    std::vector<openflow::RemovedFlow> r = table_.expire(mono_ns());
    if (!r.empty()) (void)publish_locked();
    return r;
  }
  void listen_packet_in(bool on) const override {
    listening_.store(on, std::memory_order_relaxed);
    if (!on) {  // nobody to send them to: what is queued goes
      std::lock_guard<std::mutex> lock(packet_in_mutex_);
      packet_ins_.clear();
    }
  }
  void take_packet_ins(std::vector<openflow::PacketIn>& out) const override {
    std::lock_guard<std::mutex> lock(packet_in_mutex_);
    for (auto& p : packet_ins_) out.push_back(std::move(p));
    packet_ins_.clear();
  }
  uint64_t now_ns() const override { return mono_ns(); }

  Status packet_out(uint16_t in_port, const std::vector<openflow::Action>& actions,
                    const std::vector<uint8_t>& data) const override {
    if (data.size() < 14 || data.size() > kMaxOutBytes)
      return Status(Errc::kInvalidArgument, "packet_out: a frame of " + std::to_string(data.size()) +
                                                " bytes (14.." + std::to_string(kMaxOutBytes) + ")");
    std::vector<openflow::Action> scratch;
    WARPATH_TRY(openflow::compile_actions(actions, port_count_, scratch).status());
    std::lock_guard<std::mutex> lock(out_mutex_);
    if (outbound_.size() >= kMaxOutbound) return Status(Errc::kCapacity, "packet_out: queue full");
    outbound_.push_back({in_port, actions, data});
    has_outbound_.store(true, std::memory_order_release);
    return Status::ok();
  }

  Status port_mod(uint16_t port_no, uint32_t config, uint32_t mask) const override {
    if (port_no == 0 || port_no > port_count_) return Status(Errc::kNotFound, "no such port");
    std::atomic<uint32_t>& c = port_config_[port_no - 1];
    c.store((c.load() & ~mask) | (config & mask));
    uint64_t no_recv = 0, no_flood = 0, no_fwd = 0, no_pin = 0;
    for (uint32_t p = 0; p < port_count_; ++p) {
      const uint32_t k = port_config_[p].load();
      const uint64_t b = uint64_t(1) << p;
      if (k & (openflow::kPortDown | openflow::kNoRecv)) no_recv |= b;
      if (k & (openflow::kPortDown | openflow::kNoFlood)) no_flood |= b;
      if (k & (openflow::kPortDown | openflow::kNoFwd)) no_fwd |= b;
      if (k & openflow::kNoPacketIn) no_pin |= b;
    }
    no_recv_.store(no_recv, std::memory_order_relaxed);
    flood_.store(all_ports_ & ~no_flood, std::memory_order_relaxed);
    no_fwd_.store(no_fwd, std::memory_order_relaxed);
    no_pin_.store(no_pin, std::memory_order_relaxed);
    return Status::ok();
  }
  uint32_t port_config(uint16_t port_no) const override {
    return port_no >= 1 && port_no <= port_count_ ? port_config_[port_no - 1].load() : 0;
  }

  // PACKET_OUTs, on worker 0: each packet's actions (output:TABLE: the flow table's) applied
  // as a flow's are, its ports computed as for a packet that came in on in_port.
  uint32_t originate(ModuleState* state, packet::PacketBatch& out,
                     std::vector<uint64_t>& masks) const override {
    if (!has_outbound_.load(std::memory_order_acquire) || !state) return 0;
    auto& st = static_cast<SwitchState&>(*state);
    std::vector<Outbound> take;
    {
      std::lock_guard<std::mutex> lock(out_mutex_);
      while (!outbound_.empty() && take.size() < out.max_packets() - out.size()) {
        take.push_back(std::move(outbound_.front()));
        outbound_.pop_front();
      }
      if (outbound_.empty()) has_outbound_.store(false, std::memory_order_relaxed);
    }
    const std::shared_ptr<const FlowImage> image = image_.load(std::memory_order_acquire);
    const uint64_t now                           = mono_ns();
    uint32_t n                                   = 0;
    for (size_t t = 0; t < take.size(); ++t) {
      const Outbound& o    = take[t];
      const bool from_port = o.in_port >= 1 && o.in_port <= port_count_;
      const uint16_t in    = from_port ? uint16_t(o.in_port - 1) : uint16_t(kNoPort);
      const auto len       = uint32_t(o.data.size());
      uint8_t* p = out.append_uninitialized(len, len, 0, from_port ? in : 0);
      if (!p) {  // the batch is full: the rest go first next time
        std::lock_guard<std::mutex> lock(out_mutex_);
        for (size_t r = take.size(); r > t; --r) outbound_.push_front(std::move(take[r - 1]));
        has_outbound_.store(true, std::memory_order_release);
        break;
      }
      std::memcpy(p, o.data.data(), len);
      const uint32_t i          = out.size() - 1;
      packet::PacketInfo info   = packet::core::parse_packet(p, len, len);
      std::vector<openflow::Action> rewrites;
      openflow::ActionProgram prog;
      bool table = false;
      for (const openflow::Action& a : o.actions) table |= a.type == openflow::ActionType::kOutput && a.port == openflow::kPortTable;
      if (table) {  // through the flow table, as if it had arrived
        const uint32_t id = image->lookup_one(packet::core::of_tuple(p, len, uint16_t(o.in_port), info));
        if (id != openflow::kNoFlow) {
          prog = image->program(id);
          rewrites.assign(image->rewrites(prog), image->rewrites(prog) + prog.rewrites);
          count(st, id, prog.order, len, now);  // the flow switched it: its counters say so
        } else if (miss_ == Miss::kNormal) {
          prog.special = openflow::kToNormal;
        } else if (miss_ == Miss::kController && listening_.load(std::memory_order_relaxed)) {
          openflow::PacketIn pi;  // the table miss of a PACKET_OUT goes back as OpenFlow says
          pi.in_port   = o.in_port;
          pi.total_len = uint16_t(len);
          pi.data      = o.data;
          std::lock_guard<std::mutex> lock(packet_in_mutex_);
          if (packet_ins_.size() < kMaxPacketIns) packet_ins_.push_back(std::move(pi));
        }
      } else {
        Result<openflow::ActionProgram> c = openflow::compile_actions(o.actions, port_count_, rewrites);
        if (c.is_ok()) prog = c.value();  // checked when queued
      }
      const bool ok = rewrite(out, i, info, rewrites.data(), uint32_t(rewrites.size()));
      const packet::PacketMeta& m = out.meta(i);
      const uint64_t ports = out_ports(prog, in, port_masks(), out.data(i), m.caplen, st, now);
      masks.push_back(ok ? ports : 0);
      ++n;
    }
    return n;
  }

  Result<std::string> reload() const override {
    if (path_.empty()) return Status(Errc::kNotSupported, "no flow file to read again");
    WARPATH_ASSIGN_OR_RETURN(std::string text, read_text_(path_));
    WARPATH_ASSIGN_OR_RETURN(auto specs, openflow::parse_flow_file(text, path_));
    std::lock_guard<std::mutex> lock(table_mutex_);
    // The old flows' counts are taken first; the new table numbers its flows and versions on
    // from the old one's, so the workers' counters of an id restart (a new install order) and
    // the next publish is never mistaken for one already done.
    fold_all();
    FlowTable t(capacity_);
    t.continue_after(table_);
    WARPATH_TRY(load(t, specs, path_, mono_ns()));
    WARPATH_ASSIGN_OR_RETURN(std::shared_ptr<const FlowImage> img, FlowImage::build(t, port_count_));
    t.rebuilt();
    table_             = std::move(t);
    published_version_ = table_.version();
    ++full_images_;
    describe_ = describe_image(*img);
    image_.store(std::move(img), std::memory_order_release);
    return describe_;
  }

  static Result<std::unique_ptr<Module>> make(const ModuleArgs& args, BuildEnv& env);

 private:
  static Status load(FlowTable& t, const std::vector<openflow::FlowSpec>& specs,
                     const std::string& name, uint64_t now) {
    for (size_t k = 0; k < specs.size(); ++k) {
      const openflow::FlowModResult r = t.apply(openflow::FlowModCommand::kAdd, specs[k], now);
      if (!r.ok())
        return Status(Errc::kInvalidArgument,
                      name + ": flow " + std::to_string(k + 1) + " (" + openflow::format_flow(specs[k]) +
                          "): " + openflow::flow_mod_error_name(r.error));
    }
    return Status::ok();
  }
  std::string describe_image(const FlowImage& img) const {
    std::string s = (path_.empty() ? std::string("no flow file") : path_) + " (" +
                    std::to_string(img.flows()) + " flows: " + std::to_string(img.exact_flows()) +
                    " exact, " + std::to_string(img.subtables()) + " wildcard subtables; miss " +
                    miss_name_ + ")";
    if (full_images_ + incremental_images_ > 1)
      s += "; images published: " + std::to_string(full_images_) + " full, " +
           std::to_string(incremental_images_) + " incremental";
    return s;
  }
  // Flow_mods reach the data path through FlowImage::publish: flows added, removed or modified
  // by an incremental image (cost: the changes), past a sixteenth of the table by a full build.

  // Applies the rewrites to packet i of `batch` (its parse result `info` kept true); false when
  // a VLAN push found no headroom.
  static bool rewrite(packet::PacketBatch& batch, uint32_t i, packet::PacketInfo& info,
                      const openflow::Action* a, uint32_t count) {
    packet::PacketMeta& m = batch.meta(i);
    openflow::core::PacketRef p{batch.data(i), m.caplen, m.len, batch.headroom(i)};
    bool ok = true;
    for (uint32_t k = 0; k < count && ok; ++k) ok = openflow::core::apply_rewrite(p, info, a[k]);
    m.offset += uint32_t(p.data - batch.data(i));  // wraps below 0 as unsigned
    m.caplen = p.caplen;
    m.len    = p.len;
    return ok;
  }

  // The ports a program sends a packet (its bytes as rewritten) out of: OpenFlow never sends
  // one back out of its ingress port `in` unless in_port says so (kNoPort: a PACKET_OUT that
  // names none); the ports' configs apply (no_flood, no_fwd).
  uint64_t out_ports(const openflow::ActionProgram& p, uint16_t in, const PortMasks& pm,
                     const uint8_t* data, uint32_t caplen, SwitchState& st, uint64_t now) const {
    const uint64_t in_bit = in < 64 ? uint64_t(1) << in : 0;
    uint64_t ports        = p.ports & ~in_bit;
    if (p.special & openflow::kToInPort) ports |= in_bit;
    if (p.special & openflow::kToFlood) {
      ports |= pm.flood & ~in_bit;
      ++st.flooded;
    }
    if (p.special & openflow::kToAll) ports |= all_ports_ & ~in_bit;
    if (p.special & openflow::kToNormal) ports |= normal_ports(data, caplen, in, st, now, pm.flood);
    return ports & ~pm.no_fwd;
  }
  // `normal`: the destination's learnt port, or every flooding port but the ingress one.
  uint64_t normal_ports(const uint8_t* d, uint32_t caplen, uint16_t in, SwitchState& st, uint64_t now,
                        uint64_t flood) const {
    if (caplen < 6) return 0;
    const int port = (d[0] & 1) ? -1 : st.macs.port_of(mac_at(d), now, aging_ns_);
    if (port < 0) {
      ++st.flooded;
      return flood & ~(in < 64 ? uint64_t(1) << in : 0);
    }
    return port == in ? 0 : uint64_t(1) << port;
  }
  static constexpr openflow::ActionProgram kNormal{0, 0, 0, 0, openflow::kToNormal, 0};

  void decide(Frame& f, uint32_t i, uint64_t ports, bool slow,
              const openflow::ActionProgram& p) const {
    if (ports == 0) {
      if (slow) {
        f.reason[i] = p.special & openflow::kToController ? r_.controller : r_.local;
      } else {
        f.reason[i] = p.ports || (p.special & ~openflow::kLateRewrites) ? r_.no_output : r_.flow_drop;
      }
      return;
    }
    f.reason[i] = kReasonForwarded;
    if (!slow && (ports & (ports - 1)) == 0) {
      f.out[i] = uint16_t(__builtin_ctzll(ports));
      return;
    }
    f.out[i]      = kOutMany;
    f.out_mask[i] = ports | (slow ? kOutSlowPathBit : 0);
  }

  Status write_dump(uint64_t now) const;

  // One packet of `bytes` for flow `id` (installed as `order`) in the worker's counters.
  static void count(SwitchState& st, uint32_t id, uint64_t order, uint32_t bytes, uint64_t now) {
    FlowCounters::Page& c = st.counters.page(id);
    const uint32_t k      = id & (FlowCounters::kPage - 1);
    if (c.order[k].load(std::memory_order_relaxed) != order) {
      // The id's flow was replaced: its counters start over.
      c.packets[k].store(0, std::memory_order_relaxed);
      c.bytes[k].store(0, std::memory_order_relaxed);
      c.order[k].store(order, std::memory_order_release);
    }
    bump(c.packets[k], 1);
    bump(c.bytes[k], bytes);
    c.used[k].store(now, std::memory_order_relaxed);
  }

  // Caller holds table_mutex_. Adds what a worker counted since the last fold to the table
  // (and its last-use times, for idle timeouts). The worker's counters only grow (they restart
  // when their id gets a new flow, whose install order they then carry), so the fold keeps what
  // it has taken per id and never writes the worker's memory.
  void fold(SwitchState& st) const {
    const size_t ids = size_t(st.counters.pages()) * FlowCounters::kPage;
    if (st.taken_packets.size() < ids) {
      st.taken_packets.resize(ids, 0);
      st.taken_bytes.resize(ids, 0);
      st.taken_order.resize(ids, 0);
    }
    for (uint32_t pg = 0; pg < st.counters.pages(); ++pg) {
      const FlowCounters::Page* c = st.counters.peek(pg << FlowCounters::kPageBits);
      if (!c) continue;
      for (uint32_t k = 0; k < FlowCounters::kPage; ++k) {
        const uint64_t order = c->order[k].load(std::memory_order_acquire);
        if (!order) continue;
        const uint32_t id      = (pg << FlowCounters::kPageBits) | k;
        const uint64_t packets = c->packets[k].load(std::memory_order_relaxed);
        const uint64_t bytes   = c->bytes[k].load(std::memory_order_relaxed);
        if (st.taken_order[id] != order || packets < st.taken_packets[id]) {
          st.taken_order[id]   = order;
          st.taken_packets[id] = st.taken_bytes[id] = 0;
        }
        table_.account(id, order, packets - st.taken_packets[id], bytes - st.taken_bytes[id],
                       c->used[k].load(std::memory_order_relaxed));
        st.taken_packets[id] = packets;
        st.taken_bytes[id]   = bytes;
      }
    }
  }
  void fold_all() const {
    for (SwitchState* st : states_) fold(*st);
  }
  Status publish_locked() const {
    if (table_.version() == published_version_) return Status::ok();
    WARPATH_ASSIGN_OR_RETURN(std::shared_ptr<const FlowImage> img,
                             FlowImage::publish(image_.load(std::memory_order_acquire), table_, port_count_));
    published_version_ = table_.version();
    ++(img->incremental() ? incremental_images_ : full_images_);
    describe_ = describe_image(*img);
    image_.store(std::move(img), std::memory_order_release);
    return Status::ok();
  }
  // A copy of packet i for the controller, when someone listens (bounded queue).
  void to_controller(const Frame& f, uint32_t i, uint8_t reason, uint16_t max_len) const {
    if (!listening_.load(std::memory_order_relaxed)) return;
    const packet::PacketMeta& m = f.batch.meta(i);
    openflow::PacketIn p;
    p.in_port   = uint16_t(m.port + 1);
    p.reason    = reason;
    p.total_len = uint16_t(std::min<uint32_t>(m.len, 0xffff));
    p.max_len   = reason == 0 ? 0xffff : max_len;
    p.data.assign(f.batch.data(i), f.batch.data(i) + std::min<uint32_t>(m.caplen, p.max_len));
    std::lock_guard<std::mutex> lock(packet_in_mutex_);
    if (packet_ins_.size() < kMaxPacketIns)
      packet_ins_.push_back(std::move(p));
    else
      ++packet_ins_dropped_;
  }
  PortMasks port_masks() const noexcept {
    return {no_recv_.load(std::memory_order_relaxed), flood_.load(std::memory_order_relaxed),
            no_fwd_.load(std::memory_order_relaxed), no_pin_.load(std::memory_order_relaxed)};
  }
  mutable std::array<std::atomic<uint32_t>, 64> port_config_{};
  mutable std::atomic<uint64_t> no_recv_{0}, flood_{0}, no_fwd_{0}, no_pin_{0};
  static constexpr size_t kMaxPacketIns = 4096;
  static constexpr size_t kMaxOutbound  = 1024;
  static constexpr size_t kMaxOutBytes  = 9018;
  static constexpr uint16_t kNoPort     = 0xFFFF;
  struct Outbound {
    uint16_t in_port;
    std::vector<openflow::Action> actions;
    std::vector<uint8_t> data;
  };
  mutable std::mutex out_mutex_;
  mutable std::deque<Outbound> outbound_;
  mutable std::atomic<bool> has_outbound_{false};

  mutable std::mutex table_mutex_;
  mutable FlowTable table_;
  mutable uint64_t published_version_ = 0;
  mutable uint64_t full_images_ = 1, incremental_images_ = 0;  ///< published (the first: full)
  mutable std::vector<SwitchState*> states_;  // every worker's (they outlive the agent)
  uint32_t capacity_ = FlowTable::kDefaultCapacity;
  mutable std::atomic<bool> listening_{false};
  mutable std::mutex packet_in_mutex_;
  mutable std::vector<openflow::PacketIn> packet_ins_;
  mutable uint64_t packet_ins_dropped_ = 0;
  mutable std::atomic<std::shared_ptr<const FlowImage>> image_;
  mutable std::string describe_;
  std::string path_, dump_, miss_name_ = "controller";
  std::function<Result<std::string>(const std::string&)> read_text_;
  Miss miss_         = Miss::kController;
  uint32_t port_count_ = 1;
  uint64_t all_ports_  = 1;
  uint64_t aging_ns_   = 300'000'000'000ull;
  struct Reasons {
    uint16_t flow_drop, no_output, miss, controller, local, no_headroom, port_no_recv;
  } r_{};
};

// Caller holds table_mutex_.
Status SwitchModule::write_dump(uint64_t now) const {
  std::string text;
  for (const openflow::FlowEntry* e : table_.entries()) {
    char head[200];
    const uint64_t age = now > e->created_ns ? now - e->created_ns : 0;
    std::snprintf(head, sizeof head, "cookie=0x%llx, duration=%.3fs, table=0, n_packets=%llu, n_bytes=%llu, ",
                  static_cast<unsigned long long>(e->spec.cookie), double(age) / 1e9,
                  static_cast<unsigned long long>(e->packets), static_cast<unsigned long long>(e->bytes));
    text += head;
    if (e->spec.idle_timeout) text += "idle_timeout=" + std::to_string(e->spec.idle_timeout) + ", ";
    if (e->spec.hard_timeout) text += "hard_timeout=" + std::to_string(e->spec.hard_timeout) + ", ";
    const std::string match = openflow::format_match(e->spec.match);
    text += "priority=" + std::to_string(e->spec.priority) + (match.empty() ? "" : "," + match) +
            " actions=" + openflow::format_actions(e->spec.actions) + "\n";
  }
  std::FILE* out = std::fopen(dump_.c_str(), "w");
  if (!out) return Status(Errc::kIoError, "dump=" + dump_ + ": cannot write");
  const bool ok = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  if (std::fclose(out) != 0 || !ok) return Status(Errc::kIoError, "dump=" + dump_ + ": write failed");
  return Status::ok();
}

Result<std::unique_ptr<Module>> SwitchModule::make(const ModuleArgs& args, BuildEnv& env) {
  auto m = std::make_unique<SwitchModule>();
  if (env.port_count > kMaxMaskPorts)
    return Status(Errc::kInvalidArgument, "the switch handles at most " +
                                              std::to_string(kMaxMaskPorts) + " ports, not " +
                                              std::to_string(env.port_count));
  m->port_count_ = env.port_count;
  m->all_ports_  = (uint64_t(1) << env.port_count) - 1;
  m->flood_.store(m->all_ports_);
  m->miss_name_  = args.get("miss", "controller");
  if (m->miss_name_ == "controller")
    m->miss_ = Miss::kController;
  else if (m->miss_name_ == "drop")
    m->miss_ = Miss::kDrop;
  else if (m->miss_name_ == "normal")
    m->miss_ = Miss::kNormal;
  else
    return Status(Errc::kInvalidArgument, "miss=" + m->miss_name_ + ": must be controller, drop or normal");
  WARPATH_ASSIGN_OR_RETURN(const uint64_t aging, args.get_u64("mac_aging", 300, 1'000'000));
  m->aging_ns_ = aging * 1'000'000'000ull;
  m->dump_     = args.get("dump");
  m->path_     = args.get("flows");
  std::vector<openflow::FlowSpec> specs;
  if (!m->path_.empty()) {
    if (!env.tables || !env.tables->read_text)
      return Status(Errc::kNotSupported, "flows=" + m->path_ + ": this program cannot read flow files");
    m->read_text_ = env.tables->read_text;
    WARPATH_ASSIGN_OR_RETURN(std::string text, m->read_text_(m->path_));
    WARPATH_ASSIGN_OR_RETURN(specs, openflow::parse_flow_file(text, m->path_));
  }
  WARPATH_TRY(load(m->table_, specs, m->path_, mono_ns()));
  m->published_version_ = m->table_.version();
  WARPATH_ASSIGN_OR_RETURN(std::shared_ptr<const FlowImage> image,
                           FlowImage::build(m->table_, m->port_count_));
  m->table_.rebuilt();
  if (m->table_.size() == 0 && env.warnings)
    env.warnings->push_back("switch: no flows: every packet takes the table-miss path (miss=" +
                            m->miss_name_ + ")");
  m->describe_ = m->describe_image(*image);
  m->image_.store(std::move(image));
  auto reason  = [&](const char* name, Verdict v) { return env.reasons->add(name, v, env.position); };
  WARPATH_ASSIGN_OR_RETURN(m->r_.flow_drop, reason("flow_drop", Verdict::kDrop));
  WARPATH_ASSIGN_OR_RETURN(m->r_.no_output, reason("no_output", Verdict::kDrop));
  WARPATH_ASSIGN_OR_RETURN(m->r_.miss, reason("table_miss", Verdict::kDrop));
  WARPATH_ASSIGN_OR_RETURN(m->r_.controller, reason("to_controller", Verdict::kSlowPath));
  WARPATH_ASSIGN_OR_RETURN(m->r_.local, reason("to_local", Verdict::kSlowPath));
  WARPATH_ASSIGN_OR_RETURN(m->r_.no_headroom, reason("no_headroom", Verdict::kDrop));
  WARPATH_ASSIGN_OR_RETURN(m->r_.port_no_recv, reason("port_no_recv", Verdict::kDrop));
  return std::unique_ptr<Module>(std::move(m));
}

}  // namespace

ModuleInfo switch_module_info() {
  ModuleInfo i;
  i.kind    = "switch";
  i.summary = "OpenFlow 1.0 switch: a flow table in ovs-ofctl syntax (exact + wildcard), actions with checksums";
  i.args = {
      {"flows", "", "flow file, one flow per line in ovs-ofctl syntax (docs/openflow.md)",
       ArgFile::kInput},
      {"miss", "controller", "a packet no flow matches: controller (slow path), drop or normal"},
      {"mac_aging", "300", "seconds a learnt MAC stays (actions=normal), 1..1000000"},
      {"dump", "", "write the flows with their counters here at the end, as ovs-ofctl dump-flows",
       ArgFile::kOutput}};
  i.contract = switch_contract();
  i.make  = SwitchModule::make;
  return i;
}

WARPATH_REGISTER_MODULE(switch_module_info);

}  // namespace warpath::runtime
