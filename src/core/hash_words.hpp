// src/core/hash_words.hpp: a host-side hash of five 64-bit words (a 40-byte key): each word
// XORed with its own constant and multiplied by its own odd one, the products summed, then
// mixed. The multiplies are independent, so they run in parallel where a byte-by-byte hash
// (FNV-1a) is a 40-step chain. Used by the IPsec policy index (ipsec/spd_index.cpp) and the
// flow-aes module's flow map.
#pragma once
#include <cstdint>

namespace warpath::detail {

inline uint64_t hash_words5(const uint64_t w[5]) noexcept {
  uint64_t h = (w[0] ^ 0x9E37'79B9'7F4A'7C15ull) * 0xC2B2'AE3D'27D4'EB4Full;
  h += (w[1] ^ 0x1656'67B1'9E37'79F9ull) * 0x85EB'CA77'C2B2'AE63ull;
  h += (w[2] ^ 0x27D4'EB2F'1656'67C5ull) * 0x9E37'79B9'7F4A'7C15ull;
  h += (w[3] ^ 0xFD70'46C5'D3A2'646Cull) * 0xC4CE'B9FE'1A85'EC53ull;
  h += (w[4] ^ 0x85EB'CA6B'C2B2'AE35ull) * 0xFF51'AFD7'ED55'8CCDull;
  h ^= h >> 31;
  h *= 0xC4CE'B9FE'1A85'EC53ull;
  return h ^ (h >> 29);
}

}  // namespace warpath::detail
