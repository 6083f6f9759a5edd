// src/gen/traffic.cpp: seeded traffic generation and frames from ClassBench traces.
//
// Determinism
//   Three independent Rng streams derive from the seed: one draws the flow table, one the
//   per-packet plan (flow and size), one the per-packet contents (IP ID, TCP flags and window,
//   payload). Because every draw is sequential, the first n packets of a run with count > n are
//   the packets of the run with count = n.
//
// Flow table
//   The flow attributes (IPv6 or not, VLAN or not, transport protocol) are assigned in exact
//   proportions, not by independent coin flips: round(flows * share) flows get the attribute
//   (the protocol counts by the largest-remainder method), and a seeded shuffle decides which.
//   Packets then pick flows uniformly, so the packet mix follows the shares closely even for a
//   few hundred flows. Addresses are random in 10.0.0.0/8 and fd00::/8, source ports
//   ephemeral (49152..65535), destination ports from short lists of common services; MACs are
//   locally administered and derived from the last four address bytes (02:00:a:b:c:d).
//
// Sizes
//   A drawn size that is too small for the flow's headers (an IPv6 + VLAN + TCP frame needs
//   78 bytes, i.e. size 82) is grown to the smallest size that holds them.
#include "warpath/gen/traffic.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gen/packet_builder.hpp"

namespace warpath::gen {
namespace {

using detail::FrameSpec;
using detail::PacketFields;
using detail::Rng;

constexpr uint32_t kMinFrameSize   = 64;
constexpr uint32_t kMaxFrameSize   = 9018;  // Jumbo frame with FCS.
constexpr uint32_t kMaxFlows       = 1u << 24;
constexpr uint32_t kBatchCellBytes = 2048;

constexpr uint64_t kFlowStream    = 1;
constexpr uint64_t kPlanStream    = 2;
constexpr uint64_t kContentStream = 3;

constexpr uint16_t kTcpPorts[] = {80, 443, 22, 25, 53, 110, 143, 993, 3306, 5432, 6379, 8080};
// No tunnel ports (VXLAN 4789, Geneve 6081): the payload is filler, not an inner frame.
constexpr uint16_t kUdpPorts[] = {53, 123, 161, 443, 500, 514, 1900, 4500, 5353};

struct Flow {
  FrameSpec spec;
  uint32_t header_bytes = 0;
  uint32_t seq = 0, ack = 0;  // TCP sequence state.
  uint16_t icmp_seq = 0;
};

Status invalid(const std::string& message) { return {Errc::kInvalidArgument, message}; }

bool is_share(double x) { return x >= 0.0 && x <= 1.0; }  // False for NaN.

/// Rejects a run whose last timestamp would not fit in 64 bits.
Status check_timestamps(const char* type, uint64_t count, uint64_t start_ns, uint64_t gap_ns) {
  if (count > 1 && gap_ns > 0 &&
      (count - 1) > (std::numeric_limits<uint64_t>::max() - start_ns) / gap_ns) {
    return invalid(std::string(type) + ".gap_ns: the timestamps of " + std::to_string(count) +
                   " packets overflow 64 bits");
  }
  return Status::ok();
}

/// Buffer bytes a packet of `caplen` bytes occupies: whole cells, at least one.
uint64_t cell_footprint(uint32_t caplen, uint32_t cell_bytes) {
  uint64_t cells = (uint64_t{caplen} + cell_bytes - 1) / cell_bytes;
  return std::max<uint64_t>(cells, 1) * cell_bytes;
}

/// Fails with kCapacity unless `out` has room for `packets` more packets whose cells take
/// `cell_bytes_needed` bytes. The bytes already used follow from the last packet's offset.
Status check_room(const packet::PacketBatch& out, uint64_t packets, uint64_t cell_bytes_needed) {
  if (packets > uint64_t{out.max_packets()} - out.size()) {
    return {Errc::kCapacity, "batch has room for " +
                                 std::to_string(out.max_packets() - out.size()) +
                                 " more packets, " + std::to_string(packets) + " requested"};
  }
  uint64_t used = 0;
  if (out.size() > 0) {
    const packet::PacketMeta& last = out.meta(out.size() - 1);
    used                           = last.offset + cell_footprint(last.caplen, out.cell_bytes());
  }
  if (used + cell_bytes_needed > out.buffer_bytes()) {
    return {Errc::kCapacity, "batch buffer has " + std::to_string(out.buffer_bytes() - used) +
                                 " free bytes, " + std::to_string(cell_bytes_needed) + " needed"};
  }
  return Status::ok();
}

/// `n` flags of which round(n * share) are set, in a seeded random order.
std::vector<uint8_t> shuffled_flags(uint32_t n, double share, Rng& rng) {
  uint64_t set = std::min<uint64_t>(n, static_cast<uint64_t>(std::llround(n * share)));
  std::vector<uint8_t> flags(n, 0);
  std::fill(flags.begin(), flags.begin() + static_cast<ptrdiff_t>(set), 1);
  for (uint32_t i = n; i > 1; --i) std::swap(flags[i - 1], flags[rng.below(i)]);
  return flags;
}

/// Flow protocols (0 TCP, 1 UDP, 2 ICMP) in proportion to the shares, by the largest-remainder
/// method. The shares become 32.32 fixed-point weights first (one rounded division and one
/// exact scaling each), so the apportionment is integer arithmetic and cannot change with
/// floating-point contraction (FMA) on another platform.
std::vector<uint8_t> shuffled_protocols(const TrafficParams& p, Rng& rng) {
  const double shares[3] = {p.tcp_share, p.udp_share, p.icmp_share};
  const double total     = shares[0] + shares[1] + shares[2];
  uint64_t weights[3], counts[3], remainders[3];
  uint64_t assigned = 0;
  for (int k = 0; k < 3; ++k) {
    weights[k]           = static_cast<uint64_t>(std::llround(shares[k] / total * 4294967296.0));
    const uint64_t quota = p.flows * weights[k];  // Below 2^57: flows <= 2^24.
    counts[k]            = quota >> 32;
    remainders[k]        = quota & 0xffffffffu;
    assigned += counts[k];
  }
  // Each flooring loses less than one flow and the weights sum to 2^32 within 2, so at most
  // three flows are left; each goes to the largest remainder (ties: the earlier protocol) of a
  // protocol with a non-zero share that has not had one yet.
  bool topped_up[3] = {false, false, false};
  while (assigned < p.flows) {
    int best = -1;
    for (int k = 0; k < 3; ++k) {
      if (weights[k] == 0 || topped_up[k]) continue;
      if (best < 0 || remainders[k] > remainders[best]) best = k;
    }
    if (best < 0) {  // Not reachable by the bound above; keeps the loop finite regardless.
      topped_up[0] = topped_up[1] = topped_up[2] = false;
      continue;
    }
    ++counts[best];
    topped_up[best] = true;
    ++assigned;
  }
  std::vector<uint8_t> protocols;
  protocols.reserve(p.flows);
  for (uint8_t k = 0; k < 3; ++k) protocols.insert(protocols.end(), counts[k], k);
  protocols.resize(p.flows, 0);  // Guards against the counts summing above flows.
  for (uint32_t i = p.flows; i > 1; --i) std::swap(protocols[i - 1], protocols[rng.below(i)]);
  return protocols;
}

std::vector<Flow> draw_flows(const TrafficParams& p) {
  Rng rng(p.seed, kFlowStream);
  const std::vector<uint8_t> ipv6      = shuffled_flags(p.flows, p.ipv6_share, rng);
  const std::vector<uint8_t> vlan      = shuffled_flags(p.flows, p.vlan_share, rng);
  const std::vector<uint8_t> protocols = shuffled_protocols(p, rng);
  std::vector<Flow> flows(p.flows);
  for (uint32_t i = 0; i < p.flows; ++i) {
    FrameSpec& s = flows[i].spec;
    s.ipv6       = ipv6[i] != 0;
    s.vlan       = vlan[i] != 0;
    if (s.vlan) {
      uint32_t vid = 1 + rng.below(4094);
      uint32_t pcp = rng.below(8);
      s.vlan_tci   = static_cast<uint16_t>(pcp << 13 | vid);
    }
    if (s.ipv6) {
      s.src6[0] = s.dst6[0] = 0xfd;
      for (int b = 1; b < 16; ++b) s.src6[b] = static_cast<uint8_t>(rng.next() >> 56);
      for (int b = 1; b < 16; ++b) s.dst6[b] = static_cast<uint8_t>(rng.next() >> 56);
      s.flow_label = rng.next32() & 0xfffff;
      detail::derived_mac(s.src6 + 12, s.src_mac);
      detail::derived_mac(s.dst6 + 12, s.dst_mac);
    } else {
      s.src4               = 0x0a000000u | (rng.next32() & 0xffffff);
      s.dst4               = 0x0a000000u | (rng.next32() & 0xffffff);
      const uint8_t src[4] = {10, uint8_t(s.src4 >> 16), uint8_t(s.src4 >> 8), uint8_t(s.src4)};
      const uint8_t dst[4] = {10, uint8_t(s.dst4 >> 16), uint8_t(s.dst4 >> 8), uint8_t(s.dst4)};
      detail::derived_mac(src, s.src_mac);
      detail::derived_mac(dst, s.dst_mac);
    }
    s.sport = static_cast<uint16_t>(49152 + rng.below(16384));
    switch (protocols[i]) {
      case 0:
        s.proto = detail::kProtoTcp;
        s.dport = kTcpPorts[rng.below(std::size(kTcpPorts))];
        break;
      case 1:
        s.proto = detail::kProtoUdp;
        s.dport = kUdpPorts[rng.below(std::size(kUdpPorts))];
        break;
      default:  // ICMP echo: the source port serves as the echo identifier.
        s.proto = s.ipv6 ? detail::kProtoIcmpv6 : detail::kProtoIcmp;
        s.dport = 0;
        break;
    }
    flows[i].seq          = rng.next32();
    flows[i].ack          = rng.next32();
    flows[i].header_bytes = detail::frame_header_bytes(s);
  }
  return flows;
}

uint32_t draw_size(const TrafficParams& p, Rng& rng) {
  switch (p.sizes) {
    case SizeMix::kUniform:
      return p.min_size + rng.below(p.max_size - p.min_size + 1);
    case SizeMix::kImix: {
      uint32_t r = rng.below(12);  // Simple IMIX: 7 x 64, 4 x 594, 1 x 1518.
      return r < 7 ? 64 : r < 11 ? 594 : 1518;
    }
    case SizeMix::kFixed:
      break;
  }
  return p.min_size;
}

/// The next packet's flow and captured length (frame size grown to fit, minus the FCS).
std::pair<uint32_t, uint32_t> draw_packet(const TrafficParams& p, const std::vector<Flow>& flows,
                                          Rng& plan) {
  uint32_t flow = plan.below(p.flows);
  uint32_t size = std::max(draw_size(p, plan), flows[flow].header_bytes + detail::kFcsBytes);
  return {flow, size - detail::kFcsBytes};
}

uint8_t draw_tcp_flags(Rng& rng) {
  uint32_t r = rng.below(100);
  if (r < 2) return detail::kTcpSyn;
  if (r < 4) return detail::kTcpFin | detail::kTcpAck;
  if (r < 50) return detail::kTcpAck;
  return detail::kTcpPsh | detail::kTcpAck;
}

}  // namespace

Status TrafficParams::validate() const {
  if (flows < 1 || flows > kMaxFlows)
    return invalid("TrafficParams.flows must be in 1.." + std::to_string(kMaxFlows) + " (got " +
                   std::to_string(flows) + ")");
  if (!is_share(ipv6_share))
    return invalid("TrafficParams.ipv6_share must be in [0, 1] (got " + std::to_string(ipv6_share) +
                   ")");
  if (!is_share(vlan_share))
    return invalid("TrafficParams.vlan_share must be in [0, 1] (got " + std::to_string(vlan_share) +
                   ")");
  const std::pair<const char*, double> shares[] = {
      {"tcp_share", tcp_share}, {"udp_share", udp_share}, {"icmp_share", icmp_share}};
  for (const auto& [name, value] : shares) {
    if (!(value >= 0.0 && std::isfinite(value)))
      return invalid(std::string("TrafficParams.") + name + " must be finite and >= 0 (got " +
                     std::to_string(value) + ")");
  }
  if (!(tcp_share + udp_share + icmp_share > 0.0) ||
      !std::isfinite(tcp_share + udp_share + icmp_share))
    return invalid("TrafficParams.tcp_share + udp_share + icmp_share must be > 0");
  if (sizes != SizeMix::kUniform && sizes != SizeMix::kImix && sizes != SizeMix::kFixed)
    return invalid("TrafficParams.sizes is not a SizeMix value");
  if (min_size < kMinFrameSize)
    return invalid("TrafficParams.min_size must be >= 64 (got " + std::to_string(min_size) + ")");
  if (max_size > kMaxFrameSize)
    return invalid("TrafficParams.max_size must be <= 9018 (got " + std::to_string(max_size) + ")");
  if (min_size > max_size)
    return invalid("TrafficParams.min_size (" + std::to_string(min_size) +
                   ") must be <= max_size (" + std::to_string(max_size) + ")");
  return check_timestamps("TrafficParams", count, start_ns, gap_ns);
}

Status generate_traffic(const TrafficParams& params, packet::PacketBatch& out) {
  WARPATH_TRY(params.validate());
  if (params.count == 0) return Status::ok();
  const std::vector<Flow> table = draw_flows(params);

  // Pass 1: the plan alone, to check the room before anything is appended.
  Rng plan(params.seed, kPlanStream);
  uint64_t cell_bytes_needed = 0;
  for (uint32_t i = 0; i < params.count; ++i)
    cell_bytes_needed += cell_footprint(draw_packet(params, table, plan).second, out.cell_bytes());
  WARPATH_TRY(check_room(out, params.count, cell_bytes_needed));

  // Pass 2: the same plan again, and the frames.
  std::vector<Flow> flows = table;
  plan                    = Rng(params.seed, kPlanStream);
  Rng content(params.seed, kContentStream);
  for (uint32_t i = 0; i < params.count; ++i) {
    auto [index, caplen] = draw_packet(params, flows, plan);
    Flow& flow           = flows[index];
    PacketFields fields;
    fields.ip_id = content.next16();
    if (flow.spec.proto == detail::kProtoTcp) {
      fields.tcp_flags = draw_tcp_flags(content);
      fields.window    = static_cast<uint16_t>(4096 + content.below(61440));
      fields.seq       = flow.seq;
      fields.ack       = flow.ack;
      uint32_t payload = caplen - flow.header_bytes;
      bool syn_or_fin  = (fields.tcp_flags & (detail::kTcpSyn | detail::kTcpFin)) != 0;
      flow.seq += payload + (syn_or_fin ? 1 : 0);
    } else if (detail::is_icmp_echo(flow.spec)) {
      fields.icmp_id  = flow.spec.sport;
      fields.icmp_seq = flow.icmp_seq++;
    }
    uint64_t timestamp = params.start_ns + uint64_t{i} * params.gap_ns;
    uint8_t* frame     = out.append_uninitialized(caplen, caplen, timestamp, params.port);
    if (frame == nullptr) {  // Only if the batch allocates differently from check_room().
      return {Errc::kCapacity,
              "batch ran out of room after " + std::to_string(i) + " generated packets"};
    }
    detail::build_frame(flow.spec, fields, caplen, &content, frame);
  }
  return Status::ok();
}

Result<packet::PacketBatch> batch_for(uint32_t count, uint32_t max_frame) {
  const uint64_t bytes = uint64_t(std::max(count, 1u)) * cell_footprint(max_frame, kBatchCellBytes);
  return packet::PacketBatch::create(count, kBatchCellBytes, size_t(bytes));
}

Status frames_from_trace(const std::vector<io::TraceEntry>& trace, const TraceFrameParams& params,
                         packet::PacketBatch& out) {
  if (params.size < kMinFrameSize || params.size > kMaxFrameSize)
    return invalid("TraceFrameParams.size must be in 64..9018 (got " + std::to_string(params.size) +
                   ")");
  WARPATH_TRY(check_timestamps("TraceFrameParams", trace.size(), params.start_ns, params.gap_ns));

  auto spec_of = [](const packet::FiveTuple4& key) {
    FrameSpec spec;
    spec.proto           = key.proto;
    spec.src4            = key.src;
    spec.dst4            = key.dst;
    spec.sport           = key.sport;
    spec.dport           = key.dport;
    const uint8_t src[4] = {uint8_t(key.src >> 24), uint8_t(key.src >> 16), uint8_t(key.src >> 8),
                            uint8_t(key.src)};
    const uint8_t dst[4] = {uint8_t(key.dst >> 24), uint8_t(key.dst >> 16), uint8_t(key.dst >> 8),
                            uint8_t(key.dst)};
    detail::derived_mac(src, spec.src_mac);
    detail::derived_mac(dst, spec.dst_mac);
    return spec;
  };
  auto caplen_of = [&](const FrameSpec& spec) {
    return std::max(params.size, detail::frame_header_bytes(spec) + detail::kFcsBytes) -
           detail::kFcsBytes;
  };

  uint64_t cell_bytes_needed = 0;
  for (const io::TraceEntry& entry : trace)
    cell_bytes_needed += cell_footprint(caplen_of(spec_of(entry.key)), out.cell_bytes());
  WARPATH_TRY(check_room(out, trace.size(), cell_bytes_needed));

  for (size_t i = 0; i < trace.size(); ++i) {
    const FrameSpec spec  = spec_of(trace[i].key);
    const uint32_t caplen = caplen_of(spec);
    PacketFields fields;  // TCP: ACK, seq 0, ack 0, window 65535.
    fields.ip_id       = static_cast<uint16_t>(i);
    fields.icmp_id     = spec.sport;  // ICMP echo request: identifier and sequence from the ports.
    fields.icmp_seq    = spec.dport;
    uint64_t timestamp = params.start_ns + uint64_t{i} * params.gap_ns;
    uint8_t* frame     = out.append_uninitialized(caplen, caplen, timestamp);
    if (frame == nullptr) {
      return {Errc::kCapacity,
              "batch ran out of room after " + std::to_string(i) + " trace frames"};
    }
    detail::build_frame(spec, fields, caplen, nullptr, frame);
  }
  return Status::ok();
}

}  // namespace warpath::gen
