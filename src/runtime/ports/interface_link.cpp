// The MAC and MTU of a live interface, for Port::link() (afpacket, afxdp).
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "runtime/ports/port_impl.hpp"

namespace warpath::runtime::detail {

PortLink interface_link(const std::string& iface, bool promiscuous) {
  PortLink link;
  link.promiscuous = promiscuous;
  const int fd     = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || iface.size() >= IFNAMSIZ) {
    if (fd >= 0) ::close(fd);
    return link;
  }
  ifreq req{};
  std::memcpy(req.ifr_name, iface.c_str(), iface.size() + 1);
  if (::ioctl(fd, SIOCGIFHWADDR, &req) == 0) std::memcpy(link.mac.data(), req.ifr_hwaddr.sa_data, 6);
  if (::ioctl(fd, SIOCGIFMTU, &req) == 0 && req.ifr_mtu > 0) link.mtu = uint32_t(req.ifr_mtu);
  ::close(fd);
  return link;
}

}  // namespace warpath::runtime::detail
