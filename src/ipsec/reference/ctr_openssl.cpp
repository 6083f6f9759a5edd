// src/ipsec/reference/ctr_openssl.cpp: ref.ctr, AES-CTR over byte ranges with OpenSSL's EVP,
// one range at a time (the reference of the CtrCipher engines: include/warpath/ipsec/ipsec.hpp).
#include <openssl/evp.h>

#include <memory>

#include "ipsec/engines.hpp"

namespace warpath::ipsec::detail {
namespace {

struct CtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using Ctx = std::unique_ptr<EVP_CIPHER_CTX, CtxFree>;

class OpensslCtr final : public CtrCipher {
 public:
  std::string_view id() const noexcept override { return "ref.ctr"; }
  bool live(uint32_t h) const noexcept override { return keys_.live(h); }
  void drop_key(uint32_t h) override { keys_.drop(h); }  // EVP_CIPHER_CTX_free wipes the schedule

 protected:
  Result<uint32_t> do_add_key(const uint8_t* key, uint32_t bytes) override {
    Ctx ctx(EVP_CIPHER_CTX_new());
    const EVP_CIPHER* c = bytes == 32 ? EVP_aes_256_ctr() : EVP_aes_128_ctr();
    if (!ctx || EVP_EncryptInit_ex(ctx.get(), c, nullptr, key, nullptr) != 1)
      return Status(Errc::kOutOfMemory, "ref.ctr: EVP_EncryptInit_ex failed");
    const uint32_t h = keys_.take();
    keys_.values[h]  = std::move(ctx);
    return h;
  }
  Status do_apply(Span<const CtrOp> ops) override {
    for (uint32_t k = 0; k < ops.size; ++k) {
      const CtrOp& op    = ops[k];
      EVP_CIPHER_CTX* cx = keys_.values[op.key].get();
      uint8_t skip[16]   = {};
      int out            = 0;
      if (EVP_EncryptInit_ex(cx, nullptr, nullptr, nullptr, op.counter) != 1 ||
          (op.skip && EVP_EncryptUpdate(cx, skip, &out, skip, op.skip) != 1) ||
          (op.len && EVP_EncryptUpdate(cx, op.data, &out, op.data, int(op.len)) != 1))
        return Status(Errc::kInvalidArgument,
                      "ref.ctr: EVP_EncryptUpdate failed at range " + std::to_string(k));
    }
    return Status::ok();
  }

 private:
  KeySlots<Ctx> keys_;
};

}  // namespace

std::unique_ptr<CtrCipher> make_openssl_ctr() { return std::make_unique<OpensslCtr>(); }

}  // namespace warpath::ipsec::detail
