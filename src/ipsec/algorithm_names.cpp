// The algorithms' names as ip xfrm writes them (ipsec.hpp): apart from the registry, so that
// the SA file's reader links without the engines (fuzz/readers_fuzz.cpp).
#include "warpath/ipsec/ipsec.hpp"

namespace warpath::ipsec {

std::string_view cipher_name(Cipher c) {
  return c == Cipher::kAesGcm ? "rfc4106(gcm(aes))" : "rfc3686(ctr(aes))";
}
std::string_view integrity_name(Integrity i) {
  switch (i) {
    case Integrity::kHmacSha1:
      return "hmac(sha1)";
    case Integrity::kHmacSha256:
      return "hmac(sha256)";
    default:
      return "none";
  }
}

}  // namespace warpath::ipsec
