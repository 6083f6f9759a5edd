// src/modules/esp_module.cpp: the `esp-in` and `esp-out` modules, an IPsec ESP gateway
// in tunnel mode (include/warpath/ipsec/ipsec.hpp; PacketShader's IPsec gateway). A gateway
// chain is esp-in -> esp-out -> router: inbound ESP is decapsulated and routed by its inner
// destination; plaintext that an outbound policy selects is encapsulated and routed by its
// outer destination (the tunnel's far end); everything else passes through.
//
// Contract: both read parse and set parse and bytes (they rewrite headers, so the chain starts
// a new stage after each: chain.hpp). The crypto is one engine call per frame (cpu.esp bursts
// of up to 128 packets): the module's shade job when it is the first of its stage and has no
// when= (job mode: pre does the checks and builds the ops, the offload master may take the job
// to the GPU, post finishes), else in post.
//
// Packets whose IP header is unreadable are the router's to drop; nothing a policy selects
// leaves in the clear (a later fragment under a policy with ports: ports_unknown). An IPv6
// packet whose extension headers cannot be followed (the router forwards it) is decided on its
// addresses, its upper layer OPAQUE (opaque_upper). SIGHUP reloads the SA file (reload below).
// Inbound, ECN follows RFC 6040: CE outside marks an ECN-capable inner packet, a Not-ECT one is
// dropped (ecn_not_ect); ECT(1) outside turns ECT(0) inside into ECT(1).
//
// esp-in, per selected packet
//   ESP (protocol 50) to a local tunnel endpoint: fragment -> drop fragment; too short for the
//   SA's ICV -> truncated; unknown (SPI, destination) -> no_sa; past the hard lifetime ->
//   sa_expired; replayed or behind the window -> replay (checked before the ICV, recorded only
//   after it verified, RFC 4303 3.4.3); ICV -> auth_failed; padding -> bad_padding; next header
//   59 (TFC dummy) -> dummy; not an IP packet of the announced version -> bad_inner; the inner
//   packet outside every `in` policy of its SA -> policy_mismatch. Otherwise the outer IP and
//   ESP headers and the trailer are stripped (the L2 header is kept, its EtherType set) and
//   the packet goes on, parsed again.
//   Plaintext that an `in` policy covers (it should have arrived protected) -> unprotected.
// esp-out, per selected packet
//   IP packets an `out` policy selects: the inner TTL / hop limit is decremented (the gateway
//   forwards it: RFC 4301 5.1.2.1; expired -> ttl_expired, slow path: ICMP Time Exceeded
//   back), the packet is encapsulated with
//   the next sequence number (the SA stops at 2^32 - 1 without ESN: seq_overflow; at its hard
//   lifetime: sa_expired), sealed, and goes on to be routed by its outer header. Past the SA's
//   mtu: an IPv4 packet without DF goes on, its tunnel packet fragmented on output (RFC 4301
//   8.1); with DF, or IPv6 -> too_big (slow path: ICMP Fragmentation Needed / Packet Too Big
//   back); no room in the frame's cell -> no_room; a truncated capture -> truncated.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "warpath/runtime/module.hpp"
#include "forward/core/forward_core.hpp"
#include "ipsec/core/esp_core.hpp"
#include "ipsec/gateway.hpp"
#include "ipsec/core/replay_window.hpp"
#include "packet/core/parse_core.hpp"
#include "warpath/core/read_guard.hpp"
#include "warpath/forward/router.hpp"
#include "warpath/ipsec/ipsec.hpp"

namespace warpath::runtime {
namespace {

// Both directions' contract, declared once (ModuleInfo) and kept by every instance: they
// rewrite headers (parse) and bytes.
ModuleContract esp_contract() {
  return {field_bit(Field::kParse),
          field_bit(Field::kParse) | field_bit(Field::kBytes)};
}

namespace ec = ipsec::core;
using packet::PacketInfo;

using ipsec::dport_of;
using ipsec::EspTables;
using ipsec::family_of;
using ipsec::in_policy_covers;
using ipsec::ip_length;
using ipsec::ip_readable;
using ipsec::move_link_header;
using ipsec::opaque_upper;
using ipsec::out_policy;
using ipsec::OuterTemplate;
using ipsec::ports_known;
using ipsec::SaLockRun;
using ipsec::SaTally;
using ipsec::set_ethertype;
using ipsec::sport_of;
using ipsec::within_all_limits;

struct EspSlot final : ModuleSlot {
  EspSlot(uint32_t cap, size_t sas)
      : ops(cap), index(cap), ok(cap), bytes(cap), seq(cap), tally(sas) {}
  std::vector<ipsec::CryptoOp> ops;  ///< the crypto job's keys (job mode: built in pre)
  std::vector<uint32_t> index;       ///< the packet of each op
  std::vector<uint8_t> ok;           ///< the crypto job's answers (open: ICV verified)
  std::vector<uint32_t> bytes;  ///< each op's ESP bytes (header, text, ICV): what it transforms
  std::vector<uint64_t> seq;
  uint32_t n_ops = 0;
  SaTally tally;
  // Job mode: what pre decided, given to the packets in post (pre never sets a verdict).
  bool deferring = false;
  std::vector<std::pair<uint32_t, uint16_t>> early;
  void decide(Frame& f, uint32_t i, uint16_t reason) {
    if (deferring) early.emplace_back(i, reason);
    else f.reason[i] = reason;
  }
};

// What a module is built from, kept for reloads.
struct EspSource {
  std::string file, engine;
  std::string offload;  ///< the offload place's engine (cuda.esp, or cpu.esp for --offload-device cpu); empty: none
  std::function<Result<ipsec::SaConfig>(const std::string&)> load;
};

Result<std::unique_ptr<EspTables>> build_tables(const EspSource& src, ipsec::Dir dir,
                                                const EspTables* previous,
                                                std::vector<std::string>* warnings) {
  WARPATH_ASSIGN_OR_RETURN(ipsec::SaConfig config, src.load(src.file));
  return ipsec::build_gateway_tables(std::move(config), src.file, src.engine, src.offload, dir,
                                     previous, warnings);
}

Result<EspSource> source_of(const ModuleArgs& args, const BuildEnv& env, bool job_mode) {
  EspSource src{args.get("sa"), args.get("engine", "auto"), {}, {}};
  // The offload master runs the first stage's jobs only (chain.hpp: stages): an offload engine
  // for a module in job mode with no header-rewriting module before it.
  bool first_stage = true;
  for (const Module* m : env.earlier) first_stage = first_stage && !(m->contract().sets & field_bit(Field::kParse));
  if (env.offload && first_stage && job_mode) src.offload = env.offload_device == "cpu" ? "cpu.esp" : "cuda.esp";
  if (src.file.empty()) return Status(Errc::kInvalidArgument, "needs sa=FILE (the SA file: docs/ipsec.md)");
  if (!env.tables || !env.tables->load_sas)
    return Status(Errc::kNotSupported, "sa=" + src.file + ": this program cannot load SA files");
  src.load = env.tables->load_sas;
  return src;
}

// Lifetime (RFC 4301 4.4.2.1) of a packet that is the SA's p-th, with b bytes so far: false
// once past the hard limit. Past the soft one the SA should be rekeyed: the first packet there
// (even one the hard limit drops) counts it in the module's soft_expired stat (`ms`, the
// worker's state) and says so on stderr, once per SA (the kernel sends its key manager a soft
// expire then).
void report_soft_expiry(const ipsec::SaSpec& sa, ModuleState* ms, uint64_t p, uint64_t b);
inline __attribute__((always_inline)) bool within_lifetime(const ipsec::SaSpec& sa,
                                                           ipsec::SaState& st, uint64_t p,
                                                           uint64_t b, ModuleState* ms) {
  // The soft limit first: a packet that passes both at once (a byte limit) reports it too.
  if (((sa.soft_packets && p > sa.soft_packets) || (sa.soft_bytes && b > sa.soft_bytes)) &&
      !st.soft_expired.load(std::memory_order_relaxed) &&
      !st.soft_expired.exchange(true, std::memory_order_relaxed)) [[unlikely]]
    report_soft_expiry(sa, ms, p, b);
  return !((sa.hard_packets && p > sa.hard_packets) || (sa.hard_bytes && b > sa.hard_bytes));
}

void report_soft_expiry(const ipsec::SaSpec& sa, ModuleState* ms, uint64_t p, uint64_t b) {
  if (ms && ms->stat_count) ms->stats[0].fetch_add(1, std::memory_order_relaxed);
  std::fprintf(stderr,
               "warpath: %s SA spi 0x%x to %s (%s) reached its soft lifetime at packet %llu, "
               "%llu bytes: rekey it\n",
               sa.dir == ipsec::Dir::kOut ? "outbound" : "inbound", sa.spi,
               ipsec::addr_text(sa.dst).c_str(), sa.where.c_str(),
               static_cast<unsigned long long>(p), static_cast<unsigned long long>(b));
}

class EspModuleBase : public Module {
 public:
  ~EspModuleBase() override { delete image_.load(); }
  ModuleContract contract() const override { return esp_contract(); }
  std::string describe() const override {
    ReadGuard::Section sec(guard_);
    return image_.load(std::memory_order_acquire)->describe;
  }
  std::string engines(Place p) const override {
    ReadGuard::Section sec(guard_);
    const EspTables& t = *image_.load(std::memory_order_acquire);
    if (p == Place::kCpu) return std::string(t.crypto->id());
    return t.offload ? std::string(t.offload->id()) : std::string();
  }

  // Job mode (the module is the first of its chain stage and runs on every packet): pre builds
  // the packets' crypto ops, the shade runs them (the crypto is what the offload master may
  // take to the GPU, gathered over frames: PacketShader's shade), post finishes. Otherwise
  // everything happens in post. An op names its SA by index, and indices are stable across
  // reloads, so whichever image a stage sees serves it.
  // Job mode's pre: the module's work up to the crypto for every packet still undecided, its
  // verdicts kept for post (pre never sets one).
  Status pre(Frame& f, ModuleSlot* slot) const override {
    if (!job_mode_) return Status::ok();
    auto& s = static_cast<EspSlot&>(*slot);
    ReadGuard::Section sec(guard_);
    const EspTables& t_ = image();
    fit(s, t_);
    s.early.clear();
    s.deferring = true;
    collect_frame(t_, f, s);
    s.deferring = false;
    return Status::ok();
  }
  uint32_t job_count() const noexcept override { return job_mode_ ? 1 : 0; }
  // A packet job (module.hpp): each op points at its packet's ESP bytes, which it seals or
  // opens in place; open answers whether the ICV verified, seal answers nothing.
  JobShape job_shape(uint32_t) const override {
    return {1, uint32_t(sizeof(ipsec::CryptoOp)), dir_ == ipsec::Dir::kIn ? 1u : 0u,
            int32_t(offsetof(ipsec::CryptoOp, esp))};
  }
  JobData job_data(Frame&, ModuleSlot* slot, uint32_t) const override {
    auto& s = static_cast<EspSlot&>(*slot);
    {
      ReadGuard::Section sec(guard_);
      const auto& sas = image().db.sas();
      for (uint32_t k = 0; k < s.n_ops; ++k) {
        const ipsec::CryptoOp& op = s.ops[k];
        s.bytes[k] =
            ec::kEspHead + op.text_len + (op.sa < sas.size() ? sas[op.sa].keys.icv_bytes : 0u);
      }
    }
    return {reinterpret_cast<const uint8_t*>(s.ops.data()), 0,
            dir_ == ipsec::Dir::kIn ? s.ok.data() : nullptr, s.n_ops, s.bytes.data()};
  }
  Status run_job(Place p, uint32_t, const JobData& d, ExecContext& ctx) const override {
    const ReadGuard::Scope scope(guard_, ctx.resident ? ctx.keep : nullptr);  // deferred: held
    const EspTables& t = image();
    const ipsec::EspCrypto* engine = p == Place::kCpu ? t.crypto.get() : t.offload.get();
    if (!engine) return Status(Errc::kNotSupported, "no offload ESP engine");
    const Span<const ipsec::CryptoOp> ops{reinterpret_cast<const ipsec::CryptoOp*>(d.keys), d.count};
    if (ctx.resident)
      return dir_ == ipsec::Dir::kIn ? engine->open_resident(ops, d.answers, ctx)
                                     : engine->seal_resident(ops, ctx);
    if (dir_ == ipsec::Dir::kIn) return engine->open(ops, d.answers);
    return engine->seal(ops);
  }
  bool job_resident(uint32_t) const override {
    ReadGuard::Section sec(guard_);
    const EspTables& t = image();
    return t.offload && t.offload->takes_device_memory();
  }
  // Per worker: SAs that reached their soft lifetime here (within_lifetime).
  std::vector<std::string> stat_names() const override { return {"soft_expired"}; }
  Result<std::unique_ptr<ModuleState>> make_state() const override {
    return std::make_unique<ModuleState>(1);
  }
  std::unique_ptr<ModuleSlot> make_slot(uint32_t cap) const override {
    ReadGuard::Section sec(guard_);
    return std::make_unique<EspSlot>(cap, image_.load(std::memory_order_acquire)->db.sas().size());
  }
  // Reads the SA file again and publishes the new SAs and policies between two frames of each
  // worker (a frame sees this module's old image or its new one, never a mix; esp-in and
  // esp-out reload one after the other); an SA with the same direction, SPI, destination and
  // keys keeps its sequence numbers, window and lifetime. On an error the running ones stay.
  Result<std::string> reload() const override {
    std::lock_guard<std::mutex> g(reload_lock_);
    const EspTables* old = image_.load(std::memory_order_acquire);
    WARPATH_ASSIGN_OR_RETURN(auto fresh, build_tables(src_, dir_, old, nullptr));
    const std::string text = fresh->describe;
    image_.store(fresh.release(), std::memory_order_release);
    guard_.synchronize();
    delete old;
    return text;
  }

 protected:
  void reparse(Frame& f, uint32_t i) const {
    const packet::PacketMeta& m = f.batch.meta(i);
    packet::core::parse_packet_into(f.batch.data(i), m.caplen, m.len, f.infos[i]);
  }
  Status add_reasons(BuildEnv& env, std::initializer_list<const char*> names,
                     std::initializer_list<std::string_view> slow = {}) {
    for (const char* n : names) {
      const Verdict v = std::find(slow.begin(), slow.end(), n) != slow.end() ? Verdict::kSlowPath
                                                                             : Verdict::kDrop;
      WARPATH_ASSIGN_OR_RETURN(uint16_t id, env.reasons->add(n, v, env.position));
      ids_.push_back(id);
    }
    return Status::ok();
  }
  Status init(const ModuleArgs& args, BuildEnv& env, ipsec::Dir dir) {
    dir_ = dir;
    // First of its stage (nothing before it in the stage can decide a packet) and on every
    // packet (no when=): pre may do the module's work for all the packets post will see.
    job_mode_ = !args.has("when") &&
                (env.earlier.empty() || (env.earlier.back()->contract().sets & field_bit(Field::kParse)));
    WARPATH_ASSIGN_OR_RETURN(src_, source_of(args, env, job_mode_));
    WARPATH_ASSIGN_OR_RETURN(auto t, build_tables(src_, dir, nullptr, env.warnings));
    image_.store(t.release(), std::memory_order_release);
    return Status::ok();
  }
  // The published image (ReadGuard: a reader holds a Section while it uses it).
  const EspTables& image() const { return *image_.load(std::memory_order_acquire); }
  static void fit(EspSlot& s, const EspTables& t) {  // a reload may have added SAs
    if (s.tally.count.size() < t.db.sas().size()) s.tally = SaTally(t.db.sas().size());
  }

  virtual void collect_frame(const EspTables& t, Frame& f, EspSlot& s) const = 0;

  EspSource src_;
  ipsec::Dir dir_ = ipsec::Dir::kIn;
  bool job_mode_  = false;
  mutable std::atomic<EspTables*> image_{nullptr};
  mutable ReadGuard guard_;
  mutable std::mutex reload_lock_;
  std::vector<uint16_t> ids_;  ///< by the Reason enums below
};

// ----------------------------------------------------------------------------------------- in

enum InReason : uint8_t {
  kInFragment, kInTruncated, kInNoSa, kInExpired, kInReplay, kInAuth, kInPadding, kInDummy,
  kInBadInner, kInPolicy, kInUnprotected, kInCryptoError, kInEcn
};

class EspInModule final : public EspModuleBase {
 public:
  std::string_view kind() const noexcept override { return "esp-in"; }

  static Result<std::unique_ptr<Module>> make(const ModuleArgs& args, BuildEnv& env) {
    auto m = std::make_unique<EspInModule>();
    WARPATH_TRY(m->init(args, env, ipsec::Dir::kIn));
    WARPATH_TRY(m->add_reasons(env, {"fragment", "truncated", "no_sa", "sa_expired", "replay",
                                     "auth_failed", "bad_padding", "dummy", "bad_inner",
                                     "policy_mismatch", "unprotected", "crypto_error", "ecn_not_ect"}));
    return std::unique_ptr<Module>(std::move(m));
  }

  void collect_frame(const EspTables& t_, Frame& f, EspSlot& s) const override {
    collect(t_, f, s, [&f](uint32_t i) { return f.reason[i] == kContinue; }, f.size());
  }

  void post(Frame& f, ModuleSlot* slot, const Selection& sel) const override {
    auto& s = static_cast<EspSlot&>(*slot);
    ReadGuard::Section sec(guard_);
    const EspTables& t_ = image();
    fit(s, t_);
    if (job_mode_) {
      for (const auto& [i, r] : s.early) f.reason[i] = r;
    } else {
      collect(t_, f, s, [](uint32_t) { return true; }, sel.list.size, sel.list.data);
      if (s.n_ops && !t_.crypto->open({s.ops.data(), s.n_ops}, s.ok.data()).is_ok()) {
        for (uint32_t k = 0; k < s.n_ops; ++k) f.reason[s.index[k]] = ids_[kInCryptoError];
        return;
      }
    }
    finish(t_, f, s);
  }

 private:
  // Pass 1 over candidates (list[k], or k itself without a list): the checks before the ICV,
  // and one crypto op for each packet that passes them.
  template <class Take>
  void collect(const EspTables& t_, Frame& f, EspSlot& s, Take take, uint32_t count,
               const uint32_t* list = nullptr) const {
    uint32_t n = 0;
    SaLockRun locks;
    for (uint32_t k = 0; k < count; ++k) {
      const uint32_t i      = list ? list[k] : k;
      if (!take(i)) continue;
      const PacketInfo& in  = f.infos[i];
      if (!ip_readable(in)) {
        // Addresses without a readable upper layer (opaque_upper) are no ESP that can be
        // opened: plaintext, refused where an `in` policy covers it.
        if (opaque_upper(in) && in_policy_covers(t_, in)) s.decide(f, i, ids_[kInUnprotected]);
        continue;
      }
      const uint8_t family  = family_of(in);
      const bool esp        = in.proto == ec::kProtoEsp;
      if (!esp || !t_.db.is_local(family, in.dst)) {
        // Plaintext that an `in` policy covers should have come through its tunnel.
        if (in_policy_covers(t_, in)) s.decide(f, i, ids_[kInUnprotected]);
        continue;
      }
      if (in.flags & packet::kFragment) {  // RFC 4303 3.4.1: reassemble first (the defrag module)
        s.decide(f, i, ids_[kInFragment]);
        continue;
      }
      uint8_t* p                  = f.batch.data(i);
      const packet::PacketMeta& m = f.batch.meta(i);
      const uint32_t l3 = in.l3_offset, l4 = in.l4_offset;
      const uint32_t end = l3 + ip_length(p + l3, in.ip_version);
      if (l4 == 0 || end > m.caplen || end < l4 + ec::kEspHead) {
        s.decide(f, i, ids_[kInTruncated]);
        continue;
      }
      uint8_t* e        = p + l4;
      const int32_t sa  = t_.db.find_inbound(ec::load_be32(e), family, in.dst);
      if (sa < 0) {
        s.decide(f, i, ids_[kInNoSa]);
        continue;
      }
      const ipsec::SaSpec& spec = t_.db.sas()[size_t(sa)];
      const uint32_t esp_len    = end - l4;
      if (esp_len < ec::kEspHead + 4 + spec.keys.icv_bytes ||
          (esp_len - ec::kEspHead - spec.keys.icv_bytes) % 4 != 0) {
        s.decide(f, i, ids_[kInTruncated]);
        continue;
      }
      ipsec::SaState& st = *t_.states[size_t(sa)];
      locks.hold(st);
      const uint64_t seq = ec::infer_seq(st.top, spec.replay_window, spec.keys.esn, ec::load_be32(e + 4));
      if (ec::replay_check(st.top, st.bitmap, spec.replay_window, seq) != ec::ReplayCheck::kOk) {
        s.decide(f, i, ids_[kInReplay]);
        continue;
      }
      s.ops[n]   = {e, esp_len - ec::kEspHead - spec.keys.icv_bytes, uint32_t(sa), uint32_t(seq >> 32)};
      s.seq[n]   = seq;
      s.index[n] = i;
      ++n;
    }
    s.n_ops = n;
  }

  // After the crypto: the window, lifetime, padding, decapsulation and policy of each op.
  void finish(const EspTables& t_, Frame& f, EspSlot& s) const {
    SaLockRun locks;
    for (uint32_t k = 0; k < s.n_ops; ++k) finish_one(t_, f, s, k, locks);
    locks.release();
    for (uint32_t sa : s.tally.touched) {  // the lifetime counts, once per SA and frame
      t_.states[sa]->packets.fetch_add(s.tally.count[sa], std::memory_order_relaxed);
      t_.states[sa]->bytes.fetch_add(s.tally.bytes[sa], std::memory_order_relaxed);
    }
    s.tally.clear();
    s.n_ops = 0;
  }

  void finish_one(const EspTables& t_, Frame& f, EspSlot& s, uint32_t k, SaLockRun& locks) const {
    const uint32_t i          = s.index[k];
    const ipsec::CryptoOp& op = s.ops[k];
    const ipsec::SaSpec& spec = t_.db.sas()[op.sa];
    ipsec::SaState& st        = *t_.states[op.sa];
    uint16_t& reason          = f.reason[i];
    if (!s.ok[k]) {
      reason = ids_[kInAuth];
      return;
    }
    // The window moves only for authenticated packets, checked again under the lock (another
    // worker may have taken the same number since).
    locks.hold(st);
    if (ec::replay_check(st.top, st.bitmap, spec.replay_window, s.seq[k]) != ec::ReplayCheck::kOk) {
      reason = ids_[kInReplay];
      return;
    }
    ec::replay_update(st.top, st.bitmap, spec.replay_window, s.seq[k]);
    SaTally& t = s.tally;
    t.add(op.sa, op.text_len);
    if (!within_lifetime(spec, st, st.packets.load(std::memory_order_relaxed) + t.count[op.sa],
                         st.bytes.load(std::memory_order_relaxed) + t.bytes[op.sa], s.state)) {
      reason = ids_[kInExpired];
      return;
    }
    uint8_t* text = op.esp + ec::kEspHead;
    uint32_t inner_len = 0;
    uint8_t next       = 0;
    if (!ec::read_trailer(text, op.text_len, inner_len, next)) {
      reason = ids_[kInPadding];
      return;
    }
    if (next == ec::kNextNone) {
      reason = ids_[kInDummy];
      return;
    }
    const uint8_t version = next == ec::kNextIpv4 ? 4 : next == ec::kNextIpv6 ? 6 : 0;
    const uint32_t min_ip = version == 4 ? 20u : 40u;
    if (version == 0 || inner_len < min_ip || (text[0] >> 4) != version ||
        ip_length(text, version) > inner_len || ip_length(text, version) < min_ip) {
      reason = ids_[kInBadInner];
      return;
    }
    inner_len = ip_length(text, version);
    const uint8_t outer_tos = f.infos[i].tos;  // the outer header's, before it goes
    // Decapsulate: the L2 header moves up to just before the inner packet.
    uint8_t* p                = f.batch.data(i);
    packet::PacketMeta& m     = f.batch.meta(i);
    const uint32_t l3         = f.infos[i].l3_offset;
    const uint32_t delta      = uint32_t(text - p) - l3;
    move_link_header(p + delta, p, l3);
    m.offset += delta;
    m.caplen = m.len = l3 + inner_len;
    set_ethertype(f.batch.data(i), l3, version);
    reparse(f, i);
    const PacketInfo& in = f.infos[i];
    // The whole inner packet is here, so a truncated one is malformed; one the router could
    // not read is too. (A broken transport header is the router's business, as for any packet.)
    if (!ip_readable(in) || in.status == packet::ParseStatus::kTruncated) {
      reason = ids_[kInBadInner];
      return;
    }
    // RFC 6040 4.2 (Figure 4): congestion marked on the tunnel reaches the inner header, and
    // a Not-ECT inner packet with CE outside is dropped; ECT(1) outside turns an ECT(0) inner
    // packet into ECT(1). Every other pair leaves the inner header as it is.
    const uint8_t outer_ecn = outer_tos & 3;
    if (outer_ecn == 3 || outer_ecn == 1) {
      uint8_t* ip = f.batch.data(i) + in.l3_offset;
      const uint8_t inner_ecn = version == 4 ? ip[1] & 3 : (ip[1] >> 4) & 3;
      if (outer_ecn == 3 && inner_ecn == 0) {
        reason = ids_[kInEcn];
        return;
      }
      const uint8_t ecn = outer_ecn == 3 ? 3 : inner_ecn == 2 ? 1 : inner_ecn;
      if (ecn != inner_ecn) {
        if (version == 4) {
          const uint16_t old_word = ec::load_be16(ip);
          ip[1]                   = uint8_t((ip[1] & ~3u) | ecn);
          const uint16_t sum = forward::core::checksum_update16(ec::load_be16(ip + 10), old_word, ec::load_be16(ip));
          ec::store_be16(ip + 10, sum);
        } else {
          ip[1] = uint8_t((ip[1] & ~0x30u) | unsigned(ecn) << 4);
        }
        // The parse result's TOS / traffic class, as the bytes now say.
        f.infos[i].tos = uint8_t((f.infos[i].tos & ~3u) | ecn);
      }
    }
    if (!t_.db.admits_in(int32_t(op.sa), version, in.src, in.dst, in.proto, sport_of(in), dport_of(in),
                         ports_known(in)))
      reason = ids_[kInPolicy];
  }
};

// ---------------------------------------------------------------------------------------- out

enum OutReason : uint8_t {
  kOutTruncated, kOutTtl, kOutTooBig, kOutNoRoom, kOutOverflow, kOutExpired, kOutCryptoError,
  kOutPortsUnknown
};

class EspOutModule final : public EspModuleBase {
 public:
  std::string_view kind() const noexcept override { return "esp-out"; }
  uint32_t headroom() const noexcept override { return 40 + ec::kEspHead; }

  // RFC 4301 8.2 / RFC 1191 / RFC 4443 3.2: a packet too big for its tunnel gets ICMP
  // Fragmentation Needed (IPv4 with DF) or ICMPv6 Packet Too Big back, with the largest inner
  // packet the tunnel carries, from the SA's local address and the MAC the packet was sent
  // to. (IPv4 without DF is fragmented after encapsulation instead: fits(); those that are
  // too big even so are only counted.) One whose TTL or hop limit ran out here gets ICMP Time
  // Exceeded (RFC 1812 5.3.1, RFC 4443 3.3), as the router sends for the packets it forwards,
  // from the same address. (No address of the packet's family on the SA: counted, no ICMP.)
  int32_t reply(const Frame& f, uint32_t i, uint8_t* out) const override {
    const bool ttl = f.reason[i] == ids_[kOutTtl];
    if (!ttl && f.reason[i] != ids_[kOutTooBig]) return -1;
    ReadGuard::Section sec(guard_);
    const EspTables& t_ = image();
    const PacketInfo& in     = f.infos[i];
    const uint8_t* frame     = f.batch.data(i);
    const uint8_t* ip        = frame + in.l3_offset;
    int32_t sa               = -1;
    const uint8_t family     = family_of(in);
    if (out_policy(t_, in, &sa) < 0) return -1;
    const ipsec::SaSpec& spec = t_.db.sas()[size_t(sa)];
    if (!ttl && family == 4 && !(ip[6] & 0x40)) return -1;
    if (spec.src.family != family) return 0;  // no local address of the packet's family
    const uint32_t outer_hdr = spec.dst.family == 4 ? 20 : 40;
    const uint32_t avail     = spec.mtu - outer_hdr - ec::kEspHead - spec.keys.icv_bytes;
    uint32_t mtu             = (avail & ~3u) - 2;  // the text is 4-aligned and ends with 2 bytes
    if (family == 6 && mtu < 1280) mtu = 1280;     // RFC 8201: never below IPv6's minimum
    forward::Mac mac{};
    std::memcpy(mac.data(), frame, 6);  // the packet was sent to us: our MAC on that link
    std::array<uint8_t, 16> src6{};
    std::memcpy(src6.data(), spec.src.bytes.data(), 16);
    const forward::IcmpError e  = ttl ? forward::IcmpError{11, 0, 3, 0, 0, 0}
                                      : forward::IcmpError{3, 4, 2, 0, mtu & 0xffff, mtu};
    const packet::PacketMeta& m = f.batch.meta(i);
    return int32_t(forward::build_icmp_error(frame, m.caplen, in, mac, ec::load_be32(spec.src.bytes.data()), src6, e, out));
  }

  static Result<std::unique_ptr<Module>> make(const ModuleArgs& args, BuildEnv& env) {
    auto m = std::make_unique<EspOutModule>();
    WARPATH_TRY(m->init(args, env, ipsec::Dir::kOut));
    // too_big and ttl_expired go to the slow path, which answers with ICMP (reply below).
    WARPATH_TRY(m->add_reasons(env,
                               {"truncated", "ttl_expired", "too_big", "no_room", "seq_overflow",
                                "sa_expired", "crypto_error", "ports_unknown"},
                               {"too_big", "ttl_expired"}));
    return std::unique_ptr<Module>(std::move(m));
  }

  void collect_frame(const EspTables& t_, Frame& f, EspSlot& s) const override {
    collect(t_, f, s, [&f](uint32_t i) { return f.reason[i] == kContinue; }, f.size());
  }

  void post(Frame& f, ModuleSlot* slot, const Selection& sel) const override {
    auto& s = static_cast<EspSlot&>(*slot);
    if (job_mode_) {  // encapsulated in pre, sealed by the shade
      for (const auto& [i, r] : s.early) f.reason[i] = r;
      s.n_ops = 0;
      return;
    }
    ReadGuard::Section sec(guard_);
    const EspTables& t_ = image();
    fit(s, t_);
    collect(t_, f, s, [](uint32_t) { return true; }, sel.list.size, sel.list.data);
    if (s.n_ops && !t_.crypto->seal({s.ops.data(), s.n_ops}).is_ok())
      for (uint32_t k = 0; k < s.n_ops; ++k) f.reason[s.index[k]] = ids_[kOutCryptoError];
    s.n_ops = 0;
  }

 private:
  // Everything but the crypto for the candidates (list[k], or k itself without a list): the
  // policy, the checks, sequence numbers reserved once per SA, the tunnel packet built around
  // each; one seal op each in s.ops[0, s.n_ops).
  template <class Take>
  void collect(const EspTables& t_, Frame& f, EspSlot& s, Take take, uint32_t count,
               const uint32_t* list = nullptr) const {
    uint32_t n = 0;
    s.n_ops    = 0;
    for (uint32_t k = 0; k < count; ++k) {
      const uint32_t i     = list ? list[k] : k;
      if (!take(i)) continue;
      const PacketInfo& in = f.infos[i];
      if (!ip_readable(in) && !opaque_upper(in)) continue;  // the router drops it
      int32_t sa        = -1;
      const int32_t pol = out_policy(t_, in, &sa);
      if (pol == ipsec::SaDatabase::kPortsUnknown) {  // a later fragment under a policy with
        s.decide(f, i, ids_[kOutPortsUnknown]);       // ports (defragment first), or an OPAQUE
        continue;                                     // packet under one naming a protocol:
      }                                               // never in the clear
      if (pol < 0) continue;  // no policy: bypass
      const uint32_t text = fits(t_, f, s, i, uint32_t(sa));
      if (!text) continue;
      s.ops[n].sa = uint32_t(sa);
      s.index[n]  = i;
      s.tally.add(uint32_t(sa), text);
      ++n;
    }
    if (n == 0) return;
    // Sequence numbers and lifetime counts, reserved once per SA for the frame's packets.
    for (uint32_t sa : s.tally.touched) {
      ipsec::SaState& st = *t_.states[sa];
      SaTally& t         = s.tally;
      t.next[sa]         = st.oseq.fetch_add(t.count[sa], std::memory_order_relaxed);
      t.packets[sa]      = st.packets.fetch_add(t.count[sa], std::memory_order_relaxed);
      t.total[sa]        = st.bytes.fetch_add(t.bytes[sa], std::memory_order_relaxed);
      if (t_.ids[sa]) t.id[sa] = t_.ids[sa]->fetch_add(t.count[sa], std::memory_order_relaxed);
      const ipsec::SaSpec& spec = t_.db.sas()[sa];
      t.careful[sa] =
          (!spec.keys.esn && t.next[sa] + t.count[sa] > 0xFFFFFFFFull) ||
          !within_all_limits(spec, st, t.packets[sa] + t.count[sa], t.total[sa] + t.bytes[sa]);
    }
    s.tally.clear();
    uint32_t kept = 0;
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t i = s.index[k];
      if (!encapsulate(t_, f, s, i, s.ops[k].sa, s.ops[kept])) continue;
      s.index[kept++] = i;
    }
    s.n_ops = kept;
  }

  // The bytes the outer headers take in front of the packet when its headroom has them (then
  // only the link-layer header moves), else 0 (the packet moves up instead).
  static uint32_t front(const Frame& f, uint32_t i, uint32_t outer_hdr) {
    const uint32_t prepend = outer_hdr + ec::kEspHead;
    return f.batch.headroom(i) >= prepend ? prepend : 0;
  }

  // Can packet i be encapsulated for SA `sa`? Its text length if so; else 0, with its
  // reason set.
  __attribute__((always_inline)) uint32_t fits(const EspTables& t_, Frame& f, EspSlot& s,
                                               uint32_t i, uint32_t sa) const {
    const PacketInfo& in      = f.infos[i];
    const ipsec::SaSpec& spec = t_.db.sas()[sa];
    const uint32_t l3         = in.l3_offset;
    const uint8_t* ip         = f.batch.data(i) + l3;
    const uint32_t inner_len  = ip_length(ip, in.ip_version);
    if (l3 + inner_len > f.batch.meta(i).caplen) {
      s.decide(f, i, ids_[kOutTruncated]);
      return 0;
    }
    if (ip[in.ip_version == 4 ? 8 : 7] <= 1) {
      s.decide(f, i, ids_[kOutTtl]);
      return 0;
    }
    const uint32_t outer_hdr = spec.dst.family == 4 ? 20 : 40;
    const uint32_t text_len  = ec::text_bytes(inner_len);
    const uint32_t outer_len = outer_hdr + ec::kEspHead + text_len + spec.keys.icv_bytes;
    if (outer_len > spec.mtu) {
      // RFC 4301 8.1: an IPv4 packet without DF is encapsulated anyway and its tunnel packet
      // leaves in fragments (the worker's output, frame.hpp's frag_mtu), as the kernel sends
      // it; one with DF, or IPv6, gets ICMP back (reply below). Past the outer header's
      // 16-bit length nothing fits.
      const bool df = in.ip_version != 4 || (ip[6] & 0x40);
      if (df || outer_len - (outer_hdr == 40 ? 40 : 0) > 65535) {
        s.decide(f, i, ids_[kOutTooBig]);
        return 0;
      }
      f.frag_mtu[i] = spec.mtu;
    }
    if (l3 + outer_len > f.batch.room(i) + front(f, i, outer_hdr)) {
      s.decide(f, i, ids_[kOutNoRoom]);
      return 0;
    }
    return text_len;
  }

  // Builds the tunnel packet around packet i (all but the crypto), with the SA's next
  // sequence number from the frame's reservation; false when it was dropped.
  __attribute__((always_inline)) bool encapsulate(const EspTables& t_, Frame& f, EspSlot& s,
                                                  uint32_t i, uint32_t sa,
                                                  ipsec::CryptoOp& op) const {
    SaTally& t                = s.tally;
    const PacketInfo& in      = f.infos[i];
    const ipsec::SaSpec& spec = t_.db.sas()[sa];
    uint8_t* p                = f.batch.data(i);
    packet::PacketMeta& m     = f.batch.meta(i);
    const uint32_t l3         = in.l3_offset;
    uint8_t* ip               = p + l3;
    const uint32_t inner_len  = ip_length(ip, in.ip_version);
    const uint32_t outer_hdr  = spec.dst.family == 4 ? 20 : 40;
    const uint32_t text_len   = ec::text_bytes(inner_len);
    const uint32_t outer_len  = outer_hdr + ec::kEspHead + text_len + spec.keys.icv_bytes;
    const uint64_t seq        = ++t.next[sa];
    if (t.careful[sa]) [[unlikely]] {  // this frame may cross a limit: each packet checks
      t.total[sa] += text_len;
      if (!spec.keys.esn && seq > 0xFFFFFFFFull) {  // RFC 4303 3.3.3: never cycle; rekey
        s.decide(f, i, ids_[kOutOverflow]);
        return false;
      }
      if (!within_lifetime(spec, *t_.states[sa], ++t.packets[sa], t.total[sa], s.state)) {
        s.decide(f, i, ids_[kOutExpired]);
        return false;
      }
    }
    const uint8_t tos = in.ip_version == 4 ? ip[1] : uint8_t(ec::load_be16(ip) >> 4);
    const bool df     = in.ip_version == 4 && (ip[6] & 0x40);
    if (const uint32_t prepend = front(f, i, outer_hdr)) {
      // Into the headroom: the link-layer header moves down, the inner packet stays.
      move_link_header(p - prepend, p, l3);
      m.offset -= prepend;
      p  = f.batch.data(i);
      ip = p + l3;
    } else {
      std::memmove(ip + outer_hdr + ec::kEspHead, ip, inner_len);
    }
    uint8_t* esp  = ip + outer_hdr;
    uint8_t* text = esp + ec::kEspHead;  // the inner packet, wherever it was moved
    // The inner packet is forwarded by this gateway, so its TTL / hop limit drops by one
    // (after the moves: the link-layer header's 16-byte copy must not read these stores back).
    if (in.ip_version == 4)
      forward::core::decrement_ttl4(text);
    else
      forward::core::decrement_hop_limit6(text);
    ec::write_trailer(text, inner_len, in.ip_version == 4 ? ec::kNextIpv4 : ec::kNextIpv6);
    ec::write_esp_header(esp, spec.spi, seq);
    const OuterTemplate& tmpl = t_.outer[sa];
    ec::write_outer(ip, tmpl.header, outer_len, tos, df, uint16_t(t.id[sa]++));
    set_ethertype(p, l3, spec.dst.family);
    m.caplen = m.len = l3 + outer_len;
    op = {esp, text_len, sa, uint32_t(seq >> 32)};
    tmpl.set_info(f.infos[i], tos, outer_hdr);
    return true;
  }
};

std::vector<ArgInfo> esp_args() {
  return {
      {"sa", "", "SA file: [[sa]] and [[policy]] tables with ip xfrm's fields (docs/ipsec.md)",
       ArgFile::kInput},
      {"engine", "auto",
       "ESP crypto engine: auto, cpu.esp (intel-ipsec-mb), ref.esp (OpenSSL), validate:cpu.esp"},
  };
}

}  // namespace

ModuleInfo esp_in_module_info() {
  ModuleInfo i;
  i.kind    = "esp-in";
  i.summary = "IPsec ESP inbound: decapsulates tunnel-mode ESP for local SAs (ICV, anti-replay, policy)";
  i.args    = esp_args();
  i.contract = esp_contract();
  i.make    = EspInModule::make;
  return i;
}

WARPATH_REGISTER_MODULE(esp_in_module_info);

ModuleInfo esp_out_module_info() {
  ModuleInfo i;
  i.kind    = "esp-out";
  i.summary = "IPsec ESP outbound: encapsulates what an out policy selects (tunnel mode, sealed)";
  i.args    = esp_args();
  i.contract = esp_contract();
  i.make    = EspOutModule::make;
  return i;
}

WARPATH_REGISTER_MODULE(esp_out_module_info);

}  // namespace warpath::runtime
