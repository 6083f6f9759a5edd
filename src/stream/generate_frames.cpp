// Generated conversations as frames (include/warpath/stream/generate.hpp: generate_frames).
#include <algorithm>

#include "gen/packet_builder.hpp"
#include "warpath/stream/generate.hpp"

namespace warpath::stream {
namespace {

struct FrameWriter {
  GeneratedFrames& out;
  uint64_t now;
  gen::detail::Rng& rng;
  uint32_t bad_checksum_percent;
  void tcp(uint32_t client_ip, uint16_t client_port, uint8_t dir, uint8_t flags, uint32_t seq,
           uint32_t ack, const uint8_t* data, uint32_t len) {
    gen::detail::FrameSpec spec;
    spec.src4  = dir == 0 ? client_ip : kServer;
    spec.dst4  = dir == 0 ? kServer : client_ip;
    spec.sport = dir == 0 ? client_port : 80;
    spec.dport = dir == 0 ? 80 : client_port;
    gen::detail::PacketFields fields;
    fields.seq       = seq;
    fields.ack       = ack;
    fields.tcp_flags = flags;
    add(spec, fields, data, len);
  }
  void udp(uint32_t client_ip, uint32_t len) {
    gen::detail::FrameSpec spec;
    spec.proto = gen::detail::kProtoUdp;
    spec.src4  = client_ip;
    spec.dst4  = kServer;
    spec.sport = 5353;
    spec.dport = 53;
    add(spec, {}, nullptr, len);
  }
  void add(const gen::detail::FrameSpec& spec, const gen::detail::PacketFields& fields,
           const uint8_t* data, uint32_t len) {
    const uint32_t head = gen::detail::frame_header_bytes(spec);
    const size_t at     = out.bytes.size();
    out.bytes.resize(at + head + len);
    gen::detail::build_frame(spec, fields, head + len, nullptr, out.bytes.data() + at);
    if (data) std::copy(data, data + len, out.bytes.begin() + long(at + head));
    if (bad_checksum_percent && rng.below(100) < bad_checksum_percent)
      out.bytes[at + gen::detail::kEthHeaderBytes + 10] ^= 0x5a;  // the IPv4 header checksum
    out.offset.push_back(uint32_t(at));
    out.length.push_back(head + len);
    out.ts_ns.push_back(now);
  }
  static constexpr uint32_t kServer = 0xc0a80001u;
};

// One generation of connections (generate_streams at `seed`) written to `w`.
void write_generation(const FrameGenParams& p, uint64_t seed, FrameWriter& w) {
  StreamGenParams sp = p.streams;
  sp.seed            = seed;
  const GeneratedStreams g = generate_streams(sp);
  gen::detail::Rng& rng    = w.rng;
  auto client = [&](uint64_t flow, uint32_t& ip, uint16_t& port) {
    const uint64_t k = p.shared_ports ? (flow + 1) / 2 : flow;
    ip               = 0x0a000000u + uint32_t(k);
    port             = uint16_t(1024 + k % 60000);
  };
  const size_t n        = g.segments.size();
  const uint32_t floods = p.syn_flood;
  size_t flood_next     = 0;
  for (size_t i = 0; i < n; ++i) {
    const Segment& s = g.segments[i];
    uint32_t ip      = 0;
    uint16_t port    = 0;
    client(s.flow, ip, port);
    w.tcp(ip, port, s.dir, s.flags, s.seq, s.ack, s.data, s.len);
    w.now += p.gap_ns;
    if (p.rst_percent && s.len && rng.below(100) < p.rst_percent) {
      const uint32_t seq = s.seq + rng.below(s.len + 2) - 1;
      w.tcp(ip, port, uint8_t(rng.below(2)), 0x04, seq, 0, nullptr, 0);
      w.now += p.gap_ns;
    }
    if (p.udp_percent && rng.below(100) < p.udp_percent) {
      w.udp(ip, 1 + rng.below(64));
      w.now += p.gap_ns;
    }
    // The flood's SYNs spread evenly: SYN k after segment k * n / floods.
    while (flood_next < floods && flood_next * n / floods <= i) {
      const uint16_t flood_port = uint16_t(40000 + flood_next % 20000);
      w.tcp(0x0b000000u + uint32_t(flood_next), flood_port, 0, 0x02, rng.next32(), 0, nullptr, 0);
      w.now += p.gap_ns;
      ++flood_next;
    }
    if (p.idle_permille && rng.below(1000) < p.idle_permille) w.now += p.idle_ns;
  }
}

}  // namespace

GeneratedFrames generate_frames(const FrameGenParams& p) {
  gen::detail::Rng rng(p.streams.seed, 11);
  GeneratedFrames out;
  FrameWriter w{out, p.start_ns, rng, p.bad_checksum_percent};
  write_generation(p, p.streams.seed, w);
  if (p.again) write_generation(p, p.streams.seed + 0x9e37, w);
  return out;
}

}  // namespace warpath::stream
