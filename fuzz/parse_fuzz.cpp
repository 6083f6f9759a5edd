// libFuzzer target: the shared core parser and the reference parser must agree on every input,
// and neither may read past the captured length (AddressSanitizer checks the latter: the input
// is copied into a buffer of exactly caplen bytes).
//
// Input layout: byte 0..1 = extra wire length beyond caplen (so snaplen-cut packets are
// covered), the rest is the frame.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "packet/core/parse_core.hpp"
#include "packet/reference/parse_reference.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || size > 70000) return 0;
  const uint32_t extra  = uint32_t(data[0]) << 8 | data[1];
  const uint32_t caplen = static_cast<uint32_t>(size - 2);
  std::vector<uint8_t> frame(data + 2, data + size);  // exactly caplen bytes on the heap
  const uint8_t* p               = frame.empty() ? nullptr : frame.data();
  static const uint8_t kEmpty[1] = {0};
  if (!p) p = kEmpty;
  const auto a = warpath::packet::core::parse_packet(p, caplen, caplen + extra);
  const auto b = warpath::packet::reference::parse_packet(p, caplen, caplen + extra);
  if (!(a == b)) {
    std::fprintf(stderr, "core and reference parsers disagree: status %s vs %s\n",
                 warpath::packet::parse_status_name(a.status),
                 warpath::packet::parse_status_name(b.status));
    std::abort();
  }
  return 0;
}
