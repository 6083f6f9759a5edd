// src/ipsec/gateway.cpp: the ESP gateway's tables (gateway.hpp).
#include "ipsec/gateway.hpp"

#include <random>
#include <utility>

namespace warpath::ipsec {
namespace {

// The tunnel packet's outer header and what the parser says of it, for SA `spec`.
OuterTemplate outer_template(const SaSpec& spec) {
  OuterTemplate t{};
  const bool v4 = spec.dst.family == 4;
  t.header      = core::outer_header(v4, spec.src.bytes.data(), spec.dst.bytes.data());
  PacketInfo& o = t.info;
  o.status      = packet::ParseStatus::kOk;
  o.l3          = v4 ? packet::L3::kIpv4 : packet::L3::kIpv6;
  o.ip_version  = v4 ? 4 : 6;
  o.ethertype   = v4 ? net::kEthIpv4 : net::kEthIpv6;
  o.ttl         = core::kOuterTtl;
  o.proto       = core::kProtoEsp;
  o.fields      = packet::kFieldsAll;
  std::memcpy(o.src, spec.src.bytes.data(), v4 ? 4 : 16);
  std::memcpy(o.dst, spec.dst.bytes.data(), v4 ? 4 : 16);
  return t;
}

// A fresh window as the file says: replay_seq and the window below it count as received.
void init_window(SaState& st, const SaSpec& sa) {
  st.top = sa.replay_seq;
  st.bitmap.assign(sa.replay_window ? (sa.replay_window + 63) / 64 : 0, sa.replay_seq ? ~uint64_t(0) : 0);
}

}  // namespace

Result<std::unique_ptr<EspTables>> build_gateway_tables(SaConfig config, const std::string& file,
                                                        const std::string& engine,
                                                        const std::string& offload, Dir dir,
                                                        const EspTables* previous,
                                                        std::vector<std::string>* warnings) {
  auto made  = std::make_unique<EspTables>();
  EspTables& t = *made;
  WARPATH_ASSIGN_OR_RETURN(t.db, SaDatabase::build(std::move(config), previous ? &previous->db : nullptr));
  const std::vector<SaKeys> keys = t.db.keys();
  WARPATH_ASSIGN_OR_RETURN(t.crypto, make_esp_crypto(engine, {keys.data(), uint32_t(keys.size())}));
  if (!offload.empty()) {
    WARPATH_ASSIGN_OR_RETURN(t.offload, make_esp_crypto(offload, {keys.data(), uint32_t(keys.size())}));
  }
  for (size_t s = 0; s < keys.size(); ++s) {
    const SaSpec& sa = t.db.sas()[s];
    // Indices are stable across reloads (SaDatabase::build): the same index is the same SA, and
    // its state (sequence numbers, replay window, lifetime) goes on.
    std::shared_ptr<SaState> kept = previous && s < previous->states.size() ? previous->states[s] : nullptr;
    if (kept && t.db.active(s)) {
      // The counter never goes back (a file's replay_oseq may move it on); a window that
      // grew counts its new part as received (fail closed).
      uint64_t o = kept->oseq.load(std::memory_order_relaxed);
      while (o < sa.replay_oseq && !kept->oseq.compare_exchange_weak(o, sa.replay_oseq)) {
      }
      std::lock_guard<std::mutex> g(kept->lock);
      kept->bitmap.resize(sa.replay_window ? (sa.replay_window + 63) / 64 : 0, ~uint64_t(0));
    } else if (!kept) {
      kept = std::make_shared<SaState>();
      kept->oseq.store(sa.replay_oseq, std::memory_order_relaxed);
      init_window(*kept, sa);
    }
    t.states.push_back(std::move(kept));
    t.outer.push_back(outer_template(sa));
  }
  // The outer IPv4 ID counters: those of the previous tables by endpoint pair, else new.
  auto pair_of = [](const SaSpec& sa) {
    uint64_t k = 0;
    for (int b = 0; b < 4; ++b) k = k << 8 | sa.src.bytes[size_t(b)];
    for (int b = 0; b < 4; ++b) k = k << 8 | sa.dst.bytes[size_t(b)];
    return k;
  };
  auto v4_out = [](const SaSpec& sa) {
    return sa.dir == Dir::kOut && sa.dst.family == 4;
  };
  std::vector<std::pair<uint64_t, std::shared_ptr<std::atomic<uint32_t>>>> counters;
  auto counter_for = [&](uint64_t pair) -> std::shared_ptr<std::atomic<uint32_t>>& {
    for (auto& c : counters)
      if (c.first == pair) return c.second;
    counters.emplace_back(pair, nullptr);
    return counters.back().second;
  };
  if (previous)
    for (size_t s = 0; s < previous->ids.size() && s < previous->db.sas().size(); ++s)
      if (previous->ids[s]) counter_for(pair_of(previous->db.sas()[s])) = previous->ids[s];
  std::random_device seed;
  t.ids.resize(keys.size());
  for (size_t s = 0; s < keys.size(); ++s) {
    const SaSpec& sa = t.db.sas()[s];
    if (!v4_out(sa)) continue;
    auto& c = counter_for(pair_of(sa));
    if (!c) c = std::make_shared<std::atomic<uint32_t>>(seed());
    t.ids[s] = c;
  }
  const size_t n = dir == Dir::kIn ? t.db.inbound_count() : t.db.outbound_count();
  t.describe     = file + " (" + std::to_string(n) + (dir == Dir::kIn ? " inbound" : " outbound") +
               " SAs of " + std::to_string(t.db.inbound_count() + t.db.outbound_count()) + ", " +
               std::to_string(t.db.policies().size()) + " policies) on " + std::string(t.crypto->id());
  if (warnings && n == 0)
    warnings->push_back(std::string("no ") + (dir == Dir::kIn ? "inbound" : "outbound") +
                        " SA: every packet passes through");
  return made;
}

}  // namespace warpath::ipsec
