// src/ipsec/engine_stubs.cpp: the ESP engines of a build without their libraries (a minimal
// GPU build, a machine without libssl-dev or libipsec-mb-dev): listed, never available.
#include "ipsec/engines.hpp"

namespace warpath::ipsec::detail {

#ifndef WARPATH_HAVE_OPENSSL
bool have_openssl() { return false; }
std::unique_ptr<EspCrypto> make_openssl_esp(Span<const SaKeys>) { return nullptr; }
std::unique_ptr<CtrCipher> make_openssl_ctr() { return nullptr; }
#endif
#ifndef WARPATH_HAVE_IPSEC_MB
bool have_ipsec_mb() { return false; }
std::unique_ptr<EspCrypto> make_ipsec_mb_esp(Span<const SaKeys>) { return nullptr; }
std::unique_ptr<CtrCipher> make_ipsec_mb_ctr() { return nullptr; }
#endif

}  // namespace warpath::ipsec::detail
