// src/runtime/modules/flow_aes_module.cpp: the `flow-aes` module, GASPP's AES application:
// the payload of every selected TCP or UDP flow is encrypted (or, the same operation,
// decrypted) with AES-CTR under a key of its own, so a chain can consolidate it with the
// firewall and the NIDS (acl(... goto:secret) -> flow-aes(key=..., when=secret) -> router).
//
// Keys and counters
//   A flow's key is derived from the module's master key and the flow's 5-tuple written in a
//   canonical order (the lower address/port first): HMAC-SHA256(master, "warpath flow-aes" |
//   version | proto | lower addr (16 bytes) | upper addr (16) | lower port | upper port | 0 0):
//   with a 16-byte master its first 16 bytes are the AES-128 key and the next 8 the nonce;
//   with a 32-byte master the whole MAC is the AES-256 key and the nonce is the first 8 bytes
//   of a second MAC, over the same message with its first byte XOR 0x80. Each direction has
//   its own nonce (its last byte XOR the direction: 0 from the lower end). Payload byte k of a direction is XORed
//   with byte k of the keystream AES(key, nonce | be64(k / 16)): k is the byte's offset in the
//   flow: for TCP from its sequence number (relative to the SYN's, or to the first segment the
//   module saw), so a retransmission gets the same keystream; for UDP the bytes before it in
//   that direction. Running the module twice restores the payload.
//   Transport checksums are recomputed (UDP's 0 over IPv4 stays 0).
//
// State: per worker, at most `capacity` flows (the oldest is forgotten first, counted as
// `evicted`); a forgotten TCP flow starts again from its next segment's sequence number, so
// hostile traffic bounds memory, not correctness of the flows that stay.
//
// Crypto: OpenSSL's EVP AES-CTR and HMAC (warpath never writes CPU crypto of its own).
#include <cctype>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "packet/core/bytes.hpp"
#include "runtime/modules/builtin_modules.hpp"
#include "warpath/stream/stream.hpp"

#if defined(WARPATH_HAVE_OPENSSL)
#include <openssl/evp.h>
#include <openssl/hmac.h>
#endif

namespace warpath::runtime {
namespace {

using packet::PacketInfo;
namespace pc = packet::core;

enum Stat : unsigned { kFlows, kActive, kEvicted, kPackets, kBytes, kStatCount };

// The flow's 5-tuple in canonical order: 40 bytes.
struct FlowKey {
  uint8_t bytes[40];
  bool operator==(const FlowKey& o) const { return std::memcmp(bytes, o.bytes, sizeof bytes) == 0; }
};
struct FlowKeyHash {
  size_t operator()(const FlowKey& k) const noexcept {
    uint64_t h = 1469598103934665603ull;
    for (uint8_t b : k.bytes) h = (h ^ b) * 1099511628211ull;
    return size_t(h);
  }
};

// The canonical key of packet `in` and its direction (0: src is the lower end).
FlowKey flow_key(const PacketInfo& in, int& dir) {
  FlowKey k{};
  const unsigned n = in.ip_version == 6 ? 16 : 4;
  const int c      = std::memcmp(in.src, in.dst, n);
  dir              = (c > 0 || (c == 0 && in.sport > in.dport)) ? 1 : 0;
  const uint8_t* lo = dir ? in.dst : in.src;
  const uint8_t* hi = dir ? in.src : in.dst;
  k.bytes[0]        = in.ip_version;
  k.bytes[1]        = in.proto;
  std::memcpy(k.bytes + 2, lo, n);
  std::memcpy(k.bytes + 18, hi, n);
  pc::store_be16(k.bytes + 34, dir ? in.dport : in.sport);
  pc::store_be16(k.bytes + 36, dir ? in.sport : in.dport);
  return k;
}

#if defined(WARPATH_HAVE_OPENSSL)

struct CtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};

struct FlowCrypt {
  std::unique_ptr<EVP_CIPHER_CTX, CtxFree> ctx;
  uint8_t nonce[2][8];
  bool based[2] = {false, false};
  uint32_t base[2] = {0, 0};  ///< TCP: the sequence number of payload byte 0
  uint64_t sent[2] = {0, 0};  ///< UDP: payload bytes so far
};

struct FlowAesState final : ModuleState {
  FlowAesState() : ModuleState(kStatCount) {}
  std::unordered_map<FlowKey, FlowCrypt, FlowKeyHash> flows;
  std::deque<FlowKey> order;  ///< creation order, for eviction
  uint64_t stats_local[kStatCount] = {};
  void bump(Stat s, uint64_t by = 1) {
    stats_local[s] += by;
    stats[s].store(stats_local[s], std::memory_order_relaxed);
  }
};

// The transport checksum of the segment at l4 (len bytes) with the IP pseudo-header.
uint16_t l4_checksum(const PacketInfo& in, const uint8_t* l4, uint32_t len) {
  const unsigned n = in.ip_version == 6 ? 16 : 4;
  uint32_t sum     = pc::ones_sum(in.src, n);
  sum              = pc::ones_sum(in.dst, n, sum);
  sum += in.proto;
  sum += len >> 16;
  sum += len & 0xffff;
  return pc::fold_checksum(pc::ones_sum(l4, len, sum));
}

class FlowAesModule final : public Module {
 public:
  FlowAesModule(std::vector<uint8_t> key, uint32_t capacity) : master_(std::move(key)), capacity_(capacity) {}
  std::string_view kind() const noexcept override { return "flow-aes"; }
  ModuleContract contract() const override { return {field_bit(Field::kParse), field_bit(Field::kBytes), {}}; }
  std::string describe() const override {
    return "AES-" + std::to_string(master_.size() * 8) + "-CTR per flow, at most " + std::to_string(capacity_) +
           " flows per worker";
  }
  std::vector<std::string> stat_names() const override {
    return {"flows", "active", "evicted", "packets", "bytes"};
  }
  Result<std::unique_ptr<ModuleState>> make_state() const override {
    return std::unique_ptr<ModuleState>(std::make_unique<FlowAesState>());
  }

  void post(Frame& f, ModuleSlot* slot, const Selection& sel) const override {
    auto& st = static_cast<FlowAesState&>(*slot->state);
    for (uint32_t i : sel.list) {
      const PacketInfo& in = f.infos[i];
      if (in.status != packet::ParseStatus::kOk || !(in.flags & packet::kHasPorts) ||
          (in.proto != 6 && in.proto != 17) || (in.flags & packet::kFragment))
        continue;
      uint8_t* frame              = f.batch.data(i);
      const packet::PacketMeta& m = f.batch.meta(i);
      const uint8_t* data         = nullptr;
      uint32_t len                = 0;
      const bool syn              = in.proto == 6 && (in.tcp_flags & packet::kTcpSyn);
      const bool payload          = stream::payload_of(in, frame, m.caplen, data, len);
      if (!payload && !syn) continue;
      int dir = 0;
      const FlowKey key = flow_key(in, dir);
      FlowCrypt* fc     = find_or_make(st, key);
      if (!fc) continue;
      uint64_t offset = 0;
      if (in.proto == 6) {
        const uint32_t seq = pc::load_be32(frame + in.l4_offset + 4);
        if (syn) fc->base[dir] = seq + 1, fc->based[dir] = true;  // payload byte 0 follows the SYN
        if (!payload) continue;
        if (!fc->based[dir]) fc->base[dir] = seq, fc->based[dir] = true;  // joined mid-flow
        offset = uint32_t(seq - fc->base[dir]);
      } else {
        offset = fc->sent[dir];
        fc->sent[dir] += len;
      }
      uint8_t iv[16];
      std::memcpy(iv, fc->nonce[dir], 8);
      pc::store_be32(iv + 8, uint32_t(offset / 16 >> 32));
      pc::store_be32(iv + 12, uint32_t(offset / 16));
      int out = 0;
      uint8_t skip[16];
      uint8_t* p = const_cast<uint8_t*>(data);
      if (EVP_EncryptInit_ex(fc->ctx.get(), nullptr, nullptr, nullptr, iv) != 1 ||
          (offset % 16 && EVP_EncryptUpdate(fc->ctx.get(), skip, &out, skip, int(offset % 16)) != 1) ||
          EVP_EncryptUpdate(fc->ctx.get(), p, &out, p, int(len)) != 1)
        continue;
      // The transport checksum over what the segment now carries.
      uint8_t* l4           = frame + in.l4_offset;
      const uint32_t l4_len = uint32_t(p + len - l4);
      if (in.proto == 6) {
        l4[16] = l4[17] = 0;
        pc::store_be16(l4 + 16, l4_checksum(in, l4, l4_len));
      } else if (in.ip_version == 6 || pc::load_be16(l4 + 6) != 0) {
        l4[6] = l4[7] = 0;
        uint16_t c = l4_checksum(in, l4, l4_len);
        pc::store_be16(l4 + 6, c ? c : 0xffff);  // RFC 768: a computed 0 is sent as all ones
      }
      st.bump(kPackets);
      st.bump(kBytes, len);
    }
  }

 private:
  FlowCrypt* find_or_make(FlowAesState& st, const FlowKey& key) const {
    auto it = st.flows.find(key);
    if (it != st.flows.end()) return &it->second;
    if (st.flows.size() >= capacity_ && !st.order.empty()) {
      st.flows.erase(st.order.front());
      st.order.pop_front();
      st.bump(kEvicted);
    }
    // HMAC-SHA256(master, label | canonical 5-tuple): the flow's key and nonce.
    static const char kLabel[] = "warpath flow-aes";
    uint8_t msg[sizeof kLabel - 1 + sizeof key.bytes], mac[32];
    std::memcpy(msg, kLabel, sizeof kLabel - 1);
    std::memcpy(msg + sizeof kLabel - 1, key.bytes, sizeof key.bytes);
    unsigned mac_len = 0;
    if (!HMAC(EVP_sha256(), master_.data(), int(master_.size()), msg, sizeof msg, mac, &mac_len)) return nullptr;
    FlowCrypt fc;
    fc.ctx.reset(EVP_CIPHER_CTX_new());
    // A 32-byte master gives AES-256: its key is the MAC's 32 bytes, the nonce a second MAC.
    uint8_t aes_key[32], nonce[32];
    std::memcpy(aes_key, mac, 32);
    std::memcpy(nonce, mac + 16, 16);
    if (master_.size() == 32) {
      msg[0] ^= 0x80;  // a second, independent MAC for the nonce
      if (!HMAC(EVP_sha256(), master_.data(), int(master_.size()), msg, sizeof msg, nonce, &mac_len)) return nullptr;
    }
    const EVP_CIPHER* cipher = master_.size() == 32 ? EVP_aes_256_ctr() : EVP_aes_128_ctr();
    if (!fc.ctx || EVP_EncryptInit_ex(fc.ctx.get(), cipher, nullptr, aes_key, nullptr) != 1) return nullptr;
    for (int d = 0; d < 2; ++d) {
      std::memcpy(fc.nonce[d], nonce, 8);
      fc.nonce[d][7] ^= uint8_t(d);
    }
    st.order.push_back(key);
    st.bump(kFlows);
    auto [pos, _] = st.flows.emplace(key, std::move(fc));
    st.stats[kActive].store(st.flows.size(), std::memory_order_relaxed);
    return &pos->second;
  }

  std::vector<uint8_t> master_;
  uint32_t capacity_;
};

#endif

}  // namespace

ModuleInfo flow_aes_module_info() {
  ModuleInfo i;
  i.kind    = "flow-aes";
  i.summary = "GASPP's AES: each TCP/UDP flow's payload under AES-CTR with a key of its own (run twice: restored)";
  i.args    = {{"key", "", "master key, 0x + 16 or 32 bytes (the flows' keys are derived from it)"},
               {"capacity", "65536", "flows remembered per worker (the oldest forgotten first)"}};
  i.reads   = field_bit(Field::kParse);
  i.sets    = field_bit(Field::kBytes);
  i.make    = [](const ModuleArgs& args, BuildEnv&) -> Result<std::unique_ptr<Module>> {
#if defined(WARPATH_HAVE_OPENSSL)
    const std::string text = args.get("key");
    if (text.size() < 3 || (text.rfind("0x", 0) != 0 && text.rfind("0X", 0) != 0))
      return Status(Errc::kInvalidArgument, "key: needs 0x and 32 or 64 hex digits (a 16- or 32-byte AES key)");
    if (text.size() % 2) return Status(Errc::kInvalidArgument, "key: an odd number of hex digits");
    std::vector<uint8_t> key;
    for (size_t k = 2; k < text.size(); k += 2) {
      const std::string byte = text.substr(k, 2);
      if (!std::isxdigit(uint8_t(byte[0])) || !std::isxdigit(uint8_t(byte[1])))
        return Status(Errc::kInvalidArgument, "key: '" + byte + "' is not a hex byte");
      key.push_back(uint8_t(std::stoul(byte, nullptr, 16)));
    }
    if (key.size() != 16 && key.size() != 32)
      return Status(Errc::kInvalidArgument, "key: " + std::to_string(key.size()) + " bytes; AES takes 16 or 32");
    WARPATH_ASSIGN_OR_RETURN(const uint64_t cap, args.get_u64("capacity", 65536, 1u << 26));
    if (cap == 0) return Status(Errc::kInvalidArgument, "capacity: must be at least 1");
    return std::unique_ptr<Module>(std::make_unique<FlowAesModule>(std::move(key), uint32_t(cap)));
#else
    (void)args;
    return Status(Errc::kNotBuilt, "built without OpenSSL (Debian libssl-dev)");
#endif
  };
  return i;
}

}  // namespace warpath::runtime
