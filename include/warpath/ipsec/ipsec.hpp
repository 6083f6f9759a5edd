// include/warpath/ipsec/ipsec.hpp
//
// IPsec ESP in tunnel mode (RFC 4301, RFC 4303): PacketShader's IPsec gateway and GASPP's AES.
//
// Compile, then run
//   An SaConfig (security associations and policies, read from a TOML file whose fields follow
//   `ip xfrm state` / `ip xfrm policy`: io/sa_file.hpp) is built into an SaDatabase: SAs with
//   their keys checked, inbound SAs found by (SPI, destination), outbound policies in order.
//   The database is immutable; what changes per packet (an SA's sequence counter, its replay
//   window, its lifetime counters) lives beside it in SaState, shared by every worker.
//
// Crypto engines (the registry: esp_engines, make_esp_crypto)
//   An engine seals or opens batches of ESP packets in place, given per packet where the ESP
//   header is, how long the encrypted part is and which SA it belongs to; the protocol around
//   it (headers, padding, sequence numbers, anti-replay, policies) is the same for every engine
//   (src/ipsec/core/esp_core.hpp, the modules esp-in and esp-out).
//
//   id          priority  what
//   ref.esp     1         OpenSSL EVP, one packet at a time: the reference
//   cpu.esp     10        intel-ipsec-mb's burst API (its multi-buffer lanes are the CPU's form
//                         of batching), up to 128 packets per burst
//   cuda.esp    5         the GPU, a packet per thread; its crypto is src/ipsec/core/
//                         crypto_core.hpp, checked on the host against OpenSSL by the tests
//
//   "validate:<id>" seals with <id> and checks every packet byte for byte against ref.esp (the
//   IV is the sequence number, so both produce the same bytes); opens with both and compares.
//
// Packet layout (tunnel mode; the IV is the 64-bit sequence number, big-endian)
//   outer IP | SPI (4) | seq (4) | IV (8) | inner IP packet | padding 1,2,3.. | pad len | next hdr | ICV
//              `-------- esp ------------'  `------------- text (encrypted, text_len bytes) ---'
//   The ICV covers SPI .. next header (then the high sequence bits with ESN and a separate
//   integrity algorithm; with GCM they go into the AAD instead: RFC 4303 2.2.1, RFC 4106 5).
//
// Thread safety
//   SaDatabase and engines are immutable and shared; SaState is updated with atomics and a
//   per-SA lock around the replay window. An engine may be called concurrently by several
//   threads (per-thread scratch, such as intel-ipsec-mb's manager, is the engine's business).
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/exec.hpp"
#include "warpath/core/registry.hpp"
#include "warpath/core/span.hpp"
#include "warpath/core/status.hpp"

namespace warpath::ipsec {

enum class Dir : uint8_t { kIn, kOut };
/// The encryption: AES-CTR (RFC 3686) with a separate integrity algorithm, or AES-GCM (RFC 4106).
enum class Cipher : uint8_t { kAesCtr, kAesGcm };
enum class Integrity : uint8_t { kNone, kHmacSha1, kHmacSha256 };

/// An address as two big-endian words (IPv4 in the top half of `hi`), so selectors and
/// lookups compare words, not bytes.
struct AddrWords {
  uint64_t hi = 0, lo = 0;
};
inline AddrWords addr_words(uint8_t family, const uint8_t* a) {
  AddrWords w;
  if (family == 4) {
    uint32_t v;
    std::memcpy(&v, a, 4);
    w.hi = uint64_t(__builtin_bswap32(v)) << 32;
  } else {
    uint64_t v[2];
    std::memcpy(v, a, 16);
    w.hi = __builtin_bswap64(v[0]);
    w.lo = __builtin_bswap64(v[1]);
  }
  return w;
}
/// The mask of a prefix of `len` bits as address words (addr_words' layout).
inline AddrWords prefix_mask(unsigned len) {
  AddrWords m;
  m.hi = len == 0 ? 0 : len >= 64 ? ~0ull : ~0ull << (64 - len);
  m.lo = len <= 64 ? 0 : len >= 128 ? ~0ull : ~0ull << (128 - len);
  return m;
}

/// An IPv4 or IPv6 address (IPv4: the first 4 bytes, network order).
struct Addr {
  uint8_t family = 4;  ///< 4 or 6
  std::array<uint8_t, 16> bytes{};
  bool operator==(const Addr& o) const {
    return family == o.family && std::memcmp(bytes.data(), o.bytes.data(), 16) == 0;
  }
};
struct Prefix {
  Addr addr;
  uint8_t len = 0;
  /// Does `a` (of family `family`, 4 or 16 bytes) fall in the prefix? The words that differ,
  /// under the prefix's mask (a policy match per packet: no byte loop).
  bool contains(uint8_t family, const uint8_t* a) const {
    if (family != addr.family) return false;
    const AddrWords x = addr_words(family, a), p = addr_words(family, addr.bytes.data());
    const AddrWords m = prefix_mask(len);
    return (((x.hi ^ p.hi) & m.hi) | ((x.lo ^ p.lo) & m.lo)) == 0;
  }
};
/// "10.0.0.1", "2001:db8::1"; "10.0.0.0/8" (a bare address is a host prefix).
Result<Addr> parse_addr(std::string_view text);
Result<Prefix> parse_prefix(std::string_view text);
std::string addr_text(const Addr& a);
/// A key as `ip xfrm state` writes it: "0x" and an even number of hex digits. kParseError:
/// "needs 0x followed by hex digits", "needs an even number of hex digits", "'zz' is not hex".
Result<std::vector<uint8_t>> parse_hex_bytes(std::string_view text);
std::string prefix_text(const Prefix& p);

/// The keys of one SA as the crypto engines need them.
struct SaKeys {
  Cipher cipher       = Cipher::kAesCtr;
  Integrity integrity = Integrity::kHmacSha1;
  uint8_t key_bytes   = 16;  ///< AES key: 16 or 32
  std::array<uint8_t, 32> key{};
  std::array<uint8_t, 4> nonce{};  ///< RFC 3686 nonce / RFC 4106 salt (the key's last 4 bytes)
  uint8_t auth_key_bytes = 0;      ///< HMAC key: 20 (SHA-1) or 32 (SHA-256)
  std::array<uint8_t, 64> auth_key{};
  uint8_t icv_bytes = 12;  ///< 12 (HMAC-SHA1-96), 16 (HMAC-SHA256-128, GCM-128)
  bool esn          = false;
};

/// One `[[sa]]` of the file.
struct SaSpec {
  std::string where;  ///< "file:line", for messages
  Addr src, dst;      ///< tunnel endpoints (outer header)
  uint32_t spi = 0;
  Dir dir      = Dir::kIn;
  SaKeys keys;
  uint32_t replay_window = 0;  ///< inbound: 0 (off, as the kernel's default) .. 4096
  uint64_t replay_oseq   = 0;  ///< outbound: the last sequence number already sent
  uint64_t replay_seq    = 0;  ///< inbound: the highest sequence number already received
  uint64_t soft_packets = 0, hard_packets = 0, soft_bytes = 0, hard_bytes = 0;  ///< 0 = none
  /// Largest outer IP packet: a larger one leaves in fragments when its inner packet is IPv4
  /// without DF, else it is dropped (too_big, with ICMP back).
  uint16_t mtu = 1500;
};

/// One `[[policy]]`: traffic selectors and the SA they use (outbound) or must have come
/// through (inbound).
struct PolicySpec {
  std::string where;
  Prefix src, dst;
  uint8_t proto  = 0;  ///< 0 = any
  uint16_t sport = 0, dport = 0;  ///< 0 = any (TCP/UDP/SCTP only)
  Dir dir        = Dir::kOut;
  /// The SA: the template's endpoints and spi. Without an spi, an out policy uses the first
  /// outbound SA between the endpoints (file order); an in policy admits what arrives through
  /// any inbound SA between them (as the kernel matches templates by reqid and addresses).
  Addr tmpl_src, tmpl_dst;
  uint32_t spi     = 0;
  int32_t priority = 0;  ///< lower first, as the kernel's; ties in file order
};

struct SaConfig {
  std::vector<SaSpec> sas;
  std::vector<PolicySpec> policies;
};

namespace detail {
class SpdIndex;  // src/ipsec/spd_index.hpp: policies in a tuple space
}

/// The compiled, immutable form of an SaConfig.
class SaDatabase {
 public:
  /// Checks the configuration: duplicate (SPI, dst) per direction, a policy whose SA does not
  /// exist or is of the wrong direction or family, an inbound SA no policy admits anything
  /// through. Errors name the entry ("sa.toml:12: ...").
  ///
  /// With `previous` (a reload), SA indices are stable: an SA equal to one of `previous`
  /// (same_sa) keeps its index, one no longer configured stays as a retired entry (its keys
  /// kept, so packets already on their way with its index are still served; never matched
  /// again), a new one is appended.
  static Result<SaDatabase> build(SaConfig config, const SaDatabase* previous = nullptr);
  /// The same SA for a reload: direction, SPI, destination and keys.
  static bool same_sa(const SaSpec& a, const SaSpec& b);

  /// Every SA by index, retired ones included (active() says which are configured).
  const std::vector<SaSpec>& sas() const noexcept { return sas_; }
  bool active(size_t sa) const { return active_[sa] != 0; }
  const std::vector<PolicySpec>& policies() const noexcept { return policies_; }
  /// The keys of every SA, by SA index (what make_esp_crypto takes).
  std::vector<SaKeys> keys() const;
  /// Inbound SA of (spi, dst), or -1.
  int32_t find_inbound(uint32_t spi, uint8_t family, const uint8_t* dst) const;
  /// Is `dst` a local tunnel endpoint (the destination of some inbound SA)?
  bool is_local(uint8_t family, const uint8_t* dst) const;
  /// The first outbound policy (by priority, then file order) matching the packet's
  /// selectors, or -1; its SA index in *sa. Past a few policies, a few hash probes (one per
  /// selector shape: src/ipsec/spd_index.hpp) whatever their number. With `ports_known`
  /// false (a later fragment, an unreadable transport header) a policy with ports cannot be
  /// decided: kPortsUnknown, and the caller must not let the packet out in the clear
  /// (RFC 4301 7).
  static constexpr int32_t kPortsUnknown = -2;
  /// (Inline: esp-out asks once per packet, and a call with eight arguments cost about as
  /// much as scanning one policy.)
  int32_t match_out(uint8_t family, const uint8_t* src, const uint8_t* dst, uint8_t proto,
                    uint16_t sport, uint16_t dport, int32_t* sa, bool ports_known = true,
                    bool proto_known = true) const {
    const int32_t p = first_of(out_policies_, out_index_.get(), family, src, dst, proto, sport,
                               dport, ports_known, proto_known);
    if (p < 0) return -1;
    // Without the ports, the first policy on addresses and protocol decides: one that names
    // ports cannot be told, and the packet must not leave in the clear. Without the protocol
    // (an upper layer the parser could not reach: OPAQUE), the first on addresses alone, and
    // one that names a protocol cannot be told either.
    const Selector& x = selectors_[size_t(p)];
    if ((!ports_known && (x.sport || x.dport)) || (!proto_known && x.proto)) return kPortsUnknown;
    *sa = policy_sa_[size_t(p)];
    return p;
  }
  /// Does some inbound policy of SA `sa` admit the decapsulated packet? (-1: any SA's policy;
  /// the answer for a plaintext packet that should have arrived protected.) `sa` is an
  /// inbound SA's index (find_inbound's, retired ones included); any other admits nothing.
  /// Without known ports, policies are matched on addresses and protocol; without a known
  /// protocol, on addresses alone.
  bool admits_in(int32_t sa, uint8_t family, const uint8_t* src, const uint8_t* dst, uint8_t proto,
                 uint16_t sport, uint16_t dport, bool ports_known = true,
                 bool proto_known = true) const;
  size_t inbound_count() const noexcept { return in_list_.size(); }
  size_t outbound_count() const noexcept { return out_count_; }

 private:
  std::vector<SaSpec> sas_;
  std::vector<PolicySpec> policies_;     ///< out policies by priority, then in policies
  std::vector<int32_t> policy_sa_;       ///< per policy: its SA index
  std::vector<uint32_t> out_policies_;   ///< indices of out policies in match order
  std::vector<uint32_t> in_policies_;    ///< indices of in policies
  std::vector<std::vector<uint32_t>> in_naming_;  ///< per SA: the in policies naming it
  /// Indexes of out_policies_, in_policies_ and each in_naming_ list longer than a scan's
  /// worth (null: scanned).
  std::shared_ptr<const detail::SpdIndex> out_index_, in_index_all_;
  std::vector<std::shared_ptr<const detail::SpdIndex>> in_naming_index_;
  /// Each policy's selectors as the scan of a short list compares them (first_of): the
  /// prefixes as address words and masks, built once, so that a packet's addresses are turned
  /// into words once per lookup instead of once per policy.
  struct Selector {
    AddrWords src, dst, smask, dmask;
    uint8_t family = 4, proto = 0;
    uint16_t sport = 0, dport = 0;
  };
  std::vector<Selector> selectors_;  ///< by policy
  /// The first of `list` selecting the packet, or -1: through `index` when there is one,
  /// else policy by policy: addresses and protocol, and the ports too when they are known
  /// (not: a later fragment, a transport header the parser could not read).
  int32_t first_of(const std::vector<uint32_t>& list, const detail::SpdIndex* index, uint8_t family,
                   const uint8_t* src, const uint8_t* dst, uint8_t proto, uint16_t sport,
                   uint16_t dport, bool ports_known, bool proto_known = true) const {
    if (index)
      return indexed_first(index, family, src, dst, proto, sport, dport, ports_known, proto_known);
    const AddrWords s = addr_words(family, src), d = addr_words(family, dst);
    for (uint32_t p : list) {
      const Selector& x = selectors_[p];
      if (x.family != family) continue;
      if ((((s.hi ^ x.src.hi) & x.smask.hi) | ((s.lo ^ x.src.lo) & x.smask.lo) |
           ((d.hi ^ x.dst.hi) & x.dmask.hi) | ((d.lo ^ x.dst.lo) & x.dmask.lo)) != 0)
        continue;
      if (proto_known && x.proto && x.proto != proto) continue;
      if (ports_known && proto_known &&
          ((x.sport && x.sport != sport) || (x.dport && x.dport != dport)))
        continue;
      return int32_t(p);
    }
    return -1;
  }
  /// index->first(...) (src/ipsec/spd_index.hpp; not inline: the index is opaque here).
  static int32_t indexed_first(const detail::SpdIndex* index, uint8_t family, const uint8_t* src,
                               const uint8_t* dst, uint8_t proto, uint16_t sport, uint16_t dport,
                               bool ports_known, bool proto_known);
  std::vector<uint8_t> active_;          ///< per SA: configured (1) or retired by a reload (0)
  std::vector<uint32_t> in_list_;        ///< active inbound SAs
  /// An address's words, ordered by family then value (is_local compares words).
  struct AddrKey {
    uint8_t family = 0;
    AddrWords w;
    bool operator<(const AddrKey& o) const {
      return family != o.family ? family < o.family
             : w.hi != o.w.hi   ? w.hi < o.w.hi
                                : w.lo < o.w.lo;
    }
    bool operator==(const AddrKey& o) const {
      return family == o.family && w.hi == o.w.hi && w.lo == o.w.lo;
    }
  };
  std::vector<AddrKey> locals_;          ///< their destinations, sorted and unique (is_local)
  std::vector<uint64_t> in_index_;       ///< sorted (spi << 32 | sa) of active inbound SAs
  size_t out_count_ = 0;
};

/// The mutable side of one SA (one per SA of a database, shared by the workers).
struct SaState {
  std::atomic<uint64_t> oseq{0};     ///< outbound: last sequence number handed out
  std::atomic<uint64_t> packets{0}, bytes{0};
  std::atomic<bool> soft_expired{false};
  std::mutex lock;                   ///< inbound: guards the window
  uint64_t top = 0;                  ///< inbound: highest authenticated sequence number
  std::vector<uint64_t> bitmap;      ///< inbound: bit k of word k/64 = top - k was seen
};

/// One packet for an engine: the ESP header at `esp` (SPI, seq, IV), `text_len` bytes of text
/// after it, then the ICV (icv_bytes of the SA). seq_hi: the high half of the 64-bit sequence
/// number (hashed or in the AAD when the SA uses ESN).
struct CryptoOp {
  uint8_t* esp      = nullptr;
  uint32_t text_len = 0;
  uint32_t sa       = 0;
  uint32_t seq_hi   = 0;
};

class EspCrypto {
 public:
  virtual ~EspCrypto()                         = default;
  virtual std::string_view id() const noexcept = 0;
  /// How many SAs the engine was built with (CryptoOp::sa indexes them).
  virtual uint32_t sa_count() const noexcept = 0;
  /// Encrypts each op's text in place and writes its ICV. kInvalidArgument, with nothing
  /// touched, when an op has no buffer or names an SA past sa_count().
  Status seal(Span<const CryptoOp> ops) const {
    WARPATH_TRY(check(ops));
    return do_seal(ops);
  }
  /// Verifies each op's ICV (in constant time) and, where it holds, decrypts the text in
  /// place: ok[k] = 1; else ok[k] = 0 and the text is left as it was. The same checks as seal,
  /// and `ok` must be given.
  Status open(Span<const CryptoOp> ops, uint8_t* ok) const {
    if (!ok && ops.size) return Status(Errc::kInvalidArgument, std::string(id()) + ": open without verdicts");
    WARPATH_TRY(check(ops));
    return do_open(ops, ok);
  }
  /// Whether the engine takes device-resident ops (seal_resident / open_resident): cuda.esp.
  virtual bool takes_device_memory() const noexcept { return false; }
  /// seal and open on device memory (ExecContext::resident): `ops` and `ok` are device
  /// arrays and each op's esp a device pointer (the offload master's one upload of a launch's
  /// packets). The ops cannot be read here, so the engine checks each on the device: an op
  /// without a buffer or with an SA past sa_count() is left untouched (and fails its open).
  /// kNotSupported for engines of host memory. Completes before returning, on ctx.stream.
  Status seal_resident(Span<const CryptoOp> ops, ExecContext& ctx) const {
    if (!takes_device_memory()) return host_only();
    return do_resident(ops, nullptr, ctx);
  }
  Status open_resident(Span<const CryptoOp> ops, uint8_t* ok, ExecContext& ctx) const {
    if (!takes_device_memory()) return host_only();
    if (!ok && ops.size)
      return Status(Errc::kInvalidArgument, std::string(id()) + ": open without verdicts");
    return do_resident(ops, ok, ctx);
  }

 protected:
  /// The work, with the arguments checked once here for every engine (non-virtual interface).
  virtual Status do_seal(Span<const CryptoOp> ops) const               = 0;
  virtual Status do_open(Span<const CryptoOp> ops, uint8_t* ok) const = 0;
  /// Resident seal (ok == nullptr) or open; only engines that take device memory override it.
  virtual Status do_resident(Span<const CryptoOp>, uint8_t*, ExecContext&) const {
    return host_only();
  }

 private:
  Status host_only() const {
    return Status(Errc::kNotSupported, std::string(id()) + ": takes host memory only");
  }
  Status check(Span<const CryptoOp> ops) const {
    const uint32_t sas = sa_count();
    for (uint32_t k = 0; k < ops.size; ++k)
      if (!ops[k].esp || ops[k].sa >= sas)
        return Status(Errc::kInvalidArgument,
                      std::string(id()) + ": packet " + std::to_string(k) +
                          (ops[k].esp ? " names SA " + std::to_string(ops[k].sa) + " of " + std::to_string(sas)
                                      : " has no buffer"));
    return Status::ok();
  }
};

/// Every ESP crypto engine of this build (the registry), available here or not.
std::vector<EngineInfo> esp_engines();
/// An engine for the SAs `keys` (SaDatabase::keys). Ids: ref.esp, cpu.esp, auto, cpu, ref,
/// validate:<id>. kNotSupported when built without the engine's library.
Result<std::unique_ptr<EspCrypto>> make_esp_crypto(std::string_view id, Span<const SaKeys> keys);
/// The self-test's differential check (seals and opens random packets of every length and
/// suite with `id` and ref.esp, or cuda.esp's bodies on the host without OpenSSL); at most
/// 30,000 packets, whatever `items` asks.
CheckReport check_esp_engine(std::string_view id, uint64_t seed, uint64_t items);

/// A byte range to XOR with AES-CTR keystream (CtrCipher::apply).
struct CtrOp {
  uint32_t key        = 0;   ///< CtrCipher::add_key's handle
  uint8_t counter[16] = {};  ///< the counter block of the block holding the range's first byte
  uint8_t skip        = 0;   ///< keystream bytes of that block before the first byte (0-15)
  uint8_t* data       = nullptr;
  uint32_t len        = 0;
};

/// AES-CTR over byte ranges under keys that come and go: GASPP's AES application (the
/// flow-aes module: a key per flow, the counter from the byte's place in the flow) on the ESP
/// engines' libraries. The counter block counts as one 128-bit big-endian number (NIST SP
/// 800-38A, OpenSSL's CTR). An engine holds its keys' schedules and is one worker's: not
/// shared between threads.
///
///   id        priority  what
///   ref.ctr   1         OpenSSL EVP, one range at a time: the reference
///   cpu.ctr   10        intel-ipsec-mb's burst API, up to 128 ranges per burst (a range that
///                       starts inside a block costs one more job, for that block)
///   cuda.ctr  5         the GPU, a range per thread (src/ipsec/core/crypto_core.hpp's
///                       aes_ctr_range, checked on the host against OpenSSL by the tests)
///   validate:<id>       applies <id> and ref.ctr to copies and compares every byte
class CtrCipher {
 public:
  virtual ~CtrCipher()                         = default;
  virtual std::string_view id() const noexcept = 0;
  /// The schedule of a 16- or 32-byte AES key; its handle (a dropped key's is reused).
  Result<uint32_t> add_key(const uint8_t* key, uint32_t bytes) {
    if (!key || (bytes != 16 && bytes != 32))
      return Status(
          Errc::kInvalidArgument,
          std::string(id()) + ": an AES key is 16 or 32 bytes, not " + std::to_string(bytes));
    return do_add_key(key, bytes);
  }
  /// Forgets a key (its schedule wiped); an unknown handle is ignored.
  virtual void drop_key(uint32_t handle) = 0;
  /// XORs every op's bytes in place with its keystream. kInvalidArgument, with nothing
  /// touched, when an op names no live key, has bytes but no buffer, or skips 16 or more.
  Status apply(Span<const CtrOp> ops) {
    for (uint32_t k = 0; k < ops.size; ++k)
      if (!live(ops[k].key) || (ops[k].len && !ops[k].data) || ops[k].skip > 15)
        return Status(Errc::kInvalidArgument, std::string(id()) + ": range " + std::to_string(k) +
                                                  (!live(ops[k].key)  ? " names no key"
                                                   : ops[k].skip > 15 ? " skips 16 bytes or more"
                                                                      : " has no buffer"));
    return do_apply(ops);
  }
  /// Whether `handle` is a key added and not dropped.
  virtual bool live(uint32_t handle) const noexcept = 0;

 protected:
  virtual Result<uint32_t> do_add_key(const uint8_t* key, uint32_t bytes) = 0;
  virtual Status do_apply(Span<const CtrOp> ops)                          = 0;
};

/// Every AES-CTR engine of this build (the registry), available here or not.
std::vector<EngineInfo> ctr_engines();
/// Ids: ref.ctr, cpu.ctr, auto, cpu, ref, validate:<id>. kNotSupported when built without the
/// engine's library.
Result<std::unique_ptr<CtrCipher>> make_ctr_cipher(std::string_view id);
/// The self-test's differential check of an AES-CTR engine against ref.ctr (random ranges of
/// every length and start, counters about to wrap, batches around the burst's edges).
CheckReport check_ctr_engine(std::string_view id, uint64_t seed, uint64_t items);

/// Names the kernel gives algorithms: "rfc3686(ctr(aes))", "hmac(sha1)", "rfc4106(gcm(aes))".
std::string_view cipher_name(Cipher c);
std::string_view integrity_name(Integrity i);

}  // namespace warpath::ipsec
