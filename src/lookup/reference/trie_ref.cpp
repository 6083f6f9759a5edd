// ref.lpm: the oracle. One plain binary trie per family, one bit per step, guarded by a
// reader-writer lock. Deliberately shares nothing with the other engines (no DIR-24-8, no
// hashing, no RIB): a removed route only clears its node's next hop.
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "lookup/engines.hpp"

namespace warpath::lookup::detail {
namespace {

class BinaryTrie {
 public:
  BinaryTrie() : nodes_(1) {}

  /// Bit i (0 = most significant) of a key of `bits` bits, given as up to two 64-bit words.
  static unsigned bit_of(const uint64_t* words, unsigned i) {
    return unsigned(words[i / 64] >> (63 - i % 64)) & 1u;
  }

  void set(const uint64_t* key, unsigned len, NextHop nh) {
    uint32_t n = 0;
    for (unsigned i = 0; i < len; ++i) {
      const unsigned b = bit_of(key, i);
      if (nodes_[n].child[b] == 0) {
        nodes_[n].child[b] = uint32_t(nodes_.size());
        nodes_.emplace_back();
      }
      n = nodes_[n].child[b];
    }
    nodes_[n].nh = nh;
  }

  /// Clears a route; false when it is not there.
  bool clear(const uint64_t* key, unsigned len) {
    uint32_t n = 0;  // the root
    for (unsigned i = 0; i < len; ++i) {
      n = child(n, bit_of(key, i));
      if (n == kNone) return false;
    }
    if (nodes_[n].nh == kNoRoute) return false;
    nodes_[n].nh = kNoRoute;
    return true;
  }

  NextHop lookup(const uint64_t* key, unsigned bits) const {
    NextHop best = nodes_[0].nh;
    uint32_t n   = 0;
    for (unsigned i = 0; i < bits; ++i) {
      n = child(n, bit_of(key, i));
      if (n == kNone) break;
      if (nodes_[n].nh != kNoRoute) best = nodes_[n].nh;
    }
    return best;
  }

  uint64_t memory_bytes() const { return nodes_.capacity() * sizeof(Node); }

 private:
  static constexpr uint32_t kNone = 0;  // the root is never a child
  struct Node {
    uint32_t child[2] = {0, 0};
    NextHop nh        = kNoRoute;
  };
  uint32_t child(uint32_t n, unsigned b) const { return nodes_[n].child[b]; }
  std::vector<Node> nodes_;
};

class RefFib final : public Fib {
 public:
  std::string_view id() const noexcept override { return "ref.lpm"; }

  Status do_lookup4(Span<const uint32_t> addrs, Span<NextHop> out, ExecContext&) const override {
    std::shared_lock lock(mutex_);
    for (uint32_t i = 0; i < addrs.size; ++i) {
      const uint64_t key[2] = {uint64_t(addrs[i]) << 32, 0};
      out[i]                = v4_.lookup(key, 32);
    }
    return Status::ok();
  }
  Status do_lookup6(Span<const Ip6> addrs, Span<NextHop> out, ExecContext&) const override {
    std::shared_lock lock(mutex_);
    for (uint32_t i = 0; i < addrs.size; ++i) {
      const uint64_t key[2] = {addrs[i].hi, addrs[i].lo};
      out[i]                = v6_.lookup(key, 128);
    }
    return Status::ok();
  }

  Status add4(const Route4& r) override {
    WARPATH_TRY(check_route(r));
    const uint64_t key[2] = {uint64_t(r.prefix) << 32, 0};
    std::unique_lock lock(mutex_);
    if (!v4_.clear(key, r.len)) ++routes4_;
    v4_.set(key, r.len, r.nh);
    return Status::ok();
  }
  Status add6(const Route6& r) override {
    WARPATH_TRY(check_route(r));
    const uint64_t key[2] = {r.prefix.hi, r.prefix.lo};
    std::unique_lock lock(mutex_);
    if (!v6_.clear(key, r.len)) ++routes6_;
    v6_.set(key, r.len, r.nh);
    return Status::ok();
  }
  Status remove4(uint32_t prefix, uint8_t len) override {
    WARPATH_TRY(check_route(Route4{prefix, len, 0}));
    const uint64_t key[2] = {uint64_t(prefix) << 32, 0};
    std::unique_lock lock(mutex_);
    if (!v4_.clear(key, len))
      return Status(Errc::kNotFound, "no route " + format_ipv4(prefix) + "/" + std::to_string(len));
    --routes4_;
    return Status::ok();
  }
  Status remove6(Ip6 prefix, uint8_t len) override {
    WARPATH_TRY(check_route(Route6{prefix, len, 0}));
    const uint64_t key[2] = {prefix.hi, prefix.lo};
    std::unique_lock lock(mutex_);
    if (!v6_.clear(key, len))
      return Status(Errc::kNotFound, "no route " + format_ipv6(prefix) + "/" + std::to_string(len));
    --routes6_;
    return Status::ok();
  }

  FibStats stats() const override {
    std::shared_lock lock(mutex_);
    FibStats s;
    s.routes4      = routes4_;
    s.routes6      = routes6_;
    s.memory_bytes = v4_.memory_bytes() + v6_.memory_bytes();
    return s;
  }

 private:
  mutable std::shared_mutex mutex_;
  BinaryTrie v4_, v6_;
  uint64_t routes4_ = 0, routes6_ = 0;
};

}  // namespace

Result<std::unique_ptr<Fib>> make_ref_fib(const RouteTable& table) {
  auto fib = std::make_unique<RefFib>();
  for (const Route4& r : table.v4) WARPATH_TRY(fib->add4(r));
  for (const Route6& r : table.v6) WARPATH_TRY(fib->add6(r));
  return std::unique_ptr<Fib>(std::move(fib));
}

}  // namespace warpath::lookup::detail
