// The defragmentation engine registry (the only list of its engines), policy names, the
// configuration check, the validating wrapper and the self-test's check
// (include/warpath/defrag/defrag.hpp).
#include <string>

#include "core/engine_table.hpp"
#include "core/validating.hpp"
#include "defrag/engines.hpp"
#include "defrag/generate.hpp"
#include "warpath/core/registry.hpp"
#include "warpath/defrag/defrag.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::defrag {
namespace {

constexpr const char* kPolicyNames[] = {"first", "last", "bsd", "linux", "windows", "solaris"};

// An engine and ref.defrag side by side: every packet's result, the reassembled bytes and the
// counters must be equal; the first difference is kept in status().
class ValidatingDefragmenter final : public ValidatingPair<Defragmenter> {
 public:
  ValidatingDefragmenter(std::unique_ptr<Defragmenter> engine, const DefragConfig& config)
      : ValidatingPair(std::move(engine), detail::make_ref_defragmenter(config), "ref.defrag") {}
  const DefragConfig& config() const noexcept override { return engine_->config(); }
  DefragCounters counters() const override { return engine_->counters(); }
  Status status() const override { return first_; }

  FragResult add(const packet::PacketInfo& info, const uint8_t* frame, uint32_t caplen,
                 uint64_t timestamp_ns, std::vector<uint8_t>& out) override {
    const size_t before = out.size();
    const FragResult got = engine_->add(info, frame, caplen, timestamp_ns, out);
    std::vector<uint8_t> want;
    const FragResult expect = ref_->add(info, frame, caplen, timestamp_ns, want);
    ++packets_;
    if (first_.is_ok()) {
      const std::string at = " at packet " + std::to_string(packets_);
      if (got != expect)
        first_ = differs(at + ": result " + std::to_string(int(got)) + ", ref.defrag " +
                         std::to_string(int(expect)));
      else if (std::vector<uint8_t>(out.begin() + long(before), out.end()) != want)
        first_ = differs(at + ": the reassembled datagram differs");
      else if (!(engine_->counters() == ref_->counters()))
        first_ = differs(at + ": counters differ from ref.defrag");
    }
    return got;
  }

  void advance(uint64_t now_ns) override {
    engine_->advance(now_ns);
    ref_->advance(now_ns);
    if (first_.is_ok() && !(engine_->counters() == ref_->counters()))
      first_ = differs(" at clock " + std::to_string(now_ns) +
                       " ns: counters differ from ref.defrag");
  }

 private:
  Status first_;
  uint64_t packets_ = 0;
};

}  // namespace

const char* frag_policy_name(FragPolicy p) noexcept {
  return unsigned(p) < std::size(kPolicyNames) ? kPolicyNames[unsigned(p)] : "?";
}

Result<FragPolicy> parse_frag_policy(std::string_view text) {
  for (unsigned i = 0; i < std::size(kPolicyNames); ++i)
    if (text == kPolicyNames[i]) return FragPolicy(i);
  return Status(Errc::kInvalidArgument,
                "fragment policy '" + std::string(text) +
                    "': expected first, last, bsd, linux, windows or solaris");
}

Status DefragConfig::validate() const {
  if (unsigned(policy) >= unsigned(FragPolicy::kCount))
    return Status(Errc::kInvalidArgument, "fragment policy out of range");
  if (timeout_s < 1) return Status(Errc::kInvalidArgument, "defrag timeout must be at least 1 s");
  if (max_datagrams < 1 || max_fragments < 1 || memcap < 1)
    return Status(Errc::kInvalidArgument,
                  "max_datagrams, max_fragments and memcap must be at least 1");
  return Status::ok();
}

namespace {

using DefragTable = EngineTable<Defragmenter(const DefragConfig&)>;

const DefragTable& engine_table() {
  static const DefragTable table(
      "defrag",
      {
          {{"ref.defrag", "one map entry per buffered byte (the oracle)", 0, engine_always},
           [](const DefragConfig& c) -> DefragTable::Made {
             return detail::make_ref_defragmenter(c);
           }},
          {{"cpu.defrag", "fragment ranges in sorted chunks, pooled buffers", 10, engine_always},
           [](const DefragConfig& c) -> DefragTable::Made {
             return detail::make_cpu_defragmenter(c);
           }},
      },
      &DefragTable::wrap<ValidatingDefragmenter>);
  return table;
}

}  // namespace

std::vector<EngineInfo> defrag_engines() { return engine_table().infos(); }

Result<std::unique_ptr<Defragmenter>> make_defragmenter(std::string_view requested,
                                                        const DefragConfig& config) {
  WARPATH_TRY(config.validate());
  return engine_table().make(requested, config);
}

CheckReport check_defrag_engine(std::string_view id, uint64_t seed, uint64_t items) {
  CheckReport report{"defrag", std::string(id), seed, 0, false, {}};
  auto parser = packet::make_parser("ref.parse");
  if (!parser.is_ok()) {
    report.detail = parser.status().message();
    return report;
  }
  for (uint64_t round = 0; report.items < std::max<uint64_t>(items, 1); ++round) {
    DefragConfig c;
    c.policy            = FragPolicy(round % unsigned(FragPolicy::kCount));
    c.ipv6_overlap_drop = round % 2 == 0;
    c.max_datagrams     = round % 3 == 0 ? 4 : 65536;
    c.memcap            = round % 5 == 1 ? 6000 : 32u << 20;
    auto d = make_defragmenter("validate:" + std::string(id), c);
    if (!d.is_ok()) {
      report.skipped = d.status().code() == Errc::kNotSupported;
      report.detail  = d.status().message();
      return report;
    }
    FragGenParams p;
    p.seed             = seed + round;
    p.overlap_percent  = 25;
    p.conflict_percent = 30;
    const FragFrames g = generate_fragments(p);
    std::vector<uint8_t> out;
    for (size_t i = 0; i < g.frames.size(); ++i) {
      auto batch = packet::PacketBatch::create(1, 2048, 1u << 16);
      if (!batch.is_ok()) {
        report.detail = batch.status().message();
        return report;
      }
      const auto& f = g.frames[i];
      batch->append(f.data(), uint32_t(f.size()), uint32_t(f.size()), 0, 0);
      packet::PacketInfo info;
      ExecContext ctx;
      if (Status st = (*parser)->parse(batch->view(), {&info, 1}, ctx); !st.is_ok()) {
        report.detail = st.message();
        return report;
      }
      // A minute passes now and then: the timeout drops what is unfinished.
      const uint64_t t = 1700000000ull * 1000000000ull + (i / 50) * 61ull * 1000000000ull;
      out.clear();
      (void)(*d)->add(info, f.data(), uint32_t(f.size()), t, out);
      report.items += 1;
    }
    if (Status st = (*d)->status(); !st.is_ok()) {
      report.detail = std::string(frag_policy_name(c.policy)) + ": " + st.message();
      return report;
    }
  }
  return report;
}

Status defragment_batch(Defragmenter& d, const packet::BatchView& in,
                        const packet::PacketInfo* infos, packet::PacketBatch& out,
                        std::vector<uint8_t>& whole) {
  out.clear();
  for (uint32_t i = 0; i < in.count; ++i) {
    const packet::PacketMeta& m = in.metas[i];
    whole.clear();
    const FragResult r = d.add(infos[i], in.data(i), m.caplen, m.timestamp_ns, whole);
    bool kept = true;
    if (r == FragResult::kNotFragment)
      kept = out.append(in.data(i), m.caplen, m.len, m.timestamp_ns, m.port);
    else if (r == FragResult::kCompleted)
      kept = out.append(whole.data(), uint32_t(whole.size()), uint32_t(whole.size()),
                        m.timestamp_ns, m.port);
    if (!kept)
      return Status(Errc::kCapacity, "record " + std::to_string(i + 1) +
                                         " of a batch does not fit the defragmented batch");
  }
  return Status::ok();
}

// The family in `warpath info` and `warpath selftest` (core/registry.hpp).
WARPATH_REGISTER_ENGINE_FAMILY(defrag, "defrag", 40, &defrag_engines, &check_defrag_engine);

}  // namespace warpath::defrag
