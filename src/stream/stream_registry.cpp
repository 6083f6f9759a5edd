// The reassembly engine registry (the only list of reassembly engines), policy names, the
// configuration check, the validating wrapper and the self-test's check
// (include/warpath/stream/stream.hpp).
#include <algorithm>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "core/engine_table.hpp"
#include "core/validating.hpp"
#include "stream/engines.hpp"
#include "stream/recorded_chunk.hpp"
#include "warpath/core/registry.hpp"
#include "warpath/net/addr_text.hpp"
#include "warpath/stream/generate.hpp"
#include "warpath/stream/stream.hpp"

namespace warpath::stream {
namespace {

constexpr const char* kPolicyNames[] = {"first", "last",    "bsd",   "linux",
                                        "old-linux", "solaris", "vista", "windows"};

// An engine and ref.stream side by side; fails on the first difference in the chunks (data,
// gaps, offsets) or the counters.
class ValidatingReassembler final : public ValidatingPair<Reassembler> {
 public:
  ValidatingReassembler(std::unique_ptr<Reassembler> engine, const StreamConfig& config)
      : ValidatingPair(std::move(engine), detail::make_ref_reassembler(config), "ref.stream") {}
  const StreamConfig& config() const noexcept override { return engine_->config(); }
  StreamCounters counters() const override { return engine_->counters(); }
  uint64_t refused() const override { return engine_->refused(); }
  size_t flows() const override { return engine_->flows(); }

  Status segment(const Segment& s, const ChunkSink& sink) override {
    return both([&](Reassembler& r, const ChunkSink& k) { return r.segment(s, k); }, sink);
  }
  Status segments(const Segment* s, uint32_t n, const ChunkSink& sink) override {
    return both([&](Reassembler& r, const ChunkSink& k) { return r.segments(s, n, k); }, sink);
  }
  bool batches() const override { return engine_->batches(); }
  Status close(uint64_t flow, const ChunkSink& sink) override {
    return both([&](Reassembler& r, const ChunkSink& k) { return r.close(flow, k); }, sink);
  }
  Status close_many(const uint64_t* flows, uint32_t n, const ChunkSink& sink) override {
    return both([&](Reassembler& r, const ChunkSink& k) { return r.close_many(flows, n, k); },
                sink);
  }
  Status close_all(const ChunkSink& sink) override {
    return both([&](Reassembler& r, const ChunkSink& k) { return r.close_all(k); }, sink);
  }

 private:
  // The call on both; the chunks each delivered (the engine's also to `sink`) and the counters
  // compared.
  template <class Call>
  Status both(Call call, const ChunkSink& sink) {
    std::vector<detail::Recorded> got, want;
    WARPATH_TRY(call(*engine_, detail::recording(got, &sink)));
    WARPATH_TRY(call(*ref_, detail::recording(want)));
    if (std::string d = detail::chunk_difference(got, want, "ref.stream"); !d.empty())
      return differs(d);
    return same_counters(engine_->counters(), ref_->counters());
  }
};

}  // namespace

const char* policy_name(Policy p) noexcept {
  return unsigned(p) < std::size(kPolicyNames) ? kPolicyNames[unsigned(p)] : "?";
}

Result<Policy> parse_policy(std::string_view text) {
  for (unsigned i = 0; i < std::size(kPolicyNames); ++i)
    if (text == kPolicyNames[i]) return Policy(i);
  return Status(Errc::kInvalidArgument,
                "overlap policy '" + std::string(text) +
                    "': expected first, last, bsd, linux, old-linux, solaris, vista or windows");
}

Result<HostPolicy> parse_host_policy(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos)
    return Status(Errc::kParseError, "host policy '" + std::string(text) +
                                         "': expected PREFIX=POLICY (10.0.0.0/8=linux)");
  HostPolicy h;
  WARPATH_ASSIGN_OR_RETURN(h.policy, parse_policy(text.substr(eq + 1)));
  std::string_view prefix = text.substr(0, eq);
  const size_t slash      = prefix.find('/');
  const std::string_view addr = prefix.substr(0, slash);
  const bool v6               = addr.find(':') != std::string_view::npos;
  h.ip_version                = v6 ? 6 : 4;
  unsigned length             = v6 ? 128 : 32;
  if (slash != std::string_view::npos) {
    const std::string len(prefix.substr(slash + 1));
    char* end = nullptr;
    const unsigned long n = std::strtoul(len.c_str(), &end, 10);
    if (len.empty() || *end || n > length)
      return Status(Errc::kParseError, "host policy '" + std::string(text) + "': prefix length '" +
                                           len + "' is not 0.." + std::to_string(length));
    length = unsigned(n);
  }
  h.length = uint8_t(length);
  if (v6) {
    net::Ip6 a;
    if (!net::parse_ipv6(addr, a))
      return Status(Errc::kParseError, "host policy '" + std::string(text) + "': bad IPv6 address");
    net::ip6_to_bytes(a, h.addr);
  } else {
    uint32_t a = 0;
    if (!net::parse_ipv4(addr, a))
      return Status(Errc::kParseError, "host policy '" + std::string(text) + "': bad IPv4 address");
    for (int i = 0; i < 4; ++i) h.addr[i] = uint8_t(a >> (24 - 8 * i));
  }
  return h;
}

Status StreamConfig::validate() const {
  if (unsigned(policy) >= unsigned(Policy::kCount))
    return Status(Errc::kInvalidArgument, "overlap policy out of range");
  if (max_ahead < 1) return Status(Errc::kInvalidArgument, "max_ahead must be at least 1 byte");
  if (stream_cap < 1 || memcap < stream_cap)
    return Status(Errc::kInvalidArgument, "stream_cap " + std::to_string(stream_cap) +
                                              ", memcap " + std::to_string(memcap) +
                                              ": expected 1 <= stream_cap <= memcap");
  if (max_flows < 1) return Status(Errc::kInvalidArgument, "max_flows must be at least 1");
  if (prealloc_flows > max_flows)
    return Status(Errc::kInvalidArgument, "prealloc_flows " + std::to_string(prealloc_flows) +
                                              " is more than max_flows " +
                                              std::to_string(max_flows));
  for (const HostPolicy& h : hosts)
    if ((h.ip_version != 4 && h.ip_version != 6) || h.length > (h.ip_version == 4 ? 32 : 128) ||
        unsigned(h.policy) >= unsigned(Policy::kCount))
      return Status(Errc::kInvalidArgument, "host policy with IP version " +
                                                std::to_string(h.ip_version) + ", prefix length " +
                                                std::to_string(h.length) + ": out of range");
  return Status::ok();
}

namespace {

using ReassemblerTable = EngineTable<Reassembler(const StreamConfig&)>;

const ReassemblerTable& engine_table() {
  static const ReassemblerTable table(
      "stream",
      // The #if inside the list makes clang-format indent each entry differently.
      // clang-format off
      {
          {{"ref.stream", "one map entry per buffered byte (the oracle)", 0, engine_always},
           [](const StreamConfig& c) -> ReassemblerTable::Made {
             return detail::make_ref_reassembler(c);
           }},
          {{"cpu.stream", "segment ranges split on overlap", 10, engine_always},
           [](const StreamConfig& c) -> ReassemblerTable::Made {
             return detail::make_cpu_reassembler(c);
           }},
          {{"emu.stream",
            "cuda.stream's schedule on the host: flows in 8 fixed slots run as chains, the rest "
            "on cpu.stream's stores (how cuda.stream is tested without a GPU)",
            0, engine_always},
           [](const StreamConfig& c) -> ReassemblerTable::Made {
             return detail::make_emu_reassembler(c);
           }},
#if defined(WARPATH_HAVE_CUDA)
          {{"cuda.stream",
            "flows in GPU slots, one thread per flow over its segments of a batch (GASPP's "
            "next-packet chains); flows a slot cannot hold move to cpu.stream's stores",
            5, cuda_engine_available},
           [](const StreamConfig& c) { return detail::make_cuda_reassembler(c); }},
#endif
      },
      // clang-format on
      &ReassemblerTable::wrap<ValidatingReassembler>);
  return table;
}

}  // namespace

std::vector<EngineInfo> stream_engines() { return engine_table().infos(); }

Result<std::unique_ptr<Reassembler>> make_reassembler(std::string_view requested,
                                                      const StreamConfig& config) {
  WARPATH_TRY(config.validate());
  try {  // the storage prealloc_flows asks for is made here
    return engine_table().make(requested, config);
  } catch (const std::bad_alloc&) {
    return Status(Errc::kOutOfMemory, "stream engine " + std::string(requested) +
                                          ": no memory for prealloc_flows " +
                                          std::to_string(config.prealloc_flows));
  }
}

CheckReport check_stream_engine(std::string_view id, uint64_t seed, uint64_t items) {
  CheckReport report{"stream", std::string(id), seed, 0, false, {}};
  struct Setup {
    Policy policy;
    Mode mode;
    uint32_t stream_cap;
    uint32_t loss;
  };
  static constexpr Setup kSetups[] = {{Policy::kBsd, Mode::kIds, 1u << 20, 0},
                                      {Policy::kLinux, Mode::kIds, 1u << 20, 5},
                                      {Policy::kSolaris, Mode::kInline, 1u << 20, 0},
                                      {Policy::kOldLinux, Mode::kIds, 600, 3},
                                      {Policy::kLast, Mode::kIds, 1u << 20, 0}};
  uint64_t round = 0;
  while (report.items < std::max<uint64_t>(items, 1)) {
    const Setup& setup = kSetups[round % std::size(kSetups)];
    StreamConfig c;
    c.policy     = setup.policy;
    c.mode       = setup.mode;
    c.stream_cap = setup.stream_cap;
    c.depth      = round % 3 == 0 ? 3000 : 0;
    c.max_flows  = round % 4 == 1 ? 5 : 1u << 20;
    auto r       = make_reassembler("validate:" + std::string(id), c);
    if (!r.is_ok()) {
      report.skipped = r.status().code() == Errc::kNotSupported;
      report.detail  = r.status().message();
      return report;
    }
    StreamGenParams p;
    p.seed              = seed + round++;
    p.flows             = 12;
    p.reorder_percent   = 20;
    p.duplicate_percent = 10;
    p.overlap_percent   = 20;
    p.conflict_percent  = 10;
    p.loss_percent      = setup.loss;
    const GeneratedStreams g = generate_streams(p);
    // Batches of 1, a few, a lane's worth and everything (segments(): batching engines); past
    // the first 50,000 items only whole inputs (a GPU engine's batch of one is a launch).
    static constexpr uint32_t kBatch[] = {1, 7, 64, ~0u};
    const uint32_t batch =
        report.items < 50000 ? kBatch[round % std::size(kBatch)] : ~0u;  // round: the next
    for (size_t at = 0; at < g.segments.size();) {
      const uint32_t n = uint32_t(std::min<size_t>(batch, g.segments.size() - at));
      if (Status st = (*r)->segments(g.segments.data() + at, n, nullptr); !st.is_ok()) {
        report.detail = std::string(policy_name(setup.policy)) + ": " + st.message();
        return report;
      }
      report.items += n;
      at += n;
    }
    // Half the flows closed one by one, the rest at once (a GPU engine gathers their slots).
    std::vector<uint64_t> rest;
    for (uint64_t f = 1; f <= p.flows; ++f) {
      if (f > p.flows / 2) {
        rest.push_back(f);
        continue;
      }
      if (Status st = (*r)->close(f, nullptr); !st.is_ok()) {
        report.detail = std::string("close: ") + st.message();
        return report;
      }
    }
    if (Status st = (*r)->close_many(rest.data(), uint32_t(rest.size()), nullptr); !st.is_ok()) {
      report.detail = std::string("close_many: ") + st.message();
      return report;
    }
  }
  return report;
}

// The family in `warpath info` and `warpath selftest` (core/registry.hpp).
WARPATH_REGISTER_ENGINE_FAMILY(stream, "stream", 60, &stream_engines, &check_stream_engine);

}  // namespace warpath::stream
