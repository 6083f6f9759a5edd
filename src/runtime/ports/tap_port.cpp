// The TAP port (tap:NAME): frames handed to the host's network stack through a Linux TAP
// interface. What the port sends, the kernel receives on NAME as if it had arrived there; so
// `--slow-path tap:NAME` gives the host the slow path's packets (ARP, packets for the
// router's own addresses, TTL expired) on ports whose frames the kernel never sees itself:
// AF_XDP (the XSK program redirects everything) and DPDK. The interface is created (or an
// existing persistent one attached) when the port opens, set up, and goes away with it.
//
// TX only (no RX queues): the host's answers leave by the host's own routes. One write(2) per
// frame under a mutex (workers share the one descriptor); a failed write counts as tx_errors.
// Needs CAP_NET_ADMIN.
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "runtime/ports/port_impl.hpp"

namespace warpath::runtime::detail {

namespace {

class TapPort final : public Port {
 public:
  TapPort(std::string_view name, std::string iface, const PortOptions& options)
      : name_(name), iface_(std::move(iface)), counters_(0, options.workers) {}
  ~TapPort() override {
    if (fd_ >= 0) ::close(fd_);
  }

  Status open() {
    fd_ = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0)
      return port_error(Errc::kIoError, name_,
                        "tap: /dev/net/tun: " + std::string(std::strerror(errno)));
    ifreq req{};
    req.ifr_flags = IFF_TAP | IFF_NO_PI;
    std::memcpy(req.ifr_name, iface_.c_str(), iface_.size() + 1);
    if (::ioctl(fd_, TUNSETIFF, &req) != 0)
      return port_error(Errc::kIoError, name_,
                        "tap: cannot create interface '" + iface_ + "': " + std::strerror(errno) +
                            (errno == EPERM ? " (needs CAP_NET_ADMIN)" : ""));
    const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ifreq up{};
    std::memcpy(up.ifr_name, iface_.c_str(), iface_.size() + 1);
    const bool ok = s >= 0 && ::ioctl(s, SIOCGIFFLAGS, &up) == 0 &&
                    (up.ifr_flags |= IFF_UP, ::ioctl(s, SIOCSIFFLAGS, &up) == 0);
    const int e = errno;
    if (s >= 0) ::close(s);
    if (!ok)
      return port_error(Errc::kIoError, name_,
                        "tap: cannot bring '" + iface_ + "' up: " + std::strerror(e));
    return Status::ok();
  }

  const std::string& name() const noexcept override { return name_; }
  std::string describe() const override { return "tap " + iface_ + " (to the host's stack)"; }
  uint32_t rx_queue_count() const noexcept override { return 0; }
  Result<uint32_t> rx_burst(uint32_t, packet::PacketBatch&, uint32_t) override { return 0u; }
  bool rx_done(uint32_t) const noexcept override { return true; }

  uint32_t tx_burst(uint32_t worker, packet::PacketBatch& batch,
                    Span<const uint32_t> which) override {
    uint32_t sent  = 0;
    uint64_t bytes = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (uint32_t i : which) {
        const packet::PacketMeta& m = batch.meta(i);
        if (::write(fd_, batch.data(i), m.caplen) == ssize_t(m.caplen)) {
          ++sent;
          bytes += m.len;
        }
      }
    }
    counters_.tx(worker, sent, bytes, which.size - sent);
    return sent;
  }
  PortStats stats() const override { return counters_.sum(); }

 private:
  std::string name_, iface_;
  PortCounters counters_;
  std::mutex mutex_;
  int fd_ = -1;
};

}  // namespace

Result<std::unique_ptr<Port>> open_tap_port(std::string_view name, const PortSpec& spec,
                                            const PortOptions& options) {
  auto port = std::make_unique<TapPort>(name, spec.iface, options);
  WARPATH_TRY(port->open());
  return std::unique_ptr<Port>(std::move(port));
}

}  // namespace warpath::runtime::detail
