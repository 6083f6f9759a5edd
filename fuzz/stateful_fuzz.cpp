// libFuzzer target: hostile packet sequences through IP defragmentation and TCP reassembly.
//
// The input is a list of records, each building one frame:
//   0  raw frame:       u16 length, the bytes
//   1  IPv4 fragment:   id, protocol pick, u16 offset (x8), MF, length, payload
//   2  IPv6 fragment:   the same with a fragment header
//   3  TCP segment:     connection pick (4), direction, flags, u16 seq step, u16 ack step,
//                       length, payload (IPv4, one of four connections, ISNs near 2^32)
// Every frame is parsed (the shared core parser) and given to two defragmenters built on the
// two byte stores (the oracle's per-byte map and cpu.defrag's ranges), which must agree on the
// result and the datagram; what comes out whole goes, when TCP, to two reassemblers on the two
// stores, whose chunks and counters must agree. AddressSanitizer and UBSan watch every read;
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
  (void)sa.close_all(sink_a);
  (void)sb.close_all(sink_b);
  if (chunks_text(ca, ta) != chunks_text(cb, tb) || !(sa.counters() == sb.counters())) {
    std::fprintf(stderr, "reassemblers disagree\n");
    std::abort();
  }
  return 0;
}
