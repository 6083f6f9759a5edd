// The flow engine registry (the only list of flow engines), names, the configuration check and
// the validating wrapper (include/warpath/flow/flow.hpp).
#include <cstdio>
#include <string>

#include "core/engine_table.hpp"
#include "core/validating.hpp"
#include "flow/engines.hpp"
#include "warpath/core/registry.hpp"
#include "warpath/flow/conversations.hpp"
#include "warpath/flow/flow.hpp"

namespace warpath::flow {
namespace {

template <size_t N>
const char* name_of(const char* const (&names)[N], unsigned i) {
  return i < N ? names[i] : "?";
}

std::string describe(const PacketFlow& a) {
  char text[96];
  std::snprintf(text, sizeof text, "%s serial %llu dir %u%s", track_name(a.track),
                static_cast<unsigned long long>(a.serial), a.dir, a.created ? " (new)" : "");
  return text;
}

std::string describe(const FlowRecord& r) {
  char text[160];
  std::snprintf(text, sizeof text, "flow %llu proto %u %u->%u packets %llu/%llu %s %s end %s",
                static_cast<unsigned long long>(r.serial), r.proto, r.sport, r.dport,
                static_cast<unsigned long long>(r.packets[0]),
                static_cast<unsigned long long>(r.packets[1]), flow_state_name(r.state),
                tcp_state_name(r.tcp), flow_end_name(r.end));
  return text;
}

// Runs an engine and ref.flow side by side; fails on the first difference in a packet's
// answer, an ended flow or the counters.
class ValidatingTracker final : public ValidatingPair<FlowTracker> {
 public:
  ValidatingTracker(std::unique_ptr<FlowTracker> engine, const FlowConfig& config)
      : ValidatingPair(std::move(engine), detail::make_ref_tracker(config), "ref.flow") {}
  const FlowConfig& config() const noexcept override { return engine_->config(); }
  FlowCounters counters() const override { return engine_->counters(); }
  Status advance(uint64_t now_ns, std::vector<FlowRecord>& ended) override {
    std::vector<FlowRecord> want;
    const size_t before = ended.size();
    WARPATH_TRY(engine_->advance(now_ns, ended));
    WARPATH_TRY(ref_->advance(now_ns, want));
    return compare(ended, before, want);
  }
  Status flush(std::vector<FlowRecord>& ended) override {
    std::vector<FlowRecord> want;
    const size_t before = ended.size();
    WARPATH_TRY(engine_->flush(ended));
    WARPATH_TRY(ref_->flush(want));
    return compare(ended, before, want);
  }

 protected:
  Status do_track(Span<const packet::PacketInfo> infos, Span<const packet::PacketMeta> metas,
                  Span<PacketFlow> out, std::vector<FlowRecord>& ended) override {
    const size_t before = ended.size();
    WARPATH_TRY(engine_->track(infos, metas, out, ended));
    std::vector<PacketFlow> want(infos.size);
    std::vector<FlowRecord> want_ended;
    WARPATH_TRY(ref_->track(infos, metas, {want.data(), infos.size}, want_ended));
    WARPATH_TRY(first_difference(
        infos.size, "packet",
        [&](uint32_t i) {
          const PacketFlow &a = out[i], &b = want[i];
          return a.serial == b.serial && a.dir == b.dir && a.track == b.track &&
                 a.created == b.created;
        },
        [&](uint32_t i) { return ": " + describe(out[i]) + ", reference " + describe(want[i]); }));
    return compare(ended, before, want_ended);
  }

 private:
  // The flows ended since `from` and the counters, against the reference's.
  Status compare(const std::vector<FlowRecord>& got, size_t from,
                 const std::vector<FlowRecord>& want) const {
    WARPATH_TRY(same_records(got, from, want, "ended flows",
                             [](const FlowRecord& r) { return describe(r); }));
    return same_counters(engine_->counters(), ref_->counters());
  }
};

}  // namespace

const char* proto_class_name(ProtoClass c) noexcept {
  static const char* const kNames[] = {"tcp", "udp", "icmp", "other"};
  return name_of(kNames, unsigned(c));
}
const char* flow_state_name(FlowState s) noexcept {
  static const char* const kNames[] = {"new", "established", "closed"};
  return name_of(kNames, unsigned(s));
}
const char* tcp_state_name(TcpState s) noexcept {
  static const char* const kNames[] = {"-",         "syn_sent", "syn_received", "established",
                                       "midstream", "fin_wait", "closed",       "reset"};
  return name_of(kNames, unsigned(s));
}
const char* flow_end_name(FlowEnd e) noexcept {
  static const char* const kNames[] = {"timeout", "evicted", "reused", "shutdown"};
  return name_of(kNames, unsigned(e));
}
const char* track_name(Track t) noexcept {
  static const char* const kNames[] = {"tracked",   "not_ip",       "fragment",
                                       "malformed", "full_dropped", "full_passed"};
  return name_of(kNames, unsigned(t));
}
const char* on_full_name(OnFull o) noexcept {
  static const char* const kNames[] = {"evict", "drop", "pass"};
  return name_of(kNames, unsigned(o));
}
Result<OnFull> parse_on_full(std::string_view text) {
  if (text == "evict") return OnFull::kEvict;
  if (text == "drop") return OnFull::kDrop;
  if (text == "pass") return OnFull::kPass;
  return Status(Errc::kInvalidArgument,
                "on_full '" + std::string(text) + "': expected evict, drop or pass");
}

Status FlowConfig::validate() const {
  if (capacity < 1 || capacity > (1u << 26))
    return Status(Errc::kInvalidArgument,
                  "flow table capacity " + std::to_string(capacity) + ": expected 1..67108864");
  for (unsigned c = 0; c < unsigned(ProtoClass::kCount); ++c)
    for (unsigned s = 0; s < unsigned(FlowState::kCount); ++s) {
      const std::string what = std::string(proto_class_name(ProtoClass(c))) + " " +
                               flow_state_name(FlowState(s)) + " timeout";
      const uint32_t t = timeout_s[c][s], e = emergency_timeout_s[c][s];
      if (t < 1 || t > (1u << 31))
        return Status(Errc::kInvalidArgument,
                      what + " " + std::to_string(t) + " s: expected 1..2147483648");
      if (e < 1 || e > t)
        return Status(Errc::kInvalidArgument, "emergency " + what + " " + std::to_string(e) +
                                                  " s: expected 1.." + std::to_string(t) +
                                                  " (not above the normal one)");
    }
  if (emergency_recovery_percent < 1 || emergency_recovery_percent > 99)
    return Status(Errc::kInvalidArgument, "emergency recovery " +
                                              std::to_string(emergency_recovery_percent) +
                                              "%: expected 1..99");
  return Status::ok();
}

namespace {

using TrackerTable = EngineTable<FlowTracker(const FlowConfig&)>;

const TrackerTable& engine_table() {
  static const TrackerTable table(
      "flow",
      {
          {{"ref.flow", "ordered map, linear expiry scans (the oracle)", 0, engine_always},
           [](const FlowConfig& c) -> TrackerTable::Made { return detail::make_ref_tracker(c); }},
          {{"cpu.flow", "chained hash, prefetching batch loop, timeout lists per class", 10,
            engine_always},
           [](const FlowConfig& c) -> TrackerTable::Made { return detail::make_cpu_tracker(c); }},
#if defined(WARPATH_HAVE_CUDA)
          {{"cuda.flow",
            "the batch keyed and hashed on the GPU (GASPP), the policy on cpu.flow's table", 5,
            cuda_engine_available},
           [](const FlowConfig& c) { return detail::make_cuda_tracker(c); }},
#endif
      },
      &TrackerTable::wrap<ValidatingTracker>);
  return table;
}

}  // namespace

std::vector<EngineInfo> flow_engines() { return engine_table().infos(); }

Result<std::unique_ptr<FlowTracker>> make_flow_tracker(std::string_view requested,
                                                       const FlowConfig& config) {
  WARPATH_TRY(config.validate());
  return engine_table().make(requested, config);
}

// The family in `warpath info` and `warpath selftest` (core/registry.hpp).
WARPATH_REGISTER_ENGINE_FAMILY(flow, "flow", 50, &flow_engines, &check_flow_engine);

}  // namespace warpath::flow
