// src/ipsec/reference/esp_openssl.cpp: ref.esp, the reference ESP crypto engine: OpenSSL's EVP
// ciphers and HMAC, one packet at a time, each step as the RFCs write it (RFC 3686's counter
// block, RFC 2404/4868's truncated HMAC, RFC 4106's nonce and AAD). Plain on purpose.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>
#include <vector>

#include "ipsec/core/esp_core.hpp"
#include "ipsec/engines.hpp"

namespace warpath::ipsec::detail {
namespace {

const EVP_CIPHER* ctr_cipher(const SaKeys& k) {
  return k.key_bytes == 32 ? EVP_aes_256_ctr() : EVP_aes_128_ctr();
}
const EVP_CIPHER* gcm_cipher(const SaKeys& k) {
  return k.key_bytes == 32 ? EVP_aes_256_gcm() : EVP_aes_128_gcm();
}

struct CtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};

class OpensslEsp final : public EspCrypto {
 public:
  explicit OpensslEsp(Span<const SaKeys> keys) : keys_(keys.begin(), keys.end()) {}
  std::string_view id() const noexcept override { return "ref.esp"; }
  uint32_t sa_count() const noexcept override { return uint32_t(keys_.size()); }

  Status do_seal(Span<const CryptoOp> ops) const override {
    for (const CryptoOp& op : ops) WARPATH_TRY(seal_one(op));
    return Status::ok();
  }
  Status do_open(Span<const CryptoOp> ops, uint8_t* ok) const override {
    for (uint32_t k = 0; k < ops.size; ++k) {
      bool good = false;
      WARPATH_TRY(open_one(ops[k], good));
      ok[k] = good;
    }
    return Status::ok();
  }

 private:
  static EVP_CIPHER_CTX* ctx() {
    thread_local std::unique_ptr<EVP_CIPHER_CTX, CtxFree> c(EVP_CIPHER_CTX_new());
    EVP_CIPHER_CTX_reset(c.get());
    return c.get();
  }
  static Status fail(const char* what) {
    return Status(Errc::kInvalidArgument, std::string("ref.esp: OpenSSL ") + what + " failed");
  }

  // RFC 3686: counter block = nonce (4) | IV (8) | block counter (4, from 1).
  static Status ctr(const SaKeys& k, uint8_t* esp, uint32_t len) {
    uint8_t iv[16];
    std::memcpy(iv, k.nonce.data(), 4);
    std::memcpy(iv + 4, esp + core::kEspHeaderBytes, 8);
    iv[12] = iv[13] = iv[14] = 0;
    iv[15]             = 1;
    EVP_CIPHER_CTX* c  = ctx();
    uint8_t* text      = esp + core::kEspHead;
    int out = 0;
    if (EVP_EncryptInit_ex(c, ctr_cipher(k), nullptr, k.key.data(), iv) != 1) return fail("CTR init");
    if (len && EVP_EncryptUpdate(c, text, &out, text, int(len)) != 1) return fail("CTR");
    return Status::ok();
  }

  // HMAC over SPI .. next header (| seq_hi with ESN), truncated to the ICV.
  static Status icv_hmac(const SaKeys& k, const CryptoOp& op, uint8_t* tag) {
    thread_local std::vector<uint8_t> buf;
    const uint32_t body = core::kEspHead + op.text_len;
    buf.assign(op.esp, op.esp + body);
    if (hashed_seq_hi_bytes(k)) {
      buf.resize(body + 4);
      core::store_be32(buf.data() + body, op.seq_hi);
    }
    const EVP_MD* md = k.integrity == Integrity::kHmacSha256 ? EVP_sha256() : EVP_sha1();
    unsigned out     = 0;
    uint8_t full[EVP_MAX_MD_SIZE];
    if (!HMAC(md, k.auth_key.data(), k.auth_key_bytes, buf.data(), buf.size(), full, &out))
      return fail("HMAC");
    std::memcpy(tag, full, k.icv_bytes);
    return Status::ok();
  }

  // RFC 4106: nonce = salt (4) | IV (8); AAD = SPI | seq (ESN: SPI | seq_hi | seq_lo).
  static void gcm_params(const SaKeys& k, const CryptoOp& op, uint8_t* nonce, uint8_t* aad,
                         int& aad_len) {
    std::memcpy(nonce, k.nonce.data(), 4);
    std::memcpy(nonce + 4, op.esp + core::kEspHeaderBytes, 8);
    std::memcpy(aad, op.esp, 4);
    if (k.esn) {
      core::store_be32(aad + 4, op.seq_hi);
      std::memcpy(aad + 8, op.esp + 4, 4);
      aad_len = 12;
    } else {
      std::memcpy(aad + 4, op.esp + 4, 4);
      aad_len = 8;
    }
  }

  Status seal_one(const CryptoOp& op) const {
    const SaKeys& k = keys_[op.sa];
    uint8_t* icv    = op.esp + core::kEspHead + op.text_len;
    if (k.cipher == Cipher::kAesCtr) {
      WARPATH_TRY(ctr(k, op.esp, op.text_len));
      return icv_hmac(k, op, icv);
    }
    uint8_t nonce[12], aad[12];
    int aad_len = 0, out = 0;
    gcm_params(k, op, nonce, aad, aad_len);
    EVP_CIPHER_CTX* c = ctx();
    uint8_t* text     = op.esp + core::kEspHead;
    if (EVP_EncryptInit_ex(c, gcm_cipher(k), nullptr, nullptr, nullptr) != 1 ||
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, nullptr) != 1 ||
        EVP_EncryptInit_ex(c, nullptr, nullptr, k.key.data(), nonce) != 1 ||
        EVP_EncryptUpdate(c, nullptr, &out, aad, aad_len) != 1)
      return fail("GCM init");
    if (op.text_len && EVP_EncryptUpdate(c, text, &out, text, int(op.text_len)) != 1)
      return fail("GCM");
    if (EVP_EncryptFinal_ex(c, text + op.text_len, &out) != 1 ||
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, k.icv_bytes, icv) != 1)
      return fail("GCM tag");
    return Status::ok();
  }

  Status open_one(const CryptoOp& op, bool& good) const {
    const SaKeys& k = keys_[op.sa];
    uint8_t* icv    = op.esp + core::kEspHead + op.text_len;
    if (k.cipher == Cipher::kAesCtr) {
      uint8_t tag[32];
      WARPATH_TRY(icv_hmac(k, op, tag));
      good = CRYPTO_memcmp(tag, icv, k.icv_bytes) == 0;
      return good ? ctr(k, op.esp, op.text_len) : Status::ok();
    }
    uint8_t nonce[12], aad[12];
    int aad_len = 0, out = 0;
    gcm_params(k, op, nonce, aad, aad_len);
    EVP_CIPHER_CTX* c = ctx();
    thread_local std::vector<uint8_t> plain;
    plain.resize(op.text_len + 16);
    const uint8_t* text = op.esp + core::kEspHead;
    if (EVP_DecryptInit_ex(c, gcm_cipher(k), nullptr, nullptr, nullptr) != 1 ||
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, nullptr) != 1 ||
        EVP_DecryptInit_ex(c, nullptr, nullptr, k.key.data(), nonce) != 1 ||
        EVP_DecryptUpdate(c, nullptr, &out, aad, aad_len) != 1)
      return fail("GCM init");
    if (op.text_len && EVP_DecryptUpdate(c, plain.data(), &out, text, int(op.text_len)) != 1)
      return fail("GCM");
    if (EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, k.icv_bytes, icv) != 1) return fail("GCM tag");
    good = EVP_DecryptFinal_ex(c, plain.data() + op.text_len, &out) == 1;  // constant-time tag check
    if (good) std::memcpy(op.esp + core::kEspHead, plain.data(), op.text_len);
    return Status::ok();
  }

  std::vector<SaKeys> keys_;
};

}  // namespace

bool have_openssl() { return true; }
std::unique_ptr<EspCrypto> make_openssl_esp(Span<const SaKeys> keys) {
  return std::make_unique<OpensslEsp>(keys);
}

}  // namespace warpath::ipsec::detail
