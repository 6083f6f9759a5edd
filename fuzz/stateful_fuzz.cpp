// libFuzzer target: hostile packet sequences through IP defragmentation and TCP reassembly.
//
// The input is a list of records, each building one frame:
//   0  raw frame:       u16 length, the bytes
//   1  IPv4 fragment:   id, protocol pick, u16 offset (x8), MF, length, payload
//   2  IPv6 fragment:   the same with a fragment header
//   3  TCP segment:     connection pick (4), direction, Fast Open option, flags, u16 seq step,
//                       u16 ack step, length, payload (IPv4, one of four connections, ISNs near
//                       2^32)
// Every frame is parsed (the shared core parser) and given to two defragmenters built on the
// two byte stores (the oracle's per-byte map and cpu.defrag's ranges), which must agree on the
// result and the datagram; what comes out whole goes, when TCP, to two reassemblers on the two
// stores, whose chunks and counters must agree. The frames as they came (fragments untracked)
// also go, in batches of 1 to 16, through flow tracking and reassembly chained (ref.flow's table
// and the oracle's store, closed as flows end) and through cpu.flowstream, which must agree on
// every answer, flow record, chunk and counter (include/warpath/stream/flowstream.hpp), over a
// table of 1 to 16 flows with short timeouts. AddressSanitizer and UBSan watch every read;
// the caps keep memory bounded whatever the input.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/ranges/byte_store.hpp"
#include "core/ranges/range_store.hpp"
#include "defrag/store_defragmenter.hpp"
#include "packet/core/bytes.hpp"
#include "packet/core/parse_core.hpp"
#include "flow/engines.hpp"
#include "stream/flowstream_engines.hpp"
#include "stream/store_reassembler.hpp"

namespace {

using namespace warpath;

struct Reader {
  const uint8_t* p;
  size_t n;
  uint8_t u8() { return n ? (--n, *p++) : 0; }
  uint16_t u16() { return uint16_t(u8() << 8 | u8()); }
  std::vector<uint8_t> bytes(size_t k) {
    k = std::min(k, n);
    std::vector<uint8_t> v(p, p + k);
    p += k;
    n -= k;
    return v;
  }
};


std::vector<uint8_t> ipv4(uint8_t proto, uint16_t id, uint16_t frag, const std::vector<uint8_t>& l4,
                          uint8_t src = 1, uint8_t dst = 2) {
  std::vector<uint8_t> f(34 + l4.size(), 0);
  f[12] = 0x08;
  uint8_t* ip = f.data() + 14;
  ip[0]       = 0x45;
  packet::core::store_be16(ip + 2, uint32_t(20 + l4.size()));
  packet::core::store_be16(ip + 4, id);
  packet::core::store_be16(ip + 6, frag);
  ip[8] = 64, ip[9] = proto, ip[12] = 10, ip[15] = src, ip[16] = 10, ip[19] = dst;
  packet::core::store_be16(ip + 10, packet::core::fold_checksum(packet::core::ones_sum(ip, 20)));
  if (!l4.empty()) std::memcpy(ip + 20, l4.data(), l4.size());
  return f;
}

std::vector<uint8_t> ipv6_fragment(uint8_t proto, uint32_t id, uint16_t word,
                                   const std::vector<uint8_t>& data) {
  std::vector<uint8_t> f(62 + data.size(), 0);
  f[12] = 0x86, f[13] = 0xdd;
  uint8_t* ip = f.data() + 14;
  ip[0]       = 0x60;
  packet::core::store_be16(ip + 4, uint32_t(8 + data.size()));
  ip[6] = 44, ip[7] = 64, ip[8] = 0x20, ip[9] = 0x01, ip[23] = 1, ip[24] = 0x20, ip[25] = 0x01,
  ip[39] = 2;
  ip[40] = proto;
  packet::core::store_be16(ip + 42, word);
  ip[47] = uint8_t(id);
  if (!data.empty()) std::memcpy(ip + 48, data.data(), data.size());
  return f;
}

std::vector<uint8_t> build(Reader& r, uint32_t seq_base[4][2]) {
  static constexpr uint8_t kProtos[] = {6, 17, 1, 58};
  switch (r.u8() % 4) {
    case 0: return r.bytes(r.u16() % 2048);
    case 1: {
      const uint16_t id = r.u8(), word = r.u16();
      const uint8_t proto = kProtos[r.u8() % 3];
      return ipv4(proto, id, uint16_t((word & 0x1fff) | (word & 0x8000 ? 0x2000 : 0)),
                  r.bytes(r.u8()));
    }
    case 2: {
      const uint8_t id = r.u8(), proto = kProtos[r.u8() % 4];
      const uint16_t word = r.u16();
      return ipv6_fragment(proto, id, uint16_t((word & 0xfff8) | (word & 1)), r.bytes(r.u8()));
    }
    default: {
      const uint8_t pick = r.u8(), flags = r.u8();
      const unsigned conn = pick % 4, dir = (pick >> 2) & 1;
      const uint32_t seq = seq_base[conn][dir] + r.u16(), ack = seq_base[conn][1 - dir] + r.u16();
      std::vector<uint8_t> tcp(20, 0);
      packet::core::store_be16(tcp.data(), dir ? 80 : 40000 + conn);
      packet::core::store_be16(tcp.data() + 2, dir ? 40000 + conn : 80);
      packet::core::store_be16(tcp.data() + 4, seq >> 16), packet::core::store_be16(tcp.data() + 6, seq);
      packet::core::store_be16(tcp.data() + 8, ack >> 16), packet::core::store_be16(tcp.data() + 10, ack);
      tcp[12] = 0x50, tcp[13] = flags;
      if ((pick >> 3) & 1) {  // TCP Fast Open's option (an empty cookie request; data on a SYN)
        tcp[12] = 0x60;
        tcp.insert(tcp.end(), {34, 2, 1, 1});
      }
      const auto data = r.bytes(r.u8());
      tcp.insert(tcp.end(), data.begin(), data.end());
      return ipv4(6, 0, 0x4000, tcp, dir ? 2 : 1, dir ? 1 : 2);
    }
  }
}

std::string chunks_text(const std::vector<stream::Chunk>& v, const std::vector<std::string>& d) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += std::to_string(v[i].flow) + "/" + std::to_string(v[i].dir) + "@" +
         std::to_string(v[i].offset) + (v[i].gap ? "gap" : "") + std::to_string(v[i].len) + ":" +
         d[i] + ";";
  return s;
}

// The chained oracle (ref.flow's table, then the byte store's reassembler, ended flows closed)
// and cpu.flowstream, fed the same batches.
class FlowStreamPair {
 public:
  FlowStreamPair(const flow::FlowConfig& fc, const stream::StreamConfig& sc)
      : tracker_(flow::detail::make_ref_tracker(fc)), reasm_("ref", sc),
        fused_(stream::detail::make_cpu_flowstream(fc, sc)) {}

  void add(const std::vector<uint8_t>& frame, uint64_t now) {
    metas_.push_back({uint32_t(buffer_.size()), uint32_t(frame.size()), uint32_t(frame.size()), 0,
                      0, now});
    buffer_.insert(buffer_.end(), frame.begin(), frame.end());
  }
  size_t pending() const { return metas_.size(); }

  void batch() {
    const uint32_t n = uint32_t(metas_.size());
    const packet::BatchView v{buffer_.data(), metas_.data(), n};
    std::vector<packet::PacketInfo> infos(n);
    for (uint32_t i = 0; i < n; ++i)
      infos[i] = packet::core::parse_packet(v.data(i), metas_[i].caplen, metas_[i].len);
    std::vector<flow::PacketFlow> want(n), got(n);
    std::vector<flow::FlowRecord> ended_a, ended_b;
    ca_.clear(), cb_.clear();
    (void)tracker_->track({infos.data(), n}, {metas_.data(), n}, {want.data(), n}, ended_a);
    (void)stream::reassemble_batch(reasm_, v, infos.data(), want.data(), n, sink(ca_));
    for (const flow::FlowRecord& r : ended_a) (void)reasm_.close(r.serial, sink(ca_));
    (void)fused_->process(v, infos.data(), {got.data(), n}, ended_b, sink(cb_));
    for (uint32_t i = 0; i < n; ++i)
      if (want[i].serial != got[i].serial || want[i].dir != got[i].dir ||
          want[i].track != got[i].track || want[i].created != got[i].created)
        fail("answers");
    compare(ended_a, ended_b);
    metas_.clear();
    buffer_.clear();
  }
  void finish() {
    batch();
    std::vector<flow::FlowRecord> ended_a, ended_b;
    ca_.clear(), cb_.clear();
    (void)tracker_->flush(ended_a);
    for (const flow::FlowRecord& r : ended_a) (void)reasm_.close(r.serial, sink(ca_));
    (void)fused_->flush(ended_b, sink(cb_));
    compare(ended_a, ended_b);
    if (reasm_.flows() != 0 || fused_->streams() != 0) fail("state left after the flush");
  }

 private:
  static stream::ChunkSink sink(std::string& into) {
    return [&into](const stream::Chunk& k) {
      into += std::to_string(k.flow) + "/" + std::to_string(k.dir) + "@" + std::to_string(k.offset) +
              (k.gap ? "gap" : "") + std::to_string(k.len) + ":" +
              (k.gap ? "" : std::string(reinterpret_cast<const char*>(k.data), k.len)) + ";";
    };
  }
  void compare(const std::vector<flow::FlowRecord>& a, const std::vector<flow::FlowRecord>& b) {
    if (a != b) fail("flow records");
    if (ca_ != cb_) fail("chunks");
    if (!(tracker_->counters() == fused_->flow_counters())) fail("flow counters");
    if (!(reasm_.counters() == fused_->stream_counters())) fail("stream counters");
    if (reasm_.flows() != fused_->streams()) fail("flows with stream state");
  }
  [[noreturn]] static void fail(const char* what) {
    std::fprintf(stderr, "chained tracking and reassembly and cpu.flowstream disagree: %s\n", what);
    std::abort();
  }

  std::unique_ptr<flow::FlowTracker> tracker_;
  stream::detail::StoreReassembler<ranges::ByteStore, stream::detail::NodeMap> reasm_;
  std::unique_ptr<stream::FlowStream> fused_;
  std::vector<uint8_t> buffer_;
  std::vector<packet::PacketMeta> metas_;
  std::string ca_, cb_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r{data, size};
  defrag::DefragConfig dc;
  dc.max_datagrams = 64;
  dc.memcap        = 1u << 16;
  dc.policy        = defrag::FragPolicy(r.u8() % unsigned(defrag::FragPolicy::kCount));
  dc.ipv6_overlap_drop = r.u8() & 1;
  stream::StreamConfig sc;
  sc.policy     = stream::Policy(r.u8() % unsigned(stream::Policy::kCount));
  sc.mode       = r.u8() & 1 ? stream::Mode::kInline : stream::Mode::kIds;
  sc.midstream  = r.u8() & 1;
  sc.max_ahead  = 1u << 14;
  sc.stream_cap = 1u << 12;
  sc.memcap     = 1u << 14;
  sc.depth      = r.u8() & 1 ? 2000 : 0;
  defrag::detail::StoreDefragmenter<ranges::ByteStore> da("ref", dc);
  defrag::detail::StoreDefragmenter<ranges::RangeStore> db("cpu", dc);
  stream::detail::StoreReassembler<ranges::ByteStore, stream::detail::NodeMap> sa("ref", sc);
  stream::detail::StoreReassembler<ranges::RangeStore, warpath::detail::SerialMap> sb("cpu", sc);
  flow::FlowConfig fc;
  const uint8_t shape = r.u8();
  fc.capacity         = 1 + shape % 16;
  fc.on_full          = flow::OnFull((shape >> 4) % 3);
  for (auto& t : fc.timeout_s) t[0] = 30, t[1] = 300, t[2] = 30;
  for (auto& t : fc.emergency_timeout_s) t[0] = 5, t[1] = 100, t[2] = 10;
  const size_t batch = 1 + (shape >> 6) * 5;  // 1, 6, 11 or 16 packets
  FlowStreamPair pair(fc, sc);
  uint32_t seq_base[4][2] = {{0xfffffff0u, 7}, {1, 0x7fffffffu}, {0, 0}, {0xfffffff5u, 0xffffffffu}};
  std::vector<stream::Chunk> ca, cb;
  std::vector<std::string> ta, tb;
  auto sink = [](std::vector<stream::Chunk>& c, std::vector<std::string>& t) {
    return [&c, &t](const stream::Chunk& k) {
      c.push_back(k);
      t.emplace_back(k.gap ? "" : std::string(reinterpret_cast<const char*>(k.data), k.len));
    };
  };
  const stream::ChunkSink sink_a = sink(ca, ta), sink_b = sink(cb, tb);
  uint64_t now = 1'700'000'000'000'000'000ull;
  for (int packets = 0; r.n && packets < 256; ++packets) {
    const std::vector<uint8_t> frame = build(r, seq_base);
    now += uint64_t(r.u8()) * 1'000'000'000ull;  // up to 255 s between packets
    const uint8_t* p          = frame.empty() ? nullptr : frame.data();
    static const uint8_t z[1] = {0};
    const auto caplen         = uint32_t(frame.size());
    const packet::PacketInfo info = packet::core::parse_packet(p ? p : z, caplen, caplen);
    if (!frame.empty()) {
      pair.add(frame, now);
      if (pair.pending() == batch) pair.batch();
    }
    std::vector<uint8_t> wa, wb;
    const auto ra = da.add(info, p ? p : z, caplen, now, wa);
    const auto rb = db.add(info, p ? p : z, caplen, now, wb);
    if (ra != rb || wa != wb || !(da.counters() == db.counters())) {
      std::fprintf(stderr, "defragmenters disagree at packet %d\n", packets);
      std::abort();
    }
    const std::vector<uint8_t>& whole = ra == defrag::FragResult::kCompleted ? wa : frame;
    if (ra != defrag::FragResult::kNotFragment && ra != defrag::FragResult::kCompleted) continue;
    if (whole.empty()) continue;
    const packet::PacketInfo w =
        packet::core::parse_packet(whole.data(), uint32_t(whole.size()), uint32_t(whole.size()));
    stream::Segment s;
    if (!stream::segment_of(w, whole.data(), uint32_t(whole.size()), s)) continue;
    const bool from_a = w.sport >= w.dport;  // the client's ephemeral port is the larger
    s.flow            = uint64_t(from_a ? w.sport : w.dport);
    s.dir             = from_a ? 0 : 1;
    (void)sa.segment(s, sink_a);
    (void)sb.segment(s, sink_b);
  }
  pair.finish();
  (void)sa.close_all(sink_a);
  (void)sb.close_all(sink_b);
  if (chunks_text(ca, ta) != chunks_text(cb, tb) || !(sa.counters() == sb.counters())) {
    std::fprintf(stderr, "reassemblers disagree\n");
    std::abort();
  }
  return 0;
}
