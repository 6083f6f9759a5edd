// src/ipsec/engines.hpp: the factories of the ESP crypto engines (registry: ipsec_registry.cpp).
#pragma once
#include <memory>
#include <vector>

#include "warpath/ipsec/ipsec.hpp"

namespace warpath::ipsec::detail {

/// ref.esp (OpenSSL EVP); nullptr when built without OpenSSL.
std::unique_ptr<EspCrypto> make_openssl_esp(Span<const SaKeys> keys);
bool have_openssl();
/// cpu.esp (intel-ipsec-mb); nullptr when built without it.
std::unique_ptr<EspCrypto> make_ipsec_mb_esp(Span<const SaKeys> keys);
bool have_ipsec_mb();

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
