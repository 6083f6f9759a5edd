// src/nids/xbit_table.hpp: xbits, the bits rules keep on hosts and address pairs across flows
// (Suricata's hostbits and ippair bits), each with its expiry in packet time (internal).
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>

#include "nids/detect_image.hpp"

namespace warpath::nids::detail {

class XbitTable {
 public:
  /// Bits held at most; with the table full (swept of expired bits at most once a second of
  /// packet time) a set is not kept and counted.
  static constexpr size_t kMaxEntries = 1u << 20;
  /// Whether `op`'s bit is set (and not expired at p.ts_ns) where `op` keeps it for packet p.
  bool is_set(const XbitOp& op, const PacketView& p) const;
  /// Applies a change (set: expires op.expire_ns after p.ts_ns; unset; toggle).
  void apply(const XbitOp& op, const PacketView& p);
  size_t size() const noexcept { return bits_.size(); }
  uint64_t full() const noexcept { return full_; }

 private:
  /// key_ for `op`'s bit where it keeps it for packet p (a scratch string reused).
  void key(const XbitOp& op, const PacketView& p) const;
  std::unordered_map<std::string, uint64_t> bits_;  // key -> expiry (ns)
  mutable std::string key_;
  uint64_t last_sweep_ = 0, full_ = 0;
};

}  // namespace warpath::nids::detail
