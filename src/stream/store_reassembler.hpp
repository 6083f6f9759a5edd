// src/stream/store_reassembler.hpp: the host engines' reassembler: flow state in a map by flow
// serial (admission and max_flows here), the rules of src/stream/core/stream_rules.hpp over
// any byte store (core/ranges: ByteStore for ref.stream, RangeStore for cpu.stream). ref.stream
// keeps its flows in std::unordered_map (NodeMap below), cpu.stream in core/serial_map.hpp's
// flat SerialMap (no allocation per flow; docs/adr/0009 has the numbers).
//
// A finished connection (both directions delivered up to their FIN, or reset) with nothing
// buffered or held keeps only its scalars (FlowMeta, 112 bytes) until the tracker ends it: its
// stores and queues are empty, so a FlowState rebuilt from the scalars with empty ones behaves
// exactly as the kept one would (late retransmissions, data past the FIN, ACKs, RSTs: the same
// counters and chunks). Short connections then reuse a few warm full states instead of keeping
// one per connection (docs/adr/0009: 100,000 short connections, reassembly 52 -> 37 ns/packet).
#pragma once
#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/ranges/insert.hpp"
#include "core/serial_map.hpp"
#include "stream/core/stream_rules.hpp"

namespace warpath::stream::detail {

/// The ends of a direction's held segments, smallest first: a binary min-heap that lives inline
/// for the first few (most connections never hold more) and spills to the heap past that, so a
/// short connection costs no allocation for it. The rules only ask for the smallest (front,
/// pop_front), so a heap serves: O(log n) per segment in any order (a sorted array cost O(n)
/// per segment sent before those parked ahead: quadratic over a hostile flow's 4,096), and in
/// order a push is one comparison with its parent, as the sorted insert from the back was.
class EndQueue {
 public:
  EndQueue() = default;
  /// A moved-from queue is empty (its entries may have gone with the spill).
  EndQueue(EndQueue&& o) noexcept { *this = std::move(o); }
  EndQueue& operator=(EndQueue&& o) noexcept {
    if (this != &o) {
      std::copy(o.inline_, o.inline_ + kInline, inline_);
      spill_  = std::move(o.spill_);
      size_   = o.size_;
      o.size_ = 0;
    }
    return *this;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint64_t front() const { return data()[0]; }
  __attribute__((always_inline)) void push_sorted(uint64_t v) {
    if (!spill_ && size_ == kInline) {  // move the inline ones out, then grow
      spill_ = std::make_unique<std::vector<uint64_t>>(inline_, inline_ + size_);
    }
    if (!spill_)
      inline_[size_] = v;
    else
      spill_->push_back(v);
    ++size_;
    if (size_ > 1 && data()[(size_ - 2) / 2] > v) [[unlikely]]
      sift_up();
  }
  void pop_front() {
    --size_;
    if (size_ == 0) {
      spill_.reset();
      return;
    }
    uint64_t* d = data();
    sift_down(d, d[size_]);
    if (spill_) spill_->pop_back();
  }

 private:
  static constexpr uint32_t kInline = 4;
  uint64_t* data() { return spill_ ? spill_->data() : inline_; }
  const uint64_t* data() const { return spill_ ? spill_->data() : inline_; }
  // The last entry moved up to its place (a segment that arrived before ones parked ahead).
  __attribute__((noinline)) void sift_up() {
    uint64_t* d      = data();
    size_t i         = size_ - 1;
    const uint64_t v = d[i];
    while (i > 0 && d[(i - 1) / 2] > v) {
      d[i] = d[(i - 1) / 2];
      i    = (i - 1) / 2;
    }
    d[i] = v;
  }
  // v (the last entry, whose slot goes) placed from the root down among the first size_.
  void sift_down(uint64_t* d, uint64_t v) {
    size_t i = 0;
    for (;;) {
      size_t c = 2 * i + 1;
      if (c >= size_) break;
      if (c + 1 < size_ && d[c + 1] < d[c]) ++c;
      if (d[c] >= v) break;
      d[i] = d[c];
      i    = c;
    }
    d[i] = v;
  }
  uint64_t inline_[kInline] = {};
  std::unique_ptr<std::vector<uint64_t>> spill_;  // past kInline (a pointer: the node stays small)
  uint32_t size_ = 0;
};

/// SerialMap's interface over std::unordered_map: the reference's obvious map.
template <class T>
class NodeMap {
 public:
  size_t size() const { return m_.size(); }
  T* find(uint64_t key) {
    auto it = m_.find(key);
    return it == m_.end() ? nullptr : &it->second;
  }
  T& emplace(uint64_t key, T&& value) { return m_.emplace(key, std::move(value)).first->second; }
  T& emplace(uint64_t key) { return m_.try_emplace(key).first->second; }
  void erase(uint64_t key) { m_.erase(key); }
  template <class F>
  void for_each(F&& f) {
    for (auto& [k, v] : m_) f(k, v);
  }
  void clear() { m_.clear(); }
  void reserve(size_t) {}  // the reference allocates per flow, as it goes

 private:
  std::unordered_map<uint64_t, T> m_;
};

/// The policy of the receiving host `host` (network order; null: none known): the longest
/// configured prefix holding it, else the configured policy.
inline Policy policy_for(const StreamConfig& config, const Segment& s, const uint8_t* host) {
  Policy best  = config.policy;
  int best_len = -1;
  if (!host) return best;
  for (const HostPolicy& h : config.hosts) {
    if (h.ip_version != s.ip_version || int(h.length) <= best_len) continue;
    bool in = true;
    for (unsigned bit = 0; bit < h.length && in; ++bit) {
      const uint8_t m = uint8_t(0x80u >> (bit % 8));
      in              = (host[bit / 8] & m) == (h.addr[bit / 8] & m);
    }
    if (in) {
      best     = h.policy;
      best_len = h.length;
    }
  }
  return best;
}

/// Ctx of core::flow_segment on the host: totals, counters and the chunk buffer of one engine.
struct HostRules {
  const StreamConfig* config;
  core::Limits lim;
  StreamCounters* c;
  uint64_t* total;
  uint64_t* held_total;
  std::vector<uint8_t>* scratch;
  const ChunkSink* sink;

  const core::Limits& limits() const { return lim; }
  StreamCounters& counters() { return *c; }
  Policy policy(const Segment& s, bool of_dst) const {
    return config->hosts.empty() ? config->policy : policy_for(*config, s, of_dst ? s.dst : s.src);
  }
  bool memcap_room(uint64_t n) const {
    return *total + *held_total * core::kSegmentOverhead + n + core::kSegmentOverhead <= lim.memcap;
  }
  template <class D, class S, class H>
  bool can_store(const D&, const S&, const H&, uint64_t, uint64_t) const {
    return true;
  }
  void buffered(int64_t n) { *total += uint64_t(n); }
  void held(int64_t n) { *held_total += uint64_t(n); }
  uint8_t* chunk_bytes(uint32_t n) {
    // Grown, never shrunk: resizing to each chunk's length zero-filled its bytes first.
    if (scratch->size() < n) scratch->resize(n);
    return scratch->data();
  }
  void emit(const Chunk& ch) {
    if (*sink) (*sink)(ch);
  }
};

/// What the host's engines keep besides their flows (StoreReassembler, the emulator's host
/// side, cpu.flowstream): configuration, counters and totals, and the HostRules context over
/// them.
class HostStream {
 public:
  explicit HostStream(const StreamConfig& config)
      : config_(config), lim_(core::limits_of(config)) {}
  StreamCounters stream_counters() const {
    StreamCounters c = c_;
    c.buffered_bytes = total_;
    return c;
  }

 protected:
  HostRules rules(const ChunkSink& sink) {
    return HostRules{&config_, lim_, &c_, &total_, &held_, &scratch_, &sink};
  }
  /// Admission of a segment whose flow has no state (the engine has `flows` with state): may
  /// it create the flow's state? If not, it is counted (before_handshake, flows_refused).
  bool may_open(const Segment& s, size_t flows) {
    if (!core::opens_flow(s, config_.midstream)) {
      if (s.len) c_.before_handshake += 1;
      return false;
    }
    if (flows >= config_.max_flows) {
      c_.flows_refused += 1;
      return false;
    }
    return true;
  }
  void count(const Segment& s) {
    c_.segments += 1;
    c_.payload_bytes += s.len;
  }

  StreamConfig config_;
  core::Limits lim_;
  uint64_t total_ = 0;
  uint64_t held_  = 0;  ///< segments held over all streams
  StreamCounters c_;
  std::vector<uint8_t> scratch_;
};

/// A Reassembler over HostStream: its id, configuration and counters.
class HostReassembler : public Reassembler, protected HostStream {
 public:
  std::string_view id() const noexcept override { return id_; }
  const StreamConfig& config() const noexcept override { return config_; }
  StreamCounters counters() const override { return stream_counters(); }
  uint64_t refused() const override { return stream::refused(c_); }

 protected:
  HostReassembler(std::string id, const StreamConfig& config)
      : HostStream(config), id_(std::move(id)) {}

  std::string id_;
};

/// A flow's state in a host engine's map. SerialMap::erase recycles it instead of destroying
/// and rebuilding it, so a store keeps its small vectors for the next flow that takes the slot.
template <class Store>
struct HostFlow : core::FlowState<Store, EndQueue> {
  void recycle() {
    this->m = core::FlowMeta{};
    for (int d = 0; d < 2; ++d) {
      this->store[d].recycle();
      this->held[d] = EndQueue{};
    }
  }
};

/// Can the flow be kept as its scalars alone? Nothing buffered or held, and nothing more to
/// come: reset, or both directions delivered up to their FIN.
template <class Store>
bool finished(const HostFlow<Store>& f) {
  const core::Dir &a = f.m.d[0], &b = f.m.d[1];
  // Most segments leave a.fin unset: that test first.
  const bool ended = (a.fin != core::kNever && b.fin != core::kNever && a.base == a.fin &&
                      b.base == b.fin && a.open && b.open && f.m.phase == core::Phase::kOpen) ||
                     f.m.reset;
  return ended && !f.store[0].buffered() && !f.store[1].buffered() && f.held[0].empty() &&
         f.held[1].empty();
}

template <class Store, template <class> class Map>
class StoreReassembler final : public HostReassembler {
 public:
  using Flow = HostFlow<Store>;

  StoreReassembler(std::string id, const StreamConfig& config)
      : HostReassembler(std::move(id), config) {
    finished_.reserve(config.prealloc_flows);  // validated: at most max_flows
  }

  /// Flows with state, finished ones included (max_flows counts both).
  size_t flows() const override { return flows_.size() + finished_.size(); }

  Status segment(const Segment& s, const ChunkSink& sink) override {
    HostRules ctx = rules(sink);
    one(ctx, s);
    return Status::ok();
  }

  /// A batch in one call: the rules' context is built once, and no call per segment.
  Status segments(const Segment* s, uint32_t n, const ChunkSink& sink) override {
    HostRules ctx = rules(sink);
    for (uint32_t i = 0; i < n; ++i) one(ctx, s[i]);
    return Status::ok();
  }
  bool batches() const override { return true; }

  Status close(uint64_t flow, const ChunkSink& sink) override {
    HostRules ctx = rules(sink);
    if (Flow* f = flows_.find(flow)) {
      core::close_flow(ctx, flow, *f);
      flows_.erase(flow);
    } else if (core::FlowMeta* m = finished_.find(flow)) {
      spare_.m = *m;  // empty stores: closing delivers nothing, as it would have
      core::close_flow(ctx, flow, spare_);
      finished_.erase(flow);
    }
    return Status::ok();
  }

  Status close_all(const ChunkSink& sink) override {
    // Only flows holding bytes deliver anything when closed (a direction with an empty store
    // has no hole to declare either), so only they are closed one by one in flow order; the
    // rest (at the end of a capture most are finished connections) go in one clear, without a
    // sort and a lookup each.
    std::vector<uint64_t> ids;
    flows_.for_each([&](uint64_t id, const Flow& f) {
      if (f.store[0].buffered() || f.store[1].buffered())
        ids.push_back(id);
      else  // none: every segment a store held was delivered with its bytes
        held_ -= f.held[0].size() + f.held[1].size();
    });
    std::sort(ids.begin(), ids.end());
    for (uint64_t id : ids) WARPATH_TRY(close(id, sink));
    flows_.clear();
    finished_.clear();  // nothing buffered: closing them delivers nothing
    return Status::ok();
  }

 private:
  __attribute__((always_inline)) void one(HostRules& ctx, const Segment& s) {
    count(s);
    Flow* f = flows_.find(s.flow);
    if (!f) {
      // Trackers number flows in creation order, so a new flow's number is past every finished
      // one's and needs no lookup (any numbering stays exact: this only skips sure misses).
      if (s.flow <= last_finished_)
        if (core::FlowMeta* m = finished_.find(s.flow)) {
          late(ctx, *m, s);
          return;
        }
      if (!may_open(s, flows())) return;
      f = &flows_.emplace(s.flow);
    }
    core::flow_segment(ctx, *f, s);
    if (finished(*f)) [[unlikely]] {
      finished_.emplace(s.flow, core::FlowMeta(f->m));
      last_finished_ = std::max(last_finished_, s.flow);
      flows_.erase(s.flow);
    }
  }

  /// A segment of a finished flow: the rules run on its scalars with empty stores. They store
  /// nothing for it today (data is clipped at the FIN, nothing is taken after a RST); should
  /// they ever, the flow becomes a full one again rather than lose the bytes.
  /// (`spare_`, whose stores and queues are empty between calls, stands in for the rebuilt
  /// state: a finished flow's final ACK costs no construction of a full one.)
  void late(HostRules& ctx, core::FlowMeta& m, const Segment& s) {
    spare_.m = m;
    core::flow_segment(ctx, spare_, s);
    if (finished(spare_)) {
      m = spare_.m;
      return;
    }
    flows_.emplace(s.flow, std::move(spare_));
    spare_ = Flow{};
    finished_.erase(s.flow);
  }

  Map<Flow> flows_;
  Map<core::FlowMeta> finished_;  ///< flows kept as scalars (finished() above)
  uint64_t last_finished_ = 0;  ///< the largest flow number ever put in finished_
  Flow spare_;                  ///< late()'s state: empty stores and queues between calls
};

}  // namespace warpath::stream::detail
