// src/ipsec/core/crypto_core.hpp: ESP crypto written once for the GPU (cuda.esp, cuda.ctr)
// and checked on the host against OpenSSL (tests/ipsec): AES-128/256 (FIPS 197 through one
// 32-bit table, its S-box built from the definition), CTR (RFC 3686), SHA-1 / SHA-256
// (FIPS 180-4) with HMAC from precomputed pad states (RFC 2104), GHASH and GCM (NIST SP
// 800-38D, RFC 4106).
//
// This is the GPU's crypto: warpath's CPU engines use intel-ipsec-mb and OpenSSL and never
// this code. One thread seals or opens one packet (PacketShader runs AES one block per thread
// and SHA-1 one packet per thread). AES runs on four column words with one table (AesTable:
// 16 lookups a round). A thread's accesses to its packet are not coalesced with its warp's, so
// their count, not the arithmetic, bounded the kernels: moving aligned text as 16-byte words
// (aligned16, load16) made GCM's kernel-only rate 3.2x on an H100, where the table alone had
// changed nothing (bench/results/gpu-esp-2026-11-26-h100.md). GHASH uses Shoup's 4-bit tables
// of each SA's H (32 table steps per block, checked against the bit-by-bit gf128_mul).
//
// Tables: the AES table is passed in (the kernels build it in shared memory with
// aes_table_build_block; the host builds it once with aes_table_build), so no constant array
// needs a device copy.
#pragma once
#include <cstdint>

#include "ipsec/core/esp_core.hpp"
#include "warpath/core/hd.hpp"

namespace warpath::ipsec::core {

// ------------------------------------------------------------------------------------- AES

WARPATH_HD uint8_t xtime(uint8_t x) { return uint8_t((x << 1) ^ ((x & 0x80) ? 0x1b : 0)); }
WARPATH_HD uint8_t gf_mul(uint8_t a, uint8_t b) {
  uint8_t p = 0;
  for (int i = 0; i < 8; ++i) {
    if (b & 1) p ^= a;
    a = xtime(a);
    b >>= 1;
  }
  return p;
}
/// S-box entry x: the inverse in GF(2^8) (x^254), then the affine map (FIPS 197 5.1.1).
WARPATH_HD uint8_t sbox_entry(uint8_t x) {
  uint8_t inv = 1, base = x;
  for (int e = 254; e; e >>= 1) {  // square and multiply; 0 maps to 0
    if (e & 1) inv = gf_mul(inv, base);
    base = gf_mul(base, base);
  }
  if (x == 0) inv = 0;
  auto rotl = [](uint8_t v, int s) { return uint8_t((v << s) | (v >> (8 - s))); };
  return uint8_t(inv ^ rotl(inv, 1) ^ rotl(inv, 2) ^ rotl(inv, 3) ^ rotl(inv, 4) ^ 0x63);
}

/// The one AES table (the "T-table" of Daemen and Rijmen's 32-bit implementation, AES
/// proposal section 5.2.1), built from sbox_entry: te[x] holds S(x)'s MixColumns column
/// (2S, S, S, 3S), byte j of the word being row j. The other three columns' tables are its
/// rotations, and S(x) itself is byte 1, so SubBytes, ShiftRows and MixColumns of a round are
/// 16 lookups, 12 rotations and XORs, in 1 KiB (a GPU block's shared memory).
struct AesTable {
  uint32_t te[256];
};
WARPATH_HD uint32_t aes_table_entry(uint8_t x) {
  const uint8_t s = sbox_entry(x), s2 = xtime(s), s3 = uint8_t(s2 ^ s);
  return uint32_t(s2) | uint32_t(s) << 8 | uint32_t(s) << 16 | uint32_t(s3) << 24;
}
WARPATH_HD uint8_t sub_byte(const AesTable& t, uint8_t x) { return uint8_t(t.te[x] >> 8); }
/// Host: the table built once.
inline void aes_table_build(AesTable& t) {
  for (int x = 0; x < 256; ++x) t.te[x] = aes_table_entry(uint8_t(x));
}
#if defined(__CUDACC__)
/// A kernel's table in shared memory, built by its block (an entry or two a thread), then a
/// barrier: every thread of the block must call it.
__device__ inline void aes_table_build_block(AesTable& t) {
  for (int x = threadIdx.x; x < 256; x += blockDim.x) t.te[x] = aes_table_entry(uint8_t(x));
  __syncthreads();
}
#endif

/// An expanded key: word i holds key-schedule bytes 4i..4i+3 (byte 4i lowest), the layout of a
/// state column.
struct AesKey {
  uint32_t rk[4 * 15];
  uint32_t rounds;  ///< 10 (AES-128) or 14 (AES-256)
};

WARPATH_HD uint32_t load_le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
WARPATH_HD void store_le32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v), p[1] = uint8_t(v >> 8), p[2] = uint8_t(v >> 16), p[3] = uint8_t(v >> 24);
}
WARPATH_HD uint32_t rotl32(uint32_t x, int s) { return (x << s) | (x >> (32 - s)); }  // 0 < s < 32
WARPATH_HD uint32_t rotr32(uint32_t x, int s) { return (x >> s) | (x << (32 - s)); }
WARPATH_HD uint32_t bswap32(uint32_t v) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(v, 0, 0x0123);
#else
  return __builtin_bswap32(v);
#endif
}

/// Whether p is 16-byte aligned. The GPU's thread-per-packet accesses are not coalesced, so
/// their count bounds the kernels: text moves as 16-byte words (one access a block instead of
/// 16). CTR's XOR does so wherever the text lies (aes_ctr_range aligns on the data and shifts
/// the keystream); GHASH's and SHA's reads where the text is aligned (cuda.esp's staging area
/// holds each packet at a multiple of 16), byte by byte elsewhere (a frame's, in resident calls).
WARPATH_HD bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }
/// The 16 bytes at a 16-aligned p as four little-endian words, and back.
WARPATH_HD void load16(const uint8_t* p, uint32_t* w) {
#if defined(__CUDA_ARCH__)
  const uint4 v = *reinterpret_cast<const uint4*>(p);
  w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
#else
  for (int c = 0; c < 4; ++c) w[c] = load_le32(p + 4 * c);
#endif
}
WARPATH_HD void store16(uint8_t* p, const uint32_t* w) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
#else
  for (int c = 0; c < 4; ++c) store_le32(p + 4 * c, w[c]);
#endif
}
/// `n` (a multiple of 4) big-endian words from p, by 16-byte words where p is aligned.
WARPATH_HD void load_be_words(const uint8_t* p, uint32_t* w, int n) {
  if (aligned16(p)) {
    for (int i = 0; i < n; i += 4) {
      load16(p + 4 * i, w + i);
      for (int c = 0; c < 4; ++c) w[i + c] = bswap32(w[i + c]);
    }
  } else {
    for (int i = 0; i < n; ++i) w[i] = load_be32(p + 4 * i);
  }
}

/// SubWord: the S-box on each byte of a word.
WARPATH_HD uint32_t sub_word(const AesTable& tab, uint32_t t) {
  return uint32_t(sub_byte(tab, uint8_t(t))) | uint32_t(sub_byte(tab, uint8_t(t >> 8))) << 8 |
         uint32_t(sub_byte(tab, uint8_t(t >> 16))) << 16 |
         uint32_t(sub_byte(tab, uint8_t(t >> 24))) << 24;
}

/// FIPS 197 5.2: the key schedule of a 16- or 32-byte key.
WARPATH_HD void aes_expand(const uint8_t* key, uint32_t key_bytes, const AesTable& tab, AesKey& k) {
  const uint32_t nk = key_bytes / 4;
  k.rounds          = nk + 6;
  const uint32_t words = 4 * (k.rounds + 1);
  for (uint32_t i = 0; i < nk; ++i) k.rk[i] = load_le32(key + 4 * i);
  uint8_t rcon = 1;
  for (uint32_t i = nk; i < words; ++i) {
    uint32_t t = k.rk[i - 1];
    if (i % nk == 0) {  // RotWord, SubWord, Rcon (byte 0 is the word's first byte)
      t    = sub_word(tab, rotl32(t, 24)) ^ rcon;
      rcon = xtime(rcon);
    } else if (nk > 6 && i % nk == 4) {
      t = sub_word(tab, t);
    }
    k.rk[i] = k.rk[i - nk] ^ t;
  }
}

/// One block on four column words (FIPS 197 section 5.1 through the table): column c of a
/// round's output takes row j from column c + j of its input.
WARPATH_HD void aes_encrypt_words(const AesKey& k, const AesTable& tab, uint32_t* s) {
  const uint32_t* te = tab.te;
  uint32_t s0 = s[0] ^ k.rk[0], s1 = s[1] ^ k.rk[1], s2 = s[2] ^ k.rk[2], s3 = s[3] ^ k.rk[3];
  const uint32_t* rk = k.rk + 4;
  for (uint32_t r = 1; r < k.rounds; ++r, rk += 4) {
#define WARPATH_AES_COL(a, b, c, d)                                                       \
  (te[(a)&0xff] ^ rotl32(te[((b) >> 8) & 0xff], 8) ^ rotl32(te[((c) >> 16) & 0xff], 16) ^ \
   rotl32(te[(d) >> 24], 24))
    const uint32_t t0 = WARPATH_AES_COL(s0, s1, s2, s3) ^ rk[0];
    const uint32_t t1 = WARPATH_AES_COL(s1, s2, s3, s0) ^ rk[1];
    const uint32_t t2 = WARPATH_AES_COL(s2, s3, s0, s1) ^ rk[2];
    const uint32_t t3 = WARPATH_AES_COL(s3, s0, s1, s2) ^ rk[3];
#undef WARPATH_AES_COL
    s0 = t0, s1 = t1, s2 = t2, s3 = t3;
  }
  auto last = [&](uint32_t a, uint32_t b, uint32_t c, uint32_t d) {  // SubBytes and ShiftRows
    return uint32_t(sub_byte(tab, uint8_t(a))) | uint32_t(sub_byte(tab, uint8_t(b >> 8))) << 8 |
           uint32_t(sub_byte(tab, uint8_t(c >> 16))) << 16 |
           uint32_t(sub_byte(tab, uint8_t(d >> 24))) << 24;
  };
  s[0] = last(s0, s1, s2, s3) ^ rk[0];
  s[1] = last(s1, s2, s3, s0) ^ rk[1];
  s[2] = last(s2, s3, s0, s1) ^ rk[2];
  s[3] = last(s3, s0, s1, s2) ^ rk[3];
}

/// One block of bytes.
WARPATH_HD void aes_encrypt(const AesKey& k, const AesTable& tab, const uint8_t* in, uint8_t* out) {
  uint32_t s[4];
  for (int c = 0; c < 4; ++c) s[c] = load_le32(in + 4 * c);
  aes_encrypt_words(k, tab, s);
  for (int c = 0; c < 4; ++c) store_le32(out + 4 * c, s[c]);
}

/// Bytes o..o+15 (0 < o < 16) of the 32 bytes a | b, each four little-endian words.
WARPATH_HD void shift_bytes(const uint32_t* a, const uint32_t* b, uint32_t o, uint32_t* out) {
  uint32_t w0, w1, w2, w3, w4;
  switch (o / 4) {
    case 0:
      w0 = a[0], w1 = a[1], w2 = a[2], w3 = a[3], w4 = b[0];
      break;
    case 1:
      w0 = a[1], w1 = a[2], w2 = a[3], w3 = b[0], w4 = b[1];
      break;
    case 2:
      w0 = a[2], w1 = a[3], w2 = b[0], w3 = b[1], w4 = b[2];
      break;
    default:
      w0 = a[3], w1 = b[0], w2 = b[1], w3 = b[2], w4 = b[3];
      break;
  }
  const uint32_t r = (o % 4) * 8;
  if (r == 0) {
    out[0] = w0, out[1] = w1, out[2] = w2, out[3] = w3;
    return;
  }
  out[0] = (w0 >> r) | (w1 << (32 - r));
  out[1] = (w1 >> r) | (w2 << (32 - r));
  out[2] = (w2 >> r) | (w3 << (32 - r));
  out[3] = (w3 >> r) | (w4 << (32 - r));
}

/// XORs `len` bytes at `data` with the keystream of counter blocks counter, counter + 1, ...
/// (one 128-bit big-endian number: NIST SP 800-38A, OpenSSL's CTR), starting `skip` (0-15)
/// bytes into the first block's keystream: flow-aes's ranges (CtrCipher, cuda.ctr).
WARPATH_HD void aes_ctr_range(const AesKey& k, const AesTable& tab, const uint8_t* counter,
                              uint32_t skip, uint8_t* data, uint32_t len) {
  if (len == 0) return;
  uint32_t ctr[4];  // the counter as a big-endian number in four words, most significant first
  for (int c = 0; c < 4; ++c) ctr[c] = load_be32(counter + 4 * c);
  auto next = [&](uint32_t* ks) {  // the next keystream block, as four column words
    for (int c = 0; c < 4; ++c) ks[c] = bswap32(ctr[c]);
    aes_encrypt_words(k, tab, ks);
    for (int c = 3; c >= 0 && ++ctr[c] == 0; --c) {  // the carry runs through all 16 bytes
    }
  };
  // Word i of ks by selects (a register array indexed at run time would go to local memory).
  auto word = [](const uint32_t* ks, uint32_t i) {
    return i < 2 ? (i == 0 ? ks[0] : ks[1]) : (i == 2 ? ks[2] : ks[3]);
  };
  uint32_t ks[4];
  next(ks);
  uint32_t at    = skip;  // bytes of ks used
  uint32_t done  = 0;
  auto xor_bytes = [&](uint32_t until) {
    for (; done < until; ++done, ++at) {
      if (at == 16) next(ks), at = 0;
      data[done] ^= uint8_t(word(ks, at / 4) >> (8 * (at % 4)));
    }
  };
  // Byte by byte up to a 16-byte boundary of data; then a 16-byte word at a time, each XORed
  // with bytes at..15 of one keystream block and 0..at-1 of the next (shift_bytes) unless the
  // blocks fall on the words; the tail byte by byte.
  const uint32_t head = uint32_t(16 - (reinterpret_cast<uintptr_t>(data) & 15)) & 15;
  xor_bytes(head < len ? head : len);
  for (; len - done >= 16; done += 16) {
    uint32_t x[4], d[4];
    if (at == 16) next(ks), at = 0;
    if (at == 0) {
      for (int c = 0; c < 4; ++c) x[c] = ks[c];
      at = 16;
    } else {
      uint32_t nx[4];
      next(nx);
      shift_bytes(ks, nx, at, x);
      for (int c = 0; c < 4; ++c) ks[c] = nx[c];
    }
    load16(data + done, d);
    for (int c = 0; c < 4; ++c) d[c] ^= x[c];
    store16(data + done, d);
  }
  xor_bytes(len);
}

/// XORs `len` bytes at `data` with the keystream of counter blocks prefix (12 bytes) | n,
/// n = first, first + 1, ... (big-endian): RFC 3686 (prefix nonce | IV, from 1) and GCM
/// (prefix salt | IV, from 2). aes_ctr_range's keystream: an ESP text (under 64 KiB, 4,096
/// blocks from 1 or 2) never carries out of the low 32 bits, where GCM's inc32 would wrap.
WARPATH_HD void aes_ctr(const AesKey& k, const AesTable& tab, const uint8_t* prefix, uint32_t first,
                        uint8_t* data, uint32_t len) {
  uint8_t block[16];
  for (int i = 0; i < 12; ++i) block[i] = prefix[i];
  store_be32(block + 12, first);
  aes_ctr_range(k, tab, block, 0, data, len);
}

// ------------------------------------------------------------------------------------- SHA

WARPATH_HD void sha1_block(uint32_t* h, const uint8_t* p) {
  uint32_t w[16];
  load_be_words(p, w, 16);
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; ++i) {
    if (i >= 16) w[i & 15] = rotl32(w[(i + 13) & 15] ^ w[(i + 8) & 15] ^ w[(i + 2) & 15] ^ w[i & 15], 1);
    uint32_t f, kk;
    if (i < 20) f = (b & c) | (~b & d), kk = 0x5a827999u;
    else if (i < 40) f = b ^ c ^ d, kk = 0x6ed9eba1u;
    else if (i < 60) f = (b & c) | (b & d) | (c & d), kk = 0x8f1bbcdcu;
    else f = b ^ c ^ d, kk = 0xca62c1d6u;
    const uint32_t t = rotl32(a, 5) + f + e + kk + w[i & 15];
    e = d, d = c, c = rotl32(b, 30), b = a, a = t;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

WARPATH_HD void sha256_block(uint32_t* h, const uint8_t* p) {
  const uint32_t K[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
      0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
      0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
      0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
  uint32_t w[16];
  load_be_words(p, w, 16);
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int i = 0; i < 64; ++i) {
    if (i >= 16) {
      const uint32_t w15 = w[(i + 1) & 15], w2 = w[(i + 14) & 15];
      const uint32_t s0 = rotr32(w15, 7) ^ rotr32(w15, 18) ^ (w15 >> 3);
      const uint32_t s1 = rotr32(w2, 17) ^ rotr32(w2, 19) ^ (w2 >> 10);
      w[i & 15] += s0 + w[(i + 9) & 15] + s1;
    }
    const uint32_t t1 = hh + (rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i & 15];
    const uint32_t t2 = (rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

/// The state after one block: SHA-1 (5 words) or SHA-256 (8 words) from its initial value.
WARPATH_HD void sha_init(bool sha256, uint32_t* h) {
  if (sha256) {
    const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                            0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    for (int i = 0; i < 8; ++i) h[i] = iv[i];
  } else {
    const uint32_t iv[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
    for (int i = 0; i < 5; ++i) h[i] = iv[i];
  }
}
WARPATH_HD void sha_block(bool sha256, uint32_t* h, const uint8_t* p) {
  if (sha256) sha256_block(h, p);
  else sha1_block(h, p);
}

/// Continues a hash from state `h` (which has absorbed `prior` bytes, a multiple of 64) over
/// `len` bytes of `data` then `tail_len` (<= 4) bytes of `tail`, and finishes it (padding and
/// length); the digest is left in h (big-endian words).
WARPATH_HD void sha_finish(bool sha256, uint32_t* h, uint64_t prior, const uint8_t* data, uint32_t len,
                           const uint8_t* tail, uint32_t tail_len) {
  uint32_t off = 0;
  for (; off + 64 <= len; off += 64) sha_block(sha256, h, data + off);
  uint8_t buf[128];
  uint32_t n = 0;
  for (; off < len; ++off) buf[n++] = data[off];
  for (uint32_t i = 0; i < tail_len; ++i) buf[n++] = tail[i];
  const uint64_t bits = (prior + len + tail_len) * 8;
  buf[n++] = 0x80;
  const uint32_t end = n + 8 <= 64 ? 64 : 128;
  while (n < end - 8) buf[n++] = 0;
  for (int i = 7; i >= 0; --i) buf[n++] = uint8_t(bits >> (8 * i));
  sha_block(sha256, h, buf);
  if (end == 128) sha_block(sha256, h, buf + 64);
}

/// HMAC pad states (RFC 2104): the hash state after (key ^ 0x36..) and after (key ^ 0x5c..).
WARPATH_HD void hmac_pads(bool sha256, const uint8_t* key, uint32_t key_len, uint32_t* ipad, uint32_t* opad) {
  uint8_t block[64];
  for (int pass = 0; pass < 2; ++pass) {
    const uint8_t x = pass ? 0x5c : 0x36;
    for (uint32_t i = 0; i < 64; ++i) block[i] = uint8_t((i < key_len ? key[i] : 0) ^ x);
    uint32_t* h = pass ? opad : ipad;
    sha_init(sha256, h);
    sha_block(sha256, h, block);
  }
}

/// HMAC of data | tail from the pad states; the first `out_len` bytes of the MAC to `out`.
WARPATH_HD void hmac(bool sha256, const uint32_t* ipad, const uint32_t* opad, const uint8_t* data,
                     uint32_t len, const uint8_t* tail, uint32_t tail_len, uint8_t* out, uint32_t out_len) {
  const int words = sha256 ? 8 : 5;
  uint32_t h[8];
  for (int i = 0; i < words; ++i) h[i] = ipad[i];
  sha_finish(sha256, h, 64, data, len, tail, tail_len);
  uint8_t inner[32];
  for (int i = 0; i < words; ++i) store_be32(inner + 4 * i, h[i]);
  for (int i = 0; i < words; ++i) h[i] = opad[i];
  sha_finish(sha256, h, 64, inner, uint32_t(4 * words), nullptr, 0);
  for (uint32_t i = 0; i < out_len; ++i) out[i] = uint8_t(h[i / 4] >> (24 - 8 * (i % 4)));
}

// ------------------------------------------------------------------------------------ GHASH

/// x = x * y in GF(2^128) with GCM's bit order (SP 800-38D algorithm 1); 128-bit values as
/// big-endian (hi, lo) pairs.
WARPATH_HD void gf128_mul(uint64_t& xh, uint64_t& xl, uint64_t yh, uint64_t yl) {
  uint64_t zh = 0, zl = 0, vh = yh, vl = yl;
  for (int i = 0; i < 128; ++i) {
    const uint64_t bit = i < 64 ? (xh >> (63 - i)) & 1 : (xl >> (127 - i)) & 1;
    const uint64_t m   = 0 - bit;
    zh ^= vh & m;
    zl ^= vl & m;
    const uint64_t lsb = vl & 1;
    vl = (vl >> 1) | (vh << 63);
    vh = (vh >> 1) ^ ((0 - lsb) & 0xe100000000000000ull);
  }
  xh = zh, xl = zl;
}

WARPATH_HD uint64_t load_be64(const uint8_t* p) {
  return uint64_t(load_be32(p)) << 32 | load_be32(p + 4);
}
WARPATH_HD void store_be64(uint8_t* p, uint64_t v) {
  store_be32(p, uint32_t(v >> 32));
  store_be32(p + 4, uint32_t(v));
}

/// Shoup's 4-bit tables for multiplying by H: mh/ml[i] = i * H (i a 4-bit polynomial in
/// GCM's bit order), built once per SA; then a multiplication is 32 table steps instead of
/// 128 bit steps (the method of NIST SP 800-38D's references, as in mbed TLS).
WARPATH_HD void ghash_table(uint64_t hh, uint64_t hl, uint64_t* mh, uint64_t* ml) {
  mh[0] = ml[0] = 0;
  mh[8] = hh, ml[8] = hl;
  for (int i = 4; i > 0; i >>= 1) {  // i * H for i = 4, 2, 1: H times x, x^2, x^3
    const uint64_t lsb = ml[i * 2] & 1;
    ml[i] = (mh[i * 2] << 63) | (ml[i * 2] >> 1);
    mh[i] = (mh[i * 2] >> 1) ^ ((0 - lsb) & 0xe100000000000000ull);
  }
  for (int i = 2; i <= 8; i *= 2)
    for (int j = 1; j < i; ++j) mh[i + j] = mh[i] ^ mh[j], ml[i + j] = ml[i] ^ ml[j];
}

/// x = x * H with the tables of ghash_table.
WARPATH_HD void gf128_mul_table(uint64_t& xh, uint64_t& xl, const uint64_t* mh, const uint64_t* ml) {
  const uint16_t last4[16] = {0x0000, 0x1c20, 0x3840, 0x2460, 0x7080, 0x6ca0, 0x48c0, 0x54e0,
                              0xe100, 0xfd20, 0xd940, 0xc560, 0x9180, 0x8da0, 0xa9c0, 0xb5e0};
  uint8_t x[16];
  store_be64(x, xh);
  store_be64(x + 8, xl);
  uint64_t zh = mh[x[15] & 0xf], zl = ml[x[15] & 0xf];
  for (int i = 15; i >= 0; --i) {
    const unsigned lo = x[i] & 0xf, hi = x[i] >> 4;
    if (i != 15) {
      const unsigned rem = unsigned(zl & 0xf);
      zl = (zh << 60) | (zl >> 4);
      zh = (zh >> 4) ^ (uint64_t(last4[rem]) << 48);
      zh ^= mh[lo];
      zl ^= ml[lo];
    }
    const unsigned rem = unsigned(zl & 0xf);
    zl = (zh << 60) | (zl >> 4);
    zh = (zh >> 4) ^ (uint64_t(last4[rem]) << 48);
    zh ^= mh[hi];
    zl ^= ml[hi];
  }
  xh = zh, xl = zl;
}

/// GHASH over `len` bytes (zero-padded to a block) into (yh, yl).
WARPATH_HD void ghash_update(uint64_t& yh, uint64_t& yl, const uint64_t* mh, const uint64_t* ml, const uint8_t* p,
                             uint32_t len) {
  for (uint32_t off = 0; off < len; off += 16) {
    if (len - off >= 16 && aligned16(p + off)) {
      uint32_t w[4];
      load_be_words(p + off, w, 4);
      yh ^= uint64_t(w[0]) << 32 | w[1];
      yl ^= uint64_t(w[2]) << 32 | w[3];
    } else {
      uint8_t b[16];
      const uint32_t m = len - off < 16 ? len - off : 16;
      for (uint32_t i = 0; i < 16; ++i) b[i] = i < m ? p[off + i] : 0;
      yh ^= load_be64(b);
      yl ^= load_be64(b + 8);
    }
    gf128_mul_table(yh, yl, mh, ml);
  }
}

// ------------------------------------------------------------------------------- ESP packets

/// One SA's keys as the GPU uses them (built by sa_prepare from SaKeys' fields).
struct DeviceSa {
  AesKey aes;
  uint8_t nonce[4];
  uint8_t gcm, sha256, esn, icv_bytes;
  uint64_t hh, hl;            ///< GCM: H = E(K, 0^128)
  uint64_t mh[16], ml[16];    ///< GCM: Shoup's tables of H (ghash_table)
  uint32_t ipad[8], opad[8];  ///< HMAC pad states
};

WARPATH_HD void sa_prepare(const uint8_t* key, uint32_t key_bytes, const uint8_t* nonce, bool gcm,
                           bool sha256, const uint8_t* auth_key, uint32_t auth_key_bytes,
                           uint32_t icv_bytes, bool esn, const AesTable& tab, DeviceSa& sa) {
  aes_expand(key, key_bytes, tab, sa.aes);
  for (int i = 0; i < 4; ++i) sa.nonce[i] = nonce[i];
  sa.gcm = gcm, sa.sha256 = sha256, sa.esn = esn, sa.icv_bytes = uint8_t(icv_bytes);
  sa.hh = sa.hl = 0;
  for (int i = 0; i < 8; ++i) sa.ipad[i] = sa.opad[i] = 0;
  if (gcm) {
    uint8_t zero[16] = {}, h[16];
    aes_encrypt(sa.aes, tab, zero, h);
    sa.hh = load_be64(h), sa.hl = load_be64(h + 8);
    ghash_table(sa.hh, sa.hl, sa.mh, sa.ml);
  } else {
    hmac_pads(sha256, auth_key, auth_key_bytes, sa.ipad, sa.opad);
  }
}

/// GCM's tag over AAD (SPI | [seq_hi |] seq) and the ciphertext (RFC 4106 section 5).
WARPATH_HD void gcm_tag(const DeviceSa& sa, const AesTable& tab, const uint8_t* esp,
                        uint32_t text_len, uint32_t seq_hi, const uint8_t* j0, uint8_t* tag) {
  uint8_t aad[12];
  for (int i = 0; i < 4; ++i) aad[i] = esp[i];
  uint32_t aad_len = 8;
  if (sa.esn) {
    store_be32(aad + 4, seq_hi);
    for (int i = 0; i < 4; ++i) aad[8 + i] = esp[4 + i];
    aad_len = 12;
  } else {
    for (int i = 0; i < 4; ++i) aad[4 + i] = esp[4 + i];
  }
  uint64_t yh = 0, yl = 0;
  ghash_update(yh, yl, sa.mh, sa.ml, aad, aad_len);
  ghash_update(yh, yl, sa.mh, sa.ml, esp + kEspHead, text_len);
  yh ^= uint64_t(aad_len) * 8;
  yl ^= uint64_t(text_len) * 8;
  gf128_mul_table(yh, yl, sa.mh, sa.ml);
  uint8_t ek[16];
  aes_encrypt(sa.aes, tab, j0, ek);
  store_be64(tag, yh ^ load_be64(ek));
  store_be64(tag + 8, yl ^ load_be64(ek + 8));
}

/// The counter block's first 12 bytes (RFC 4106 3.1 / RFC 3686 4): the SA's salt (nonce) and
/// the packet's IV.
WARPATH_HD void counter_prefix(const DeviceSa& sa, const uint8_t* esp, uint8_t prefix[16]) {
  for (int i = 0; i < 4; ++i) prefix[i] = sa.nonce[i];
  for (int i = 0; i < 8; ++i) prefix[4 + i] = esp[kEspHeaderBytes + i];
}

/// Seals one ESP packet in place (engine contract: ipsec.hpp CryptoOp).
WARPATH_HD void seal_packet(const DeviceSa& sa, const AesTable& tab, uint8_t* esp,
                            uint32_t text_len, uint32_t seq_hi) {
  uint8_t prefix[16];
  counter_prefix(sa, esp, prefix);
  uint8_t* text = esp + kEspHead;
  uint8_t* icv  = text + text_len;
  if (sa.gcm) {
    aes_ctr(sa.aes, tab, prefix, 2, text, text_len);
    store_be32(prefix + 12, 1);  // J0
    uint8_t tag[16];
    gcm_tag(sa, tab, esp, text_len, seq_hi, prefix, tag);
    for (uint32_t i = 0; i < sa.icv_bytes; ++i) icv[i] = tag[i];
    return;
  }
  aes_ctr(sa.aes, tab, prefix, 1, text, text_len);
  uint8_t hi[4];
  store_be32(hi, seq_hi);
  hmac(sa.sha256, sa.ipad, sa.opad, esp, kEspHead + text_len, hi, sa.esn ? 4 : 0, icv, sa.icv_bytes);
}

/// Opens one ESP packet in place: the ICV compared in constant time, then the text decrypted.
WARPATH_HD bool open_packet(const DeviceSa& sa, const AesTable& tab, uint8_t* esp,
                            uint32_t text_len, uint32_t seq_hi) {
  uint8_t prefix[16];
  counter_prefix(sa, esp, prefix);
  uint8_t* text      = esp + kEspHead;
  const uint8_t* icv = text + text_len;
  uint8_t want[32];
  if (sa.gcm) {
    store_be32(prefix + 12, 1);
    gcm_tag(sa, tab, esp, text_len, seq_hi, prefix, want);
  } else {
    uint8_t hi[4];
    store_be32(hi, seq_hi);
    hmac(sa.sha256, sa.ipad, sa.opad, esp, kEspHead + text_len, hi, sa.esn ? 4 : 0, want, sa.icv_bytes);
  }
  uint8_t diff = 0;
  for (uint32_t i = 0; i < sa.icv_bytes; ++i) diff |= uint8_t(want[i] ^ icv[i]);
  if (diff) return false;
  aes_ctr(sa.aes, tab, prefix, sa.gcm ? 2 : 1, text, text_len);
  return true;
}

}  // namespace warpath::ipsec::core
