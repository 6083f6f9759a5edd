// The detection engine registry (the only list of NIDS engines), the validating wrapper and the
// self-test's differential check (include/warpath/nids/detect.hpp).
#include <algorithm>
#include <deque>
#include <random>

#include "core/engine_table.hpp"
#include "core/validating.hpp"
#include "nids/cpu/rule_groups.hpp"
#include "nids/detector_base.hpp"
#include "warpath/core/registry.hpp"
#include "warpath/nids/detect.hpp"

namespace warpath::nids {
namespace {

std::string hits_text(const DetectImage& img, const std::vector<Hit>& h) {
  std::string s = "[";
  for (size_t i = 0; i < h.size(); ++i)
    s += (i ? "," : "") + std::to_string(img.rules()[h[i].rule].sid);
  return s + "]";
}

class ValidatingDetector final : public ValidatingPair<Detector> {
 public:
  ValidatingDetector(std::unique_ptr<Detector> e, std::unique_ptr<Detector> r)
      : ValidatingPair(std::move(e), std::move(r), "ref.nids") {}
  Status inspect(const Unit& u, std::vector<Hit>& hits) override {
    const size_t from = hits.size();
    WARPATH_TRY(engine_->inspect(u, hits));
    std::vector<Hit> got(hits.begin() + long(from), hits.end()), want;
    WARPATH_TRY(ref_->inspect(u, want));
    ++units_;
    return compare(u, got, want);
  }
  // The engine's batch against ref.nids unit by unit, compared per unit as inspect() does.
  Status inspect_batch(const Unit* units, uint32_t n, std::vector<Hit>* hits) override {
    std::vector<size_t> from(n);
    for (uint32_t i = 0; i < n; ++i) from[i] = hits[i].size();
    WARPATH_TRY(engine_->inspect_batch(units, n, hits));
    for (uint32_t i = 0; i < n; ++i) {
      std::vector<Hit> want;
      WARPATH_TRY(ref_->inspect(units[i], want));
      ++units_;
      WARPATH_TRY(compare(units[i],
                          std::vector<Hit>(hits[i].begin() + long(from[i]), hits[i].end()), want));
    }
    return Status::ok();
  }
  bool prefers_batches() const noexcept override { return engine_->prefers_batches(); }
  void end_flow(uint64_t flow) override {
    engine_->end_flow(flow);
    ref_->end_flow(flow);
  }
  DetectCounters counters() const override { return engine_->counters(); }
  const DetectImage& image() const noexcept override { return engine_->image(); }

 private:
  Status compare(const Unit& u, const std::vector<Hit>& got, const std::vector<Hit>& want) {
    if (got == want) return Status::ok();
    // The first rule one matched and the other did not, as written.
    std::string rule;
    for (const std::vector<Hit>* side : {&got, &want})
      for (const Hit& h : *side)
        if (rule.empty() && (std::find(got.begin(), got.end(), h) == got.end() ||
                             std::find(want.begin(), want.end(), h) == want.end()))
          rule = image().rules()[h.rule].text;
    return differs(" matched sids " + hits_text(image(), got) + ", ref.nids " +
                   hits_text(image(), want) + " (unit " + std::to_string(units_) + ", flow " +
                   std::to_string(u.flow) + ", " +
                   (u.buffer == Buffer::kStream ? "stream" : u.buffer == Buffer::kApp ? "transaction" : "packet") + " of " +
                   std::to_string(u.len) + " bytes from " + std::to_string(u.new_from) +
                   "; rule: " + rule + ")");
  }
  uint64_t units_ = 0;
};

using Image         = std::shared_ptr<const DetectImage>;
using DetectorTable = EngineTable<Detector(Image)>;

DetectorTable::Made validated(std::unique_ptr<Detector> engine, Image image) {
  return detail::validated_detector(std::move(engine), std::move(image));
}

const DetectorTable& detector_table() {
  static const DetectorTable table(
      "NIDS",
      {
          {{"ref.nids", "every rule evaluated on every buffer (the oracle)", 0, engine_always},
           [](Image image) { return detail::make_ref_detector(std::move(image)); }},
          {{"cpu.nids",
            "rules grouped by buffer and protocol, a multi-literal prefilter over their "
            "fast patterns (Vectorscan where built, else Aho-Corasick)",
            10, engine_always},
           [](Image image) { return detail::make_cpu_detector(std::move(image)); }},
          {{"cuda.nids",
            "cpu.nids's groups with a block prefilter on the GPU (cuda.ac), a batch of "
            "units per launch (small batches on the CPU's engine); candidates evaluated in "
            "order on the CPU",
            5, cuda_engine_available},
           [](Image image) {
             return detail::make_block_detector(
                 std::move(image), "cuda.nids", "cuda.ac",
                 {detail::best_cpu_pattern_engine(), detail::offload_min_bytes_from_env()});
           }},
      },
      &validated);
  return table;
}

}  // namespace

std::vector<EngineInfo> nids_engines() { return detector_table().infos(); }

Result<std::unique_ptr<Detector>> detail::validated_detector(
    std::unique_ptr<Detector> engine, std::shared_ptr<const DetectImage> image) {
  WARPATH_ASSIGN_OR_RETURN(std::unique_ptr<Detector> ref,
                           detail::make_ref_detector(std::move(image)));
  return std::unique_ptr<Detector>(
      std::make_unique<ValidatingDetector>(std::move(engine), std::move(ref)));
}

Result<std::unique_ptr<Detector>> make_detector(std::string_view requested,
                                                std::shared_ptr<const DetectImage> image) {
  if (!image) return Status(Errc::kInvalidArgument, "no rule image");
  return detector_table().make(requested, std::move(image));
}

// ---- the self-test's check: generated rules over a small alphabet and payloads from it ----

namespace {

// Letters that need no escaping in a rule, both cases (nocase must matter), x twice as likely.
constexpr char kAlphabet[] = "abcABxxx";

std::string word(std::mt19937_64& rng, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s.push_back(kAlphabet[rng() % (sizeof kAlphabet - 1)]);
  return s;
}

std::string random_rule(std::mt19937_64& rng, uint32_t sid) {
  static const char* kProtos[] = {"tcp", "udp", "ip", "tcp-pkt", "icmp"};
  // Port sets the units' ports (kUnitPorts) fall in and out of; "ip" and "icmp" take any only.
  static const char* kPorts[] = {"any", "any", "any", "80", "!80", "[80,443]", "1000:2000",
                                 "[1:1024,!53]", "![443,1500]"};
  const char* proto = kProtos[rng() % std::size(kProtos)];
  const bool ports  = std::string_view(proto) != "ip" && std::string_view(proto) != "icmp";
  auto port = [&] { return std::string(ports ? kPorts[rng() % std::size(kPorts)] : "any"); };
  const std::string sport = port(), dport = port();
  std::string r = std::string(rng() % 8 == 0 ? "pass" : rng() % 5 == 0 ? "drop" : "alert") + " " +
                  proto + " any " + sport + " " + (rng() % 4 == 0 ? "<>" : "->") + " " +
                  (rng() % 3 == 0 ? "10.0.0.0/8" : "any") + " " + dport + " (msg:\"r\"; ";
  const int items = int(rng() % 4);
  for (int i = 0; i < items; ++i) {
    const uint64_t k = rng() % 12;
    if (k < 7) {
      r += std::string("content:") + (rng() % 7 == 0 ? "!" : "") + "\"" + word(rng, 1 + rng() % 3) + "\"; ";
      if (rng() % 3 == 0) r += "nocase; ";
      if (i > 0 && rng() % 2) {
        r += "distance:" + std::to_string(int(rng() % 5) - 1) + "; ";
        if (rng() % 2) r += "within:" + std::to_string(3 + rng() % 6) + "; ";
      } else if (rng() % 3 == 0) {
        r += "offset:" + std::to_string(rng() % 4) + "; depth:" + std::to_string(3 + rng() % 8) + "; ";
      }
      if (rng() % 6 == 0) r += "fast_pattern; ";
    } else if (k < 9) {
      r += std::string("pcre:\"/") + word(rng, 1 + rng() % 2) + (rng() % 2 ? "[ab]+" : ".?") + "/" +
           (rng() % 2 ? "i" : "") + (i > 0 && rng() % 2 ? "R" : "") + "\"; ";
    } else if (k == 9) {
      r += "isdataat:" + std::to_string(rng() % 12) + (i > 0 && rng() % 2 ? ",relative" : "") + "; ";
    } else if (k == 10) {
      static const char* kOps[] = {"<", ">", "=", "&", "^", "<=", ">=", "!="};
      r += "byte_test:" + std::to_string(1 + rng() % 2) + "," + kOps[rng() % 8] + "," +
           std::to_string(rng() % 256) + "," + std::to_string(rng() % 6) +
           (i > 0 && rng() % 2 ? ",relative" : "") + (rng() % 3 == 0 ? ",little" : "") + "; ";
    } else {
      r += "byte_jump:1," + std::to_string(rng() % 4) + (i > 0 && rng() % 2 ? ",relative" : "") +
           (rng() % 3 == 0 ? ",from_beginning" : "") + ",bitmask 0x07; ";
    }
  }
  if (rng() % 5 == 0) r += rng() % 2 ? "flow:established,to_server; " : "flow:to_client; ";
  if (rng() % 6 == 0) r += "dsize:>" + std::to_string(rng() % 10) + "; ";
  if (rng() % 5 == 0) r += std::string("flowbits:") + (rng() % 2 ? "set" : "isset") + ",b" + std::to_string(rng() % 3) + "; ";
  return r + "sid:" + std::to_string(sid) + ";)";
}

}  // namespace

CheckReport check_nids_engine(std::string_view id, uint64_t seed, uint64_t items) {
  const std::string validate = "validate:" + std::string(id);
  // cuda.nids: every scan on the device (its small-batch CPU fallback is cpu.nids's engine).
  if (id == "cuda.nids")
    return detail::check_detector(
        id,
        [](std::shared_ptr<const DetectImage> image) -> Result<std::unique_ptr<Detector>> {
          WARPATH_ASSIGN_OR_RETURN(auto d,
                                   detail::make_block_detector(image, "cuda.nids", "cuda.ac"));
          return detail::validated_detector(std::move(d), std::move(image));
        },
        seed, items);
  return detail::check_detector(
      id,
      [&](std::shared_ptr<const DetectImage> image) {
        return make_detector(validate, std::move(image));
      },
      seed, items);
}

CheckReport detail::check_detector(std::string_view id, const DetectorMaker& make, uint64_t seed,
                                   uint64_t items) {
  CheckReport report{"nids", std::string(id), seed, 0, false, {}};
  std::mt19937_64 rng(seed);
  const Vars vars;
  static constexpr uint32_t kSizes[] = {0, 1, 7, 8, 9, 63, 64, 65, 1500};
  uint64_t matched = 0;
  while (report.items < std::max<uint64_t>(items, 1)) {
    RuleSet set;
    std::string text;
    const uint32_t n = 1 + uint32_t(rng() % 60);
    for (uint32_t s = 1; s <= n; ++s) text += random_rule(rng, s) + "\n";
    add_rules_text(set, text, "generated", vars);
    auto image = compile_rules(set);
    if (!image.is_ok()) {
      report.detail = image.status().message();
      return report;
    }
    auto d = make(*image);
    if (!d.is_ok()) {
      if (d.status().code() == Errc::kNotFound || d.status().code() == Errc::kNotSupported) {
        report.skipped = true;
        report.detail  = d.status().message();
      } else {
        report.detail = d.status().message();
      }
      return report;
    }
    static const uint8_t kA[4] = {10, 0, 0, 1}, kB[4] = {192, 168, 1, 2};
    // Eight flows of 12 units, each unit with its own bytes (a stream unit: its flow's stream
    // so far), fed in batches of random sizes (an empty one, one unit, up to all 96 at once):
    // inspect_batch must answer as inspect() does unit by unit.
    std::deque<std::string> buffers;
    std::vector<Unit> units;
    for (int flow = 1; flow <= 8; ++flow) {
      std::string stream;
      for (int u = 0; u < 12; ++u) {
        const uint32_t len = kSizes[rng() % std::size(kSizes)];
        Unit unit;
        static const uint8_t kProtoNums[] = {6, 17, 1, 47};
        unit.pkt.proto       = kProtoNums[rng() % 4];
        unit.pkt.src         = rng() % 2 ? kA : kB;
        unit.pkt.dst         = unit.pkt.src == kA ? kB : kA;
        static const uint16_t kUnitPorts[] = {80, 443, 53, 1500, 1024, 40000};
        auto port            = [&] { return rng() % 7 == 0 ? uint16_t(rng()) : kUnitPorts[rng() % 6]; };
        unit.pkt.sport       = port();
        unit.pkt.dport       = port();
        unit.pkt.has_flow    = true;
        unit.pkt.established = rng() % 2;
        unit.pkt.to_server   = unit.pkt.src == kA;
        unit.flow            = uint64_t(flow);
        std::string payload  = word(rng, len);
        if (unit.pkt.proto == 6 && rng() % 2) {  // a stream unit: the payload appended
          unit.buffer   = Buffer::kStream;
          unit.new_from = uint32_t(stream.size());
          stream += payload;
          buffers.push_back(stream);
        } else {
          unit.stream_flow = unit.pkt.proto == 6 && rng() % 2;
          buffers.push_back(std::move(payload));
        }
        unit.data      = reinterpret_cast<const uint8_t*>(buffers.back().data());
        unit.len       = uint32_t(buffers.back().size());
        unit.pkt.dsize = len;
        units.push_back(unit);
      }
    }
    std::vector<std::vector<Hit>> hits(units.size());
    size_t at = 0;
    for (int batch = 0; at < units.size() && report.items < items; ++batch) {
      const uint64_t pick = rng() % 4;
      size_t step = batch == 0 ? 0 : pick == 0 ? 1 : pick == 1 ? units.size() : 1 + rng() % 40;
      step        = std::min<size_t>({step, units.size() - at, size_t(items - report.items)});
      if (Status s = (*d)->inspect_batch(units.data() + at, uint32_t(step), hits.data() + at);
          !s.is_ok()) {
        report.detail = s.message();
        return report;
      }
      for (size_t k = at; k < at + step; ++k) matched += hits[k].size();
      report.items += step;
      at += step;
    }
    for (int flow = 1; flow <= 8; ++flow) (*d)->end_flow(uint64_t(flow));
  }
  if (matched == 0) report.detail = "no generated rule matched: the comparison proved nothing";
  return report;
}

// The family in `warpath info` and `warpath selftest` (core/registry.hpp).
WARPATH_REGISTER_ENGINE_FAMILY(nids, "nids", 120, &nids_engines, &check_nids_engine);

}  // namespace warpath::nids
