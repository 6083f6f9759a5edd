// src/ipsec/cpu/ctr_ipsec_mb.cpp: cpu.ctr, AES-CTR over byte ranges on intel-ipsec-mb's burst
// API (include/warpath/ipsec/ipsec.hpp: CtrCipher). Up to 128 jobs per burst, spread over the
// library's SIMD lanes; each key's AES schedule expanded once, when it is added.
//
// A range becomes one job, in place, from its counter block, except:
//   - a range that starts `skip` bytes into a block: that block's bytes go through a 16-byte
//     scratch block of their own (one more job), copied back when the burst completes, and
//     the rest starts at the next block;
//   - a range whose counter's low 32 bits would wrap: it is cut there, the second job's
//     counter carried into the high bits by us. (The library may count in fewer than 128
//     bits; no job of ours crosses a 2^32-block boundary, so every count agrees with
//     OpenSSL's.)
#include <intel-ipsec-mb.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

#include "ipsec/cpu/imb_burst.hpp"
#include "ipsec/engines.hpp"

namespace warpath::ipsec::detail {
namespace {

struct MgrFree {
  void operator()(IMB_MGR* m) const { free_mb_mgr(m); }
};

struct alignas(16) Schedule {
  uint8_t enc[16 * 15] = {};
  uint32_t bytes       = 0;
};

// A counter block as two big-endian 64-bit halves.
uint64_t load_be64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}
void store_be64(uint8_t* p, uint64_t v) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}
void add_blocks(uint8_t* counter, uint64_t n) {
  const uint64_t lo = load_be64(counter + 8), sum = lo + n;
  if (sum < lo) store_be64(counter, load_be64(counter) + 1);
  store_be64(counter + 8, sum);
}

class IpsecMbCtr final : public CtrCipher {
 public:
  Status init() {
    mgr_.reset(alloc_mb_mgr(0));
    if (!mgr_) return Status(Errc::kOutOfMemory, "cpu.ctr: intel-ipsec-mb manager");
    init_mb_mgr_auto(mgr_.get(), nullptr);
    return Status::ok();
  }
  std::string_view id() const noexcept override { return "cpu.ctr"; }
  bool live(uint32_t h) const noexcept override { return keys_.live(h); }
  void drop_key(uint32_t h) override { keys_.drop(h); }

 protected:
  Result<uint32_t> do_add_key(const uint8_t* key, uint32_t bytes) override {
    const uint32_t h = keys_.take();
    Schedule& s      = keys_.values[h];
    alignas(16) uint8_t dec[16 * 15];
    if (bytes == 32)
      IMB_AES_KEYEXP_256(mgr_.get(), key, s.enc, dec);
    else
      IMB_AES_KEYEXP_128(mgr_.get(), key, s.enc, dec);
    s.bytes = bytes;
    return h;
  }

  Status do_apply(Span<const CtrOp> ops) override {
    pieces_.clear();
    for (uint32_t k = 0; k < ops.size; ++k) cut(ops[k]);
    IMB_MGR* m = mgr_.get();
    IMB_JOB* jobs[IMB_MAX_BURST_SIZE];
    for (size_t base = 0; base < pieces_.size();) {
      const uint32_t want = uint32_t(std::min<size_t>(pieces_.size() - base, IMB_MAX_BURST_SIZE));
      const uint32_t n    = IMB_GET_NEXT_BURST(m, want, jobs);
      if (n == 0) {
        IMB_FLUSH_BURST(m, IMB_MAX_BURST_SIZE, jobs);
        continue;
      }
      // The library's own checks cost a third of a short range (warpath-esp-bench's
      // imb.ctr.burst rows): every field is ours and valid (keys of 16 or 32 bytes, whole
      // counter blocks), so only a length the library might refuse keeps them.
      bool shaped = true;
      for (uint32_t j = 0; j < n; ++j) {
        fill(jobs[j], pieces_[base + j]);
        shaped &= pieces_[base + j].len <= 65512;
      }
      WARPATH_TRY(imb_complete_burst(m, jobs, n, shaped, "cpu.ctr"));
      base += n;
    }
    for (const Piece& p : pieces_)  // a head block's bytes back into their range
      if (p.back) std::memcpy(p.back, p.head + p.skip, p.back_len);
    return Status::ok();
  }

 private:
  // One job: `len` bytes at `data`, or in the piece's own head block when `back` is set, from
  // counter `iv`.
  struct Piece {
    const Schedule* key;
    alignas(16) uint8_t iv[16];
    alignas(16) uint8_t head[16];
    uint8_t* data;
    uint32_t len;
    uint8_t* back;  ///< a head piece: where its bytes go back; else null
    uint32_t back_len;
    uint8_t skip;
  };

  void cut(const CtrOp& op) {
    if (op.len == 0) return;
    const Schedule* key = &keys_.values[op.key];
    uint8_t counter[16];
    std::memcpy(counter, op.counter, 16);
    uint8_t* data = op.data;
    uint32_t len  = op.len;
    if (op.skip) {
      Piece& p         = pieces_.emplace_back();
      const uint32_t h = std::min<uint32_t>(len, 16u - op.skip);
      p.key            = key;
      std::memcpy(p.iv, counter, 16);
      std::memset(p.head, 0, 16);
      std::memcpy(p.head + op.skip, data, h);
      p.data     = nullptr;  // its own head block (pieces_ may move: taken at fill)
      p.len      = op.skip + h;
      p.back     = data;
      p.back_len = h;
      p.skip     = op.skip;
      add_blocks(counter, 1);
      data += h;
      len -= h;
    }
    while (len) {
      // Blocks before the low 32 bits wrap (at least 1).
      const uint64_t room  = (uint64_t(1) << 32) - (load_be64(counter + 8) & 0xFFFF'FFFFu);
      const uint64_t bytes = std::min<uint64_t>(len, room * 16);
      Piece& p             = pieces_.emplace_back();
      p.key                = key;
      std::memcpy(p.iv, counter, 16);
      p.data = data;
      p.len  = uint32_t(bytes);
      p.back = nullptr;
      add_blocks(counter, (bytes + 15) / 16);
      data += bytes;
      len -= uint32_t(bytes);
    }
  }

  // Every field a CTR job without a hash reads (the manager is this engine's own: no other
  // kind of job has left fields behind in its jobs).
  static void fill(IMB_JOB* j, Piece& p) {
    j->enc_keys = j->dec_keys           = p.key->enc;  // CTR decrypts with the encryption schedule
    j->key_len_in_bytes                 = p.key->bytes;
    uint8_t* at                         = p.back ? p.head : p.data;
    j->src                              = at;
    j->dst                              = at;
    j->cipher_start_src_offset_in_bytes = 0;
    j->msg_len_to_cipher_in_bytes       = p.len;
    j->iv                               = p.iv;
    j->iv_len_in_bytes                  = 16;
    j->cipher_mode                      = IMB_CIPHER_CNTR;
    j->cipher_direction                 = IMB_DIR_ENCRYPT;
    j->chain_order                      = IMB_ORDER_CIPHER_HASH;
    j->hash_alg                         = IMB_AUTH_NULL;
  }

  std::unique_ptr<IMB_MGR, MgrFree> mgr_;
  KeySlots<Schedule> keys_;
  std::vector<Piece> pieces_;  ///< this call's jobs (their IVs and head blocks live here)
};

}  // namespace

std::unique_ptr<CtrCipher> make_ipsec_mb_ctr() {
  auto c = std::make_unique<IpsecMbCtr>();
  if (!c->init().is_ok()) return nullptr;
  return c;
}

}  // namespace warpath::ipsec::detail
