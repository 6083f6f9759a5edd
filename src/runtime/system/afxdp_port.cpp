// The AF_XDP port (afxdp:IFACE) through libxdp.
//
// Sockets
//   One AF_XDP socket per RX queue, min(options.rx_queues, the interface's RX channels from
//   ETHTOOL_GCHANNELS), each with its own UMEM: ring_frames (rounded up to a power of two) RX
//   frames and as many TX frames (at most kMaxTxFrames), in chunks of 2 KiB, or 4 KiB when
//   frame_bytes needs more than 2 KiB minus the kernel's 256-byte headroom. libxdp attaches its
//   default XSK program (redirect to the queue's socket, else pass to the stack): first in the
//   mode the driver picks (native when it has one), and in generic/SKB mode when that fails.
//   The kernel binds zero-copy when the driver supports it, otherwise copy mode. Deleting the
//   last socket detaches the program.
//
// Zero copy (options.zero_copy, the default)
//   Each UMEM is a slice of the packet arena (core/packet_arena.hpp) with options.held_packets
//   RX frames more than the ring's. rx_burst() into an arena batch attaches each frame where
//   the kernel put it (PacketBatch::attach) instead of copying; the batch gives the frames back
//   (release_umem_frames) when cleared, onto the fill ring of the queue they came from, so
//   the fill ring holds every RX frame neither in the RX ring nor held. TX copies, as below.
//   ADR 0017.
//
// RX
//   Otherwise rx_burst() copies descriptors from the RX ring into the batch (timestamp:
//   CLOCK_REALTIME, once per burst; AF_XDP has no kernel timestamps) and gives their frames
//   straight back to the fill ring, so the fill ring always holds every frame not waiting in
//   the RX ring: the RX ring of ring_frames packets is the only queue, and what the kernel cannot put in it is
//   counted in XDP_STATISTICS (rx_ring_full, rx_dropped): rx_dropped. With nothing waiting it
//   poll()s with timeout 0 (which wakes the driver when the fill ring needs it) and returns.
//
// TX
//   Worker w sends on socket w % sockets under that socket's TX mutex (the RX side of a socket
//   uses other rings and needs no lock). Frames are copied into free TX frames, submitted and
//   the kernel kicked with sendto(); finished frames come back through the completion ring.
//   In copy mode a kick sends at most 32 frames, so it is repeated until the TX ring drains or
//   the device stops taking frames; in zero-copy mode one wakeup (when the kernel asks for it)
//   lets the driver send. When no TX frame is free after a few 1 ms waits, the rest are
//   tx_errors. flush() waits (up to ~100 ms) for the TX rings to drain.
//
// libbpf and libxdp print to stderr by default; the port collects their messages instead and
// puts the last one in its errors (set WARPATH_XDP_VERBOSE=1 to see them all).
#include <net/if.h>

#include <string>

#include "runtime/ports/port_impl.hpp"

#ifdef WARPATH_HAVE_XDP
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <linux/sockios.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>
#endif

namespace warpath::runtime::detail {

#ifndef WARPATH_HAVE_XDP

Result<std::unique_ptr<Port>> open_afxdp_port(std::string_view name, const PortSpec&,
                                              const PortOptions&) {
  return port_error(Errc::kNotBuilt, name,
                    "afxdp ports need libxdp (apt-get install libxdp-dev libbpf-dev)");
}

#else

namespace {

constexpr uint32_t kMaxQueues   = 256;
constexpr uint32_t kMinRing     = 64;
constexpr uint32_t kMaxRing     = 1u << 16;
constexpr uint32_t kMaxTxFrames = 4096;
constexpr uint32_t kXdpHeadroom = 256;  // XDP_PACKET_HEADROOM
constexpr int kKicks            = 256;  // sendto() calls per TX burst, at most
constexpr uint32_t kMaxHeldFrames = 1u << 18;  // UMEM frames for what frames hold, at most

// --- libbpf / libxdp messages --------------------------------------------------------------

std::mutex g_log_mutex;
std::string g_last_log;    // the last warning, for error messages
std::string g_kernel_log;  // the last "Kernel error message: ..." (extack), preferred

void note_log(const char* fmt, va_list ap) {
  char buf[512];
  va_list copy;
  va_copy(copy, ap);
  std::vsnprintf(buf, sizeof buf, fmt, copy);
  va_end(copy);
  std::string line(buf);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  static const bool verbose = std::getenv("WARPATH_XDP_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "%s\n", line.c_str());
  std::lock_guard<std::mutex> lock(g_log_mutex);
  constexpr std::string_view kKernel = "Kernel error message: ";
  if (const size_t at = line.find(kKernel); at != std::string::npos)
    g_kernel_log = line.substr(at + kKernel.size());
  g_last_log = std::move(line);
}

void set_last_log(std::string text) {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_kernel_log.clear();
  g_last_log = std::move(text);
}

int xdp_log(enum libxdp_print_level level, const char* fmt, va_list ap) {
  if (level == LIBXDP_WARN || std::getenv("WARPATH_XDP_VERBOSE")) note_log(fmt, ap);
  return 0;
}
int bpf_log(enum libbpf_print_level level, const char* fmt, va_list ap) {
  if (level == LIBBPF_WARN || std::getenv("WARPATH_XDP_VERBOSE")) note_log(fmt, ap);
  return 0;
}

void quiet_libraries() {
  static std::once_flag once;
  std::call_once(once, [] {
    libxdp_set_print(xdp_log);
    libbpf_set_print(bpf_log);
  });
}

std::string take_last_log() {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  std::string s = g_kernel_log.empty() ? std::move(g_last_log) : std::move(g_kernel_log);
  g_last_log.clear();
  g_kernel_log.clear();
  return s;
}

// --- helpers -------------------------------------------------------------------------------

// RX channels of the interface (0 when the driver does not say).
uint32_t rx_channels(const std::string& iface) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  ethtool_channels ch{};
  ch.cmd = ETHTOOL_GCHANNELS;
  ifreq ifr{};
  std::snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", iface.c_str());
  ifr.ifr_data = reinterpret_cast<char*>(&ch);
  const int rc = ::ioctl(fd, SIOCETHTOOL, &ifr);
  ::close(fd);
  if (rc != 0) return 0;
  return ch.rx_count + ch.combined_count;
}

struct XskQueue {
  uint32_t id        = 0;
  uint8_t* area      = nullptr;
  size_t area_bytes  = 0;
  ArenaSlice arena_area;  // the UMEM when frames hold its frames (else area is mmap'd)
  uint32_t chunk     = 0;
  uint32_t rx_frames = 0, tx_frames = 0;
  uint32_t held_frames = 0;  // RX frames beyond the ring's, for what frames hold
  xsk_umem* umem  = nullptr;
  xsk_socket* xsk = nullptr;
  int fd          = -1;
  bool zero_copy  = false;
  xsk_ring_prod fill{};
  xsk_ring_cons comp{};
  xsk_ring_cons rx{};
  xsk_ring_prod tx{};
  // TX side, under tx_mutex.
  std::mutex tx_mutex;
  std::vector<uint64_t> tx_free;
  std::vector<xdp_desc> pending;  // frames copied, not yet in the TX ring

  ~XskQueue() {
    forget_held(this);
    if (xsk) xsk_socket__delete(xsk);
    if (umem) xsk_umem__delete(umem);
    if (area && !arena_area) munmap(area, area_bytes);
  }

  // Frames (UMEM chunk starts) back to the fill ring. Only the thread that reads this queue
  // calls it (rx_burst, and the frames its worker holds): the fill ring has one producer.
  void refill(uint8_t* const* chunks, uint32_t n) {
    uint32_t idx = 0;
    if (n == 0 || xsk_ring_prod__reserve(&fill, n, &idx) != n) return;  // room for all, always
    for (uint32_t i = 0; i < n; ++i)
      *xsk_ring_prod__fill_addr(&fill, idx + i) = uint64_t(chunks[i] - area);
    xsk_ring_prod__submit(&fill, n);
  }

  // The queues whose UMEM frames may be held by frames, found by address when they come back
  // (PacketBatch::ReleaseFn gets only the handles: chunk starts in the arena).
  static XskQueue* holder_of(const uint8_t* chunk);
  static void forget_held(XskQueue* q);

  // Takes finished TX frames back from the completion ring.
  void reclaim() {
    uint32_t idx     = 0;
    const uint32_t n = xsk_ring_cons__peek(&comp, tx_frames, &idx);
    for (uint32_t i = 0; i < n; ++i) {
      const uint64_t addr = *xsk_ring_cons__comp_addr(&comp, idx + i);
      tx_free.push_back(addr - addr % chunk);
    }
    if (n) xsk_ring_cons__release(&comp, n);
  }

  bool tx_ring_empty() { return xsk_prod_nb_free(&tx, tx_frames) >= tx_frames; }

  // Makes the kernel send what the TX ring holds (copy mode sends 32 per call).
  void kick() {
    if (zero_copy) {  // the driver sends on its own once woken
      if (xsk_ring_prod__needs_wakeup(&tx)) ::sendto(fd, nullptr, 0, MSG_DONTWAIT, nullptr, 0);
      return;
    }
    // Copy mode: each call sends up to 32 frames itself. Stop when the ring is empty, on a
    // hard error (ENOBUFS, ENETDOWN, ...), or when a few calls in a row made no progress (the
    // device queue is stopped).
    int stalled = 0;
    for (int k = 0; k < kKicks && stalled < 4; ++k) {
      const uint32_t before = xsk_prod_nb_free(&tx, tx_frames);
      if (before >= tx_frames) return;
      if (::sendto(fd, nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0 && errno != EAGAIN &&
          errno != EBUSY && errno != EINTR)
        return;
      stalled = xsk_prod_nb_free(&tx, tx_frames) == before ? stalled + 1 : 0;
    }
  }
};

std::mutex g_held_mutex;
std::vector<XskQueue*> g_held;  // queues that lend frames (few; read under the lock)

XskQueue* XskQueue::holder_of(const uint8_t* chunk) {
  std::lock_guard<std::mutex> lock(g_held_mutex);
  for (XskQueue* q : g_held)
    if (chunk >= q->area && chunk < q->area + q->area_bytes) return q;
  return nullptr;
}

void XskQueue::forget_held(XskQueue* q) {
  std::lock_guard<std::mutex> lock(g_held_mutex);
  g_held.erase(std::remove(g_held.begin(), g_held.end(), q), g_held.end());
}

// A frame's held UMEM frames back to their queues' fill rings (PacketBatch::ReleaseFn), a run
// of the same queue at a time.
void release_umem_frames(void* const* handles, uint32_t count) {
  XskQueue* q = nullptr;
  for (uint32_t from = 0, to; from < count; from = to) {
    auto* const* h = reinterpret_cast<uint8_t* const*>(handles);
    if (!q || h[from] < q->area || h[from] >= q->area + q->area_bytes) q = XskQueue::holder_of(h[from]);
    for (to = from + 1; q && to < count && h[to] >= q->area && h[to] < q->area + q->area_bytes;) ++to;
    if (!q) {  // its port is gone (not the pipeline's order): nothing to give back to
      ++to;
      continue;
    }
    q->refill(h + from, to - from);
  }
}


class AfXdpPort final : public Port {
 public:
  AfXdpPort(std::string_view name, const PortSpec& spec, const PortOptions& options)
      : name_(name),
        iface_(spec.iface),
        options_(options),
        counters_(std::clamp(options.rx_queues, 1u, kMaxQueues), options.workers) {}

  Status open() {
    quiet_libraries();
    ifindex_ = if_nametoindex(iface_.c_str());
    if (ifindex_ == 0)
      return port_error(Errc::kNotFound, name_, "afxdp: interface '" + iface_ + "' not found");
    // XDP runs before the stack's MAC filter: on a veth or bridge port it sees every frame.
    link_                   = interface_link(iface_, true);
    const uint32_t channels = rx_channels(iface_);
    uint32_t nq             = std::clamp(options_.rx_queues, 1u, kMaxQueues);
    if (channels > 0) nq = std::min(nq, channels);
    for (uint32_t q = 0; q < nq; ++q) {
      queues_.push_back(std::make_unique<XskQueue>());
      WARPATH_TRY(open_queue(*queues_.back(), q));
    }
    bpf_xdp_query_opts opts{};
    opts.sz = sizeof opts;
    if (bpf_xdp_query(int(ifindex_), 0, &opts) == 0) {
      switch (opts.attach_mode) {
        case XDP_ATTACHED_DRV:
          mode_ = "native";
          break;
        case XDP_ATTACHED_SKB:
          mode_ = "generic/SKB";
          break;
        case XDP_ATTACHED_HW:
          mode_ = "offloaded";
          break;
        case XDP_ATTACHED_MULTI:
          mode_ = "multi";
          break;
        default:
          mode_ = "unknown";
          break;
      }
    }
    zero_copy_ = queues_[0]->zero_copy;
    return Status::ok();
  }

  const std::string& name() const noexcept override { return name_; }

  std::string describe() const override {
    return "afxdp " + iface_ + " (" + std::to_string(queues_.size()) +
           (queues_.size() == 1 ? " queue, " : " queues, ") + mode_ + " XDP, " +
           (zero_copy_ ? "zero-copy" : "copy mode") +
           (queues_.empty() || !queues_[0]->arena_area ? "" : ", frames held (zero copy)") + ")";
  }

  uint32_t rx_queue_count() const noexcept override { return uint32_t(queues_.size()); }

  Result<uint32_t> rx_burst(uint32_t q, packet::PacketBatch& batch, uint32_t max) override {
    if (q >= queues_.size())
      return port_error(Errc::kInvalidArgument, name_, "no RX queue " + std::to_string(q));
    if (max == 0) return 0u;
    XskQueue& x  = *queues_[q];
    uint32_t idx = 0;
    uint32_t got = xsk_ring_cons__peek(&x.rx, max, &idx);
    if (got == 0) {
      // Timeout 0: wakes the kernel's RX processing (need_wakeup) without waiting, so an idle
      // queue never stalls the worker's other queues.
      pollfd p{x.fd, POLLIN, 0};
      if (::poll(&p, 1, 0) < 0 && errno != EINTR)
        return port_error(Errc::kIoError, name_,
                          "afxdp " + iface_ + ": poll: " + std::strerror(errno));
      got = xsk_ring_cons__peek(&x.rx, max, &idx);
      if (got == 0) return 0u;
    }
    const uint64_t ts = realtime_ns();
    uint32_t used = 0, n = 0, lost = 0;
    uint64_t bytes = 0;
    // Zero copy: the batch holds each frame where the kernel put it (attach_burst: a run), and
    // gives it back to the fill ring when cleared (release_umem_frames); otherwise the bytes
    // are copied.
    const bool hold = x.arena_area && batch.attachable(release_umem_frames);
    if (hold) {  // a run, up to the first the batch cannot take (full: the rest stays queued)
      const uint32_t frame_bytes = options_.frame_bytes;
      n = used = batch.attach_burst(
          got, ts, options_.index, release_umem_frames, bytes,
          [&](uint32_t j, packet::PacketBatch::Held1& p) {
            const xdp_desc* d = xsk_ring_cons__rx_desc(&x.rx, idx + j);
            uint8_t* chunk    = x.area + (d->addr - d->addr % x.chunk);
            p = {static_cast<uint8_t*>(xsk_umem__get_data(x.area, d->addr)),
                 std::min(d->len, frame_bytes), d->len, chunk, chunk + x.chunk, chunk};
            return true;
          });
    }
    for (; !hold && used < got; ++used) {
      const xdp_desc* d     = xsk_ring_cons__rx_desc(&x.rx, idx + used);
      const uint32_t caplen = std::min(d->len, options_.frame_bytes);
      auto* data            = static_cast<uint8_t*>(xsk_umem__get_data(x.area, d->addr));
      if (uint8_t* dst = batch.append_uninitialized(caplen, d->len, ts, options_.index)) {
        std::memcpy(dst, data, caplen);
      } else {
        if (batch.size() > 0) break;  // full: the rest stays in the RX ring
        ++lost;                       // cannot fit even an empty batch
        continue;
      }
      ++n;
      bytes += d->len;
    }
    // Copied frames go straight back to the fill ring (it always has room: it holds every
    // frame that is neither in the RX ring nor held).
    if (used > 0 && !hold) {
      uint32_t fidx = 0;
      if (xsk_ring_prod__reserve(&x.fill, used, &fidx) == used) {
        for (uint32_t i = 0; i < used; ++i) {
          const uint64_t addr = xsk_ring_cons__rx_desc(&x.rx, idx + i)->addr;
          *xsk_ring_prod__fill_addr(&x.fill, fidx + i) = addr - addr % x.chunk;
        }
        xsk_ring_prod__submit(&x.fill, used);
      }
    }
    if (used < got) xsk_ring_cons__cancel(&x.rx, got - used);
    if (used > 0) xsk_ring_cons__release(&x.rx, used);
    counters_.rx(q, n, bytes);
    if (lost) counters_.rx_dropped(q, lost);
    return n;
  }

  bool rx_done(uint32_t) const noexcept override { return false; }

  uint32_t tx_burst(uint32_t worker, packet::PacketBatch& batch,
                    Span<const uint32_t> which) override {
    XskQueue& x = *queues_[worker % queues_.size()];
    std::lock_guard<std::mutex> lock(x.tx_mutex);
    x.reclaim();
    uint32_t sent = 0, errors = 0, i = 0;
    uint64_t bytes      = 0;
    int waits           = 0;
    const uint32_t room = x.chunk - kXdpHeadroom;
    while (i < which.size) {
      if (x.tx_free.empty()) {
        x.kick();
        x.reclaim();
        if (x.tx_free.empty()) {
          if (waits++ >= 4) break;
          pollfd p{x.fd, POLLOUT, 0};
          ::poll(&p, 1, 1);
          continue;
        }
      }
      // Copy up to as many frames as are free, then publish them in one reservation (the TX
      // ring always has room for every free frame: it is as large as the TX frame pool).
      const uint32_t k      = std::min<uint32_t>(which.size - i, uint32_t(x.tx_free.size()));
      uint32_t placed       = 0;
      uint64_t placed_bytes = 0;
      for (uint32_t j = 0; j < k; ++j) {
        const packet::PacketMeta& m = batch.meta(which[i + j]);
        if (m.caplen > room || m.caplen == 0) {
          ++errors;
          continue;
        }
        const uint64_t addr = x.tx_free.back();
        x.tx_free.pop_back();
        std::memcpy(xsk_umem__get_data(x.area, addr), batch.data(which[i + j]), m.caplen);
        x.pending[placed++] = {addr, m.caplen, 0};
        placed_bytes += m.len;
      }
      i += k;
      if (placed == 0) continue;
      uint32_t tidx = 0;
      if (xsk_ring_prod__reserve(&x.tx, placed, &tidx) != placed) {  // cannot happen (above)
        for (uint32_t j = 0; j < placed; ++j) x.tx_free.push_back(x.pending[j].addr);
        errors += placed;
        break;
      }
      for (uint32_t j = 0; j < placed; ++j) *xsk_ring_prod__tx_desc(&x.tx, tidx + j) = x.pending[j];
      xsk_ring_prod__submit(&x.tx, placed);
      sent += placed;
      bytes += placed_bytes;
      x.kick();
    }
    errors += which.size - i;
    counters_.tx(worker, sent, bytes, errors);
    return sent;
  }

  Status flush() override {
    for (auto& q : queues_) {
      std::lock_guard<std::mutex> lock(q->tx_mutex);
      for (int tries = 0; tries < 100 && !q->tx_ring_empty(); ++tries) {
        q->kick();
        if (!q->tx_ring_empty()) {
          pollfd p{q->fd, POLLOUT, 0};
          ::poll(&p, 1, 1);
        }
      }
      q->reclaim();
    }
    return Status::ok();
  }

  PortLink link() const override { return link_; }

  PortStats stats() const override {
    PortStats s = counters_.sum();
    for (const auto& q : queues_) {
      xdp_statistics st{};
      socklen_t len = sizeof st;
      if (getsockopt(q->fd, SOL_XDP, XDP_STATISTICS, &st, &len) == 0)
        s.rx_dropped += st.rx_dropped + st.rx_ring_full;
    }
    return s;
  }

 private:
  Status xsk_error(std::string_view what, int e) const {
    std::string m = "afxdp " + iface_ + ": " + std::string(what) + ": ";
    Errc code     = Errc::kIoError;
    if (e == EPERM || e == EACCES) {
      m += "permission denied (needs CAP_NET_ADMIN + CAP_BPF / root)";
    } else if (e == EAFNOSUPPORT) {
      code = Errc::kNotSupported;
      m += "the kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)";
    } else if (e == EOPNOTSUPP || e == ENOTSUP) {
      code = Errc::kNotSupported;
      m += std::string("not supported by the kernel or driver (") + std::strerror(e) + ")";
    } else if (e == ENODEV || e == ENXIO) {
      code = Errc::kNotFound;
      m += "interface '" + iface_ + "' not found";
    } else if (e == EBUSY || e == EEXIST) {
      m += std::string(std::strerror(e)) +
           " (another XDP program or AF_XDP socket holds the interface or queue)";
    } else if (e == ENOMEM || e == ENOBUFS) {
      m += std::string(std::strerror(e)) + " (UMEM of " + std::to_string(umem_mib_) +
           " MiB per queue; locked-memory limit?)";
    } else {
      m += std::strerror(e);
    }
    const std::string log = take_last_log();
    if (!log.empty()) m += " [libxdp: " + log + "]";
    return port_error(code, name_, m);
  }

  // UMEM and socket for queue q in the mode xdp_flags_; 0 or a negative errno (and nothing
  // left behind).
  int create_socket(XskQueue& x, uint32_t q) {
    xsk_umem_config ucfg{};
    ucfg.fill_size      = std::bit_ceil(x.rx_frames + x.held_frames);  // every free RX frame
    ucfg.comp_size      = x.tx_frames;
    ucfg.frame_size     = x.chunk;
    ucfg.frame_headroom = 0;
    ucfg.flags          = 0;
    if (int rc = xsk_umem__create(&x.umem, x.area, x.area_bytes, &x.fill, &x.comp, &ucfg)) {
      x.umem = nullptr;
      return rc;
    }
    xsk_socket_config scfg{};
    scfg.rx_size      = x.rx_frames;
    scfg.tx_size      = x.tx_frames;
    scfg.libxdp_flags = 0;
    scfg.xdp_flags    = xdp_flags_;
    scfg.bind_flags   = XDP_USE_NEED_WAKEUP;
    if (int rc = xsk_socket__create(&x.xsk, iface_.c_str(), q, x.umem, &x.rx, &x.tx, &scfg)) {
      x.xsk = nullptr;
      xsk_umem__delete(x.umem);
      x.umem = nullptr;
      return rc;
    }
    return 0;
  }

  Status open_queue(XskQueue& x, uint32_t q) {
    x.id         = q;
    x.chunk      = options_.frame_bytes + kXdpHeadroom <= 2048 ? 2048 : 4096;
    x.rx_frames  = std::clamp(std::bit_ceil(options_.ring_frames), kMinRing, kMaxRing);
    x.tx_frames  = std::min(x.rx_frames, kMaxTxFrames);
    // Zero copy: the UMEM is an arena slice and frames hold its RX frames, so it has as many
    // more as the pipeline's frames may hold (a queue's packets may be all of them).
    auto umem_bytes = [&x] { return size_t(x.rx_frames + x.held_frames + x.tx_frames) * x.chunk; };
    if (options_.zero_copy) {
      x.held_frames = std::min<uint32_t>(options_.held_packets, kMaxHeldFrames);
      if (auto slice = PacketArena::get().allocate(umem_bytes()); slice.is_ok()) {
        x.arena_area = std::move(slice).value();
        x.area       = x.arena_area.data();
      } else {
        x.held_frames = 0;  // no room in the arena: frames copy out of the UMEM
      }
    }
    x.area_bytes = umem_bytes();
    umem_mib_    = x.area_bytes >> 20;
    if (!x.area) {
      void* area = mmap(nullptr, x.area_bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
      if (area == MAP_FAILED) return xsk_error("UMEM allocation", errno);
      x.area = static_cast<uint8_t*>(area);
    }

    // The first socket finds the mode: the driver's choice, else generic (SKB) XDP. The
    // others use the program it attached. A socket that failed to attach its program stays
    // bound, so a retry needs a fresh UMEM (and socket).
    int rc = create_socket(x, q);
    if (rc && q == 0 && xdp_flags_ == 0 && -rc != EPERM && -rc != EACCES && -rc != ENODEV &&
        -rc != EAFNOSUPPORT) {
      const std::string native = take_last_log();
      xdp_flags_               = XDP_FLAGS_SKB_MODE;
      // The kernel releases the failed socket's hold on the queue in deferred work: until
      // then, binding the queue again fails with EBUSY.
      for (int tries = 0; tries < 100; ++tries) {
        rc = create_socket(x, q);
        if (rc != -EBUSY) break;
        take_last_log();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      if (rc && !native.empty()) {
        const std::string generic = take_last_log();
        set_last_log("native XDP: " + native + "; generic XDP: " + generic);
      }
    }
    if (rc) return xsk_error("socket on queue " + std::to_string(q), -rc);
    x.fd = xsk_socket__fd(x.xsk);
    xdp_options xo{};
    socklen_t len = sizeof xo;
    if (getsockopt(x.fd, SOL_XDP, XDP_OPTIONS, &xo, &len) == 0)
      x.zero_copy = (xo.flags & XDP_OPTIONS_ZEROCOPY) != 0;

    const uint32_t rx_frames = x.rx_frames + x.held_frames;
    uint32_t idx             = 0;
    if (xsk_ring_prod__reserve(&x.fill, rx_frames, &idx) != rx_frames)
      return xsk_error("fill ring", ENOBUFS);
    for (uint32_t i = 0; i < rx_frames; ++i)
      *xsk_ring_prod__fill_addr(&x.fill, idx + i) = uint64_t(i) * x.chunk;
    xsk_ring_prod__submit(&x.fill, rx_frames);
    x.tx_free.reserve(x.tx_frames);
    x.pending.resize(x.tx_frames);
    for (uint32_t i = 0; i < x.tx_frames; ++i)
      x.tx_free.push_back(uint64_t(rx_frames + i) * x.chunk);
    if (x.arena_area) {
      std::lock_guard<std::mutex> lock(g_held_mutex);
      g_held.push_back(&x);
    }
    return Status::ok();
  }

  std::string name_, iface_;
  PortLink link_;
  PortOptions options_;
  PortCounters counters_;
  unsigned ifindex_   = 0;
  uint32_t xdp_flags_ = 0;
  size_t umem_mib_    = 0;
  std::string mode_   = "unknown";
  bool zero_copy_     = false;
  std::vector<std::unique_ptr<XskQueue>> queues_;
};

}  // namespace

Result<std::unique_ptr<Port>> open_afxdp_port(std::string_view name, const PortSpec& spec,
                                              const PortOptions& options) {
  if (options.rx_queues > kMaxQueues)
    return port_error(Errc::kInvalidArgument, name,
                      "afxdp: at most " + std::to_string(kMaxQueues) + " RX queues");
  if (options.frame_bytes < 64 || options.frame_bytes > 4096 - kXdpHeadroom)
    return port_error(Errc::kInvalidArgument, name,
                      "afxdp: frame_bytes must be in 64.." + std::to_string(4096 - kXdpHeadroom) +
                          " (one UMEM chunk)");
  auto port = std::make_unique<AfXdpPort>(name, spec, options);
  WARPATH_TRY(port->open());
  return std::unique_ptr<Port>(std::move(port));
}

#endif  // WARPATH_HAVE_XDP

}  // namespace warpath::runtime::detail
