// The AF_PACKET port (afpacket:IFACE): a live interface through Linux packet sockets.
//
// RX
//   One socket per RX queue, each with a TPACKET_V3 memory-mapped ring: the kernel fills
//   blocks of variable-length frames and hands a block over when it is full or after
//   kRetireMs; rx_burst() copies frames out of the current block into the batch and gives a
//   block back (TP_STATUS_KERNEL) once it has read all of it. With several queues the sockets
//   form a PACKET_FANOUT_HASH group: a flow stays on one queue. No PACKET_FANOUT_FLAG_DEFRAG:
//   it would hand the router reassembled datagrams larger than the MTU; non-first fragments
//   hash on addresses alone and may take another queue than their first fragment (a router
//   forwards fragments independently, so only their relative order across queues can change).
//   The ring holds options.ring_frames frames of options.frame_bytes; TPACKET_V3 packs short
//   frames densely, so it holds more packets when they are small. The kernel counts what it
//   could not put in a full ring (PACKET_STATISTICS tp_drops): that is rx_dropped.
//   Sockets are bound with protocol 0 first (they receive nothing), set up, then bound to the
//   interface, so no packet of another interface slips in. PACKET_IGNORE_OUTGOING keeps our
//   own (and the host's) transmissions out of a lone socket's ring, but not out of a fanout
//   group's (the group's hook delivers them; seen as a router re-routing its own output until
//   the TTL ran out with 2+ workers), so rx_burst also skips every frame whose sockaddr_ll
//   says PACKET_OUTGOING. They are not received packets, so no counter counts them. The interface is put in promiscuous
//   mode for the lifetime of the sockets. A VLAN tag the kernel or NIC stripped (metadata in
//   tp_vlan_tci) is put back into the frame, so the pipeline sees the wire bytes. Timestamps
//   are the kernel's receive timestamps. Frames longer than frame_bytes are cut to it.
//   rx_burst() never waits: it returns 0 when no block is ready.
//   Latency: a V3 block reaches user space when full or after kRetireMs (1 ms, the kernel's
//   unit), so at low rates a packet can wait that long before the pipeline sees it, whatever
//   its delay bound. When options.rx_wait_us (the run's delay bound) is below that, the rings
//   are TPACKET_V2 instead: fixed slots of options.frame_bytes, each handed over as soon as
//   its packet is written (the kernel wakes no one: rx_burst polls the slot status), at the
//   cost of a fixed slot per packet (short frames no longer pack) and a status word per packet.
//
// TX
//   One socket per worker (protocol 0: it receives nothing), so workers never share one;
//   sendmmsg() of up to kTxChunk frames per call. A full socket or device queue (EAGAIN,
//   ENOBUFS) is waited for in poll() a few times, a millisecond each; what still cannot be
//   sent, or what the kernel refuses (a frame above the MTU), is counted as tx_errors.
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "runtime/ports/port_impl.hpp"

namespace warpath::runtime::detail {

namespace {

constexpr uint32_t kMaxQueues     = 256;
constexpr uint32_t kMaxBlockBytes = 1u << 20;
constexpr uint32_t kMinBlockBytes = 1u << 15;
constexpr uint32_t kRetireMs      = 1;  // a partly filled block is handed over after this
constexpr uint32_t kTxChunk       = 64;
constexpr int kTxWaits            = 4;

uint32_t align16(uint32_t x) { return (x + 15u) & ~15u; }

std::string errno_text(int e) { return std::strerror(e); }

struct RxRing {
  int fd               = -1;
  uint8_t* map         = nullptr;
  size_t map_bytes     = 0;
  uint32_t block_bytes = 0, blocks = 0;
  uint32_t block       = 0;        // the block being read (or waited for)
  uint8_t* next        = nullptr;  // next frame in the open block; nullptr: block not open
  uint32_t left        = 0;        // frames left in the open block
  bool v2              = false;    // TPACKET_V2: per-frame slots (the fields below)
  uint32_t frame_bytes = 0, frames_per_block = 0, frames = 0;
  uint32_t frame        = 0;  // V2: the slot to read next
  uint64_t kernel_drops = 0;  // accumulated tp_drops (stats() only, under its mutex)
  uint8_t* slot(uint32_t i) const {
    return map + size_t(i / frames_per_block) * block_bytes +
           size_t(i % frames_per_block) * frame_bytes;
  }
  ~RxRing() {
    if (map) munmap(map, map_bytes);
    if (fd >= 0) close(fd);
  }
};

struct TxSocket {
  int fd = -1;
  std::mutex mutex;  // uncontended unless two callers use one worker id
  std::vector<mmsghdr> msgs = std::vector<mmsghdr>(kTxChunk);
  std::vector<iovec> iovs   = std::vector<iovec>(kTxChunk);
  ~TxSocket() {
    if (fd >= 0) close(fd);
  }
};

/// The sockaddr_ll the kernel writes after each ring frame's header (packet(7): at
/// TPACKET_ALIGN(sizeof header)). PACKET_OUTGOING marks a frame this host sent.
template <class Header>
bool outgoing(const Header* h) {
  const auto* sll = reinterpret_cast<const sockaddr_ll*>(reinterpret_cast<const uint8_t*>(h) +
                                                         TPACKET_ALIGN(sizeof(Header)));
  return sll->sll_pkttype == PACKET_OUTGOING;
}

uint32_t load_acquire(const uint32_t& x) { return __atomic_load_n(&x, __ATOMIC_ACQUIRE); }
void store_release(uint32_t& x, uint32_t v) { __atomic_store_n(&x, v, __ATOMIC_RELEASE); }

class AfPacketPort final : public Port {
 public:
  AfPacketPort(std::string_view name, const PortSpec& spec, const PortOptions& options)
      : name_(name),
        iface_(spec.iface),
        options_(options),
        counters_(std::clamp(options.rx_queues, 1u, kMaxQueues), options.workers) {}

  Status open() {
    ifindex_ = if_nametoindex(iface_.c_str());
    if (ifindex_ == 0) {
      if (errno == ENODEV || errno == ENXIO)
        return port_error(Errc::kNotFound, name_, "afpacket: interface '" + iface_ + "' not found");
      return port_error(Errc::kIoError, name_,
                        "afpacket: interface '" + iface_ + "': " + errno_text(errno));
    }
    link_             = interface_link(iface_, true);  // the rings are promiscuous
    const uint32_t nq = std::clamp(options_.rx_queues, 1u, kMaxQueues);
    for (uint32_t q = 0; q < nq; ++q) {
      rings_.push_back(std::make_unique<RxRing>());
      WARPATH_TRY(open_rx(*rings_.back(), q, nq));
    }
    const uint32_t nw = std::max(options_.workers, 1u);
    for (uint32_t w = 0; w < nw; ++w) {
      tx_.push_back(std::make_unique<TxSocket>());
      WARPATH_TRY(open_tx(*tx_.back()));
    }
    return Status::ok();
  }

  const std::string& name() const noexcept override { return name_; }

  std::string describe() const override {
    std::string d = "afpacket " + iface_ + " (" + std::to_string(rings_.size());
    d += rings_.size() == 1 ? " queue" : " queues, fanout hash";
    if (!rings_.empty() && rings_[0]->v2)
      d += ", TPACKET_V2 " + std::to_string(rings_[0]->frames) + " slots of " +
           std::to_string(rings_[0]->frame_bytes) + " bytes: per-packet handover)";
    else
      d += ", TPACKET_V3 " + std::to_string(rings_.empty() ? 0 : rings_[0]->blocks) + " x " +
           std::to_string(rings_.empty() ? 0 : rings_[0]->block_bytes >> 10) + " KiB blocks)";
    return d;
  }

  uint32_t rx_queue_count() const noexcept override { return uint32_t(rings_.size()); }

  Result<uint32_t> rx_burst(uint32_t q, packet::PacketBatch& batch, uint32_t max) override {
    if (q >= rings_.size())
      return port_error(Errc::kInvalidArgument, name_, "no RX queue " + std::to_string(q));
    RxRing& r      = *rings_[q];
    uint32_t n     = 0;
    uint64_t bytes = 0, lost = 0;
    while (r.v2 && n < max) {
      auto* h = reinterpret_cast<tpacket2_hdr*>(r.slot(r.frame));
      if (!(load_acquire(h->tp_status) & TP_STATUS_USER)) break;
      if (outgoing(h)) {  // see the header: a fanout group sees our own transmissions
        store_release(h->tp_status, TP_STATUS_KERNEL);
        r.frame = r.frame + 1 == r.frames ? 0 : r.frame + 1;
        continue;
      }
      const int got = copy_frame(reinterpret_cast<const uint8_t*>(h) + h->tp_mac,
                                 Frame{h->tp_snaplen, h->tp_len, h->tp_sec, h->tp_nsec,
                                       h->tp_status, h->tp_vlan_tci, h->tp_vlan_tpid},
                                 batch);
      if (got < 0) break;
      if (got == 0) {
        ++lost;
      } else {
        ++n;
        bytes += batch.meta(batch.size() - 1).len;
      }
      store_release(h->tp_status, TP_STATUS_KERNEL);
      r.frame = r.frame + 1 == r.frames ? 0 : r.frame + 1;
    }
    while (!r.v2 && n < max) {
      auto* bd = reinterpret_cast<tpacket_block_desc*>(r.map + size_t(r.block) * r.block_bytes);
      if (!r.next) {
        // Never wait here: a worker polls all its queues in turn, and a wait on an idle one
        // would stall the busy ones (the worker backs off itself when every queue is idle).
        if (!(load_acquire(bd->hdr.bh1.block_status) & TP_STATUS_USER)) {
          break;
        }
        r.next = reinterpret_cast<uint8_t*>(bd) + bd->hdr.bh1.offset_to_first_pkt;
        r.left = bd->hdr.bh1.num_pkts;
      }
      bool full = false;
      while (r.left > 0 && n < max) {
        const auto* h = reinterpret_cast<const tpacket3_hdr*>(r.next);
        if (outgoing(h)) {
          r.next += h->tp_next_offset;
          --r.left;
          continue;
        }
        const int got =
            copy_frame(r.next + h->tp_mac,
                       Frame{h->tp_snaplen, h->tp_len, h->tp_sec, h->tp_nsec, h->tp_status,
                             uint16_t(h->hv1.tp_vlan_tci), h->hv1.tp_vlan_tpid},
                       batch);
        if (got < 0) {
          full = true;
          break;
        }
        if (got == 0) {
          ++lost;  // does not fit even an empty batch
        } else {
          ++n;
          bytes += batch.meta(batch.size() - 1).len;
        }
        r.next += h->tp_next_offset;
        --r.left;
      }
      if (full) break;
      if (r.left == 0) {
        store_release(bd->hdr.bh1.block_status, TP_STATUS_KERNEL);
        r.block = r.block + 1 == r.blocks ? 0 : r.block + 1;
        r.next  = nullptr;
      }
    }
    counters_.rx(q, n, bytes);
    if (lost) counters_.rx_dropped(q, lost);
    return n;
  }

  bool rx_done(uint32_t) const noexcept override { return false; }

  uint32_t tx_burst(uint32_t worker, packet::PacketBatch& batch,
                    Span<const uint32_t> which) override {
    TxSocket& s = *tx_[worker % tx_.size()];
    std::lock_guard<std::mutex> lock(s.mutex);
    uint32_t sent = 0, errors = 0, i = 0;
    uint64_t bytes = 0;
    int waits      = 0;
    while (i < which.size) {
      const uint32_t k = std::min(kTxChunk, which.size - i);
      for (uint32_t j = 0; j < k; ++j) {
        const uint32_t idx        = which[i + j];
        s.iovs[j]                 = {const_cast<uint8_t*>(batch.data(idx)), batch.meta(idx).caplen};
        s.msgs[j]                 = {};
        s.msgs[j].msg_hdr.msg_iov = &s.iovs[j];
        s.msgs[j].msg_hdr.msg_iovlen = 1;
      }
      const int r = ::sendmmsg(s.fd, s.msgs.data(), k, MSG_DONTWAIT);
      if (r > 0) {
        for (int j = 0; j < r; ++j) bytes += batch.meta(which[i + uint32_t(j)]).len;
        sent += uint32_t(r);
        i += uint32_t(r);
        waits = 0;
        continue;
      }
      const int e = errno;
      if (e == EINTR) continue;
      if ((e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS) && waits < kTxWaits) {
        pollfd p{s.fd, POLLOUT, 0};
        ::poll(&p, 1, 1);
        ++waits;
        continue;
      }
      if (e == EMSGSIZE || e == EINVAL) {  // this frame only
        ++errors;
        ++i;
        continue;
      }
      errors += which.size - i;  // link down, queue still full, ...: the rest is lost
      break;
    }
    counters_.tx(worker, sent, bytes, errors);
    return sent;
  }

  PortLink link() const override { return link_; }

  PortStats stats() const override {
    PortStats s = counters_.sum();
    std::lock_guard<std::mutex> lock(stats_mutex_);
    for (const auto& r : rings_) {
      tpacket_stats_v3 st{};
      socklen_t len = sizeof st;
      // Reading the statistics resets them in the kernel, hence the running sum.
      if (getsockopt(r->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
        r->kernel_drops += st.tp_drops;
      s.rx_dropped += r->kernel_drops;
    }
    return s;
  }

 private:
  Status sys_error(std::string_view what, int e) const {
    if (e == EPERM || e == EACCES)
      return port_error(Errc::kIoError, name_,
                        "afpacket " + iface_ + ": " + std::string(what) +
                            ": permission denied (needs CAP_NET_RAW / root)");
    return port_error(Errc::kIoError, name_,
                      "afpacket " + iface_ + ": " + std::string(what) + ": " + errno_text(e));
  }

  Status bind_to(int fd, uint16_t protocol) const {
    sockaddr_ll sll{};
    sll.sll_family   = AF_PACKET;
    sll.sll_protocol = htons(protocol);
    sll.sll_ifindex  = int(ifindex_);
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&sll), sizeof sll) != 0) {
      const int e = errno;
      if (e == ENODEV || e == ENXIO)
        return port_error(Errc::kNotFound, name_, "afpacket: interface '" + iface_ + "' not found");
      if (e == ENETDOWN)
        return port_error(Errc::kIoError, name_, "afpacket: interface '" + iface_ + "' is down");
      return sys_error("bind", e);
    }
    return Status::ok();
  }

  Status open_rx(RxRing& r, uint32_t q, uint32_t nq) {
    r.fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (r.fd < 0) return sys_error("socket", errno);
    r.v2        = options_.rx_wait_us > 0 && options_.rx_wait_us < kRetireMs * 1000;
    int version = r.v2 ? TPACKET_V2 : TPACKET_V3;
    if (setsockopt(r.fd, SOL_PACKET, PACKET_VERSION, &version, sizeof version) != 0)
      return sys_error(r.v2 ? "TPACKET_V2" : "TPACKET_V3", errno);
    if (r.v2) {
      WARPATH_TRY(map_v2(r));
      return join(r, q, nq);
    }

    // Ring geometry: frame slots of header + snap length; blocks of up to 1 MiB, smaller so
    // there are about 256 blocks (down to 32 KiB ones): at low rates the kernel hands a block
    // over after kRetireMs however few frames it holds, so the number of blocks, not their
    // size, is what lets the ring ride out a pause of the reader (the default ring: 262
    // blocks of 32 KiB: at least 262 ms, and 4096 full-size frames at high rates).
    const uint32_t frame = align16(align16(uint32_t(TPACKET3_HDRLEN) + 16) + options_.frame_bytes);
    const uint64_t total = uint64_t(std::max(options_.ring_frames, 1u)) * frame;
    uint32_t block       = kMaxBlockBytes;
    while (block > kMinBlockBytes && total / block < 256) block >>= 1;
    block                 = std::max({block, 4096u, std::bit_ceil(frame)});
    const uint32_t blocks = uint32_t(std::max<uint64_t>(2, (total + block - 1) / block));
    tpacket_req3 req{};
    req.tp_block_size       = block;
    req.tp_block_nr         = blocks;
    req.tp_frame_size       = frame;
    req.tp_frame_nr         = (block / frame) * blocks;
    req.tp_retire_blk_tov   = kRetireMs;
    req.tp_feature_req_word = 0;
    if (setsockopt(r.fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof req) != 0)
      return sys_error("PACKET_RX_RING (" + std::to_string(blocks) + " blocks of " +
                           std::to_string(block) + " bytes)",
                       errno);
    r.block_bytes = block;
    r.blocks      = blocks;
    r.map_bytes   = size_t(block) * blocks;
    WARPATH_TRY(map_ring(r));
    return join(r, q, nq);
  }

  // Maps the ring of r.map_bytes that PACKET_RX_RING set up.
  Status map_ring(RxRing& r) {
    void* map =
        mmap(nullptr, r.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r.fd, 0);
    if (map == MAP_FAILED) {
      r.map = nullptr;
      return sys_error("mmap of the RX ring", errno);
    }
    r.map = static_cast<uint8_t*>(map);
    return Status::ok();
  }

  // TPACKET_V2 ring: options.ring_frames slots of header + frame_bytes, in blocks of whole
  // pages (the kernel's rule: a block holds whole frames and is a multiple of the page size).
  Status map_v2(RxRing& r) {
    const uint32_t frame =
        uint32_t(TPACKET_ALIGN(TPACKET_ALIGN(TPACKET2_HDRLEN) + 16 + options_.frame_bytes));
    uint32_t block = 4096;
    while (block < frame * 8u && block < kMaxBlockBytes) block <<= 1;
    const uint32_t per_block = block / frame;
    const uint32_t blocks =
        std::max(1u, (std::max(options_.ring_frames, 1u) + per_block - 1) / per_block);
    tpacket_req req{};
    req.tp_block_size = block;
    req.tp_block_nr   = blocks;
    req.tp_frame_size = frame;
    req.tp_frame_nr   = per_block * blocks;
    if (setsockopt(r.fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof req) != 0)
      return sys_error("PACKET_RX_RING (TPACKET_V2, " + std::to_string(req.tp_frame_nr) +
                           " slots of " + std::to_string(frame) + " bytes)",
                       errno);
    r.block_bytes      = block;
    r.blocks           = blocks;
    r.frame_bytes      = frame;
    r.frames_per_block = per_block;
    r.frames           = req.tp_frame_nr;
    r.map_bytes        = size_t(block) * blocks;
    return map_ring(r);
  }

  // Both ring kinds: outgoing packets ignored, bound, promiscuous, fanout group.
  Status join(RxRing& r, uint32_t q, uint32_t nq) {
    int one = 1;
    // Best effort: kernels before 4.20 lack it (we would then see our own TX, too).
    (void)setsockopt(r.fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
    WARPATH_TRY(bind_to(r.fd, ETH_P_ALL));
    packet_mreq mr{};
    mr.mr_ifindex = int(ifindex_);
    mr.mr_type    = PACKET_MR_PROMISC;
    if (setsockopt(r.fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) != 0)
      return sys_error("promiscuous mode", errno);

    if (nq > 1) {
      // The first socket asks the kernel for an unused group id; the others join it.
      const int type = PACKET_FANOUT_HASH;
      int arg =
          q == 0 ? ((type | PACKET_FANOUT_FLAG_UNIQUEID) << 16) : (type << 16) | int(fanout_id_);
      if (setsockopt(r.fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof arg) != 0)
        return sys_error("PACKET_FANOUT", errno);
      if (q == 0) {
        int got       = 0;
        socklen_t len = sizeof got;
        if (getsockopt(r.fd, SOL_PACKET, PACKET_FANOUT, &got, &len) != 0)
          return sys_error("PACKET_FANOUT", errno);
        fanout_id_ = uint16_t(got & 0xffff);
      }
    }
    return Status::ok();
  }

  Status open_tx(TxSocket& s) {
    s.fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (s.fd < 0) return sys_error("socket", errno);
    int sndbuf = 4 << 20;
    (void)setsockopt(s.fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    return bind_to(s.fd, 0);
  }

  // What copy_frame needs of a V2 or V3 frame header.
  struct Frame {
    uint32_t snaplen, len, sec, nsec, status;
    uint16_t vlan_tci, vlan_tpid;
  };

  // Appends the frame at `src` to the batch, putting back a stripped VLAN tag. Returns 1, 0
  // when it cannot fit even an empty batch (dropped), -1 when the batch is full.
  int copy_frame(const uint8_t* src, const Frame& h, packet::PacketBatch& batch) const {
    const uint64_t ts     = uint64_t(h.sec) * 1'000'000'000ull + h.nsec;
    const bool vlan       = (h.status & TP_STATUS_VLAN_VALID) && h.snaplen >= 12;
    const uint32_t extra  = vlan ? 4 : 0;
    const uint32_t caplen = std::min(h.snaplen + extra, options_.frame_bytes);
    uint8_t* dst          = batch.append_uninitialized(caplen, h.len + extra, ts, options_.index);
    if (!dst) return batch.size() == 0 ? 0 : -1;
    if (!vlan) {
      std::memcpy(dst, src, caplen);
      return 1;
    }
    const uint16_t tpid =
        (h.status & TP_STATUS_VLAN_TPID_VALID) && h.vlan_tpid ? h.vlan_tpid : ETH_P_8021Q;
    const uint16_t tci = h.vlan_tci;
    uint8_t tag[4]     = {uint8_t(tpid >> 8), uint8_t(tpid), uint8_t(tci >> 8), uint8_t(tci)};
    // dst = MACs | tag | the rest, cut at caplen.
    const uint32_t a = std::min(caplen, 12u);
    std::memcpy(dst, src, a);
    const uint32_t b = std::min(caplen - a, 4u);
    std::memcpy(dst + a, tag, b);
    if (caplen > 16) std::memcpy(dst + 16, src + 12, caplen - 16);
    return 1;
  }

  std::string name_, iface_;
  PortLink link_;
  PortOptions options_;
  PortCounters counters_;
  unsigned ifindex_   = 0;
  uint16_t fanout_id_ = 0;
  std::vector<std::unique_ptr<RxRing>> rings_;
  std::vector<std::unique_ptr<TxSocket>> tx_;
  mutable std::mutex stats_mutex_;
};

}  // namespace

Result<std::unique_ptr<Port>> open_afpacket_port(std::string_view name, const PortSpec& spec,
                                                 const PortOptions& options) {
  if (options.rx_queues > kMaxQueues)
    return port_error(Errc::kInvalidArgument, name,
                      "afpacket: at most " + std::to_string(kMaxQueues) + " RX queues");
  if (options.frame_bytes < 64)
    return port_error(Errc::kInvalidArgument, name, "afpacket: frame_bytes must be at least 64");
  auto port = std::make_unique<AfPacketPort>(name, spec, options);
  WARPATH_TRY(port->open());
  return std::unique_ptr<Port>(std::move(port));
}

}  // namespace warpath::runtime::detail
