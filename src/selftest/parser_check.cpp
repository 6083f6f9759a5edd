// Differential check of a parser engine against ref.parse on fresh random packets, for
// `warpath selftest` and the tests. Inputs: generated valid traffic, the same frames cut at
// random lengths, random byte flips in the headers, and pure noise.
#include <algorithm>
#include <random>

#include "packet/engines.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/selftest/catalogue.hpp"

namespace warpath::packet {

namespace {

// A mixed batch of `count` packets from `seed`.
Result<PacketBatch> random_packets(uint64_t seed, uint32_t count) {
  gen::TrafficParams params;
  params.seed       = seed;
  params.count      = count;
  params.vlan_share = 0.3;
  params.sizes      = gen::SizeMix::kUniform;
  WARPATH_ASSIGN_OR_RETURN(PacketBatch clean, gen::batch_for(count));
  WARPATH_TRY(gen::generate_traffic(params, clean));
  WARPATH_ASSIGN_OR_RETURN(PacketBatch out, gen::batch_for(count));
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  std::vector<uint8_t> frame;
  for (uint32_t i = 0; i < clean.size(); ++i) {
    const PacketMeta& m = clean.meta(i);
    frame.assign(clean.data(i), clean.data(i) + m.caplen);
    uint32_t caplen = m.caplen;
    switch (rng() % 5) {
      case 0:  // cut anywhere in the first 100 bytes
        caplen = std::min<uint32_t>(caplen, uint32_t(rng() % 100));
        break;
      case 1:  // flip a few header bytes
        for (int k = 0; k < 3; ++k)
          frame[rng() % std::min<size_t>(frame.size(), 80)] ^= uint8_t(rng());
        break;
      case 2:  // noise after the Ethernet type
        for (size_t k = 14; k < std::min<size_t>(frame.size(), 96); ++k) frame[k] = uint8_t(rng());
        break;
      default:
        break;
    }
    out.append(frame.data(), caplen, m.len, m.timestamp_ns, m.port);
  }
  return out;
}

}  // namespace

CheckReport check_parser_engine(std::string_view id, uint64_t seed, uint64_t items) {
  CheckReport report{"packet", std::string(id), seed, 0, false, {}};
  auto engine = make_parser(id);
  if (!engine.is_ok()) {
    report.skipped = engine.status().code() == Errc::kNotSupported;
    report.detail  = engine.status().message();
    return report;
  }
  auto ref   = detail::make_ref_parser();
  auto batch = random_packets(seed, uint32_t(std::max<uint64_t>(items, 1)));
  if (!batch.is_ok()) {
    report.detail = batch.status().message();
    return report;
  }
  const BatchView all = batch->view();
  std::vector<PacketInfo> want(all.count), got(all.count);
  ExecContext ctx;
  if (Status s = ref->parse(all, {want.data(), all.count}, ctx); !s.is_ok()) {
    report.detail = s.message();
    return report;
  }
  // Batch sizes: 0, 1, the warp and block edges, and the rest in one large batch.
  for (uint32_t size : {0u, 1u, 31u, 32u, 33u, 255u, 256u, 257u, all.count}) {
    size = std::min(size, all.count);
    BatchView part{all.buffer, all.metas, size};
    std::fill(got.begin(), got.begin() + size, PacketInfo{});
    if (Status s = (*engine)->parse(part, {got.data(), size}, ctx); !s.is_ok()) {
      report.detail = "batch of " + std::to_string(size) + ": " + s.message();
      return report;
    }
    for (uint32_t i = 0; i < size; ++i)
      if (!(got[i] == want[i])) {
        report.detail = "batch of " + std::to_string(size) + ", " +
                        detail::describe_difference(i, got[i], want[i]);
        return report;
      }
    report.items += size;
  }
  return report;
}

}  // namespace warpath::packet
