// include/warpath/runtime/port.hpp
//
// Packet ports: where the pipeline's packets come from and go to.
//
// What
//   A Port is one network attachment with RX queues and TX. The pipeline (pipeline.hpp) gives
//   each worker thread its own RX queues (a queue is read by exactly one worker) and lets every
//   worker transmit on every port, naming itself, so a port keeps per-worker TX state (or
//   locks where the medium is shared, as a pcap file is).
//
// Kinds (SPEC is what `warpath run --port NAME=SPEC` and the config's [ports] table take)
//   pcap:IN.pcap:OUT.pcap   packets read from IN (pcap or pcapng, once, then the queue ends)
//                           and written to OUT (pcap, nanosecond timestamps, IN's link type and
//                           snap length). Either side may be empty ("pcap:in.pcap:" or
//                           "pcap:in.pcap" receive only, "pcap::out.pcap" sends only: 0 RX
//                           queues). One RX queue. OUT begins after the last ':'.
//   afpacket:IFACE          a live Linux interface through AF_PACKET with a memory-mapped RX
//                           ring per queue (TPACKET_V2 slots below a 1 ms rx_wait_us, else
//                           TPACKET_V3 blocks) (rx_queues of them; with more than
//                           one, PACKET_FANOUT_HASH spreads flows over the queues, so a flow
//                           stays on one worker) in promiscuous mode, not seeing its own
//                           transmissions; sends through one packet socket per worker. Kernel
//                           receive timestamps. Needs CAP_NET_RAW.
//   afxdp:IFACE             AF_XDP sockets through libxdp, one per RX queue of the interface (at
//                           most rx_queues), libxdp's XSK program attached in the mode the driver
//                           supports (native, else generic/SKB) and detached on close. Worker w
//                           sends on socket w % sockets. Needs CAP_NET_ADMIN + CAP_BPF (root).
//   gen:RATE[:COUNT]        built-in traffic (gen/traffic.hpp), seeded: RATE packets per
//                           second over all queues ("1000", "10k", "2.5M", "1Mpps", "max" or 0
//                           for as fast as possible; "gen" alone is "gen:max"), COUNT packets in
//                           all (1000, 2M; split over the queues, then they end; default
//                           unbounded). Queue q replays a pool of 4096 frames generated with
//                           seed + q; `gen_profile` picks the mix (gen_port.cpp). Sent packets
//                           are discarded (counted).
//   null                    no RX; TX discards (counted). The sink.
//   tap:IFACE               no RX; TX hands frames to the host's stack through a TAP interface
//                           IFACE (created, set up, removed on close; CAP_NET_ADMIN): the slow
//                           path's way to the host where the kernel does not see the port's
//                           traffic itself (afxdp, dpdk). See src/runtime/ports/tap_port.cpp.
//   dpdk:VDEV[,KEY=VAL...]  a DPDK virtual device through rte_ethdev (builds with DPDK only;
//                           otherwise kNotBuilt): the text after "dpdk:" is handed to
//                           rte_vdev_init() as the device name and its arguments, e.g.
//                           dpdk:net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap, dpdk:net_ring0
//                           (its TX feeds its RX), dpdk:net_af_packet0,iface=veth0,
//                           dpdk:net_af_xdp0,iface=veth0. min(rx_queues, what the device has)
//                           RX queues (RSS when more than one), a TX queue per worker as far as
//                           the device has them (shared under a lock beyond that). EAL starts
//                           once per process without hugepages or PCI. A live device never
//                           ends; net_pcap reading a file ends after the file (detected by empty
//                           polls); net_pcap without an RX source is send-only. Timestamps:
//                           CLOCK_REALTIME at reception. Zero copy (PortOptions::zero_copy):
//                           frames hold received mbufs and the port sends them as they are.
//                           See src/runtime/system/dpdk_port.cpp.
//
// RX queue overflow
//   A live source does not wait for warpath: packets that arrive while the RX ring is full are
//   lost there and counted as rx_dropped (kernel ring drops for afpacket/afxdp; the generator
//   at a set rate models a ring of `ring_frames` packets the same way). rx counts the packets
//   handed to warpath; rx + rx_dropped is what arrived at the port.
//
// Timestamps
//   rx_burst() sets PacketMeta::timestamp_ns to the packet's wire time when the source has one
//   (pcap file, afpacket's kernel timestamp; the generator at a set rate: the modelled arrival
//   time) and otherwise to the time of reception (CLOCK_REALTIME, read once per burst: afxdp,
//   the generator at full speed). The pipeline measures latency with its own monotonic clock,
//   not with these.
//
// Thread safety
//   rx_burst(q, ...) is called by one thread per queue q; tx_burst(worker, ...) by one thread
//   per worker id (distinct worker ids may call concurrently); stats() from any thread.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/span.hpp"
#include "warpath/core/status.hpp"
#include "warpath/packet/batch.hpp"

namespace warpath::runtime {

struct PortStats {
  uint64_t rx         = 0;  ///< packets handed to warpath
  uint64_t rx_bytes   = 0;
  uint64_t rx_dropped = 0;  ///< lost at the RX queue (ring full) before warpath saw them
  uint64_t tx         = 0;  ///< packets sent (or written, or discarded by a sink)
  uint64_t tx_bytes   = 0;
  uint64_t tx_errors  = 0;  ///< packets tx_burst() could not send (counted, not retried)
};

struct PortOptions {
  uint16_t index     = 0;  ///< the port number packets get in PacketMeta::port
  uint32_t rx_queues = 1;  ///< RX queues wanted (live ports may give fewer; see below)
  uint32_t workers   = 1;  ///< distinct worker ids that will call tx_burst
  /// RX ring size in packets of frame_bytes (afpacket: a TPACKET_V3 ring holds more of shorter
  /// ones; afxdp: rounded up to a power of two; the generator at a rate: exactly).
  uint32_t ring_frames = 4096;
  uint32_t frame_bytes = 2048;  ///< largest frame (snap length): longer ones are cut (caplen)
  /// The longest a received packet should wait in the port before a reader can see it (the
  /// run's delay bound; 0: throughput first). afpacket uses per-packet TPACKET_V2 slots below
  /// 1,000 us, TPACKET_V3 blocks (handed over when full or after 1 ms) otherwise.
  uint32_t rx_wait_us = 0;
  uint64_t seed       = 1;  ///< generator seed (queue q uses seed + q)
  /// Generator traffic profile: modifiers joined by '+' (default, imix, uniform, min, max,
  /// ipv4, ipv6, novlan, tcp, udp; e.g. "ipv4+udp+min"). See src/runtime/ports/gen_port.cpp.
  std::string gen_profile = "default";
  /// Zero copy (dpdk, afxdp): received packets stay in the port's buffers (mbufs, UMEM
  /// frames), placed in the packet arena, and frames hold them there until they leave (a dpdk
  /// port sends them as they are) or are dropped.
  bool zero_copy = true;
  /// Packets the pipeline's frames may hold at once (workers x frames x batch: pipeline.hpp
  /// packets_held): a zero-copy port has that many buffers more than its rings need. The
  /// default is one worker's five frames of 1,024.
  uint32_t held_packets = 5 * 1024;
};

/// What a live port knows of its link: whether it receives frames for every MAC (promiscuous
/// mode, or XDP ahead of the stack's filter), the interface's own MAC, to which the host's
/// peers address their frames (all zero: unknown), and its MTU (the largest IP packet it
/// sends; 0: unknown, no limit). Captures and the generator have none of them.
struct PortLink {
  bool promiscuous = false;
  std::array<uint8_t, 6> mac{};
  uint32_t mtu = 0;
  /// The interface's own addresses (live ports; getifaddrs): the router hands packets for them
  /// to the slow path (to_router) instead of forwarding them.
  std::vector<uint32_t> ipv4;                 ///< host order
  std::vector<std::array<uint8_t, 16>> ipv6;  ///< network order
};

class Port {
 public:
  virtual ~Port() = default;
  /// The name given to the port (`--port NAME=...`).
  virtual const std::string& name() const noexcept = 0;
  /// One line for humans: "pcap in.pcap -> out.pcap", "afpacket veth0 (2 queues, fanout)".
  virtual std::string describe() const = 0;
  /// RX queues this port has: 0 for a send-only port.
  virtual uint32_t rx_queue_count() const noexcept = 0;
  /// Appends up to `max` received packets of RX queue `q` to `batch` (meta.port = the port's
  /// index) and returns how many; 0 at once when nothing is waiting: it never blocks, since a
  /// worker polls all its queues in turn (the worker backs off when all are idle). Errors are
  /// fatal for the port (kIoError naming it).
  virtual Result<uint32_t> rx_burst(uint32_t q, packet::PacketBatch& batch, uint32_t max) = 0;
  /// True once RX queue `q` will never deliver again (file read, generator count reached).
  virtual bool rx_done(uint32_t q) const noexcept = 0;
  /// Sends batch packets `which` (indices into `batch`) as the given worker. Returns how many
  /// were sent; the rest are counted as tx_errors by the port and dropped by the caller. A
  /// port may send a packet's own buffer where the batch holds one and the packet leaves only
  /// there (PacketBatch::take_handle; kMetaShared says it does not), and copies it otherwise.
  virtual uint32_t tx_burst(uint32_t worker, packet::PacketBatch& batch,
                            Span<const uint32_t> which) = 0;
  /// Pushes out anything buffered (pcap writer, AF_XDP TX ring). Called once at the end.
  virtual Status flush() { return Status::ok(); }
  virtual PortStats stats() const = 0;
  /// What the port had to work around (a capture damaged at record N: the packets before it
  /// were received, the queue ended there). Read after the run; the run reports them and the
  /// CLI exits 1 for them only when asked to be strict.
  virtual std::vector<std::string> warnings() const { return {}; }
  virtual PortLink link() const { return {}; }
};

/// A parsed SPEC (see above). kInvalidArgument "port NAME: ..." for a malformed one.
struct PortSpec {
  std::string kind;     ///< pcap, afpacket, afxdp, gen, null, dpdk
  std::string iface;    ///< afpacket / afxdp
  std::string in, out;  ///< pcap
  /// dpdk: everything after "dpdk:", verbatim: the vdev name up to the first ',' (e.g.
  /// "net_pcap0"), then its KEY=VALUE arguments ("net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap").
  std::string args;
  double rate_pps = 0;  ///< gen; packets per second over all queues; 0 = as fast as possible
  uint64_t count  = 0;  ///< gen; packets in all; 0 = unbounded
};
Result<PortSpec> parse_port_spec(std::string_view name, std::string_view spec);

/// Ports that need only the C library and Linux headers (in warpath_runtime, so GPU machines
/// without extra packages have them): gen, null, afpacket. kNotSupported for other kinds.
Result<std::unique_ptr<Port>> open_builtin_port(std::string_view name, const PortSpec& spec,
                                                const PortOptions& options);
/// Every kind (pcap through libpcap, afxdp through libxdp, dpdk through DPDK, then the built-in
/// ones). Errors name the port and the reason: kInvalidArgument (bad spec or options),
/// kNotFound (no such interface), kIoError (permission denied, unreadable or unwritable file, a
/// socket call failed; a DPDK device refused), kNotSupported (the kernel or driver refuses, e.g. no
/// AF_XDP; DPDK's EAL did not start), kNotBuilt (afxdp in a build without libxdp, dpdk in a build
/// without DPDK).
Result<std::unique_ptr<Port>> open_port(std::string_view name, std::string_view spec,
                                        const PortOptions& options);

}  // namespace warpath::runtime
