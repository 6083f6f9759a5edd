// include/warpath/net/protocols.hpp: EtherTypes, IP protocol numbers (IANA) and the
// well-known header sizes, in one place for the parsers, the generator and the modules.
#pragma once
#include <cstdint>

namespace warpath::net {

inline constexpr uint16_t kEthIpv4 = 0x0800, kEthIpv6 = 0x86dd, kEthArp = 0x0806, kEthVlan = 0x8100,
                          kEthQinQ = 0x88a8, kEthQinQOld = 0x9100;
inline constexpr uint8_t kProtoIcmp = 1, kProtoIpInIp = 4, kProtoTcp = 6, kProtoUdp = 17,
                         kProtoIpv6 = 41, kProtoGre = 47, kProtoEsp = 50, kProtoIcmpv6 = 58,
                         kProtoSctp = 132;
inline constexpr uint16_t kVxlanPort = 4789, kGenevePort = 6081;

inline constexpr uint32_t kEthHeaderBytes  = 14;
inline constexpr uint32_t kIpv4HeaderBytes = 20;
inline constexpr uint32_t kIpv6HeaderBytes = 40;
inline constexpr uint32_t kTcpHeaderBytes  = 20;
inline constexpr uint32_t kUdpHeaderBytes  = 8;
inline constexpr uint32_t kIcmpHeaderBytes = 8;

}  // namespace warpath::net
