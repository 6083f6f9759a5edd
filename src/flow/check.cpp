// Differential check of a flow engine against ref.flow on generated conversations, for
// `warpath selftest` and the tests: several table configurations (tiny and evicting, full and
// dropping, full and passing, default), batches of 0, 1, the chunk edges and large, the clock
// advanced with no packets, and a final flush.
#include <algorithm>

#include "warpath/flow/conversations.hpp"
#include "warpath/flow/flow.hpp"

namespace warpath::flow {

namespace {

struct Setup {
  uint32_t capacity;
  OnFull on_full;
  uint32_t short_timeouts;  ///< 0: defaults; else every timeout (emergency: a third)
};

FlowConfig config_of(const Setup& s) {
  FlowConfig c;
  c.capacity = s.capacity;
  c.on_full  = s.on_full;
  if (s.short_timeouts)
    for (auto* row : {c.timeout_s, c.emergency_timeout_s})
      for (unsigned p = 0; p < 4; ++p)
        for (unsigned q = 0; q < 3; ++q)
          row[p][q] = row == c.timeout_s ? s.short_timeouts + q
                                         : std::max(1u, (s.short_timeouts + q) / 3);
  return c;
}

}  // namespace

CheckReport check_flow_engine(std::string_view id, uint64_t seed, uint64_t items) {
  CheckReport report{"flow", std::string(id), seed, 0, false, {}};
  static constexpr Setup kSetups[] = {
      {16, OnFull::kEvict, 2}, {64, OnFull::kDrop, 3}, {64, OnFull::kPass, 3}, {1u << 12, OnFull::kEvict, 0}};
  static constexpr uint32_t kBatches[] = {0, 1, 31, 32, 33, 64, 255, 1024};
  uint32_t setup_index = 0;
  for (const Setup& setup : kSetups) {
    auto tracker = make_flow_tracker("validate:" + std::string(id), config_of(setup));
    if (!tracker.is_ok()) {
      report.skipped = tracker.status().code() == Errc::kNotSupported;
      report.detail  = tracker.status().message();
      return report;
    }
    ConversationParams params;
    params.seed        = seed + setup_index++;
    params.packets     = uint32_t(std::max<uint64_t>(items / 4, 1));
    params.concurrent  = setup.capacity * 2;
    params.mean_gap_ns = 20000000;  // 20 ms: short timeouts expire flows between packets
    const Conversations conv = generate_conversations(params);
    std::vector<PacketFlow> out(conv.infos.size());
    std::vector<FlowRecord> ended;
    uint32_t done = 0, k = 0;
    while (done < conv.infos.size() || k == 0) {
      const uint32_t n = std::min<uint32_t>(kBatches[k++ % std::size(kBatches)],
                                            uint32_t(conv.infos.size()) - done);
      Status st = (*tracker)->track({conv.infos.data() + done, n}, {conv.metas.data() + done, n},
                                    {out.data() + done, n}, ended);
      if (st.is_ok() && k % 5 == 0 && done + n > 0)  // idle time: the clock moves on its own
        st = (*tracker)->advance(conv.metas[done + n - 1].timestamp_ns + 1500000000ull, ended);
      if (!st.is_ok()) {
        report.detail = "capacity " + std::to_string(setup.capacity) + ", on_full " +
                        on_full_name(setup.on_full) + ": " + st.message();
        return report;
      }
      done += n;
      report.items += n;
    }
    if (Status st = (*tracker)->flush(ended); !st.is_ok()) {
      report.detail = "flush: " + st.message();
      return report;
    }
  }
  return report;
}

}  // namespace warpath::flow
