// bench/ipsec/imb_anchor.hpp: warpath-esp-bench's anchor, intel-ipsec-mb's raw burst API over
// a batch of ESP packets (seal, or open), with the fields cpu.esp fills. Included by
// esp_bench.cpp only.
#pragma once
#include <intel-ipsec-mb.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "warpath/ipsec/ipsec.hpp"

namespace warpath::bench::esp {

inline constexpr uint32_t kBatch = 128;  ///< packets a pass

// A burst of `n` free jobs (flushing what an earlier pass left first, when it holds fewer).
inline uint32_t full_burst(IMB_MGR* mgr, uint32_t n, IMB_JOB** jobs) {
  uint32_t got = IMB_GET_NEXT_BURST(mgr, n, jobs);
  if (got < n) {
    IMB_FLUSH_BURST(mgr, n, jobs);
    got = IMB_GET_NEXT_BURST(mgr, n, jobs);
  }
  return got;
}

// intel-ipsec-mb's raw burst over the ops' packets, one job per packet with the fields
// cpu.esp fills, in the same API form: the anchor. Sealing writes each tag in its ICV's place;
// opening (`open`) decrypts in place and writes each tag into tags[p], compared by nobody (the
// library's own work only; CTR and GCM decrypt by the same XOR, so passes may repeat).
struct ImbAnchor {
  IMB_MGR* mgr;
  const ipsec::SaKeys& k;
  const std::vector<ipsec::CryptoOp>& ops;
  uint32_t text;
  bool open = false;
  alignas(64) uint8_t enc[16 * 15], dec[16 * 15], ipad[32], opad[32], ivs[kBatch][16],
      aads[kBatch][16], tags[kBatch][16];
  alignas(64) gcm_key_data gkey;
  gcm_context_data gctx[kBatch];

  ImbAnchor(IMB_MGR* m, const ipsec::SaKeys& keys, const std::vector<ipsec::CryptoOp>& o,
            uint32_t t)
      : mgr(m), k(keys), ops(o), text(t) {
    if (k.cipher == ipsec::Cipher::kAesGcm) {
      IMB_AES128_GCM_PRE(mgr, k.key.data(), &gkey);
      return;
    }
    IMB_AES_KEYEXP_128(mgr, k.key.data(), enc, dec);
    uint8_t ip[64], op[64];
    for (int b = 0; b < 64; ++b) {
      const uint8_t kb = b < k.auth_key_bytes ? k.auth_key[b] : 0;
      ip[b] = kb ^ 0x36, op[b] = kb ^ 0x5c;
    }
    IMB_SHA1_ONE_BLOCK(mgr, ip, ipad);
    IMB_SHA1_ONE_BLOCK(mgr, op, opad);
  }

  uint64_t pass(bool nocheck) {
    IMB_JOB* jobs[kBatch];
    const uint32_t n = full_burst(mgr, kBatch, jobs);
    for (uint32_t p = 0; p < n; ++p) {
      IMB_JOB* j = jobs[p];
      uint8_t* e = ops[p].esp;
      std::memcpy(ivs[p], k.nonce.data(), 4);
      std::memcpy(ivs[p] + 4, e + 8, 8);
      j->src = e, j->dst = e + 16;
      j->cipher_start_src_offset_in_bytes = 16;
      j->msg_len_to_cipher_in_bytes       = text;
      j->iv = ivs[p], j->iv_len_in_bytes = 12;
      j->key_len_in_bytes             = 16;
      j->cipher_direction             = open ? IMB_DIR_DECRYPT : IMB_DIR_ENCRYPT;
      j->chain_order                  = open ? IMB_ORDER_HASH_CIPHER : IMB_ORDER_CIPHER_HASH;
      j->auth_tag_output              = open ? tags[p] : e + 16 + text;  // sealing: the ICV's place
      j->auth_tag_output_len_in_bytes = k.icv_bytes;
      if (k.cipher == ipsec::Cipher::kAesGcm) {
        j->cipher_mode = IMB_CIPHER_GCM, j->hash_alg = IMB_AUTH_AES_GMAC;
        j->enc_keys = j->dec_keys = &gkey;
        std::memcpy(aads[p], e, 8);
        j->u.GCM.aad = aads[p], j->u.GCM.aad_len_in_bytes = 8, j->u.GCM.ctx = &gctx[p];
        j->hash_start_src_offset_in_bytes = 16, j->msg_len_to_hash_in_bytes = text;
      } else {
        j->cipher_mode = IMB_CIPHER_CNTR, j->hash_alg = IMB_AUTH_HMAC_SHA_1;
        j->enc_keys = j->dec_keys           = enc;
        j->u.HMAC._hashed_auth_key_xor_ipad = ipad;
        j->u.HMAC._hashed_auth_key_xor_opad = opad;
        j->hash_start_src_offset_in_bytes = 0, j->msg_len_to_hash_in_bytes = 16 + text;
      }
    }
    uint32_t done =
        nocheck ? IMB_SUBMIT_BURST_NOCHECK(mgr, n, jobs) : IMB_SUBMIT_BURST(mgr, n, jobs);
    while (done < n) done += IMB_FLUSH_BURST(mgr, n - done, jobs + done);
    return uint64_t(n);
  }
};

}  // namespace warpath::bench::esp
