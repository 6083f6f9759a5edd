// src/defrag/store_defragmenter.hpp: the defragmentation rules of
// include/warpath/defrag/defrag.hpp over any byte store (core/ranges: byte_store.hpp for the
// oracle, range_store.hpp for cpu.defrag), one body for every engine.
#pragma once
#include <array>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/ranges/insert.hpp"
#include "defrag/core/defrag_core.hpp"
#include "packet/core/bytes.hpp"

namespace warpath::defrag::detail {

template <class Store>
class StoreDefragmenter final : public Defragmenter {
 public:
  StoreDefragmenter(std::string id, const DefragConfig& config)
      : id_(std::move(id)), config_(config) {}

  std::string_view id() const noexcept override { return id_; }
  const DefragConfig& config() const noexcept override { return config_; }
  DefragCounters counters() const override {
    DefragCounters c = c_;
    c.datagrams      = datagrams_.size();
    c.buffered_bytes = buffered_;
    return c;
  }

  void advance(uint64_t now_ns) override {
    if (now_ns > now_) now_ = now_ns;
    expire();
  }

  FragResult add(const packet::PacketInfo& info, const uint8_t* frame, uint32_t caplen,
                 uint64_t timestamp_ns, std::vector<uint8_t>& out) override {
    advance(timestamp_ns);
    const bool ip = info.l3 == packet::L3::kIpv4 || info.l3 == packet::L3::kIpv6;
    if (!ip || !(info.flags & packet::kFragment)) return FragResult::kNotFragment;
    c_.fragments += 1;
    core::Fragment fr;
    // A damaged header or checksum: the host drops it, and so do we.
    const bool header_ok = info.status == packet::ParseStatus::kOk ||
                           info.status == packet::ParseStatus::kBadTcpHeader ||
                           info.status == packet::ParseStatus::kBadUdpHeader;
    if (!header_ok || !core::read_fragment(info, frame, caplen, fr) ||
        (fr.payload == 0 && fr.more)) {
      c_.malformed += 1;
      return FragResult::kDropped;
    }
    // RFC 1858 / 3128: a TCP fragment at offset 8 can rewrite the flags, and a first fragment
    // shorter than the ports and flags hides them.
    if (fr.proto == 6 && (fr.offset == 8 || (fr.offset == 0 && fr.more && fr.payload < 16))) {
      c_.tiny += 1;
      return FragResult::kDropped;
    }
    const uint64_t start = fr.offset, end = uint64_t(fr.offset) + fr.payload;
    if (end > fr.limit) {
      c_.too_large += 1;
      return FragResult::kDropped;
    }
    const Key key = key_of(info, fr);
    auto it       = datagrams_.find(key);
    if (it == datagrams_.end()) {
      if (datagrams_.size() >= config_.max_datagrams) {
        c_.max_datagrams += 1;
        return FragResult::kDropped;
      }
      it = datagrams_.emplace(key, Datagram{}).first;
      it->second.seq   = ++seqs_;
      it->second.first = now_;
      order_.push_back({it->second.seq, key});
    }
    Datagram& d = it->second;
    if (d.fragments >= config_.max_fragments) {
      c_.too_many += 1;
      return FragResult::kDropped;
    }
    // The end is fixed by the last fragment; nothing may lie past it.
    if ((d.have_last && end > d.total) ||
        (!fr.more && ((d.have_last && end != d.total) || d.store.max_end() > end))) {
      c_.too_large += 1;
      return FragResult::kDropped;
    }
    if (buffered_ + fr.payload > config_.memcap) {
      c_.memcap += 1;
      return FragResult::kDropped;
    }
    const bool v6 = fr.version == 6;
    if (v6 && config_.ipv6_overlap_drop && d.store.overlaps(start, end)) {
      c_.ipv6_overlap += 1;
      remove(it);
      return FragResult::kDropped;
    }
    const FragPolicy policy = config_.policy;
    const ranges::Insert r  = d.store.insert(
        start, frame + fr.payload_at, fr.payload, start, end,
        [&](uint64_t a, uint64_t b) { return core::new_wins(policy, start, end, a, b); });
    buffered_ += r.added;
    if (r.overlap) c_.overlaps += 1;
    if (r.differ) c_.overlap_diff += 1;
    d.fragments += 1;
    if (!fr.more) {
      d.have_last = true;
      d.total     = uint32_t(end);
    }
    if (fr.offset == 0 && d.head.empty()) {
      if (buffered_ + fr.head > config_.memcap) {  // the headers are held too
        c_.memcap += 1;
        return FragResult::kHeld;
      }
      d.head.assign(frame, frame + fr.head);
      buffered_ += fr.head;
      d.version = fr.version;
      d.l3      = info.l3_offset;
      d.next_at = fr.next_at;
      d.proto   = fr.proto;
    }
    if (!d.have_last || d.head.empty() || d.store.contiguous_end(0) < d.total)
      return FragResult::kHeld;
    // The first fragment's headers may be longer than those the limit was checked with.
    const uint64_t ip_headers = d.version == 4 ? uint64_t(d.head[d.l3] & 0xf) * 4
                                               : uint64_t(d.head.size()) - (d.l3 + 40);
    if (ip_headers + d.total > 65535) {
      c_.too_large += 1;
      remove(it);
      return FragResult::kDropped;
    }
    build(d, out);
    c_.completed += 1;
    remove(it);
    return FragResult::kCompleted;
  }

 private:
  using Key = std::array<uint8_t, 40>;
  struct Datagram {
    uint64_t seq = 0, first = 0;
    bool have_last     = false;
    uint32_t total     = 0;  ///< payload bytes, once the last fragment came
    uint32_t fragments = 0;
    uint8_t version = 0, proto = 0;
    uint32_t l3 = 0, next_at = 0;
    std::vector<uint8_t> head;  ///< the first fragment's headers
    Store store;
  };

  static Key key_of(const packet::PacketInfo& info, const core::Fragment& fr) {
    Key k{};
    const unsigned n = fr.version == 4 ? 4 : 16;
    std::memcpy(k.data(), info.src, n);
    std::memcpy(k.data() + 16, info.dst, n);
    k[32] = uint8_t(fr.id >> 24);
    k[33] = uint8_t(fr.id >> 16);
    k[34] = uint8_t(fr.id >> 8);
    k[35] = uint8_t(fr.id);
    const uint16_t vlan = info.vlan_count ? uint16_t(info.vlan_tci[0] & 0xfff) : 0;
    k[36] = uint8_t(vlan >> 8);
    k[37] = uint8_t(vlan);
    k[38] = fr.version;
    k[39] = fr.version == 4 ? fr.proto : 0;  // IPv6 datagrams are (src, dst, id)
    return k;
  }

  // The datagram as one frame: the first fragment's headers, then the payload.
  void build(Datagram& d, std::vector<uint8_t>& out) {
    const size_t at = out.size();
    out.insert(out.end(), d.head.begin(), d.head.end());
    out.resize(at + d.head.size() + d.total);
    d.store.take(0, d.total, out.data() + at + d.head.size());
    buffered_ -= d.total;  // the headers go with remove()
    uint8_t* f = out.data() + at;
    if (d.version == 4) {
      uint8_t* ip        = f + d.l3;
      const uint32_t ihl = uint32_t(ip[0] & 0xf) * 4;
      const uint32_t len = ihl + d.total;
      ip[2]  = uint8_t(len >> 8);
      ip[3]  = uint8_t(len);
      ip[6] &= 0x40;  // keep DF; MF and the offset go
      ip[7]  = 0;
      ip[10] = ip[11] = 0;
      const uint16_t sum = packet::core::fold_checksum(packet::core::ones_sum(ip, ihl));
      ip[10] = uint8_t(sum >> 8);
      ip[11] = uint8_t(sum);
    } else {
      f[d.next_at]       = d.proto;  // the header before the fragment header names its next
      const uint32_t len = uint32_t(d.head.size()) - (d.l3 + 40) + d.total;
      f[d.l3 + 4] = uint8_t(len >> 8);
      f[d.l3 + 5] = uint8_t(len);
    }
  }

  void remove(typename std::map<Key, Datagram>::iterator it) {
    buffered_ -= it->second.store.buffered() + it->second.head.size();
    datagrams_.erase(it);
    // Entries of datagrams gone wait in order_ behind an unfinished one: compact now and then
    // so the queue stays within a constant factor of the datagrams held.
    if (order_.size() > 2 * datagrams_.size() + 64) {
      std::deque<std::pair<uint64_t, Key>> live;
      for (const auto& e : order_) {
        auto d = datagrams_.find(e.second);
        if (d != datagrams_.end() && d->second.seq == e.first) live.push_back(e);
      }
      order_.swap(live);
    }
  }

  // Datagrams whose first fragment is timeout_s old, oldest first (creation order is deadline
  // order: the clock never goes back).
  void expire() {
    const uint64_t timeout = uint64_t(config_.timeout_s) * 1000000000ull;
    while (!order_.empty()) {
      auto it = datagrams_.find(order_.front().second);
      if (it == datagrams_.end() || it->second.seq != order_.front().first) {
        order_.pop_front();  // completed or dropped already
        continue;
      }
      if (it->second.first + timeout > now_) break;
      c_.timeout += 1;
      order_.pop_front();  // first: remove() may compact the queue
      remove(it);
    }
  }

  std::string id_;
  DefragConfig config_;
  std::map<Key, Datagram> datagrams_;
  std::deque<std::pair<uint64_t, Key>> order_;
  uint64_t now_ = 0, seqs_ = 0, buffered_ = 0;
  DefragCounters c_;
};

}  // namespace warpath::defrag::detail
