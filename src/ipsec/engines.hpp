// src/ipsec/engines.hpp: the factories of the ESP crypto engines (registry: ipsec_registry.cpp).
#pragma once
#include <memory>
#include <vector>

#include "ipsec/core/crypto_core.hpp"
#include "warpath/ipsec/ipsec.hpp"

namespace warpath::ipsec::detail {

/// ref.esp (OpenSSL EVP); nullptr when built without OpenSSL.
std::unique_ptr<EspCrypto> make_openssl_esp(Span<const SaKeys> keys);
bool have_openssl();
/// cpu.esp (intel-ipsec-mb); nullptr when built without it.
std::unique_ptr<EspCrypto> make_ipsec_mb_esp(Span<const SaKeys> keys);
bool have_ipsec_mb();

/// ref.ctr (OpenSSL EVP) and cpu.ctr (intel-ipsec-mb); nullptr when built without them.
std::unique_ptr<CtrCipher> make_openssl_ctr();
std::unique_ptr<CtrCipher> make_ipsec_mb_ctr();

/// An engine's key store: values by handle, dropped handles reused.
template <class T>
struct KeySlots {
  std::vector<T> values;
  std::vector<uint8_t> used;
  std::vector<uint32_t> free;
  uint32_t take() {
    if (free.empty()) {
      values.emplace_back();
      used.push_back(1);
      return uint32_t(values.size() - 1);
    }
    const uint32_t h = free.back();
    free.pop_back();
    used[h] = 1;
    return h;
  }
  bool live(uint32_t h) const noexcept { return h < used.size() && used[h]; }
  /// Frees `h`; the value is reset to T{} (a key schedule does not outlive its key).
  void drop(uint32_t h) {
    if (!live(h)) return;
    values[h] = T{};
    used[h]   = 0;
    free.push_back(h);
  }
};

/// AES schedules by handle, expanded on the host by crypto_core's aes_expand: cuda.ctr's keys
/// (copied to the device) and the self-test's oracle without OpenSSL (crypto_core on the host).
struct CoreKeys {
  core::AesTable table;
  KeySlots<core::AesKey> slots;
  CoreKeys() { core::aes_table_build(table); }
  uint32_t add(const uint8_t* key, uint32_t bytes) {
    const uint32_t h = slots.take();
    core::aes_expand(key, bytes, table, slots.values[h]);
    return h;
  }
};

/// cuda.ctr (CUDA builds only).
Result<std::unique_ptr<CtrCipher>> make_cuda_ctr();

/// cuda.esp (CUDA builds only): the SAs' keys prepared on the device.
Result<std::unique_ptr<EspCrypto>> make_cuda_esp(Span<const SaKeys> keys);

/// Twelve SAs with random keys, one per suite: AES-128/256, CTR with HMAC-SHA1 or
/// HMAC-SHA256, GCM, each with and without ESN (the self-test's and the tests' set).
std::vector<SaKeys> every_suite(uint64_t seed);

/// The bytes an SA's ICV covers after the text: the high sequence bits with ESN and a separate
/// integrity algorithm (RFC 4303 3.3.2.1), else none.
inline uint32_t hashed_seq_hi_bytes(const SaKeys& k) {
  return k.esn && k.cipher == Cipher::kAesCtr ? 4 : 0;
}

}  // namespace warpath::ipsec::detail
