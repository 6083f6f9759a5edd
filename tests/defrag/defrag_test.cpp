// IP defragmentation: the Sturges-Novak fragment vector for every policy (as Suricata's defrag
// tests run it) on IPv4 and IPv6, RFC 5722's overlap drop, RFC 1858/3128 tiny fragments, the
// bounds, generated datagrams reassembled whole, and every engine against ref.defrag.
#include <gtest/gtest.h>

#include <string>

#include "defrag/generate.hpp"
#include "warpath/defrag/defrag.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::defrag {
namespace {

constexpr uint64_t kT0 = 1700000000ull * 1000000000ull;

const std::vector<std::string>& engines() {
  static const std::vector<std::string> ids = {"ref.defrag", "cpu.defrag", "validate:cpu.defrag"};
  return ids;
}

packet::PacketInfo parse(const std::vector<uint8_t>& f) {
  auto b = packet::PacketBatch::create(1, 2048, 1u << 17);
  EXPECT_TRUE(b.is_ok());
  b->append(f.data(), uint32_t(f.size()), uint32_t(f.size()), 0, 0);
  auto infos = packet::parse_batch(*b, "ref.parse");
  EXPECT_TRUE(infos.is_ok());
  return (*infos)[0];
}

struct Feed {
  std::unique_ptr<Defragmenter> d;
  std::vector<uint8_t> out;
  Feed(std::string_view engine, const DefragConfig& c) {
    auto made = make_defragmenter(engine, c);
    EXPECT_TRUE(made.is_ok()) << made.status().message();
    d = std::move(*made);
  }
  FragResult send(const std::vector<uint8_t>& f, uint64_t t = kT0) {
    return d->add(parse(f), f.data(), uint32_t(f.size()), t, out);
  }
  FragResult frag(bool v6, uint8_t proto, uint32_t id, uint32_t offset, bool more,
                  const std::string& data, uint64_t t = kT0) {
    return send(fragment_frame(v6, proto, id, offset, more,
                               reinterpret_cast<const uint8_t*>(data.data()), uint32_t(data.size())),
                t);
  }
};

// ---- Sturges and Novak's fragment vector ----------------------------------------------------

struct Case {
  FragPolicy policy;
  const char* blocks;  ///< 24 blocks of 8 bytes
};

TEST(DefragNovak, EveryPolicyOnIpv4AndIpv6) {
  // (letter, offset, length): originals, then overlapping ones, then the last (MF clear).
  static constexpr struct {
    char c;
    uint32_t offset, len;
  } kFrags[] = {{'A', 0, 24},  {'B', 32, 16},  {'C', 48, 24},  {'D', 80, 8},   {'E', 104, 16},
                {'F', 120, 24}, {'G', 144, 16}, {'H', 160, 16}, {'I', 176, 8},  {'J', 8, 32},
                {'K', 48, 24},  {'L', 72, 24},  {'M', 96, 24},  {'N', 128, 8},  {'O', 152, 8},
                {'P', 160, 8},  {'Q', 176, 16}};
  static constexpr Case kCases[] = {
      {FragPolicy::kBsd, "AAAJJBCCCLLLMMMFFFGGHHIQ"},
      {FragPolicy::kLinux, "AAAJJBKKKLLLMMMFFFGGPHQQ"},
      {FragPolicy::kWindows, "AAAJBBCCCLLLMEEFFFGGHHIQ"},
      {FragPolicy::kSolaris, "AAAJBBCCCLLLMMMFFFGGHHIQ"},
      {FragPolicy::kFirst, "AAAJBBCCCLDLMEEFFFGGHHIQ"},
      {FragPolicy::kLast, "AJJJJBKKKLLLMMMFNFGOPHQQ"},
  };
  for (const std::string& engine : engines())
    for (bool v6 : {false, true})
      for (const Case& k : kCases) {
        SCOPED_TRACE(engine + " " + frag_policy_name(k.policy) + (v6 ? " ipv6" : " ipv4"));
        DefragConfig c;
        c.policy            = k.policy;
        c.ipv6_overlap_drop = false;  // Suricata's IPv6 vectors apply the policy
        Feed f(engine, c);
        const uint8_t proto = v6 ? 58 : 1;
        for (size_t i = 0; i + 1 < std::size(kFrags); ++i)
          ASSERT_EQ(f.frag(v6, proto, 1, kFrags[i].offset, true,
                           std::string(kFrags[i].len, kFrags[i].c)),
                    FragResult::kHeld);
        ASSERT_EQ(f.frag(v6, proto, 1, 176, false, std::string(16, 'Q')), FragResult::kCompleted);
        std::string want;
        for (const char* b = k.blocks; *b; ++b) want.append(8, *b);
        const size_t header = 14 + (v6 ? 40 : 20);
        ASSERT_EQ(f.out.size(), header + 192);
        EXPECT_EQ(std::string(f.out.begin() + long(header), f.out.end()), want);
        EXPECT_GT(f.d->counters().overlaps, 0u);
        EXPECT_EQ(f.d->counters().datagrams, 0u);
        EXPECT_EQ(f.d->counters().buffered_bytes, 0u);
        // The datagram is whole: it parses as one unfragmented packet of the right length.
        const packet::PacketInfo info = parse(f.out);
        EXPECT_EQ(info.status, packet::ParseStatus::kOk);
        EXPECT_FALSE(info.flags & packet::kFragment);
        EXPECT_EQ(info.proto, proto);
        EXPECT_TRUE(f.d->status().is_ok()) << f.d->status().message();
      }
}

TEST(DefragRules, Ipv6OverlapsDropTheDatagram) {
  for (const std::string& engine : engines()) {
    Feed f(engine, {});
    EXPECT_EQ(f.frag(true, 17, 9, 0, true, std::string(16, 'a')), FragResult::kHeld);
    EXPECT_EQ(f.frag(true, 17, 9, 8, true, std::string(16, 'b')), FragResult::kDropped);
    EXPECT_EQ(f.d->counters().ipv6_overlap, 1u);
    EXPECT_EQ(f.d->counters().datagrams, 0u);
    // IPv4 overlaps are resolved instead.
    EXPECT_EQ(f.frag(false, 17, 9, 0, true, std::string(16, 'a')), FragResult::kHeld);
    EXPECT_EQ(f.frag(false, 17, 9, 8, false, std::string(16, 'b')), FragResult::kCompleted);
  }
}

TEST(DefragRules, TinyTcpFragmentsAreDropped) {
  for (const std::string& engine : engines()) {
    Feed f(engine, {});
    EXPECT_EQ(f.frag(false, 6, 3, 0, true, std::string(8, 'x')), FragResult::kDropped);
    EXPECT_EQ(f.frag(false, 6, 3, 8, true, std::string(24, 'y')), FragResult::kDropped);
    EXPECT_EQ(f.frag(true, 6, 3, 8, true, std::string(24, 'y')), FragResult::kDropped);
    EXPECT_EQ(f.d->counters().tiny, 3u);
    EXPECT_EQ(f.frag(false, 17, 3, 8, true, std::string(24, 'y')), FragResult::kHeld);  // UDP
  }
}

TEST(DefragRules, LengthsAndEndsAreChecked) {
  for (const std::string& engine : engines()) {
    Feed f(engine, {});
    const std::string big(1400, 'z');
    EXPECT_EQ(f.frag(false, 17, 5, 65000, true, big), FragResult::kDropped);  // past 65,535
    EXPECT_EQ(f.frag(false, 17, 6, 64, false, std::string(64, 'a')), FragResult::kHeld);
    EXPECT_EQ(f.frag(false, 17, 6, 200, true, std::string(64, 'b')), FragResult::kDropped);  // past the end
    EXPECT_EQ(f.d->counters().too_large, 2u);
  }
}

TEST(DefragBounds, TimeoutsCapsAndFragmentCounts) {
  for (const std::string& engine : engines()) {
    DefragConfig c;
    c.max_datagrams = 3;
    c.max_fragments = 4;
    c.memcap        = 1000;
    c.timeout_s     = 30;
    Feed f(engine, c);
    for (uint32_t id = 0; id < 3; ++id)
      EXPECT_EQ(f.frag(false, 17, id, 0, true, std::string(16, 'a')), FragResult::kHeld);
    EXPECT_EQ(f.frag(false, 17, 77, 0, true, std::string(16, 'a')), FragResult::kDropped);
    EXPECT_EQ(f.d->counters().max_datagrams, 1u);
    for (uint32_t k = 1; k <= 4; ++k)
      f.frag(false, 17, 0, 16 * k, true, std::string(16, 'b'));
    EXPECT_EQ(f.d->counters().too_many, 1u);
    EXPECT_EQ(f.frag(false, 17, 1, 16, true, std::string(960, 'c')), FragResult::kDropped);
    EXPECT_EQ(f.d->counters().memcap, 1u);
    // 30 s after their first fragments, the unfinished datagrams are gone.
    EXPECT_EQ(f.frag(false, 17, 50, 0, true, std::string(16, 'a'), kT0 + 30'000'000'000ull),
              FragResult::kHeld);
    EXPECT_EQ(f.d->counters().timeout, 3u);
    EXPECT_EQ(f.d->counters().datagrams, 1u);
    EXPECT_EQ(f.d->counters().buffered_bytes, 16u + 34u);  // payload, first fragment headers
    // With no packet at all, advance() times them out the same way; its clock never goes back.
    f.d->advance(kT0 + 59'000'000'000ull);
    EXPECT_EQ(f.d->counters().datagrams, 1u);
    f.d->advance(kT0);
    f.d->advance(kT0 + 60'000'000'000ull);
    EXPECT_EQ(f.d->counters().timeout, 4u);
    EXPECT_EQ(f.d->counters().datagrams, 0u);
    EXPECT_EQ(f.d->counters().buffered_bytes, 0u);
  }
}

TEST(DefragRandom, DatagramsComeBackWhole) {
  auto parser = packet::make_parser("ref.parse");
  ASSERT_TRUE(parser.is_ok());
  for (const std::string& engine : engines()) {
    FragGenParams p;
    p.seed            = 11;
    p.datagrams       = 60;
    p.overlap_percent = 30;  // re-sends of the same bytes
    const FragFrames g = generate_fragments(p);
    DefragConfig c;
    c.ipv6_overlap_drop = false;
    Feed f(engine, c);
    std::vector<std::string> got;
    for (const auto& frame : g.frames) {
      f.out.clear();
      if (f.send(frame) == FragResult::kCompleted) {
        // Whole and well formed at the IP layer (the payload is random bytes, so its transport
        // header may not be).
        const packet::PacketInfo info = parse(f.out);
        EXPECT_FALSE(info.flags & packet::kFragment);
        for (auto bad : {packet::ParseStatus::kTruncated, packet::ParseStatus::kBadIpv4Checksum,
                         packet::ParseStatus::kBadIpv4Length, packet::ParseStatus::kBadIpv6Length})
          EXPECT_NE(info.status, bad) << packet::parse_status_name(info.status);
        const size_t header = 14 + (info.l3 == packet::L3::kIpv6 ? 40 : 20);
        got.emplace_back(f.out.begin() + long(header), f.out.end());
      }
    }
    ASSERT_EQ(got.size(), g.payloads.size()) << engine;
    std::vector<std::string> want;
    for (const auto& pl : g.payloads) want.emplace_back(pl.begin(), pl.end());
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want) << engine;
    EXPECT_EQ(f.d->counters().overlap_diff, 0u);
    EXPECT_TRUE(f.d->status().is_ok()) << f.d->status().message();
  }
}

TEST(DefragRandom, EnginesAgreeOnHostileMixes) {
  for (uint64_t seed : {1, 2, 3}) {
    const CheckReport r = check_defrag_engine("cpu.defrag", seed, 20000);
    EXPECT_TRUE(r.passed()) << r.detail;
    EXPECT_GE(r.items, 20000u);
  }
}

TEST(DefragConfigCheck, Errors) {
  DefragConfig c;
  c.timeout_s = 0;
  EXPECT_FALSE(c.validate().is_ok());
  EXPECT_FALSE(make_defragmenter("cpu.nope").is_ok());
  EXPECT_NE(parse_frag_policy("vista").status().message().find("expected first, last"),
            std::string::npos);
}

}  // namespace
}  // namespace warpath::defrag
