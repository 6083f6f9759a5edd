// src/ipsec/cpu/esp_ipsec_mb.cpp: cpu.esp, ESP crypto on intel-ipsec-mb's burst API. One job per
// packet (cipher and HMAC chained, or GCM), up to IMB_MAX_BURST_SIZE (128) jobs per burst: the
// library spreads them over its multi-buffer SIMD lanes, the CPU's form of batching.
//
// Keys are expanded once per SA when the engine is built (AES round keys, the HMAC inner and
// outer pad hashes, GCM's key data); the manager (IMB_MGR) is per thread.
//
// ESN with a separate integrity algorithm hashes the high sequence bits after the text
// (RFC 4303 3.3.2.1): they are written into the first 4 bytes of the ICV's slot and hashed
// from there. Sealing writes the tag into that slot when the job completes (the library has
// taken the message's last block at submission); opening saves the received ICV first and
// compares it with the tag computed into scratch.
#include <intel-ipsec-mb.h>
#include <openssl/crypto.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ipsec/core/esp_core.hpp"
#include "ipsec/cpu/imb_burst.hpp"
#include "ipsec/engines.hpp"

namespace warpath::ipsec::detail {
namespace {

struct MgrFree {
  void operator()(IMB_MGR* m) const { free_mb_mgr(m); }
};

struct alignas(64) SaExpanded {
  uint8_t enc[16 * 15];
  uint8_t dec[16 * 15];
  uint8_t ipad[32], opad[32];
  gcm_key_data gcm;
  uint8_t iv_nonce[4];
  bool shaped;  ///< key, tag and algorithms as the library's job checks want them (init)
};

class IpsecMbEsp final : public EspCrypto {
 public:
  explicit IpsecMbEsp(Span<const SaKeys> keys) : keys_(keys.begin(), keys.end()) {}
  std::string_view id() const noexcept override { return "cpu.esp"; }
  uint32_t sa_count() const noexcept override { return uint32_t(keys_.size()); }

  Status init() {
    IMB_MGR* m = mgr();
    if (!m) return Status(Errc::kOutOfMemory, "cpu.esp: intel-ipsec-mb manager");
    void* p = nullptr;
    if (posix_memalign(&p, 64, sizeof(SaExpanded) * (keys_.empty() ? 1 : keys_.size())) != 0)
      return Status(Errc::kOutOfMemory, "cpu.esp: key schedules");
    sas_.reset(static_cast<SaExpanded*>(p));
    for (size_t s = 0; s < keys_.size(); ++s) {
      const SaKeys& k = keys_[s];
      SaExpanded& e   = sas_.get()[s];
      std::memset(&e, 0, sizeof e);
      const bool gcm = k.cipher == Cipher::kAesGcm;
      e.shaped       = (k.key_bytes == 16 || k.key_bytes == 32) &&
                 (gcm ? (k.icv_bytes == 8 || k.icv_bytes == 12 || k.icv_bytes == 16)
                      : k.icv_bytes == (k.integrity == Integrity::kHmacSha256 ? 16 : 12) &&
                            k.auth_key_bytes <= 64);
      // The AES schedule of every SA (GCM's too: restore() undoes a failed open with CTR).
      if (k.key_bytes == 32) IMB_AES_KEYEXP_256(m, k.key.data(), e.enc, e.dec);
      else IMB_AES_KEYEXP_128(m, k.key.data(), e.enc, e.dec);
      if (k.cipher == Cipher::kAesGcm) {
        if (k.key_bytes == 32) IMB_AES256_GCM_PRE(m, k.key.data(), &e.gcm);
        else IMB_AES128_GCM_PRE(m, k.key.data(), &e.gcm);
        continue;
      }
      uint8_t ipad[64], opad[64];
      for (int b = 0; b < 64; ++b) {
        const uint8_t kb = b < k.auth_key_bytes ? k.auth_key[b] : 0;
        ipad[b] = kb ^ 0x36;
        opad[b] = kb ^ 0x5c;
      }
      if (k.integrity == Integrity::kHmacSha256) {
        IMB_SHA256_ONE_BLOCK(m, ipad, e.ipad);
        IMB_SHA256_ONE_BLOCK(m, opad, e.opad);
      } else {
        IMB_SHA1_ONE_BLOCK(m, ipad, e.ipad);
        IMB_SHA1_ONE_BLOCK(m, opad, e.opad);
      }
    }
    return Status::ok();
  }

  Status do_seal(Span<const CryptoOp> ops) const override { return run(ops, nullptr); }
  Status do_open(Span<const CryptoOp> ops, uint8_t* ok) const override { return run(ops, ok); }

 private:
  static IMB_MGR* mgr() {
    thread_local std::unique_ptr<IMB_MGR, MgrFree> m = [] {
      std::unique_ptr<IMB_MGR, MgrFree> p(alloc_mb_mgr(0));
      if (p) init_mb_mgr_auto(p.get(), nullptr);
      return p;
    }();
    return m.get();
  }

  // Per op of a burst: the IV (nonce | IV, 12 bytes), GCM's AAD and context and, opening, the
  // computed tag and the received ICV (sealing writes the tag straight into the packet).
  struct Scratch {
    uint8_t iv[16];
    uint8_t aad[16];
    uint8_t tag[32];
    uint8_t received[32];
    gcm_context_data gcm;
  };

  // An ICV's bytes (8, 12 or 16 of them, else up to 32): fixed-size copies, as a copy of a
  // length known only at run time compiles to `rep movsq`, whose start-up cost was a tenth of
  // the module's own time per packet (perf annotate, esp-out at 1420 bytes).
  static void copy_icv(uint8_t* to, const uint8_t* from, uint32_t n) {
    switch (n) {
      case 16:
        std::memcpy(to, from, 16);
        break;
      case 12:
        std::memcpy(to, from, 12);
        break;
      case 8:
        std::memcpy(to, from, 8);
        break;
      default:
        for (uint32_t i = 0; i < n; ++i) to[i] = from[i];
    }
  }

  void fill(IMB_JOB* j, const CryptoOp& op, Scratch& s, bool decrypt) const {
    const SaKeys& k     = keys_[op.sa];
    const SaExpanded& e = sas_.get()[op.sa];
    uint8_t* icv        = op.esp + core::kEspHead + op.text_len;
    std::memcpy(s.iv, k.nonce.data(), 4);
    std::memcpy(s.iv + 4, op.esp + core::kEspHeaderBytes, 8);
    j->src                              = op.esp;
    j->dst                              = op.esp + core::kEspHead;
    j->cipher_start_src_offset_in_bytes = core::kEspHead;
    j->msg_len_to_cipher_in_bytes       = op.text_len;
    j->iv                               = s.iv;
    j->iv_len_in_bytes                  = 12;
    j->key_len_in_bytes                 = k.key_bytes;
    j->cipher_direction                 = decrypt ? IMB_DIR_DECRYPT : IMB_DIR_ENCRYPT;
    j->auth_tag_output                  = decrypt ? s.tag : icv;  // sealing: straight to its place
    j->auth_tag_output_len_in_bytes     = k.icv_bytes;
    if (decrypt) copy_icv(s.received, icv, k.icv_bytes);
    if (k.cipher == Cipher::kAesGcm) {
      j->cipher_mode = IMB_CIPHER_GCM;
      j->hash_alg    = IMB_AUTH_AES_GMAC;
      j->chain_order = decrypt ? IMB_ORDER_HASH_CIPHER : IMB_ORDER_CIPHER_HASH;
      j->enc_keys = j->dec_keys = &e.gcm;
      std::memcpy(s.aad, op.esp, 4);
      if (k.esn) {
        core::store_be32(s.aad + 4, op.seq_hi);
        std::memcpy(s.aad + 8, op.esp + 4, 4);
      } else {
        std::memcpy(s.aad + 4, op.esp + 4, 4);
      }
      j->u.GCM.aad                      = s.aad;
      j->u.GCM.aad_len_in_bytes         = k.esn ? 12 : 8;
      j->u.GCM.ctx                      = &s.gcm;
      j->hash_start_src_offset_in_bytes = core::kEspHead;
      j->msg_len_to_hash_in_bytes       = op.text_len;
    } else {
      j->cipher_mode = IMB_CIPHER_CNTR;
      j->hash_alg    = k.integrity == Integrity::kHmacSha256 ? IMB_AUTH_HMAC_SHA_256 : IMB_AUTH_HMAC_SHA_1;
      j->chain_order = decrypt ? IMB_ORDER_HASH_CIPHER : IMB_ORDER_CIPHER_HASH;
      j->enc_keys    = e.enc;
      j->dec_keys    = e.enc;  // CTR decrypts with the encryption schedule
      j->u.HMAC._hashed_auth_key_xor_ipad = e.ipad;
      j->u.HMAC._hashed_auth_key_xor_opad = e.opad;
      const uint32_t extra = hashed_seq_hi_bytes(k);
      if (extra) core::store_be32(icv, op.seq_hi);
      j->hash_start_src_offset_in_bytes = 0;
      j->msg_len_to_hash_in_bytes       = core::kEspHead + op.text_len + extra;
    }
    j->user_data = const_cast<CryptoOp*>(&op);
  }

  Status run(Span<const CryptoOp> ops, uint8_t* ok) const {
    IMB_MGR* m = mgr();
    if (!m) return Status(Errc::kOutOfMemory, "cpu.esp: intel-ipsec-mb manager");
    thread_local std::vector<Scratch> scratch(IMB_MAX_BURST_SIZE);
    IMB_JOB* jobs[IMB_MAX_BURST_SIZE];
    const bool decrypt = ok != nullptr;
    for (uint32_t base = 0; base < ops.size;) {
      const uint32_t want = std::min<uint32_t>(ops.size - base, IMB_MAX_BURST_SIZE);
      uint32_t n          = IMB_GET_NEXT_BURST(m, want, jobs);
      if (n == 0) {
        IMB_FLUSH_BURST(m, IMB_MAX_BURST_SIZE, jobs);
        continue;
      }
      // The library's own job checks cost a third of a 64-byte GCM seal (imb.burst.nocheck in
      // warpath-esp-bench). The keys, tag lengths and algorithm pairs were checked per SA in init
      // (shaped), the IV is always 12 bytes, so a burst whose texts are whole 4-byte words
      // (RFC 4303 2.4) of 4 to 65,512 bytes skips them (the HMAC's message, header and ESN
      // bytes included, stays within the library's 65,534); any other burst (a malformed
      // inbound packet, a hand-made SA) keeps them.
      bool shaped = true;
      for (uint32_t k = 0; k < n; ++k) {
        const CryptoOp& op = ops[base + k];
        shaped &= op.text_len >= 4 && op.text_len % 4 == 0 && op.text_len <= 65512 &&
                  sas_.get()[op.sa].shaped;
        fill(jobs[k], op, scratch[k], decrypt);
      }
      WARPATH_TRY(imb_complete_burst(m, jobs, n, shaped, "cpu.esp"));
      for (uint32_t k = 0; decrypt && k < n; ++k) {
        const CryptoOp& op = ops[base + k];
        ok[base + k] =
            CRYPTO_memcmp(scratch[k].tag, scratch[k].received, keys_[op.sa].icv_bytes) == 0;
        if (!ok[base + k]) {  // its bytes as they came: the text, and the ICV's slot (ESN's
          WARPATH_TRY(restore(m, op));  // high bits were written there to be hashed)
          copy_icv(op.esp + core::kEspHead + op.text_len, scratch[k].received,
                   keys_[op.sa].icv_bytes);
        }
      }
      base += n;
    }
    return Status::ok();
  }

  // The chained job decrypted the text whatever the ICV said: a failed open encrypts it back
  // (CTR is its own inverse; GCM's text is CTR from counter 2), so the contract holds: a
  // packet that did not verify keeps its bytes. Rare (forgeries, corruption): one job each.
  Status restore(IMB_MGR* m, const CryptoOp& op) const {
    const SaKeys& k     = keys_[op.sa];
    const SaExpanded& e = sas_.get()[op.sa];
    uint8_t block[16];
    std::memcpy(block, k.nonce.data(), 4);
    std::memcpy(block + 4, op.esp + core::kEspHeaderBytes, 8);
    core::store_be32(block + 12, k.cipher == Cipher::kAesGcm ? 2 : 1);
    IMB_JOB* j = IMB_GET_NEXT_JOB(m);
    std::memset(j, 0, offsetof(IMB_JOB, status));
    j->enc_keys = j->dec_keys           = e.enc;
    j->key_len_in_bytes                 = k.key_bytes;
    j->src                              = op.esp;
    j->dst                              = op.esp + core::kEspHead;
    j->cipher_start_src_offset_in_bytes = core::kEspHead;
    j->msg_len_to_cipher_in_bytes       = op.text_len;
    j->iv                               = block;
    j->iv_len_in_bytes                  = 16;
    j->cipher_mode                      = IMB_CIPHER_CNTR;
    j->cipher_direction                 = IMB_DIR_ENCRYPT;
    j->chain_order                      = IMB_ORDER_CIPHER_HASH;
    j->hash_alg                         = IMB_AUTH_NULL;
    IMB_JOB* done = IMB_SUBMIT_JOB(m);
    while (done == nullptr) done = IMB_FLUSH_JOB(m);
    while (IMB_FLUSH_JOB(m) != nullptr) {
    }
    if (done->status != IMB_STATUS_COMPLETED)
      return Status(Errc::kInvalidArgument, "cpu.esp: restoring a failed packet: status " +
                                                std::to_string(int(done->status)));
    return Status::ok();
  }

  struct Free {
    void operator()(SaExpanded* p) const { std::free(p); }
  };
  std::vector<SaKeys> keys_;
  std::unique_ptr<SaExpanded, Free> sas_;
};

}  // namespace

bool have_ipsec_mb() { return true; }
std::unique_ptr<EspCrypto> make_ipsec_mb_esp(Span<const SaKeys> keys) {
  auto e = std::make_unique<IpsecMbEsp>(keys);
  if (!e->init().is_ok()) return nullptr;
  return e;
}

}  // namespace warpath::ipsec::detail
