// src/modules/flow_aes_module.cpp: the `flow-aes` module, GASPP's AES application:
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
//   with byte k of the keystream AES(key, nonce | be64(k / 16)): for TCP k is the byte's
//   sequence number, so a retransmission gets the same keystream and nothing about the flow
//   needs remembering (a TCP direction's keystream repeats after 4 GiB, when sequence
//   numbers wrap, and across connections that reuse a 5-tuple with overlapping sequence
//   numbers: change the master key to rekey); for UDP k counts the bytes before it in that
//   direction. Running the module twice restores the payload. Transport checksums are
//   recomputed (UDP's 0 over IPv4 stays 0).
//
// State and hostile traffic: per worker, at most `capacity` flows. A TCP flow's entry is only
// a cache (its counters are its sequence numbers), so when the table is full the oldest TCP
// entry goes (`evicted`); a UDP flow's byte count cannot be forgotten without reusing its
// keystream, so a new flow finding only UDP flows dropped is dropped (flow_table_full).
// Fragments cannot be placed in their flow's keystream (defragment first): dropped
// (fragment). Nothing selected leaves in the clear.
//
// Crypto: the AES-CTR engines of the ESP gateway's libraries (ipsec.hpp: CtrCipher; `engine`,
// default auto: cpu.ctr, intel-ipsec-mb's burst API, else ref.ctr, OpenSSL's EVP), one call per
// frame for all its selected packets; keys derived with OpenSSL's HMAC. warpath never writes
// CPU crypto of its own.
#include <array>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "warpath/runtime/module.hpp"
#include "core/hash_words.hpp"
#include "packet/core/bytes.hpp"
#include "runtime/thread_util.hpp"
#include "warpath/ipsec/ipsec.hpp"
#include "warpath/stream/stream.hpp"

#if defined(WARPATH_HAVE_OPENSSL)
#include <openssl/evp.h>
#include <openssl/hmac.h>
#endif

namespace warpath::runtime {
namespace {

// The kind's contract, declared once (ModuleInfo) and kept by every instance.
ModuleContract flow_aes_contract() {
  return {field_bit(Field::kParse),
          field_bit(Field::kBytes) | field_bit(Field::kVerdict)};
}

using packet::PacketInfo;
namespace pc = packet::core;

enum Stat : unsigned { kFlows, kActive, kEvicted, kPackets, kBytes, kStatCount };
enum Reason : unsigned { kFragmentDrop, kTableFull, kCryptoError, kReasonCount };

// The flow's 5-tuple in canonical order: 40 bytes.
struct FlowKey {
  uint8_t bytes[40];
  bool operator==(const FlowKey& o) const { return std::memcmp(bytes, o.bytes, sizeof bytes) == 0; }
};
// Word-wise (FNV-1a byte by byte was a 40-step chain, about 60 ns a packet: warpath-esp-bench's
// flow-aes rows).
struct FlowKeyHash {
  size_t operator()(const FlowKey& k) const noexcept {
    uint64_t w[5];
    std::memcpy(w, k.bytes, sizeof w);
    return size_t(warpath::detail::hash_words5(w));
  }
};

// The canonical key of packet `in` and its direction (0: src is the lower end).
[[maybe_unused]] FlowKey flow_key(const PacketInfo& in, int& dir) {  // unused without OpenSSL
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

struct FlowCrypt {
  uint32_t key = 0;  ///< the worker's cipher's handle of the flow's AES key
  uint8_t nonce[2][8];
  uint64_t sent[2] = {0, 0};  ///< UDP: payload bytes so far
};

struct FlowAesState final : ModuleState {
  explicit FlowAesState(std::unique_ptr<ipsec::CtrCipher> c)
      : ModuleState(kStatCount), cipher(std::move(c)) {}
  std::unique_ptr<ipsec::CtrCipher> cipher;  ///< this worker's: the flows' keys live in it
  std::unordered_map<FlowKey, FlowCrypt, FlowKeyHash> flows;
  std::deque<FlowKey> tcp_order;  ///< TCP entries in creation order (the evictable ones)
  std::vector<ipsec::CtrOp> ops;  ///< a frame's ranges
  std::vector<uint32_t> packet;   ///< each range's packet
  /// Keys of flows evicted during a frame, dropped after its call: a range gathered before
  /// the eviction still holds the key's handle, which must not go to a new flow meanwhile.
  std::vector<uint32_t> retired;
  void bump(Stat s, uint64_t by = 1) { add_owned(stats[s], by); }
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
  FlowAesModule(std::vector<uint8_t> key, uint32_t capacity, std::array<uint16_t, kReasonCount> ids,
                std::string engine)
      : master_(std::move(key)), capacity_(capacity), ids_(ids), engine_(std::move(engine)) {}
  std::string_view kind() const noexcept override { return "flow-aes"; }
  ModuleContract contract() const override { return flow_aes_contract(); }
  std::string describe() const override {
    return "AES-" + std::to_string(master_.size() * 8) + "-CTR per flow (" + engine_ +
           "), at most " + std::to_string(capacity_) + " flows per worker";
  }
  std::vector<std::string> stat_names() const override {
    return {"flows", "active", "evicted", "packets", "bytes"};
  }
  Result<std::unique_ptr<ModuleState>> make_state() const override {
    WARPATH_ASSIGN_OR_RETURN(auto cipher, ipsec::make_ctr_cipher(engine_));
    return std::unique_ptr<ModuleState>(std::make_unique<FlowAesState>(std::move(cipher)));
  }

  void post(Frame& f, ModuleSlot* slot, const Selection& sel) const override {
    auto& st = static_cast<FlowAesState&>(*slot->state);
    st.ops.clear();
    st.packet.clear();
    // Each selected packet's range (keys found or made, counters placed), then one call for
    // the frame, then the checksums.
    for (uint32_t i : sel.list) {
      const PacketInfo& in = f.infos[i];
      if (in.proto != 6 && in.proto != 17) continue;  // not a flow of this module: passes on
      if (in.flags & packet::kFragment) {
        f.reason[i] = ids_[kFragmentDrop];
        continue;
      }
      uint8_t* frame              = f.batch.data(i);
      const packet::PacketMeta& m = f.batch.meta(i);
      const uint8_t* data         = nullptr;
      uint32_t len                = 0;
      if (in.status != packet::ParseStatus::kOk || !(in.flags & packet::kHasPorts) ||
          !stream::payload_of(in, frame, m.caplen, data, len))
        continue;  // nothing to encrypt (a bare ACK, a malformed header: the router's)
      int dir = 0;
      const FlowKey key = flow_key(in, dir);
      FlowCrypt* fc     = find_or_make(st, key, in.proto == 6);
      if (!fc) {
        f.reason[i] = ids_[kTableFull];
        continue;
      }
      uint64_t offset = 0;
      if (in.proto == 6) {
        offset = pc::load_be32(frame + in.l4_offset + 4);
      } else {
        offset = fc->sent[dir];
        fc->sent[dir] += len;
      }
      ipsec::CtrOp& op = st.ops.emplace_back();
      op.key           = fc->key;
      std::memcpy(op.counter, fc->nonce[dir], 8);
      pc::store_be32(op.counter + 8, uint32_t(offset / 16 >> 32));
      pc::store_be32(op.counter + 12, uint32_t(offset / 16));
      op.skip = uint8_t(offset % 16);
      op.data = const_cast<uint8_t*>(data);
      op.len  = len;
      st.packet.push_back(i);
    }
    const bool done =
        st.ops.empty() || st.cipher->apply({st.ops.data(), uint32_t(st.ops.size())}).is_ok();
    for (uint32_t key : st.retired) st.cipher->drop_key(key);
    st.retired.clear();
    if (!done) {
      for (uint32_t i : st.packet) f.reason[i] = ids_[kCryptoError];  // never in the clear
      return;
    }
    for (size_t k = 0; k < st.ops.size(); ++k) {
      const uint32_t i     = st.packet[k];
      const PacketInfo& in = f.infos[i];
      uint8_t* p           = st.ops[k].data;
      const uint32_t len   = st.ops[k].len;
      // The transport checksum over what the segment now carries.
      uint8_t* l4           = f.batch.data(i) + in.l4_offset;
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
  FlowCrypt* find_or_make(FlowAesState& st, const FlowKey& key, bool tcp) const {
    auto it = st.flows.find(key);
    if (it != st.flows.end()) return &it->second;
    if (st.flows.size() >= capacity_) {
      if (st.tcp_order.empty()) return nullptr;  // only UDP flows: none may be forgotten
      const auto old = st.flows.find(st.tcp_order.front());
      st.retired.push_back(old->second.key);
      st.flows.erase(old);
      st.tcp_order.pop_front();
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
    // A 32-byte master gives AES-256: its key is the MAC's 32 bytes, the nonce a second MAC.
    uint8_t aes_key[32], nonce[32];
    std::memcpy(aes_key, mac, 32);
    std::memcpy(nonce, mac + 16, 16);
    if (master_.size() == 32) {
      msg[0] ^= 0x80;  // a second, independent MAC for the nonce
      if (!HMAC(EVP_sha256(), master_.data(), int(master_.size()), msg, sizeof msg, nonce, &mac_len)) return nullptr;
    }
    const Result<uint32_t> key_handle = st.cipher->add_key(aes_key, uint32_t(master_.size()));
    if (!key_handle.is_ok()) return nullptr;
    fc.key = key_handle.value();
    for (int d = 0; d < 2; ++d) {
      std::memcpy(fc.nonce[d], nonce, 8);
      fc.nonce[d][7] ^= uint8_t(d);
    }
    if (tcp) st.tcp_order.push_back(key);
    st.bump(kFlows);
    auto [pos, _] = st.flows.emplace(key, std::move(fc));
    st.stats[kActive].store(st.flows.size(), std::memory_order_relaxed);
    return &pos->second;
  }

  std::vector<uint8_t> master_;
  uint32_t capacity_;
  std::array<uint16_t, kReasonCount> ids_;
  std::string engine_;
};

#endif

}  // namespace

ModuleInfo flow_aes_module_info() {
  ModuleInfo i;
  i.kind    = "flow-aes";
  i.summary = "GASPP's AES: each TCP/UDP flow's payload under AES-CTR with a key of its own (run twice: restored)";
  i.args    = {
         {"key", "", "master key, 0x + 16 or 32 bytes (the flows' keys are derived from it)"},
         {"capacity", "65536", "flows remembered per worker (the oldest forgotten first)"},
         {"engine", "auto",
          "AES-CTR engine: cpu.ctr (intel-ipsec-mb), ref.ctr (OpenSSL), auto, validate:cpu.ctr"}};
  i.contract = flow_aes_contract();
  i.make    = [](const ModuleArgs& args, BuildEnv& env) -> Result<std::unique_ptr<Module>> {
#if defined(WARPATH_HAVE_OPENSSL)
    auto parsed = ipsec::parse_hex_bytes(args.get("key"));
    if (!parsed.is_ok()) return Status(Errc::kInvalidArgument, "key: " + parsed.status().message());
    std::vector<uint8_t> key = std::move(parsed).value();
    if (key.size() != 16 && key.size() != 32)
      return Status(Errc::kInvalidArgument, "key: " + std::to_string(key.size()) + " bytes; AES takes 16 or 32");
    WARPATH_ASSIGN_OR_RETURN(const uint64_t cap, args.get_u64("capacity", 65536, 1u << 26));
    if (cap == 0) return Status(Errc::kInvalidArgument, "capacity: must be at least 1");
    std::array<uint16_t, kReasonCount> ids{};
    const char* names[kReasonCount] = {"fragment", "flow_table_full", "crypto_error"};
    for (unsigned r = 0; r < kReasonCount; ++r) {
      WARPATH_ASSIGN_OR_RETURN(ids[r], env.reasons->add(names[r], Verdict::kDrop, env.position));
    }
    const std::string engine = args.get("engine", "auto");
    WARPATH_TRY(ipsec::make_ctr_cipher(engine).status());  // an unknown or absent engine fails here
    return std::unique_ptr<Module>(
        std::make_unique<FlowAesModule>(std::move(key), uint32_t(cap), ids, engine));
#else
    (void)args;
    (void)env;
    return Status(Errc::kNotBuilt, "built without OpenSSL (Debian libssl-dev)");
#endif
  };
  return i;
}

WARPATH_REGISTER_MODULE(flow_aes_module_info);

}  // namespace warpath::runtime
