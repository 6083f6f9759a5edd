// The ESP crypto engine registry (the only list of ESP engines), the validating wrapper and the
// self-test's differential check (include/warpath/ipsec/ipsec.hpp).
#include <algorithm>
#include <cstring>
#include <memory>
#include <random>

#include "core/cuda_host.hpp"
#include "core/engine_table.hpp"
#include "core/validating.hpp"
#include "ipsec/core/crypto_core.hpp"
#include "ipsec/core/esp_core.hpp"
#include "ipsec/engines.hpp"
#include "warpath/core/registry.hpp"
#include "warpath/ipsec/ipsec.hpp"

namespace warpath::ipsec {
namespace {

bool openssl_built() { return detail::have_openssl(); }
bool ipsec_mb_built() { return detail::have_ipsec_mb(); }

// Seals with the engine and the reference on copies and compares every byte; opens with both
// and compares the verdicts and the texts that verified.
class ValidatingEsp final : public ValidatingPair<EspCrypto> {
 public:
  ValidatingEsp(std::unique_ptr<EspCrypto> e, std::unique_ptr<EspCrypto> r, Span<const SaKeys> keys)
      : ValidatingPair(std::move(e), std::move(r), "ref.esp"), keys_(keys.begin(), keys.end()) {}
  uint32_t sa_count() const noexcept override { return engine_->sa_count(); }
  Status do_seal(Span<const CryptoOp> ops) const override {
    std::vector<std::vector<uint8_t>> copies;
    std::vector<CryptoOp> ref_ops = copy(ops, copies);
    WARPATH_TRY(engine_->seal(ops));
    WARPATH_TRY(ref_->seal({ref_ops.data(), uint32_t(ref_ops.size())}));
    return compare(ops, copies, nullptr, nullptr, "sealed");
  }
  Status do_open(Span<const CryptoOp> ops, uint8_t* ok) const override {
    std::vector<std::vector<uint8_t>> copies;
    std::vector<CryptoOp> ref_ops = copy(ops, copies);
    std::vector<uint8_t> ref_ok(ops.size);
    WARPATH_TRY(engine_->open(ops, ok));
    WARPATH_TRY(ref_->open({ref_ops.data(), uint32_t(ref_ops.size())}, ref_ok.data()));
    return compare(ops, copies, ok, ref_ok.data(), "opened");
  }

 private:
  uint32_t bytes(const CryptoOp& op) const {
    return core::kEspHead + op.text_len + keys_[op.sa].icv_bytes;
  }
  std::vector<CryptoOp> copy(Span<const CryptoOp> ops, std::vector<std::vector<uint8_t>>& c) const {
    std::vector<CryptoOp> out(ops.begin(), ops.end());
    c.resize(ops.size);
    for (uint32_t k = 0; k < ops.size; ++k) {
      c[k].assign(ops[k].esp, ops[k].esp + bytes(ops[k]));
      out[k].esp = c[k].data();
    }
    return out;
  }
  Status compare(Span<const CryptoOp> ops, const std::vector<std::vector<uint8_t>>& ref,
                 const uint8_t* ok, const uint8_t* ref_ok, const char* what) const {
    for (uint32_t k = 0; k < ops.size; ++k) {
      if (ok && ok[k] != ref_ok[k])
        return differs(": packet " + std::to_string(k) + ": ICV " +
                       (ok[k] ? "verified" : "failed") + ", ref.esp's " +
                       (ref_ok[k] ? "verified" : "failed"));
      const uint32_t n = ok ? core::kEspHead + ops[k].text_len : bytes(ops[k]);
      const auto* got  = ops[k].esp;
      for (uint32_t b = 0; b < n; ++b)
        if (got[b] != ref[k][b])
          return differs(": packet " + std::to_string(k) + " " + what + ": byte " +
                         std::to_string(b) + " differs from ref.esp's");
    }
    return Status::ok();
  }
  std::vector<SaKeys> keys_;
};

}  // namespace

namespace {

using EspTable = EngineTable<EspCrypto(Span<const SaKeys>)>;

EspTable::Made validated(std::unique_ptr<EspCrypto> engine, Span<const SaKeys> keys) {
  std::unique_ptr<EspCrypto> ref = detail::make_openssl_esp(keys);
  if (!ref) return Status(Errc::kNotSupported, "validate: needs ref.esp: built without OpenSSL");
  return std::unique_ptr<EspCrypto>(
      std::make_unique<ValidatingEsp>(std::move(engine), std::move(ref), keys));
}

const EspTable& esp_table() {
  static const EspTable table(
      "ESP",
      {
          {{"ref.esp", "OpenSSL EVP, one packet at a time (the reference)", 1, openssl_built},
           [](Span<const SaKeys> k) -> EspTable::Made { return detail::make_openssl_esp(k); }},
          {{"cpu.esp",
            "intel-ipsec-mb burst API (multi-buffer SIMD lanes), 128 packets per burst", 10,
            ipsec_mb_built},
           [](Span<const SaKeys> k) -> EspTable::Made { return detail::make_ipsec_mb_esp(k); }},
#if defined(WARPATH_HAVE_CUDA)
          {{"cuda.esp",
            "AES-CTR + HMAC and AES-GCM on the GPU, a packet per thread "
            "(src/ipsec/core/crypto_core.hpp)",
            5, cuda_engine_available},
           [](Span<const SaKeys> k) { return detail::make_cuda_esp(k); }},
#endif
      },
      &validated);
  return table;
}

}  // namespace

std::vector<EngineInfo> esp_engines() { return esp_table().infos(); }

// An item is a packet of up to 1,500 bytes sealed, tampered with and opened by the engine and
// by the oracle (in builds without OpenSSL, crypto_core's bitwise GHASH on the host), or a
// range of up to 1,500 bytes through an AES-CTR engine and ref.ctr: the checks stop at
// kMaxCheckPackets whatever `items` asks, so a GPU self-test of a million items per engine
// stays within seconds here.
constexpr uint64_t kMaxCheckPackets = 30000;

namespace {

// Applies the engine to the ranges and the reference to copies of them, and compares every
// byte; keys go to both (the reference's handle kept per engine handle). validate:<id> (against
// ref.ctr) and the self-test's check (against ref.ctr, or crypto_core's body on the host).
class ValidatingCtr final : public ValidatingPair<CtrCipher> {
 public:
  /// `ref_name`: the reference's id (a literal, as every engine's id is).
  ValidatingCtr(std::unique_ptr<CtrCipher> e, std::unique_ptr<CtrCipher> r,
                std::string_view ref_name)
      : ValidatingPair(std::move(e), std::move(r), ref_name) {}
  bool live(uint32_t h) const noexcept override { return engine_->live(h); }
  void drop_key(uint32_t h) override {
    if (h < ref_key_.size() && engine_->live(h)) ref_->drop_key(ref_key_[h]);
    engine_->drop_key(h);
  }

 protected:
  Result<uint32_t> do_add_key(const uint8_t* key, uint32_t bytes) override {
    WARPATH_ASSIGN_OR_RETURN(const uint32_t h, engine_->add_key(key, bytes));
    WARPATH_ASSIGN_OR_RETURN(const uint32_t r, ref_->add_key(key, bytes));
    if (ref_key_.size() <= h) ref_key_.resize(h + 1);
    ref_key_[h] = r;
    return h;
  }
  Status do_apply(Span<const CtrOp> ops) override {
    std::vector<std::vector<uint8_t>> copies(ops.size);
    std::vector<CtrOp> ref_ops(ops.begin(), ops.end());
    for (uint32_t k = 0; k < ops.size; ++k) {
      copies[k].assign(ops[k].data, ops[k].data + ops[k].len);
      ref_ops[k].data = copies[k].data();
      ref_ops[k].key  = ref_key_[ops[k].key];
    }
    WARPATH_TRY(engine_->apply(ops));
    WARPATH_TRY(ref_->apply({ref_ops.data(), uint32_t(ref_ops.size())}));
    for (uint32_t k = 0; k < ops.size; ++k)
      for (uint32_t b = 0; b < ops[k].len; ++b)
        if (ops[k].data[b] != copies[k][b])
          return differs(": range " + std::to_string(k) + " of " + std::to_string(ops.size) + " (" +
                         std::to_string(ops[k].len) + " bytes from byte " +
                         std::to_string(ops[k].skip) + " of its block): byte " + std::to_string(b) +
                         " differs from " + std::string(ref_->id()) + "'s");
    return Status::ok();
  }

 private:
  std::vector<uint32_t> ref_key_;
};

using CtrTable = EngineTable<CtrCipher()>;

CtrTable::Made validated_ctr(std::unique_ptr<CtrCipher> engine) {
  std::unique_ptr<CtrCipher> ref = detail::make_openssl_ctr();
  if (!ref) return Status(Errc::kNotSupported, "validate: needs ref.ctr: built without OpenSSL");
  return std::unique_ptr<CtrCipher>(
      std::make_unique<ValidatingCtr>(std::move(engine), std::move(ref), "ref.ctr"));
}

CtrTable::Made made(std::unique_ptr<CtrCipher> c, const char* what) {
  if (!c) return Status(Errc::kNotSupported, std::string(what) + ": could not be set up");
  return c;
}

const CtrTable& ctr_table() {
  static const CtrTable table(
      "AES-CTR",
      {
        {{"ref.ctr", "OpenSSL EVP, one range at a time (the reference)", 1, openssl_built},
         []() -> CtrTable::Made { return made(detail::make_openssl_ctr(), "ref.ctr"); }},
            {{"cpu.ctr", "intel-ipsec-mb burst API (multi-buffer SIMD lanes), 128 ranges per burst",
              10, ipsec_mb_built},
             []() -> CtrTable::Made { return made(detail::make_ipsec_mb_ctr(), "cpu.ctr"); }},
#if defined(WARPATH_HAVE_CUDA)
            {{"cuda.ctr", "AES-CTR on the GPU, a range per thread (src/ipsec/core/crypto_core.hpp)",
              5, cuda_engine_available},
             []() -> CtrTable::Made { return detail::make_cuda_ctr(); }},
#endif
      },
      &validated_ctr);
  return table;
}

}  // namespace

std::vector<EngineInfo> ctr_engines() { return ctr_table().infos(); }

Result<std::unique_ptr<CtrCipher>> make_ctr_cipher(std::string_view id) {
  return ctr_table().make(id);
}

namespace {

// The AES-CTR oracle of builds without OpenSSL (the GPU preset): cuda.ctr's own body,
// crypto_core's aes_ctr_range, on the host (itself held to OpenSSL by tests/ipsec).
class CtrBodiesOnHost final : public CtrCipher {
 public:
  std::string_view id() const noexcept override { return "crypto_core on the host"; }
  bool live(uint32_t h) const noexcept override { return keys_.slots.live(h); }
  void drop_key(uint32_t h) override { keys_.slots.drop(h); }

 protected:
  Result<uint32_t> do_add_key(const uint8_t* key, uint32_t bytes) override {
    return keys_.add(key, bytes);
  }
  Status do_apply(Span<const CtrOp> ops) override {
    for (const CtrOp& op : ops)
      core::aes_ctr_range(keys_.slots.values[op.key], keys_.table, op.counter, op.skip, op.data,
                          op.len);
    return Status::ok();
  }

 private:
  detail::CoreKeys keys_;
};

}  // namespace

CheckReport check_ctr_engine(std::string_view id, uint64_t seed, uint64_t items) {
  CheckReport rep{"aes-ctr", std::string(id), seed, 0, false, {}};
  items       = std::min(items, kMaxCheckPackets);
  auto engine = make_ctr_cipher(id);
  if (!engine.is_ok()) {
    rep.skipped = engine.status().code() == Errc::kNotSupported;
    rep.detail  = engine.status().message();
    return rep;
  }
  // The oracle: OpenSSL (ref.ctr), or, in builds without it, cuda.ctr's body on the host.
  auto oracle = make_ctr_cipher("ref.ctr");
  if (!oracle.is_ok()) oracle = std::unique_ptr<CtrCipher>(std::make_unique<CtrBodiesOnHost>());
  const std::string_view oracle_id = oracle.value()->id();
  ValidatingCtr pair(std::move(engine).value(), std::move(oracle).value(), oracle_id);
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> keys;  // of both sizes
  for (int k = 0; k < 16; ++k) {
    uint8_t key[32];
    for (auto& b : key) b = uint8_t(rng());
    auto h = pair.add_key(key, k % 2 ? 32 : 16);
    if (!h.is_ok()) {
      rep.detail = "add_key: " + h.status().message();
      return rep;
    }
    keys.push_back(h.value());
  }
  // Batches of 0, 1, the multi-buffer lane edges, a full burst and past it; ranges of any
  // length (a packet's payload), any start inside a block, counters about to wrap.
  const uint32_t sizes[] = {0, 1, 7, 8, 9, 16, 17, 127, 128, 129, 300};
  uint64_t done          = 0;
  for (size_t si = 0; done < items || si < std::size(sizes); ++si) {
    const uint32_t n = sizes[si % std::size(sizes)];
    std::vector<std::vector<uint8_t>> data(n);
    std::vector<CtrOp> ops(n);
    for (uint32_t k = 0; k < n; ++k) {
      data[k].resize(rng() % 1501);
      for (auto& x : data[k]) x = uint8_t(rng());
      for (auto& x : ops[k].counter) x = uint8_t(rng());
      if (rng() % 4 == 0) std::memset(ops[k].counter + 12, 0xFF, 4);  // the low 32 bits wrap
      ops[k].key  = keys[rng() % keys.size()];
      ops[k].skip = uint8_t(rng() % 16);
      ops[k].data = data[k].data();
      ops[k].len  = uint32_t(data[k].size());
    }
    if (const Status st = pair.apply({ops.data(), n}); !st.is_ok()) {
      rep.detail = st.message();
      return rep;
    }
    done += n;
    rep.items += n;
  }
  return rep;
}

Result<std::unique_ptr<EspCrypto>> make_esp_crypto(std::string_view id, Span<const SaKeys> keys) {
  return esp_table().make(id, keys);
}


namespace {

// cuda.esp's bodies run on the host: the self-test's second oracle where OpenSSL is not built
// in (minimal GPU builds). tests/ipsec checks these bodies against OpenSSL. Not an engine:
// warpath's CPU crypto is intel-ipsec-mb and OpenSSL.
class BodiesOnHost final : public EspCrypto {
 public:
  explicit BodiesOnHost(Span<const SaKeys> keys) : sas_(keys.size) {
    core::aes_table_build(table_);
    for (uint32_t s = 0; s < keys.size; ++s) {
      const SaKeys& k = keys[s];
      core::sa_prepare(k.key.data(), k.key_bytes, k.nonce.data(), k.cipher == Cipher::kAesGcm,
                       k.integrity == Integrity::kHmacSha256, k.auth_key.data(), k.auth_key_bytes,
                       k.icv_bytes, k.esn, table_, sas_[s]);
    }
  }
  std::string_view id() const noexcept override { return "crypto_core on the host"; }
  uint32_t sa_count() const noexcept override { return uint32_t(sas_.size()); }
  Status do_seal(Span<const CryptoOp> ops) const override {
    for (const CryptoOp& op : ops)
      core::seal_packet(sas_[op.sa], table_, op.esp, op.text_len, op.seq_hi);
    return Status::ok();
  }
  Status do_open(Span<const CryptoOp> ops, uint8_t* ok) const override {
    for (uint32_t k = 0; k < ops.size; ++k)
      ok[k] =
          core::open_packet(sas_[ops[k].sa], table_, ops[k].esp, ops[k].text_len, ops[k].seq_hi);
    return Status::ok();
  }

 private:
  core::AesTable table_;
  std::vector<core::DeviceSa> sas_;
};

// An engine's resident calls (seal_resident / open_resident, what the offload master makes on
// a GPU) behind the ordinary interface: each call moves its ops and their packets to the
// device in one copy, runs there, and brings packets and verdicts back in one copy, so the
// check compares them like any engine's.
class ResidentOnDevice final : public EspCrypto {
 public:
  ResidentOnDevice(const EspCrypto& engine, Span<const SaKeys> keys)
      : engine_(engine), keys_(keys.begin(), keys.end()) {}
  std::string_view id() const noexcept override { return "resident"; }
  uint32_t sa_count() const noexcept override { return engine_.sa_count(); }
  Status do_seal(Span<const CryptoOp> ops) const override { return run(ops, nullptr); }
  Status do_open(Span<const CryptoOp> ops, uint8_t* ok) const override { return run(ops, ok); }

 private:
  struct DeviceFree {
    void operator()(void* p) const noexcept { warpath::detail::cuda_device_free(p); }
  };
  Status run(Span<const CryptoOp> ops, uint8_t* ok) const {
    const auto at16 = [](size_t n) { return (n + 15) & ~size_t(15); };
    std::vector<size_t> where(ops.size);
    size_t total = at16(sizeof(CryptoOp) * ops.size);
    for (uint32_t k = 0; k < ops.size; ++k) {
      where[k] = total;
      total += at16(core::kEspHead + ops[k].text_len + keys_[ops[k].sa].icv_bytes);
    }
    const size_t ok_at = total;
    total += ops.size;
    std::unique_ptr<void, DeviceFree> dev(warpath::detail::cuda_device_alloc(total));
    if (!dev) return Status(Errc::kOutOfMemory, "resident check: no device memory");
    auto* d = static_cast<uint8_t*>(dev.get());
    std::vector<uint8_t> host(total);
    std::vector<CryptoOp> moved(ops.begin(), ops.end());
    for (uint32_t k = 0; k < ops.size; ++k) {
      std::memcpy(host.data() + where[k], ops[k].esp,
                  core::kEspHead + ops[k].text_len + keys_[ops[k].sa].icv_bytes);
      moved[k].esp = d + where[k];
    }
    if (ops.size) std::memcpy(host.data(), moved.data(), sizeof(CryptoOp) * ops.size);
    const char* why = nullptr;
    if (!warpath::detail::cuda_copy_async(d, host.data(), total, true, nullptr, &why))
      return Status(Errc::kCudaError, std::string("resident check: upload: ") + why);
    ExecContext ctx;
    ctx.resident = true;
    const Span<const CryptoOp> dops{reinterpret_cast<const CryptoOp*>(d), ops.size};
    WARPATH_TRY(ok ? engine_.open_resident(dops, d + ok_at, ctx)
                   : engine_.seal_resident(dops, ctx));
    if (!warpath::detail::cuda_copy_async(host.data(), d, total, false, nullptr, &why) ||
        !warpath::detail::cuda_stream_sync(nullptr, &why))
      return Status(Errc::kCudaError, std::string("resident check: download: ") + why);
    for (uint32_t k = 0; k < ops.size; ++k)
      std::memcpy(ops[k].esp, host.data() + where[k],
                  core::kEspHead + ops[k].text_len + keys_[ops[k].sa].icv_bytes);
    if (ok) std::memcpy(ok, host.data() + ok_at, ops.size);
    return Status::ok();
  }
  const EspCrypto& engine_;
  std::vector<SaKeys> keys_;
};

}  // namespace

CheckReport check_esp_engine(std::string_view id, uint64_t seed, uint64_t items) {
  CheckReport rep{"ipsec", std::string(id), seed, 0, false, {}};
  items = std::min(items, kMaxCheckPackets);
  std::mt19937_64 rng(seed);
  const std::vector<SaKeys> suites = detail::every_suite(seed);
  auto engine = make_esp_crypto(id, {suites.data(), uint32_t(suites.size())});
  if (!engine.is_ok()) {
    rep.skipped = engine.status().code() == Errc::kNotSupported;
    rep.detail  = engine.status().message();
    return rep;
  }
  // The oracle: OpenSSL (ref.esp), or, in builds without it, cuda.esp's bodies on the host.
  auto ref = make_esp_crypto("ref.esp", {suites.data(), uint32_t(suites.size())});
  if (!ref.is_ok()) ref = std::unique_ptr<EspCrypto>(std::make_unique<BodiesOnHost>(Span<const SaKeys>{suites.data(), uint32_t(suites.size())}));
  // An engine that takes device memory is checked a second time through its resident calls.
  std::unique_ptr<EspCrypto> resident;
  if (engine.value()->takes_device_memory())
    resident = std::make_unique<ResidentOnDevice>(
        **engine, Span<const SaKeys>{suites.data(), uint32_t(suites.size())});
  // Batches of 0, 1, the multi-buffer lane edges, a full burst and past it.
  const uint32_t sizes[] = {0, 1, 7, 8, 9, 16, 17, 127, 128, 129, 300};
  for (const EspCrypto* e : {engine.value().get(), resident.get()}) {
    if (!e) continue;
    const std::string how = e == resident.get() ? "resident, " : "";
    uint64_t done         = 0;
    for (size_t si = 0; done < items || si < std::size(sizes); ++si) {
      const uint32_t n = sizes[si % std::size(sizes)];
      std::vector<std::vector<uint8_t>> bufs(n), refs(n);
      std::vector<CryptoOp> ops(n), ref_ops(n);
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t inner = uint32_t(rng() % 1501);
        const uint32_t sa    = uint32_t(rng() % suites.size());
        const uint64_t seq   = rng() % 3 == 0 ? rng() : rng() % 100000 + 1;
        ops[k]               = {nullptr, core::text_bytes(inner), sa, uint32_t(seq >> 32)};
        bufs[k].resize(core::kEspHead + ops[k].text_len + 16);
        core::write_esp_header(bufs[k].data(), 0x1000 + sa, seq);
        for (uint32_t b = 0; b < inner; ++b) bufs[k][core::kEspHead + b] = uint8_t(rng());
        core::write_trailer(bufs[k].data() + core::kEspHead, inner, core::kNextIpv4);
        refs[k]        = bufs[k];
        ops[k].esp     = bufs[k].data();
        ref_ops[k]     = ops[k];
        ref_ops[k].esp = refs[k].data();
      }
      const std::vector<std::vector<uint8_t>> plain = bufs;
      auto fail                                     = [&](std::string why) {
        rep.detail = how + "batch of " + std::to_string(n) + ": " + why;
        return rep;
      };
      Status st = e->seal({ops.data(), n});
      if (!st.is_ok()) return fail(st.message());
      st = ref.value()->seal({ref_ops.data(), n});
      if (!st.is_ok()) return fail(st.message());
      for (uint32_t k = 0; k < n; ++k)
        if (bufs[k] != refs[k])
          return fail("packet " + std::to_string(k) + " (" +
                      std::string(cipher_name(suites[ops[k].sa].cipher)) + ", text " +
                      std::to_string(ops[k].text_len) + " bytes) sealed differently from " +
                      std::string(ref.value()->id()));
      // Flip a bit in a third of them (header, text or ICV): those must fail, the others open
      // back to the plaintext.
      std::vector<uint8_t> flipped(n), ok(n, 2);
      for (uint32_t k = 0; k < n; ++k)
        if (rng() % 3 == 0) {
          const uint32_t len = core::kEspHead + ops[k].text_len + suites[ops[k].sa].icv_bytes;
          bufs[k][rng() % len] ^= uint8_t(1u << (rng() % 8));
          flipped[k] = 1;
        }
      const std::vector<std::vector<uint8_t>> tampered = bufs;
      st                                               = e->open({ops.data(), n}, ok.data());
      if (!st.is_ok()) return fail(st.message());
      for (uint32_t k = 0; k < n; ++k) {
        if (ok[k] == flipped[k])
          return fail(
              "packet " + std::to_string(k) + ": " +
              (flipped[k] ? "a flipped bit verified" : "an intact packet failed to verify"));
        // A failed open keeps the packet's bytes, its ICV's included (ESN's high bits are
        // hashed from there).
        const auto& want = ok[k] ? plain[k] : tampered[k];
        const uint32_t upto =
            core::kEspHead + ops[k].text_len + (ok[k] ? 0 : suites[ops[k].sa].icv_bytes);
        if (!std::equal(bufs[k].begin(), bufs[k].begin() + upto, want.begin()))
          return fail("packet " + std::to_string(k) +
                      (ok[k] ? ": opened text differs from what was sealed"
                             : ": a packet that failed to verify was changed"));
      }
      done += n;
      rep.items += n;
    }
  }
  return rep;
}

namespace detail {

std::vector<SaKeys> every_suite(uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0x5eed);
  std::vector<SaKeys> out;
  for (int s = 0; s < 12; ++s) {
    SaKeys k;
    k.cipher    = s < 8 ? Cipher::kAesCtr : Cipher::kAesGcm;
    k.key_bytes = (s & 1) ? 32 : 16;
    k.esn       = (s & 2) != 0;
    if (k.cipher == Cipher::kAesCtr) {
      k.integrity      = (s & 4) ? Integrity::kHmacSha256 : Integrity::kHmacSha1;
      k.auth_key_bytes = k.integrity == Integrity::kHmacSha256 ? 32 : 20;
      k.icv_bytes      = k.integrity == Integrity::kHmacSha256 ? 16 : 12;
    } else {
      k.integrity = Integrity::kNone;
      k.icv_bytes = 16;
    }
    for (auto& b : k.key) b = uint8_t(rng());
    for (auto& b : k.nonce) b = uint8_t(rng());
    for (auto& b : k.auth_key) b = uint8_t(rng());
    out.push_back(k);
  }
  return out;
}

}  // namespace detail
// The family in `warpath info` and `warpath selftest` (core/registry.hpp).
WARPATH_REGISTER_ENGINE_FAMILY(ipsec, "ipsec", 90, &esp_engines, &check_esp_engine);
WARPATH_REGISTER_ENGINE_FAMILY(aes_ctr, "aes-ctr", 100, &ctr_engines, &check_ctr_engine);

}  // namespace warpath::ipsec
