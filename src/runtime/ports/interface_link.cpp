// The MAC, MTU and addresses of a live interface, for Port::link() (afpacket, afxdp).
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
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
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) != 0) return link;
  for (const ifaddrs* a = all; a; a = a->ifa_next) {
    if (!a->ifa_addr || !a->ifa_name || iface != a->ifa_name) continue;
    if (a->ifa_addr->sa_family == AF_INET) {
      link.ipv4.push_back(ntohl(reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr));
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      std::array<uint8_t, 16> v6{};
      std::memcpy(v6.data(), &reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr, 16);
      link.ipv6.push_back(v6);
    }
  }
  ::freeifaddrs(all);
  return link;
}

}  // namespace warpath::runtime::detail
