#include "warpath/packet/info.hpp"

#include <cstddef>

namespace warpath::packet {

const char* parse_status_name(ParseStatus status) noexcept {
  static constexpr const char* kNames[] = {
      "ok",
      "truncated",
      "bad_ipv4_header",
      "bad_ipv4_checksum",
      "bad_ipv4_length",
      "bad_ipv6_header",
      "bad_ipv6_length",
      "bad_ipv6_ext_header",
      "bad_tcp_header",
      "bad_udp_header",
  };
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == size_t(ParseStatus::kCount));
  const auto i = static_cast<unsigned>(status);
  return i < static_cast<unsigned>(ParseStatus::kCount) ? kNames[i] : "unknown";
}

}  // namespace warpath::packet
