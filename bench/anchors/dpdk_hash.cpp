// bench/anchors/dpdk_hash.cpp: rte_hash as the exact-match anchor (hash_anchor.hpp).
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>

#include <atomic>
#include <chrono>
#include <string>

#include "hash_anchor.hpp"

namespace warpath::bench {
namespace {

class DpdkHash final : public HashAnchor {
 public:
  ~DpdkHash() override {
    if (h_) rte_hash_free(h_);
  }
  Status init(const std::vector<packet::OfTuple>& keys, bool padded) {
    static std::atomic<unsigned> serial{0};
    const std::string name = "wp_hash_" + std::to_string(serial++);
    rte_hash_parameters p{};
    p.name               = name.c_str();
    p.entries            = uint32_t(std::max<size_t>(2 * keys.size(), 64));
    key_len_             = padded ? sizeof(PaddedOfTuple) : sizeof(packet::OfTuple);
    p.key_len            = key_len_;
    p.hash_func          = rte_hash_crc;
    p.hash_func_init_val = 0;
    p.socket_id          = 0;
    const auto t0        = std::chrono::steady_clock::now();
    h_                   = rte_hash_create(&p);
    if (!h_) return Status(Errc::kNotSupported, std::string("rte_hash_create: ") + rte_strerror(rte_errno));
    for (size_t i = 0; i < keys.size(); ++i) {
      // The key first, zeros after: a 36-byte table reads only the key.
      const PaddedOfTuple k{keys[i]};
      if (rte_hash_add_key_data(h_, &k, reinterpret_cast<void*>(uintptr_t(i))) < 0)
        return Status(Errc::kNotSupported, "rte_hash_add_key_data failed at key " + std::to_string(i));
    }
    build_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return Status::ok();
  }
  void lookup_bulk(const void* keys, uint32_t n, uint32_t* ids) const override {
    const void* ptrs[RTE_HASH_LOOKUP_BULK_MAX];
    void* data[RTE_HASH_LOOKUP_BULK_MAX];
    uint64_t hits = 0;
    const auto* base = static_cast<const uint8_t*>(keys);
    for (uint32_t k = 0; k < n; ++k) ptrs[k] = base + size_t(k) * key_len_;
    rte_hash_lookup_bulk_data(h_, ptrs, n, &hits, data);
    for (uint32_t k = 0; k < n; ++k)
      ids[k] = (hits >> k & 1) ? uint32_t(reinterpret_cast<uintptr_t>(data[k])) : 0xFFFFFFFFu;
  }

 private:
  rte_hash* h_      = nullptr;
  uint32_t key_len_ = 0;
};

}  // namespace

Result<std::unique_ptr<HashAnchor>> HashAnchor::build(const std::vector<packet::OfTuple>& keys,
                                                      bool padded) {
  auto h = std::make_unique<DpdkHash>();
  WARPATH_TRY(h->init(keys, padded));
  return std::unique_ptr<HashAnchor>(std::move(h));
}

}  // namespace warpath::bench
