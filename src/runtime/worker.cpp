// src/runtime/worker.cpp: the worker thread (worker.hpp).
#include "runtime/worker.hpp"

#include <immintrin.h>

#include <chrono>
#include <thread>

#include "runtime/thread_util.hpp"
#include "warpath/forward/fragment.hpp"

namespace warpath::runtime {
namespace {

// The IP MTU packet i leaves port p under (0: none): the smaller of its module's (frag_mtu)
// and the link's, where the link's applies to IPv4 only (a router never fragments IPv6).
uint32_t out_mtu(const Frame& c, uint32_t i, uint32_t link) {
  const uint32_t mtu = c.frag_mtu[i];
  if (link && (mtu ? link < mtu : c.infos[i].ip_version == 4)) return link;
  return mtu;
}

}  // namespace

Worker::Worker(WorkerSetup setup)
    : cfg_(std::move(setup)),
      policy_(cfg_.policy, cfg_.master != nullptr),
      window_(cfg_.in_flight + 1) {}

Status Worker::add_frame() {
  const Chain& chain      = *cfg_.chain;
  const size_t bytes      = frame_buffer_bytes(cfg_.batch) + chain.tail_room(cfg_.batch);
  const MemSpace space    = cfg_.pinned_memory ? MemSpace::kPinned : MemSpace::kHost;
  constexpr uint32_t cell = packet::PacketBatch::kDefaultCellBytes;
  auto batch =
      cfg_.zero_copy
          ? packet::PacketBatch::create_in_arena(cfg_.batch, cell, bytes, space, chain.headroom())
          : packet::PacketBatch::create(cfg_.batch, cell, bytes, space, chain.headroom());
  if (!batch.is_ok() && cfg_.zero_copy)  // no room in the arena: the frame's own memory
    batch = packet::PacketBatch::create(cfg_.batch, cell, bytes, space, chain.headroom());
  if (!batch.is_ok()) return batch.status();
  batch->set_tail_reserve(chain.tail_room(cfg_.batch));
  pool_.push_back(std::make_unique<Frame>(std::move(*batch)));
  chain.make_slots(*pool_.back(), &states_);
  free_.push_back(pool_.back().get());
  counters_.frames.store(pool_.size(), std::memory_order_relaxed);
  return Status::ok();
}

Status Worker::init() {
  const Chain& chain = *cfg_.chain;
  // With a master, frames are added as the offload's round trip asks (take_free).
  const uint32_t in_flight =
      cfg_.master ? std::min(cfg_.in_flight, kStartInFlight) : cfg_.in_flight;
  WARPATH_ASSIGN_OR_RETURN(states_, chain.make_states());
  for (uint32_t i = 0; i < in_flight + 1; ++i) WARPATH_TRY(add_frame());
  const size_t reasons = chain.reasons().size();
  counters_.by_reason  = std::make_unique<std::atomic<uint64_t>[]>(reasons);
  counters_.modules    = std::make_unique<ModuleCounters[]>(chain.size());
  reason_scratch_.assign(reasons, 0);
  module_ticks_.assign(chain.size(), 0);
  out_lists_.resize(cfg_.ports.size());
  for (Port* port : cfg_.ports) {
    link_mtu_.push_back(port->link().mtu);
    // A port's MTU is checked against the packets' headers (out_mtu): parsed here when the
    // chain itself does not parse.
    parse_for_mtu_ = parse_for_mtu_ || (link_mtu_.back() && !chain.parses());
  }
  port_lists_.resize(cfg_.ports.size());
  auto icmp = packet::PacketBatch::create(cfg_.batch, 2048, size_t(cfg_.batch) * 2048);
  if (!icmp.is_ok()) return icmp.status();
  icmp_ = std::move(*icmp);
  frag_ident_ = uint32_t(cfg_.id) << 24;
  icmp_frame_.resize(kMaxReplyBytes);
  for (auto& l : out_lists_) l.reset(cfg_.batch);
  slow_list_.reset(cfg_.batch);
  many_list_.reset(cfg_.batch);
  if (cfg_.id == 0) {
    auto origin = packet::PacketBatch::create(64, packet::PacketBatch::kDefaultCellBytes * 5, 0,
                                              MemSpace::kHost, 64);
    if (!origin.is_ok()) return origin.status();
    origin_ = std::move(*origin);
  }
  many_failed_.assign(cfg_.batch, 0);
  first_port_.assign(cfg_.batch, 0);
  return Status::ok();
}

Frame* Worker::take_free() {
  // Every frame is out: one more when the rate and the round trip ask for it (frame_window.hpp),
  // within the cap the memory was sized for.
  if (free_.empty() && cfg_.master && !growth_failed_ && pool_.size() < window_.needed() &&
      !add_frame().is_ok())
    growth_failed_ = true;  // keeps the frames it has; the report shows fewer than needed
  if (free_.empty()) {
    if (!waiting_for_frame_) add_owned(counters_.frame_waits, 1);
    waiting_for_frame_ = true;
    return nullptr;
  }
  waiting_for_frame_ = false;
  Frame* c = free_.back();
  free_.pop_back();
  c->reset();
  return c;
}

// Polls this worker's RX queues once each (round robin start) into `c`. True if any packet came.
bool Worker::receive(Frame& c, uint64_t& now) {
  const uint64_t t0 = ticks();
  bool got      = false;
  const auto nq = uint32_t(cfg_.rx_queues.size());
  for (uint32_t k = 0; k < nq; ++k) {
    const uint32_t room = cfg_.batch - c.batch.size();
    if (room == 0) break;
    auto [port, q] = cfg_.rx_queues[(next_queue_ + k) % nq];
    if (port->rx_done(q)) continue;
    const uint32_t before = c.batch.size();
    auto r                = port->rx_burst(q, c.batch, room);
    if (!r.is_ok()) {
      error_ = r.status();
      return false;
    }
    if (c.batch.size() > before) {
      now            = mono_ns();
      uint64_t bytes = 0;
      for (uint32_t i = before; i < c.batch.size(); ++i) {
        c.rx_ns[i] = now;
        bytes += c.batch.meta(i).len;
      }
      add_owned(counters_.rx, c.batch.size() - before);
      add_owned(counters_.rx_bytes, bytes);
      got = true;
    }
  }
  next_queue_ = nq ? (next_queue_ + 1) % nq : 0;
  if (got) add_owned(counters_.rx_ticks, ticks() - t0);  // empty polls are idle time
  return got;
}

void Worker::note_round_trip(uint64_t ns) {
  // The first launches pay for cold caches and a device's first kernel loads (as the auto
  // policy's kWarmup): an outlier the estimate would take many samples to forget, and frames
  // added for it are never given back.
  if (++round_trips_ <= kRoundTripWarmup) return;
  window_.on_round_trip(ns);
  counters_.round_trip_ns.store(window_.round_trip_ns(), std::memory_order_relaxed);
  counters_.close_interval_ns.store(window_.interval_ns(), std::memory_order_relaxed);
  counters_.frames_needed.store(window_.wanted(), std::memory_order_relaxed);
}

void Worker::add_module_ticks() {
  for (size_t m = 0; m < module_ticks_.size(); ++m)
    if (module_ticks_[m]) {
      add_owned(counters_.modules[m].ticks, module_ticks_[m]);
      module_ticks_[m] = 0;
    }
}

Status Worker::close(Frame* c) {
  // A frame crossing to the offload gets its packets in one compact range of its own cells
  // (the device copies from there); one whose cells cannot take them stays on the CPU. Before
  // the pre stage: its modules keep pointers to the packets' bytes (ESP's crypto jobs).
  const bool offload = policy_.offload_next() && c->batch.own_all();
  const uint64_t c0  = policy_.wants_costs() ? mono_ns() : 0;  // the policy's path costs
  uint64_t parse     = 0;
  WARPATH_TRY(cfg_.chain->pre(*c, module_ticks_.data(), &parse));
  if (parse_for_mtu_) {
    const uint64_t p0 = ticks();
    WARPATH_TRY(cfg_.chain->parse(*c));
    parse += ticks() - p0;
  }
  add_owned(counters_.parse_ticks, parse);
  const uint32_t n = c->batch.size();
  add_owned(counters_.chunks, 1);
  if (offload) {
    c->offloaded = true;
    add_owned(counters_.gpu_chunks, 1);
    add_owned(counters_.gpu_packets, n);
    pending_.push_back({c, 0});  // before the master has it: the error drain waits for it
    window_.on_close(mono_ns());
    cfg_.master->submit(c);
    if (c0) pending_.back().worker_ns = mono_ns() - c0;
    return Status::ok();
  }
  ExecContext ctx;
  const uint64_t t0 = mono_ns();
  c->error          = cfg_.chain->shade(*c, Place::kCpu, ctx, module_ticks_.data());
  c->shade_ns       = mono_ns() - t0;
  add_owned(counters_.cpu_chunks, 1);
  add_owned(counters_.cpu_packets, n);
  add_owned(counters_.shade_cpu_ns, c->shade_ns);
  c->done.store(true, std::memory_order_relaxed);
  pending_.push_back({c, c0 ? mono_ns() - c0 : 0});
  if (cfg_.master)
    window_.on_close(t0);  // the auto policy's CPU frames count too (after pre, as
                           // an offloaded frame's submit)
  return Status::ok();
}

Status Worker::finish(Frame& c) {
  WARPATH_TRY(c.error);
  const Chain& chain = *cfg_.chain;
  WARPATH_TRY(chain.post(c, selection_, counters_.modules.get(), module_ticks_.data()));
  add_module_ticks();
  const uint64_t tx0 = ticks();
  const uint32_t n   = c.batch.size();
  const uint16_t fwd = kReasonForwarded;
  std::fill(reason_scratch_.begin(), reason_scratch_.end(), 0);
  for (auto& l : out_lists_) l.clear();
  slow_list_.clear();
  many_list_.clear();
  uint16_t any_frag_mtu = 0;  // a module asked for fragmentation of some packet
  const uint16_t* reason = c.reason.data();
  const uint16_t* out    = c.out.data();
  const uint16_t* mtus   = c.frag_mtu.data();
  for (uint32_t i = 0; i < n; ++i) {
    const uint16_t r = reason[i];
    if (r == fwd && out[i] != kOutMany) {
      // A run of packets forwarded out of one port, the common case, appended with the list's
      // end in a register (push_back's count, a uint32_t in memory beside the uint32_t
      // elements, was stored and loaded again for every packet).
      const uint16_t port = out[i];
      IndexList& list     = out_lists_[port];
      uint32_t* at        = list.at.data();
      uint32_t end        = list.n;
      uint16_t frags      = 0;
      do {
        frags |= mtus[i];
        at[end++] = i;
      } while (++i < n && reason[i] == fwd && out[i] == port);
      list.n = end;
      any_frag_mtu |= frags;
      --i;  // the loop's ++i
      continue;
    }
    any_frag_mtu |= mtus[i];
    if (r == fwd) {
      // One copy per port (ports copy the bytes out of the frame, none sends the buffer the
      // frame holds), counted once: forwarded when every copy went, tx_error otherwise.
      c.batch.meta(i).flags |= packet::kMetaShared;
      many_list_.push_back(i);
      many_failed_[i] = 0;
      first_port_[i]  = uint32_t(__builtin_ctzll((c.out_mask[i] & ~kOutSlowPathBit) | (uint64_t(1) << 62)));
      for (uint64_t m = c.out_mask[i] & ~kOutSlowPathBit; m; m &= m - 1)
        out_lists_[unsigned(__builtin_ctzll(m))].push_back(i);
      if (c.out_mask[i] & kOutSlowPathBit) slow_list_.push_back(i);
    } else {
      ++reason_scratch_[r];
      if (chain.reasons()[r].verdict == Verdict::kSlowPath) {
        c.batch.meta(i).flags |= packet::kMetaShared;  // read again for the replies after
        slow_list_.push_back(i);
      }
    }
  }
  uint64_t tx_bytes = 0, many_copies = 0;
  for (size_t p = 0; p < out_lists_.size(); ++p) {
    // In frame order, runs of packets that go whole and runs that leave as IP fragments:
    // packets larger than the MTU a module gave them, or IPv4 packets larger than the link's
    // (a router fragments IPv4 only: RFC 1812 5.2.6, RFC 8200 5; one with DF is refused:
    // tx_error). Without MTUs the whole list is one run, one burst.
    const auto& list = out_lists_[p];
    if (!link_mtu_[p] && !any_frag_mtu) {  // nothing can need fragments: one run, one burst
      if (!list.empty()) send_whole(c, p, {list.data(), list.size()}, tx_bytes, many_copies);
      continue;
    }
    auto cut = [&](uint32_t i) {
      const uint32_t mtu = out_mtu(c, i, link_mtu_[p]);
      return mtu && c.out[i] != kOutMany && c.batch.meta(i).caplen > c.infos[i].l3_offset + mtu;
    };
    for (size_t from = 0, to; from < list.size(); from = to) {
      const bool frag = cut(list[from]);
      for (to = from + 1; to < list.size() && cut(list[to]) == frag;) ++to;
      const Span<const uint32_t> run{list.data() + from, uint32_t(to - from)};
      if (frag)
        fragment_out(c, p, run, tx_bytes);
      else
        send_whole(c, p, run, tx_bytes, many_copies);
    }
  }
  uint64_t many_forwarded = 0;
  for (uint32_t i : many_list_) {
    ++reason_scratch_[many_failed_[i] ? kReasonTxError : fwd];
    many_forwarded += !many_failed_[i];
  }
  // The ports sent more frames than packets were forwarded: the extra copies, counted apart.
  if (many_copies > many_forwarded) add_owned(counters_.copies, many_copies - many_forwarded);
  if (cfg_.slow_path && !slow_list_.empty())
    (void)cfg_.slow_path->tx_burst(cfg_.id, c.batch,
                                   {slow_list_.data(), uint32_t(slow_list_.size())});
  send_replies(c);
  // tx, dropped and slow_path are sums of these (pipeline.cpp's snapshot): one counter each.
  for (size_t r = 0; r < reason_scratch_.size(); ++r)
    if (reason_scratch_[r])
      add_owned(counters_.by_reason[r], reason_scratch_[r]);
  add_owned(counters_.tx_bytes, tx_bytes);
  add_owned(counters_.tx_ticks, ticks() - tx0);
  return Status::ok();
}

// Packets `run` of the frame out of port p, whole: forwarded or tx_error each (a kOutMany
// packet's copy marks it failed; it is counted once all its ports were tried).
void Worker::send_whole(Frame& c, size_t p, Span<const uint32_t> run, uint64_t& tx_bytes,
                        uint64_t& many_copies) {
  const uint32_t sent = cfg_.ports[p]->tx_burst(cfg_.id, c.batch, run);
  const uint64_t t    = mono_ns();
  uint32_t single_sent = 0, single_failed = 0;
  // One latency sample per packet (a copied packet's on its first port), recorded per run of
  // packets received at the same time (a receive call stamps its packets alike).
  uint64_t rx_at = 0, same = 0;
  auto sample = [&](uint32_t i) {
    if (c.rx_ns[i] != rx_at && same) {
      latency_.record(t - rx_at, same);
      same = 0;
    }
    rx_at = c.rx_ns[i];
    ++same;
  };
  if (many_list_.empty()) {  // no packet of the frame leaves by several ways: the short loop
    uint64_t bytes = 0;      // a local: `tx_bytes` in memory was a store and a load a packet
    for (uint32_t k = 0; k < sent; ++k) {
      sample(run[k]);
      bytes += c.batch.meta(run[k]).len;
    }
    tx_bytes += bytes;
    single_sent   = sent;
    single_failed = run.size - sent;
  } else {
    for (uint32_t k = 0; k < run.size; ++k) {
      const uint32_t i = run[k];
      const bool many  = c.out[i] == kOutMany;
      if (k < sent) {
        if (!many || first_port_[i] == p) sample(i);
        tx_bytes += c.batch.meta(i).len;
        single_sent += !many;
        many_copies += many;
      } else if (many) {
        many_failed_[i] = 1;
      } else {
        ++single_failed;
      }
    }
  }
  if (same) latency_.record(t - rx_at, same);
  reason_scratch_[kReasonForwarded] += single_sent;
  reason_scratch_[kReasonTxError] += single_failed;
}

// Packets `run` of the frame out of port p as IP fragments (forward/fragment.hpp) of the
// smaller of their module's MTU and the link's, built in frag_ and sent in bursts; one that
// turns out to fit its MTU (link-layer padding) goes whole. Each counts once: forwarded when
// all of its frames went, tx_error otherwise (one that cannot be fragmented, a burst the port
// took only part of).
void Worker::fragment_out(Frame& c, size_t p, Span<const uint32_t> run, uint64_t& tx_bytes) {
  uint64_t fragmented = 0, fragments = 0;
  if (frag_.max_packets() == 0) {  // made on first use: 8 MiB, up to 64 packets of 64 KiB
    auto frag = packet::PacketBatch::create(4096, 2048);
    if (!frag.is_ok()) {  // no memory for fragments: the packets cannot be sent
      reason_scratch_[kReasonTxError] += run.size;
      return;
    }
    frag_ = std::move(*frag);
  }
  auto flush = [&] {
    const uint32_t n = frag_.size();
    frag_index_.resize(n);
    for (uint32_t k = 0; k < n; ++k) frag_index_[k] = k;
    const uint32_t sent = n ? cfg_.ports[p]->tx_burst(cfg_.id, frag_, {frag_index_.data(), n}) : 0;
    const uint64_t t    = mono_ns();
    for (const FragPending& d : frag_pending_) {
      const bool ok = d.first + d.count <= sent;
      ++reason_scratch_[ok ? kReasonForwarded : kReasonTxError];
      // Every fragment the port took counts, a failed packet's too (the ports' tx counters
      // add up: pipeline.hpp); a packet counts as fragmented once all of its went.
      if (d.count > 1) fragments += sent > d.first ? std::min(d.count, sent - d.first) : 0;
      if (!ok) continue;
      latency_.record(t - c.rx_ns[d.packet]);
      fragmented += d.count > 1;
    }
    for (uint32_t k = 0; k < sent; ++k) tx_bytes += frag_.meta(k).len;
    frag_.clear();
    frag_pending_.clear();
  };
  frag_.clear();
  frag_pending_.clear();
  for (const uint32_t i : run) {
    const packet::PacketMeta& m = c.batch.meta(i);
    for (int attempt = 0;; ++attempt) {
      const uint32_t first = frag_.size();
      forward::FragmentResult r = forward::fragment_packet(
          c.batch.data(i), m.caplen, c.infos[i], out_mtu(c, i, link_mtu_[p]), ++frag_ident_,
          m.timestamp_ns, m.port, frag_);
      if (r.outcome == forward::FragmentOutcome::kFits)
        r = {frag_.append(c.batch.data(i), m.caplen, m.len, m.timestamp_ns, m.port)
                 ? forward::FragmentOutcome::kFragmented
                 : forward::FragmentOutcome::kNoRoom,
             1};
      if (r.outcome == forward::FragmentOutcome::kNoRoom && attempt == 0 && first > 0) {
        flush();  // the burst so far, then this packet again in an empty batch
        continue;
      }
      if (r.outcome == forward::FragmentOutcome::kFragmented)
        frag_pending_.push_back({i, first, r.fragments});
      else
        ++reason_scratch_[kReasonTxError];
      break;
    }
  }
  flush();
  // fragments first (a snapshot reading both then rarely sees more packets than fragments;
  // the metric clamps the difference anyway).
  if (fragments) add_owned(counters_.fragments, fragments);
  if (fragmented) add_owned(counters_.fragmented, fragmented);
}

// The slow path's answers (the router's ICMP / ICMPv6 Time Exceeded about expired packets),
// back out of the port each packet came in on: the module that gave a packet its reason says
// what to send. Router-originated: counted apart from rx.
void Worker::send_replies(Frame& c) {
  const Chain& chain = *cfg_.chain;
  icmp_.clear();
  uint64_t suppressed = 0;
  for (uint32_t i : slow_list_) {
    const int owner = chain.reasons()[c.reason[i]].module;
    if (owner < 1) continue;
    const int32_t len = chain.module(size_t(owner - 1)).reply(c, i, icmp_frame_.data());
    if (len < 0) continue;
    if (len == 0) {
      ++suppressed;
      continue;
    }
    const uint16_t in = c.batch.meta(i).port;
    if (!icmp_.append(icmp_frame_.data(), uint32_t(len), uint32_t(len),
                      c.batch.meta(i).timestamp_ns, in))
      break;
  }
  if (suppressed) add_owned(counters_.icmp_suppressed, suppressed);
  if (icmp_.size() == 0) return;
  for (auto& l : port_lists_) l.clear();
  for (uint32_t k = 0; k < icmp_.size(); ++k) port_lists_[icmp_.meta(k).port].push_back(k);
  const uint64_t sent = send_port_lists(icmp_);
  add_owned(counters_.icmp_sent, sent);
}

// Sends port_lists_[p] (indices into `batch`) out of port p; the frames the ports took.
uint64_t Worker::send_port_lists(packet::PacketBatch& batch) {
  uint64_t sent = 0;
  for (size_t p = 0; p < port_lists_.size(); ++p)
    if (!port_lists_[p].empty())
      sent += cfg_.ports[p]->tx_burst(cfg_.id, batch, {port_lists_[p].data(), uint32_t(port_lists_[p].size())});
  return sent;
}

// Packets the modules originate (OpenFlow PACKET_OUT), sent by worker 0 between frames.
void Worker::send_originated() {
  origin_.clear();
  origin_masks_.clear();
  if (cfg_.chain->originate(states_, origin_, origin_masks_) == 0) return;
  for (auto& l : port_lists_) l.clear();
  for (uint32_t k = 0; k < origin_.size() && k < origin_masks_.size(); ++k)
    for (uint64_t m = origin_masks_[k]; m; m &= m - 1) {
      const unsigned p = unsigned(__builtin_ctzll(m));
      if (p < port_lists_.size()) port_lists_[p].push_back(k);
    }
  const uint64_t sent = send_port_lists(origin_);
  add_owned(counters_.originated, sent);
}

// The policy's share and measured costs where the run's reports read them: at the start, once
// a window (they change at most that often, or a chunk at a time), and at the end.
void Worker::publish_policy() {
  counters_.share.store(policy_.share(), std::memory_order_relaxed);
  if (!policy_.wants_costs()) return;
  counters_.cost_cpu.store(policy_.cost_cpu(), std::memory_order_relaxed);
  counters_.cost_offload.store(policy_.cost_offload(), std::memory_order_relaxed);
  counters_.declined.store(policy_.declined(), std::memory_order_relaxed);
}

void Worker::run() {
  if (cfg_.cpu >= 0) pin_current_thread(cfg_.cpu);
  const uint64_t delay_ns = uint64_t(cfg_.delay_us) * 1000;
  Frame* cur              = nullptr;
  unsigned idle           = 0;
  uint64_t idle_since     = 0;
  publish_policy();
  for (;;) {
    const bool stopping = cfg_.stop->load(std::memory_order_relaxed);
    bool ended          = true;
    for (auto& [port, q] : cfg_.rx_queues) ended = ended && port->rx_done(q);
    uint64_t now = mono_ns();
    const uint64_t loop0 = ticks();
    if (idle_since) policy_.on_idle(now - idle_since);  // the last iteration found nothing
    idle_since  = 0;
    bool worked = false;
    if (!stopping && !ended) {
      if (!cur) cur = take_free();
      if (cur) worked = receive(*cur, now);
      if (!error_.is_ok()) break;
    }
    if (cur && cur->batch.size() > 0 &&
        (cur->batch.size() >= cfg_.batch || now - cur->rx_ns[0] >= delay_ns || stopping || ended)) {
      const uint32_t n = cur->batch.size();
      Frame* closing   = cur;
      cur              = nullptr;
      if (Status st = close(closing); !st.is_ok()) {
        error_ = st;
        break;
      }
      const bool on_cpu = !closing->offloaded;
      policy_.on_chunk(n, on_cpu, on_cpu ? closing->shade_ns : 0);
      worked = true;
    }
    while (!pending_.empty() && pending_.front().frame->done.load(std::memory_order_acquire)) {
      const auto [c, close_ns] = pending_.front();
      const uint64_t f0        = policy_.wants_costs() ? mono_ns() : 0;
      if (Status st = finish(*c); !st.is_ok()) {
        error_ = st;
        break;
      }
      if (f0) policy_.on_done(c->batch.size(), c->offloaded, close_ns + (mono_ns() - f0));
      if (c->offloaded && c->done_ns > c->staged_ns) note_round_trip(c->done_ns - c->staged_ns);
      pending_.pop_front();
      c->reset();  // the ports' buffers it held go back now, not when it is next taken
      free_.push_back(c);
      worked = true;
    }
    if (!error_.is_ok()) break;
    if (cfg_.id == 0 && !stopping) send_originated();
    if (!worked) idle_since = now;
    else add_owned(counters_.busy_ticks, ticks() - loop0);
    // Stateful modules get the time while nothing is in flight (idle flows end on a quiet link).
    if (!worked && !ended && !stopping && pending_.empty() && (!cur || cur->batch.size() == 0) &&
        !states_.empty() && now - last_idle_call_ >= kIdleCallNs) {
      last_idle_call_ = now;
      cfg_.chain->idle_states(states_, now);
    }
    if (policy_.tick(now)) publish_policy();
    if ((stopping || ended) && (!cur || cur->batch.size() == 0) && pending_.empty()) break;
    if (worked) {
      idle = 0;
    } else if (++idle < 64) {
      _mm_pause();
    } else if (idle < 20'000) {
      std::this_thread::yield();
    } else {
      // Idle for a while (every queue empty, nothing pending): poll at 20 us intervals instead
      // of spinning, like DPDK's power-managed polling. Wakes within 20 us of new traffic.
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  publish_policy();  // what the last, unfinished window measured too
  // On error: wait for chunks still at the master so it never writes into freed memory.
  while (!pending_.empty()) {
    if (pending_.front().frame->done.load(std::memory_order_acquire))
      pending_.pop_front();
    else
      std::this_thread::yield();
  }
  // Every port buffer a frame holds goes back before the ports close (they free their pools).
  for (auto& f : pool_) f->reset();
  // Stateful modules end here (flows flushed and logged), on the worker that owns them.
  if (Status st = cfg_.chain->finish_states(states_); !st.is_ok() && error_.is_ok()) error_ = st;
}

}  // namespace warpath::runtime
