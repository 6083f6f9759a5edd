// The DPDK port (dpdk:VDEV[,KEY=VALUE...]): a DPDK virtual device driven through rte_ethdev.
//
// Devices
//   The text after "dpdk:" goes to rte_vdev_init() as the device name (up to the first ',')
//   and its arguments (the rest), so every vdev PMD the DPDK build has works; these are linked
//   in (cmake/WarpathDeps.cmake) and meant:
//     dpdk:net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap   capture files through libpcap
//     dpdk:net_ring0                                   an in-memory ring: TX queue q feeds RX q
//     dpdk:net_af_packet0,iface=veth0                  AF_PACKET (qpairs=N for N queues)
//     dpdk:net_af_xdp0,iface=veth0                     AF_XDP (queue_count=N)
//   A device name may be used by one port at a time; closing the port removes the device.
//
// EAL
//   Started once per process, on the first dpdk port, with what needs no root-only resources:
//   --no-huge -m 512 (address space; pages are touched as pools use them) --no-pci --no-shconf
//   (no shared files, no multi-process socket, so concurrent warpath processes may share the
//   --file-prefix "warpath") --no-telemetry, log level "error" into stderr, and one lcore mapped
//   to every CPU the calling thread may run on (--lcores 0@(CPUS)). rte_eal_init() pins the
//   calling thread to its lcore's CPUs; its earlier affinity is put back afterwards, so the
//   pipeline's threads (which are not EAL threads) start from what they would have had.
//   $WARPATH_DPDK_EAL_ARGS (split at white space) is appended, e.g. "--log-level=debug".
//   When something else in the process started EAL first (rte_eal_init answers EALREADY), the
//   port uses that EAL. If EAL cannot start, opening a dpdk port fails with kNotSupported.
//
// Queues and threads
//   rx queues = min(options.rx_queues, the device's max_rx_queues), with RSS over IP/TCP/UDP
//   when there is more than one and the PMD hashes; tx queues = min(options.workers,
//   max_tx_queues); worker w sends on tx queue w % tx queues under that queue's mutex. The
//   pipeline's threads are not EAL lcores; each registers as a non-EAL lcore on its first
//   burst (register_thread), so the port's mempool serves it from a per-lcore cache of
//   kPoolCache mbufs, as it serves testpmd's lcores (a thread DPDK refuses goes to the pool's
//   shared ring: slower, not wrong). One mempool per port holds every rx descriptor, every tx
//   descriptor, a burst per queue, 1024 spare (net_ring keeps sent mbufs in its ring until
//   they are received) and the caches of up to kCachingThreads threads; mbufs
//   have room for frame_bytes (at least 2048 bytes), longer frames use chains. The pool is
//   packed (RTE_MEMPOOL_F_NO_IOVA_CONTIG; net_af_xdp needs that, see create_mbuf_pool()).
//
// Zero copy (options.zero_copy, the default)
//   The pool's mbufs (headers and data rooms, one packed chunk) lie in the packet arena
//   (core/packet_arena.hpp), in a LIFO pool (DPDK's "stack" ops: frames hold a whole batch of
//   mbufs, more than an lcore cache keeps, and a FIFO ring would hand out the coldest), with
//   options.held_packets mbufs more than the rings need. RX attaches each single-segment mbuf
//   to an arena batch where it is (PacketBatch::attach; the batch frees it when cleared); TX
//   sends a held packet's own mbuf, set to the packet's bytes now, unless the packet is shared
//   (kMetaShared), and copies everything else as below. ADR 0017.
//
// RX
//   rte_eth_rx_burst() (non-blocking) for at most what the caller asked; without zero copy (or
//   for a chain of mbufs, or a batch not in the arena) each mbuf is copied into the batch, cut
//   to frame_bytes (caplen), then freed; timestamp CLOCK_REALTIME read once per call. When the
//   batch fills, the mbufs not taken wait for the next call.
//   net_pcap without an rx source (no rx_pcap, rx_iface, rx_iface_in or iface) is send-only:
//   0 RX queues, as "pcap::out.pcap" is.
//   End of input: live devices never end (rx_done is false). net_pcap reading a file (rx_pcap,
//   without infinite_rx=1) returns 0 forever once the file is read, and 0 from it otherwise
//   means only a moment without mbufs, so such a queue is done after 8 consecutive empty polls
//   once it has received anything, or after 200 ms of nothing but empty polls (an empty file).
//   Only net_pcap rx_pcap devices end this way.
//
// TX
//   Held mbufs go as they are; other frames are copied into mbufs from the port's pool (chained
//   when longer than one); both are given
//   to rte_eth_tx_burst(), retried while the device takes some (up to 16 tries in a row that
//   take none, with a yield between); what it does not take is freed and counted in tx_errors.
//   net_pcap without tx_pcap (or tx_iface) discards what it is given, counting it as sent.
//
// Counters
//   rx, tx and tx_errors are the port's own; rx_dropped is the device's imissed + rx_nombuf
//   (rte_eth_stats), read when stats() is called and once more when the device is closed.
//
// flush() stops and closes the device (net_pcap completes its tx_pcap file then), removes the
// vdev and frees the pool; it runs once, from the destructor too when nobody called it.
// Packets sent after it are tx_errors.
#include <string>

#include "runtime/ports/port_impl.hpp"

#if WARPATH_HAVE_DPDK_PORTS
#include <pthread.h>
#include <rte_bus_vdev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>
#include <rte_prefetch.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>
#endif

namespace warpath::runtime::detail {

Result<std::unique_ptr<Port>> open_dpdk_port(std::string_view name, const PortSpec& spec,
                                             const PortOptions& options);

#if !WARPATH_HAVE_DPDK_PORTS

Result<std::unique_ptr<Port>> open_dpdk_port(std::string_view name, const PortSpec&,
                                             const PortOptions&) {
  return port_error(Errc::kNotBuilt, name, "dpdk ports need DPDK (apt-get install libdpdk-dev)");
}

#else

namespace {

constexpr uint16_t kRxBurst       = 32;
// Each lcore's cache of a pool (DPDK's per-lcore mempool cache, as testpmd's 250): a worker
// registers itself as a non-EAL lcore on its first burst (register_thread), so its allocations
// and frees, and the PMD's on its behalf, take the cache, not the pool's shared ring. The pool
// holds kPoolCache more mbufs for each of up to kCachingThreads threads.
constexpr unsigned kPoolCache      = 256;
constexpr unsigned kCachingThreads = 8;
constexpr uint32_t kTxBurst       = 64;
constexpr uint16_t kTxDescriptors = 1024;
constexpr int kTxIdleTries        = 16;
constexpr unsigned kEalMemoryMb   = 512;
constexpr uint32_t kPcapEndPolls  = 8;
constexpr uint64_t kPcapEndNs     = 200'000'000;

uint64_t mono_ns() noexcept {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

std::string dpdk_error(int err) { return rte_strerror(err < 0 ? -err : err); }

// ---- EAL ---------------------------------------------------------------------------------

// "0-3,6" for the CPUs of `set` below RTE_MAX_LCORE (EAL's limit on CPU ids).
std::string cpu_list(const cpu_set_t& set) {
  std::string out;
  int first        = -1;
  auto close_range = [&](int last) {
    if (first < 0) return;
    if (!out.empty()) out += ',';
    out += std::to_string(first);
    if (last > first) out += '-' + std::to_string(last);
    first = -1;
  };
  const int limit = std::min<int>(CPU_SETSIZE, RTE_MAX_LCORE);
  for (int c = 0; c < limit; ++c) {
    if (CPU_ISSET(c, &set)) {
      if (first < 0) first = c;
    } else {
      close_range(c - 1);
    }
  }
  close_range(limit - 1);
  return out;
}

struct Eal {
  Status status;
  std::string args;
};

Eal start_eal() {
  Eal eal;
  std::vector<std::string> args = {"warpath",
                                   "--no-huge",
                                   "-m",
                                   std::to_string(kEalMemoryMb),
                                   "--no-pci",
                                   "--no-shconf",
                                   "--no-telemetry",
                                   "--file-prefix",
                                   "warpath",
                                   "--log-level=4"};  // RTE_LOG_ERR
  cpu_set_t saved;
  CPU_ZERO(&saved);
  const bool have_affinity = pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) == 0;
  const std::string cpus   = have_affinity ? cpu_list(saved) : std::string();
  args.push_back("--lcores");
  args.push_back(cpus.empty() ? std::string("0") : "0@(" + cpus + ")");
  if (const char* extra = std::getenv("WARPATH_DPDK_EAL_ARGS")) {
    std::istringstream in(extra);
    for (std::string a; in >> a;) args.push_back(a);
  }
  for (size_t i = 1; i < args.size(); ++i) eal.args += (i > 1 ? " " : "") + args[i];

  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // EAL's default log stream also copies every message to syslog: stderr alone instead.
  rte_openlog_stream(stderr);
  const int rc = rte_eal_init(int(args.size()), argv.data());
  if (have_affinity) pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
  if (rc < 0 && rte_errno != EALREADY)
    eal.status = Status(Errc::kNotSupported,
                        "DPDK EAL did not start (" + eal.args + "): " + dpdk_error(rte_errno));
  return eal;
}

const Eal& eal() {
  static const Eal e = start_eal();
  return e;
}

// ---- mbufs -------------------------------------------------------------------------------

// Makes the calling thread a DPDK lcore (rte_thread_register) once, so mempool caches serve
// it; unregistered when the thread ends. A thread DPDK refuses (every lcore id taken) goes on
// without a cache: slower, not wrong.
void register_thread() {
  struct Registration {
    bool mine = false;
    Registration() {
      if (rte_lcore_id() == LCORE_ID_ANY) mine = rte_thread_register() == 0;
    }
    ~Registration() {
      if (mine) rte_thread_unregister();
    }
  };
  thread_local Registration r;
  (void)r;
}

// rte_pktmbuf_pool_create() with RTE_MEMPOOL_F_NO_IOVA_CONTIG and per-lcore caches. Without the
// flag, on EAL's 4 KiB pages (--no-huge) no mbuf may cross a page, so mbufs of 2 KiB and more
// lie a page apart; net_af_xdp takes the pool as its UMEM assuming they are packed (size =
// count x mbuf size) and the kernel then refuses every mbuf beyond that length. Nothing here
// needs physically contiguous mbufs: vdevs do no DMA. With `arena`, the mbufs (headers and
// data rooms, packed in one chunk) are placed in a slice of the packet arena, which the pool
// does not own: frames then hold received packets where they are (zero copy). Null with
// rte_errno set on failure.
rte_mempool* create_mbuf_pool(const std::string& name, uint32_t count, uint16_t room, int socket,
                              ArenaSlice* arena) {
  rte_pktmbuf_pool_private priv{};
  priv.mbuf_data_room_size = room;
  const unsigned elt       = unsigned(sizeof(rte_mbuf)) + room;
  rte_mempool* mp = rte_mempool_create_empty(name.c_str(), count, elt, kPoolCache,
                                             unsigned(sizeof priv), socket,
                                             RTE_MEMPOOL_F_NO_IOVA_CONTIG);
  if (!mp) return nullptr;
  // A zero-copy pool is a stack (LIFO, DPDK's "stack" ops) behind the lcore caches: frames
  // hold a batch of mbufs (up to 1,024 and more), more than a cache keeps, and a ring
  // (FIFO) would then hand out the least recently used of the whole pool, cold in every
  // cache, where a stack hands out those just freed.
  int rc = arena && rte_mempool_set_ops_byname(mp, "stack", nullptr) == 0
               ? 0
               : rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), nullptr);
  if (rc == 0) {
    rte_pktmbuf_pool_init(mp, &priv);
    if (!arena) {
      rc = rte_mempool_populate_default(mp);
    } else {
      rte_mempool_objsz sz{};
      const size_t bytes = size_t(count) * rte_mempool_calc_obj_size(elt, mp->flags, &sz) +
                           RTE_CACHE_LINE_SIZE;
      auto slice = PacketArena::get().allocate(bytes);
      if (!slice.is_ok()) {
        rc = -ENOMEM;
      } else {
        *arena                = std::move(*slice);
        char* addr            = reinterpret_cast<char*>(arena->data());
        const rte_iova_t iova = rte_eal_iova_mode() == RTE_IOVA_VA ? rte_iova_t(uintptr_t(addr))
                                                                    : RTE_BAD_IOVA;
        rc = rte_mempool_populate_iova(mp, addr, iova, arena->bytes(), nullptr, nullptr);
        if (rc >= 0 && mp->populated_size != mp->size) rc = -ENOSPC;
      }
    }
  }
  if (rc < 0) {
    rte_mempool_free(mp);
    if (arena) *arena = ArenaSlice();
    rte_errno = -rc;
    return nullptr;
  }
  rte_mempool_obj_iter(mp, rte_pktmbuf_init, nullptr);
  return mp;
}

// Pools outlive their ports until every dpdk port is closed: a port sends the mbufs frames
// hold wherever they came from, so another device (net_ring's ring, a queue's pending burst)
// may still hold this pool's mbufs when this port closes, and frees them when it closes.
std::mutex g_pool_mutex;
unsigned g_open_ports = 0;  // dpdk ports made and not yet closed
std::vector<std::pair<rte_mempool*, ArenaSlice>> g_retired;

void port_made() {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  ++g_open_ports;
}

// Called once per port, after its device is stopped and closed.
void retire_pool(rte_mempool* pool, ArenaSlice memory) {
  std::vector<std::pair<rte_mempool*, ArenaSlice>> free_now;
  {
    std::lock_guard<std::mutex> lock(g_pool_mutex);
    if (pool) g_retired.emplace_back(pool, std::move(memory));
    if (g_open_ports > 0) --g_open_ports;
    if (g_open_ports == 0) free_now.swap(g_retired);
  }
  for (auto& [p, mem] : free_now) rte_mempool_free(p);  // then the slices go
}

// A frame's held mbufs back to their pools (PacketBatch::ReleaseFn), in one bulk put.
void release_mbufs(void* const* handles, uint32_t count) {
  rte_pktmbuf_free_bulk(reinterpret_cast<rte_mbuf**>(const_cast<void**>(handles)), count);
}

// ---- devargs -----------------------------------------------------------------------------

// The keys of "k1=v1,k2=v2,flag" with their values.
std::vector<std::pair<std::string, std::string>> split_kvargs(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!text.empty()) {
    const size_t comma          = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const size_t eq             = item.find('=');
    out.emplace_back(std::string(item.substr(0, eq)), eq == std::string_view::npos
                                                          ? std::string()
                                                          : std::string(item.substr(eq + 1)));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

// ---- the port ----------------------------------------------------------------------------

struct RxQueue {
  std::array<rte_mbuf*, kRxBurst> pending{};  // received, not yet copied into a batch
  std::array<rte_mbuf*, kRxBurst> copied{};   // copied into a batch, to free
  uint16_t next = 0, count = 0;
  bool received     = false;  // anything ever (net_pcap end detection)
  uint32_t empties  = 0;      // consecutive empty polls
  uint64_t empty_ns = 0;      // when they began (steady clock)
  std::atomic<bool> done{false};
};

struct alignas(64) TxQueue {
  std::mutex mutex;
};

class DpdkPort final : public Port {
 public:
  DpdkPort(std::string_view name, const PortSpec& spec, const PortOptions& options)
      : name_(name),
        spec_(spec),
        options_(options),
        counters_(std::max<uint32_t>(options.rx_queues, 1), options.workers) {
    const size_t comma = spec_.args.find(',');
    vdev_              = spec_.args.substr(0, comma);
    if (comma != std::string::npos) params_ = spec_.args.substr(comma + 1);
    port_made();  // close() retires the pool, once
  }

  ~DpdkPort() override { (void)close(); }

  Status open() {
    const Eal& e = eal();
    if (!e.status.is_ok()) return port_error(e.status.code(), name_, "dpdk: " + e.status.message());

    int rc = rte_vdev_init(vdev_.c_str(), params_.c_str());
    if (rc < 0) {
      // -1 (not an errno) when no driver takes the name or the driver's probe failed.
      const std::string why =
          rc == -EEXIST ? "it exists already (a device name serves one port)"
          : rc == -1    ? "no driver of that name, or the driver refused the arguments (its "
                          "message, if any, is above)"
                        : dpdk_error(rc);
      return port_error(rc == -EEXIST ? Errc::kInvalidArgument : Errc::kIoError, name_,
                        "dpdk: cannot create device '" + vdev_ + "'" +
                            (params_.empty() ? std::string() : " with '" + params_ + "'") + ": " +
                            why);
    }
    vdev_created_ = true;
    if (rte_eth_dev_get_port_by_name(vdev_.c_str(), &port_id_) != 0)
      return fail(Errc::kInvalidArgument, "'" + vdev_ + "' is not an Ethernet device");
    have_port_ = true;

    rte_eth_dev_info info{};
    if ((rc = rte_eth_dev_info_get(port_id_, &info)) != 0)
      return fail(Errc::kIoError, "rte_eth_dev_info_get: " + dpdk_error(rc));
    driver_ = info.driver_name ? info.driver_name : "?";

    // net_pcap: with no rx source its RX queue is a dummy that never delivers (send-only);
    // reading a file (rx_pcap) ends, detected as described above.
    bool has_rx = true;
    if (driver_ == "net_pcap") {
      bool rx_pcap = false, rx_live = false, infinite = false;
      for (const auto& [k, v] : split_kvargs(params_)) {
        if (k == "rx_pcap") rx_pcap = true;
        if (k == "rx_iface" || k == "rx_iface_in" || k == "iface") rx_live = true;
        if (k == "infinite_rx" && v != "0") infinite = true;
      }
      has_rx     = rx_pcap || rx_live;
      pcap_file_ = rx_pcap && !rx_live && !infinite;
    }
    nrx_ = has_rx ? std::min<uint32_t>(options_.rx_queues, info.max_rx_queues) : 0;
    ntx_ = std::min<uint32_t>(std::max<uint32_t>(options_.workers, 1), info.max_tx_queues);

    rte_eth_conf conf{};
    if (nrx_ > 1 && info.flow_type_rss_offloads != 0) {
      conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
      conf.rx_adv_conf.rss_conf.rss_hf =
          (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) & info.flow_type_rss_offloads;
      rss_ = conf.rx_adv_conf.rss_conf.rss_hf != 0;
      if (!rss_) conf.rxmode.mq_mode = RTE_ETH_MQ_RX_NONE;
    }
    conf.rxmode.offloads = info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER;
    conf.txmode.offloads = info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
    if ((rc = rte_eth_dev_configure(port_id_, uint16_t(nrx_), uint16_t(ntx_), &conf)) != 0)
      return fail(Errc::kIoError, "rte_eth_dev_configure(" + std::to_string(nrx_) + " rx, " +
                                      std::to_string(ntx_) + " tx queues): " + dpdk_error(rc));

    uint16_t nb_rxd = uint16_t(std::clamp<uint32_t>(options_.ring_frames, 64, 32768));
    uint16_t nb_txd = kTxDescriptors;
    if ((rc = rte_eth_dev_adjust_nb_rx_tx_desc(port_id_, &nb_rxd, &nb_txd)) != 0)
      return fail(Errc::kIoError, "rte_eth_dev_adjust_nb_rx_tx_desc: " + dpdk_error(rc));

    static std::atomic<unsigned> pools{0};
    const std::string pool_name = "warpath_" + std::to_string(pools.fetch_add(1));
    // Zero copy: frames hold received mbufs until their packets leave, up to held_packets.
    zero_copy_           = options_.zero_copy && nrx_ > 0 && PacketArena::get().base() != nullptr;
    const uint32_t mbufs = nrx_ * (uint32_t(nb_rxd) + kRxBurst) +
                           ntx_ * (uint32_t(nb_txd) + kTxBurst) + 1024 +
                           kPoolCache * kCachingThreads + (zero_copy_ ? options_.held_packets : 0);
    const uint32_t room = std::clamp<uint32_t>(options_.frame_bytes + RTE_PKTMBUF_HEADROOM,
                                               RTE_MBUF_DEFAULT_BUF_SIZE, UINT16_MAX);
    int socket          = rte_eth_dev_socket_id(port_id_);
    if (socket < 0) socket = SOCKET_ID_ANY;
    pool_ = create_mbuf_pool(pool_name, mbufs, uint16_t(room), socket,
                             zero_copy_ ? &pool_memory_ : nullptr);
    if (!pool_ && zero_copy_) {  // no room in the packet arena: an ordinary pool, copying
      zero_copy_ = false;
      pool_      = create_mbuf_pool(pool_name, mbufs - options_.held_packets, uint16_t(room), socket,
                                    nullptr);
    }
    if (!pool_)
      return fail(Errc::kIoError,
                  "cannot create a pool of " + std::to_string(mbufs) + " mbufs of " +
                      std::to_string(room) + " bytes: " + dpdk_error(rte_errno) +
                      (rte_errno == ENOMEM ? " (EAL has -m " + std::to_string(kEalMemoryMb) +
                                                 " MiB for all dpdk ports" +
                                                 (zero_copy_ ? ", and the packet arena" : "") + ")"
                                           : std::string()));

    rte_eth_rxconf rxconf = info.default_rxconf;
    rxconf.offloads       = conf.rxmode.offloads;
    for (uint32_t q = 0; q < nrx_; ++q)
      if ((rc = rte_eth_rx_queue_setup(port_id_, uint16_t(q), nb_rxd, unsigned(socket), &rxconf,
                                       pool_)) != 0)
        return fail(Errc::kIoError,
                    "rte_eth_rx_queue_setup(" + std::to_string(q) + "): " + dpdk_error(rc));
    rte_eth_txconf txconf = info.default_txconf;
    txconf.offloads       = conf.txmode.offloads;
    for (uint32_t q = 0; q < ntx_; ++q)
      if ((rc = rte_eth_tx_queue_setup(port_id_, uint16_t(q), nb_txd, unsigned(socket), &txconf)) !=
          0)
        return fail(Errc::kIoError,
                    "rte_eth_tx_queue_setup(" + std::to_string(q) + "): " + dpdk_error(rc));
    rx_ = std::make_unique<RxQueue[]>(std::max<uint32_t>(nrx_, 1));
    tx_ = std::make_unique<TxQueue[]>(std::max<uint32_t>(ntx_, 1));

    if ((rc = rte_eth_dev_start(port_id_)) != 0)
      return fail(Errc::kIoError, "rte_eth_dev_start: " + dpdk_error(rc));
    started_ = true;
    // The router checks MACs on ports that see frames for other hosts: a NIC or an
    // af_packet / af_xdp vdev in promiscuous mode. net_pcap and net_ring accept the call but
    // replay files and rings, whose frames are nobody's in particular.
    const bool promisc = rte_eth_promiscuous_enable(port_id_) == 0;
    const bool virt    = driver_ == "net_pcap" || driver_ == "net_ring" || driver_ == "net_null";
    link_.promiscuous  = promisc && !virt;
    rte_ether_addr addr{};
    if (rte_eth_macaddr_get(port_id_, &addr) == 0) std::memcpy(link_.mac.data(), addr.addr_bytes, 6);
    // A link's MTU (forwarded IPv4 packets larger than it leave as fragments); files, rings and
    // the null device have no link to limit them.
    if (uint16_t mtu = 0; !virt && rte_eth_dev_get_mtu(port_id_, &mtu) == 0 && mtu) link_.mtu = mtu;
    return Status::ok();
  }

  const std::string& name() const noexcept override { return name_; }

  std::string describe() const override {
    std::string d = "dpdk " + vdev_ + " (" + driver_ + ", " + std::to_string(nrx_) + " rx + " +
                    std::to_string(ntx_) + " tx queues";
    if (rss_) d += ", RSS";
    if (zero_copy_) d += ", zero copy";
    return d + ")";
  }

  uint32_t rx_queue_count() const noexcept override { return nrx_; }

  Result<uint32_t> rx_burst(uint32_t q, packet::PacketBatch& batch, uint32_t max) override {
    register_thread();
    if (q >= nrx_)
      return port_error(Errc::kInvalidArgument, name_, "no RX queue " + std::to_string(q));
    RxQueue& rq = rx_[q];
    if (closed_.load(std::memory_order_acquire) || rq.done.load(std::memory_order_relaxed))
      return 0u;
    const uint64_t now = realtime_ns();
    uint32_t n         = 0;
    uint64_t bytes     = 0;
    bool polled_empty  = false;
    while (n < max) {
      uint16_t asked = 0;
      if (rq.next == rq.count) {
        asked    = uint16_t(std::min<uint32_t>(kRxBurst, max - n));
        rq.count = rte_eth_rx_burst(port_id_, uint16_t(q), rq.pending.data(), asked);
        rq.next  = 0;
        if (rq.count == 0) {
          polled_empty = n == 0;
          break;
        }
        rq.received = true;
      }
      bool full           = false;
      const bool attach   = zero_copy_ && batch.attachable(release_mbufs);
      uint32_t copied     = 0;
      while (rq.next < rq.count && n < max) {
        // Held where they are, a run at a time; then one copied (a chain of mbufs; one the
        // batch cannot hold).
        if (attach) {
          const uint32_t held = hold(rq.pending.data() + rq.next,
                                     std::min<uint32_t>(rq.count - rq.next, max - n), batch, now, bytes);
          rq.next = uint16_t(rq.next + held);  // held <= rq.count - rq.next
          n += held;
          if (rq.next == rq.count || n == max) break;
        }
        rte_mbuf* m = rq.pending[rq.next];
        if (!copy(m, batch, now)) {
          full = true;
          break;
        }
        rq.copied[copied++] = m;
        bytes += m->pkt_len;
        ++rq.next;
        ++n;
      }
      // The copied mbufs back to the pool in one bulk put a burst, not one put a packet.
      if (copied) rte_pktmbuf_free_bulk(rq.copied.data(), copied);
      if (full || (asked != 0 && rq.count < asked)) break;  // batch full, or the device is dry
    }
    counters_.rx(q, n, bytes);
    if (pcap_file_) {
      if (n > 0) {
        rq.empties = 0;
      } else if (polled_empty) {
        const uint64_t t = mono_ns();
        if (rq.empties++ == 0) rq.empty_ns = t;
        if ((rq.received && rq.empties >= kPcapEndPolls) || t - rq.empty_ns >= kPcapEndNs)
          rq.done.store(true, std::memory_order_relaxed);
      }
    }
    return n;
  }

  bool rx_done(uint32_t q) const noexcept override {
    return q >= nrx_ || closed_.load(std::memory_order_acquire) ||
           rx_[q].done.load(std::memory_order_relaxed);
  }

  uint32_t tx_burst(uint32_t worker, packet::PacketBatch& batch,
                    Span<const uint32_t> which) override {
    register_thread();
    uint32_t sent  = 0;
    uint64_t bytes = 0;
    if (ntx_ > 0 && !closed_.load(std::memory_order_acquire)) {
      const uint32_t q = worker % ntx_;
      std::lock_guard<std::mutex> lock(tx_[q].mutex);
      std::array<rte_mbuf*, kTxBurst> mbufs;               // lend() fills every entry
      const bool lends = batch.attachable(release_mbufs);  // handles, if any, are mbufs
      for (uint32_t at = 0; at < which.size && !closed_.load(std::memory_order_relaxed);) {
        const uint32_t k = std::min<uint32_t>(kTxBurst, which.size - at);
        // The packets' own mbufs where the frame lends them, fresh ones filled with a copy
        // for the rest; a packet whose copy fails ends the burst (it and the rest are freed).
        const uint32_t need = k - lend(batch, which.data + at, k, lends, mbufs.data());
        std::array<rte_mbuf*, kTxBurst> fresh;  // the first `need` filled by the allocation
        if (need && rte_pktmbuf_alloc_bulk(pool_, fresh.data(), need) != 0) {  // out of mbufs
          rte_pktmbuf_free_bulk(mbufs.data(), k);  // the lent ones (nulls skipped)
          break;
        }
        uint32_t built = need ? 0 : k;  // all lent: nothing to fill
        for (uint32_t f = 0; built < k; ++built) {
          if (mbufs[built]) continue;
          mbufs[built] = fresh[f++];
          if (!fill(mbufs[built], batch, which[at + built])) {
            if (f < need) rte_pktmbuf_free_bulk(fresh.data() + f, need - f);
            break;  // mbufs[built..k): the failed one and lent ones, freed below (nulls skipped)
          }
        }
        if (built < k) rte_pktmbuf_free_bulk(mbufs.data() + built, k - built);
        uint32_t done = 0;
        for (int idle = 0; done < built && idle < kTxIdleTries;) {
          const uint16_t s =
              rte_eth_tx_burst(port_id_, uint16_t(q), mbufs.data() + done, uint16_t(built - done));
          done += s;
          if (s == 0) {
            ++idle;
            std::this_thread::yield();
          } else {
            idle = 0;
          }
        }
        for (uint32_t i = 0; i < done; ++i) bytes += batch.meta(which[at + i]).len;
        sent += done;
        if (done < built) rte_pktmbuf_free_bulk(mbufs.data() + done, built - done);
        if (done < k) break;  // the device stopped taking frames, or no mbufs: the rest fail
        at += k;
      }
    }
    counters_.tx(worker, sent, bytes, which.size - sent);
    return sent;
  }

  Status flush() override { return close(); }

  PortLink link() const override { return link_; }

  PortStats stats() const override {
    PortStats s = counters_.sum();
    std::lock_guard<std::mutex> lock(close_mutex_);
    s.rx_dropped += closed_.load(std::memory_order_relaxed) ? final_dropped_ : device_dropped();
    return s;
  }

 private:
  // An error from open(): "port NAME: dpdk VDEV: what".
  Status fail(Errc code, const std::string& what) const {
    return port_error(code, name_, "dpdk " + vdev_ + ": " + what);
  }

  uint64_t device_dropped() const {
    rte_eth_stats st{};
    if (!have_port_ || rte_eth_stats_get(port_id_, &st) != 0) return 0;
    return st.imissed + st.rx_nombuf;
  }

  // Appends mbuf `m` (chains too) to `batch`, cut to frame_bytes. False when the batch is full.
  bool copy(const rte_mbuf* m, packet::PacketBatch& batch, uint64_t ts) const {
    const uint32_t len = m->pkt_len;
    const uint32_t cap = std::min(len, options_.frame_bytes);
    if (m->data_len >= cap)
      return batch.append(rte_pktmbuf_mtod(m, const uint8_t*), cap, len, ts, options_.index);
    uint8_t* dst = batch.append_uninitialized(cap, len, ts, options_.index);
    if (!dst) return false;
    const void* p = rte_pktmbuf_read(m, 0, cap, dst);
    if (p && p != dst) std::memcpy(dst, p, cap);
    return true;
  }

  // Appends mbufs ms[0..k) (one segment each, in the packet arena) to `batch` where they are,
  // up to the first that is not (a chain; the batch full): the batch holds them until each
  // packet leaves (lend) or the frame is done. Returns how many; adds their lengths to `bytes`.
  uint32_t hold(rte_mbuf* const* ms, uint32_t k, packet::PacketBatch& batch, uint64_t ts,
                uint64_t& bytes) const {
    const uint32_t frame_bytes = options_.frame_bytes;
    return batch.attach_burst(
        k, ts, options_.index, release_mbufs, bytes, [&](uint32_t j, packet::PacketBatch::Held1& p) {
          const rte_mbuf* m = ms[j];
          if (m->nb_segs != 1) return false;
          const auto* buf = static_cast<const uint8_t*>(m->buf_addr);
          p = {buf + m->data_off, std::min<uint32_t>(m->data_len, frame_bytes), m->pkt_len, buf,
               buf + m->buf_len,  const_cast<rte_mbuf*>(m)};
          return true;
        });
  }

  // The packets which[0..k)'s own mbufs into out[0..k), taken from the batch and set to the
  // packets' bytes now (a module may have moved a start or changed a length within the
  // buffer), where the batch holds one and the packet leaves only here; nullptr elsewhere (the
  // caller copies those bytes). `lends`: the batch's handles, if any, are mbufs
  // (batch.attachable(release_mbufs)), asked once a burst. Returns how many it lent.
  static uint32_t lend(packet::PacketBatch& batch, const uint32_t* which, uint32_t k, bool lends,
                       rte_mbuf** out) {
    std::array<void*, kTxBurst> handles;  // k <= kTxBurst
    if (!lends || batch.take_handles(which, k, handles.data()) == 0) {
      for (uint32_t j = 0; j < k; ++j) out[j] = nullptr;
      return 0;
    }
    const uint8_t* base = batch.base();
    uint32_t lent       = 0;
    // The mbufs' headers were last touched at rx, a frame ago: with frames of hundreds of
    // packets they have left L1 (the header stores below were a third of tx_burst's samples
    // on `--chain wire`), so their lines are asked for a few packets ahead.
    constexpr uint32_t kAhead = 8;
    for (uint32_t j = 0; j < k && j < kAhead; ++j)
      if (handles[j]) rte_prefetch0(handles[j]);
    for (uint32_t j = 0; j < k; ++j) {
      if (j + kAhead < k && handles[j + kAhead]) rte_prefetch0(handles[j + kAhead]);
      rte_mbuf* m = out[j] = static_cast<rte_mbuf*>(handles[j]);
      if (!m) continue;
      const packet::PacketMeta& meta = batch.meta(which[j]);
      m->data_off = uint16_t(base + meta.offset - static_cast<const uint8_t*>(m->buf_addr));
      m->data_len = uint16_t(meta.caplen);
      m->pkt_len  = meta.caplen;
      m->ol_flags &= ~RTE_MBUF_F_TX_OFFLOAD_MASK;
      ++lent;
    }
    return lent;
  }

  // Copies packet i of `batch` into `m` (fresh from the pool), chaining more mbufs when it
  // does not fit. False when the pool ran dry (`m` is the caller's to free, with its chain).
  bool fill(rte_mbuf* m, const packet::PacketBatch& batch, uint32_t i) const {
    const uint8_t* src   = batch.data(i);
    const uint32_t total = batch.meta(i).caplen;
    uint32_t off         = 0;
    rte_mbuf* last       = m;
    for (;;) {
      const uint32_t take = std::min<uint32_t>(total - off, rte_pktmbuf_tailroom(last));
      std::memcpy(rte_pktmbuf_mtod_offset(last, uint8_t*, last->data_len), src + off, take);
      last->data_len = uint16_t(last->data_len + take);
      m->pkt_len += take;
      off += take;
      if (off == total) return true;
      rte_mbuf* next = rte_pktmbuf_alloc(pool_);
      if (!next || rte_pktmbuf_chain(m, next) != 0) {
        if (next) rte_pktmbuf_free(next);
        return false;
      }
      last = next;
    }
  }

  Status close() {
    std::lock_guard<std::mutex> lock(close_mutex_);
    if (closed_.load(std::memory_order_relaxed)) return close_status_;
    // Stop the TX side first: a worker still sending (not the pipeline's way) finishes its
    // burst before the device goes.
    closed_.store(true, std::memory_order_release);
    for (uint32_t q = 0; tx_ && q < ntx_; ++q) std::lock_guard<std::mutex> wait(tx_[q].mutex);
    final_dropped_ = device_dropped();
    for (uint32_t q = 0; rx_ && q < nrx_; ++q) {
      RxQueue& rq = rx_[q];
      while (rq.next < rq.count) rte_pktmbuf_free(rq.pending[rq.next++]);
    }
    int rc = 0;
    if (started_ && (rc = rte_eth_dev_stop(port_id_)) != 0 && close_status_.is_ok())
      close_status_ = fail(Errc::kIoError, "rte_eth_dev_stop: " + dpdk_error(rc));
    if (have_port_ && (rc = rte_eth_dev_close(port_id_)) != 0 && close_status_.is_ok())
      close_status_ = fail(Errc::kIoError, "rte_eth_dev_close: " + dpdk_error(rc));
    if (vdev_created_ && (rc = rte_vdev_uninit(vdev_.c_str())) != 0 && close_status_.is_ok())
      close_status_ = fail(Errc::kIoError, "rte_vdev_uninit: " + dpdk_error(rc));
    have_port_ = vdev_created_ = started_ = false;
    retire_pool(pool_, std::move(pool_memory_));
    pool_ = nullptr;
    return close_status_;
  }

  std::string name_;
  PortSpec spec_;
  PortOptions options_;
  PortCounters counters_;
  std::string vdev_, params_, driver_;
  uint16_t port_id_  = 0;
  PortLink link_;
  bool vdev_created_ = false, have_port_ = false, started_ = false;
  bool rss_ = false, pcap_file_ = false;
  uint32_t nrx_ = 0, ntx_ = 0;
  rte_mempool* pool_ = nullptr;
  ArenaSlice pool_memory_;  // the pool's mbufs when zero_copy_ (freed after the pool)
  bool zero_copy_ = false;
  std::unique_ptr<RxQueue[]> rx_;
  std::unique_ptr<TxQueue[]> tx_;
  // Closing.
  mutable std::mutex close_mutex_;
  std::atomic<bool> closed_{false};
  Status close_status_;
  uint64_t final_dropped_ = 0;
};

}  // namespace

Result<std::unique_ptr<Port>> open_dpdk_port(std::string_view name, const PortSpec& spec,
                                             const PortOptions& options) {
  auto port = std::make_unique<DpdkPort>(name, spec, options);
  WARPATH_TRY(port->open());
  return std::unique_ptr<Port>(std::move(port));
}

#endif  // WARPATH_HAVE_DPDK_PORTS

}  // namespace warpath::runtime::detail
