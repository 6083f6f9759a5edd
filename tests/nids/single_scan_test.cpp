// cpu.nids's single scan (src/nids/cpu/single_scan.hpp): a TCP payload bound for its stream is
// scanned once for both the packet and the stream rules while its direction's delivered bytes
// are the bytes that arrived. Each unit's hits are held to ref.nids's (every rule evaluated on
// every unit), over generated flows whose payloads arrive as packet units and are delivered as
// stream chunks, the way the inspector hands them: in step, and with every way of falling out
// of step (a retransmission or a reordered segment among the arrivals, an overlap resolved to
// other bytes, bytes the inspector skips, a gap, a delivery beyond the pending bound, the
// inspection depth), with the application protocol changing mid-flow (other databases, seen by
// the packets or by a stream unit first), fast patterns cut over payloads of 1-3 bytes and
// over the change, at several chunk sizes; the counters say which path each direction took.
#include "nids/cpu/single_scan.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "warpath/nids/app_layer.hpp"
#include "warpath/nids/detect.hpp"
#include "warpath/nids/rule.hpp"

namespace warpath::nids {
namespace {

// Packet rules (tcp-pkt: the payload of each packet), stream rules (the reassembled bytes) and
// HTTP flows' rules, whose fast patterns are the "kNN" keys the traffic plants; some keys are
// long enough to span the payloads they are split over.
std::string rules_text() {
  std::string r;
  for (int k = 0; k < 40; ++k) {
    const std::string key = "k" + std::to_string(10 + k) + (k % 4 == 0 ? "-spanning-key" : "");
    const std::string sid = std::to_string(k + 1);
    const char* head      = k % 3 == 0   ? "alert tcp-pkt any any -> any any"
                            : k % 5 == 1 ? "alert http any any -> any any"
                                         : "alert tcp any any -> any any";
    const char* flow      = k % 7 == 2 ? "flow:to_server; " : k % 7 == 3 ? "flow:to_client; " : "";
    r += std::string(head) + " (" + flow + "content:\"" + key + "\"; sid:" + sid + ";)\n";
  }
  r += "alert tcp any any -> any any (content:\"k10-span\"; content:\"k11\"; distance:0; "
       "sid:900;)\n";
  return r;
}

enum class Fault {
  kNone,
  kRetransmit,
  kReorder,
  kOtherBytes,
  kSkip,
  kAppChange,
  kAppChangeAtStream,
  kDepth
};

struct Traffic {
  std::shared_ptr<const DetectImage> image;
  std::unique_ptr<Detector> ref, cpu;
  uint8_t a[4] = {10, 0, 0, 1}, b[4] = {192, 0, 2, 9};
  uint64_t units = 0, hits = 0;

  Traffic() {
    RuleSet set;
    add_rules_text(set, rules_text(), "t", Vars{});
    for (const FileReport& f : set.files)
      for (const RuleProblem& p : f.problems) ADD_FAILURE() << p.where << ": " << p.reason;
    auto img = compile_rules(set);
    EXPECT_TRUE(img.is_ok()) << img.status().message();
    image  = *img;
    auto r = make_detector("ref.nids", image);
    auto c = make_detector("cpu.nids", image);
    EXPECT_TRUE(r.is_ok() && c.is_ok());
    ref = std::move(*r);
    cpu = std::move(*c);
  }

  Unit unit(uint64_t flow, uint8_t dir, AppLayer app) const {
    Unit u;
    u.pkt.proto       = 6;
    u.pkt.src         = dir ? b : a;
    u.pkt.dst         = dir ? a : b;
    u.pkt.sport       = dir ? 80 : uint16_t(40000 + flow % 1000);
    u.pkt.dport       = dir ? uint16_t(40000 + flow % 1000) : 80;
    u.pkt.has_flow    = true;
    u.pkt.established = true;
    u.pkt.to_server   = dir == 0;
    u.pkt.app_layer   = app;
    u.flow            = flow;
    u.dir             = dir;
    return u;
  }

  void same(const Unit& u, const char* what) {
    std::vector<Hit> want, got;
    ASSERT_TRUE(ref->inspect(u, want).is_ok());
    ASSERT_TRUE(cpu->inspect(u, got).is_ok());
    ++units;
    auto sids = [&](const std::vector<Hit>& h) {
      std::string o;
      for (const Hit& x : h) o += std::to_string(image->rules()[x.rule].sid) + " ";
      return o;
    };
    ASSERT_EQ(got.size(), want.size())
        << what << ", unit " << units << ": sids " << sids(got) << "against the reference's "
        << sids(want) << "in '" << std::string(reinterpret_cast<const char*>(u.data), u.len)
        << "' (new from " << u.new_from << ", flow " << u.flow << " dir " << int(u.dir) << ")";
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i].rule, want[i].rule) << what;
    hits += got.size();
  }

  // One direction of one flow: payloads arrive (packet units of a stream flow) and are
  // delivered in chunks of `per_chunk` payloads (stream units: the inspector's buffer, its last
  // 300 bytes kept), with `fault` once at payload `at`.
  void direction(std::mt19937_64& rng, uint64_t flow, uint8_t dir, uint32_t payloads,
                 uint32_t per_chunk, Fault fault, uint32_t at) {
    AppLayer app = AppLayer::kNone, stream_app = AppLayer::kNone;  // as packets and streams see it
    std::string buffer, arrived, held, carry;  // arrived: to deliver next, in order
    bool fresh      = false;                   // the next delivery starts a new buffer
    bool past_depth = false;                   // the stream inspects no more of this direction
    uint64_t packet = 0;
    auto deliver    = [&] {
      if (fresh) buffer.clear();
      fresh = false;
      if (buffer.size() > 600) buffer.erase(0, buffer.size() - 300);
      Unit u     = unit(flow, dir, stream_app);
      u.buffer   = Buffer::kStream;
      u.packet   = ++packet;
      u.new_from = uint32_t(buffer.size());
      buffer += arrived;
      arrived.clear();
      u.data = reinterpret_cast<const uint8_t*>(buffer.data());
      u.len  = uint32_t(buffer.size());
      same(u, "stream");
    };
    for (uint32_t p = 0; p < payloads; ++p) {
      // Now and then 1-3 bytes: a key cut over several payloads, a change between its parts.
      const bool tiny = rng() % 4 == 0;
      std::string payload;
      if (!carry.empty()) {
        const size_t n = tiny ? std::min<size_t>(carry.size(), 1 + rng() % 3) : carry.size();
        payload        = carry.substr(0, n);
        carry.erase(0, n);
      }
      if (carry.empty())
        payload += std::string(tiny ? 1 + rng() % 3 : 30 + rng() % 90, char('a' + rng() % 26));
      for (int k = 0; k < 2 && !tiny && carry.empty(); ++k) {  // keys inside, or one cut at the end
        const int n           = int(rng() % 40);
        const std::string key = "k" + std::to_string(10 + n) + (n % 4 == 0 ? "-spanning-key" : "");
        if (k == 1 && rng() % 3 == 0) {
          const size_t cut = 1 + rng() % (key.size() - 1);
          payload += key.substr(0, cut);
          carry = key.substr(cut);
        } else if (payload.size() > key.size()) {
          payload.replace(rng() % (payload.size() - key.size()), key.size(), key);
        }
      }
      // The protocol found: by the packets and the streams at once, or by a stream unit first
      // (the delivery of this payload), the packets after it.
      if (fault == Fault::kAppChange && p == at) app = stream_app = AppLayer::kHttp;
      if (fault == Fault::kAppChangeAtStream && p == at) stream_app = AppLayer::kHttp;
      if (fault == Fault::kAppChangeAtStream && p == at + 1) app = AppLayer::kHttp;
      if (fault == Fault::kDepth && p == at) past_depth = true;
      Unit u            = unit(flow, dir, app);
      u.stream_flow     = true;
      u.stream_inspects = !past_depth;
      u.packet          = ++packet;
      u.pkt.dsize       = uint32_t(payload.size());
      u.data            = reinterpret_cast<const uint8_t*>(payload.data());
      u.len             = uint32_t(payload.size());
      same(u, "packet");
      std::string delivered = payload;
      if (p == at) {
        switch (fault) {
          case Fault::kRetransmit: {  // the same bytes arrive again, and are delivered once
            Unit again   = u;
            again.packet = ++packet;
            same(again, "retransmission");
            break;
          }
          case Fault::kReorder:  // delivered after the next payload
            held = payload;
            delivered.clear();
            break;
          case Fault::kOtherBytes:  // the receiver's overlap policy kept other bytes
            delivered[delivered.size() / 2] ^= 0x20;
            break;
          case Fault::kSkip:  // not inspected (the memcap): what came before is a buffer of
            if (!arrived.empty()) deliver();  // its own, and a new one starts after
            fresh = true;
            delivered.clear();
            break;
          default:
            break;
        }
      }
      if (fault == Fault::kReorder && p == at + 1) delivered += held;
      if (past_depth) delivered.clear();  // the inspector takes no more of the direction
      arrived += delivered;
      if (((p + 1) % per_chunk == 0 || p + 1 == payloads) && !arrived.empty()) deliver();
    }
  }
};

const char* fault_name(Fault f) {
  switch (f) {
    case Fault::kNone:
      return "in step";
    case Fault::kRetransmit:
      return "retransmission";
    case Fault::kReorder:
      return "reordering";
    case Fault::kOtherBytes:
      return "other bytes";
    case Fault::kSkip:
      return "skipped bytes";
    case Fault::kAppChange:
      return "application protocol change";
    case Fault::kAppChangeAtStream:
      return "application protocol change seen by a stream first";
    case Fault::kDepth:
      return "inspection depth";
  }
  return "?";
}

TEST(NidsSingleScan, HitsAreTheReferencesInStepAndOutOfStep) {
  for (const Fault fault :
       {Fault::kNone, Fault::kRetransmit, Fault::kReorder, Fault::kOtherBytes, Fault::kSkip,
        Fault::kAppChange, Fault::kAppChangeAtStream, Fault::kDepth}) {
    for (const uint32_t per_chunk : {1u, 2u, 5u}) {
      SCOPED_TRACE(std::string(fault_name(fault)) + ", " + std::to_string(per_chunk) +
                   " payloads a chunk");
      Traffic t;
      std::mt19937_64 rng(uint64_t(fault) * 31 + per_chunk);
      for (uint64_t flow = 1; flow <= 12; ++flow)
        for (uint8_t dir = 0; dir < 2; ++dir)
          t.direction(rng, flow, dir, 24, per_chunk, flow % 3 == 0 ? Fault::kNone : fault,
                      uint32_t(3 + flow % 7));
      if (HasFatalFailure()) return;
      EXPECT_GT(t.hits, 50u);
      const DetectCounters c = t.cpu->counters();
      EXPECT_GT(c.single_scans, 0u) << "no payload went through the single scan";
      // The flows in step stay in it; every fault takes its directions out.
      if (fault == Fault::kNone)
        EXPECT_EQ(c.single_scan_left, 0u);
      else
        EXPECT_GT(c.single_scan_left, 0u);
    }
  }
}

// The same flows with the single scan off: the same hits (the switch the NIDS bench uses).
TEST(NidsSingleScan, TheSwitchTurnsItOff) {
  ::setenv("WARPATH_NIDS_SINGLE_SCAN", "0", 1);
  Traffic t;
  ::unsetenv("WARPATH_NIDS_SINGLE_SCAN");
  std::mt19937_64 rng(7);
  for (uint64_t flow = 1; flow <= 6; ++flow) t.direction(rng, flow, 0, 20, 2, Fault::kNone, 0);
  EXPECT_EQ(t.cpu->counters().single_scans, 0u);
  EXPECT_GT(t.hits, 10u);
}

// What a direction keeps of its arrived bytes is bounded: past kMaxPendingDir undelivered
// bytes it leaves the single scan, and its stream units are still the reference's.
TEST(NidsSingleScan, PendingBytesAreBounded) {
  Traffic t;
  std::mt19937_64 rng(3);
  // About 1.4 MiB (payloads of 57 bytes on average) before the first delivery: past the bound.
  const uint32_t payloads = uint32_t(detail::SingleScan::kMaxPendingDir / 40);
  t.direction(rng, 1, 0, payloads, payloads, Fault::kNone, 0);
  EXPECT_GT(t.cpu->counters().single_scan_left, 0u);
  t.direction(rng, 2, 0, 30, 3, Fault::kNone, 0);  // others go on
  EXPECT_GT(t.cpu->counters().single_scans, payloads / 4);
}

}  // namespace
}  // namespace warpath::nids
