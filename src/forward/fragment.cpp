// src/forward/fragment.cpp: IP fragmentation on output (include/warpath/forward/fragment.hpp).
#include "warpath/forward/fragment.hpp"

#include <cstring>

#include "packet/core/bytes.hpp"

namespace warpath::forward {
namespace {

using packet::core::fold_checksum;
using packet::core::load_be16;
using packet::core::ones_sum;
using packet::core::store_be16;
using packet::core::store_be32;

// The options of an IPv4 header a later fragment carries: those with the copied flag (RFC 791
// 3.1), in order, padded with End of Option List to a multiple of 4. Their length; 0 when the
// options cannot be read (a later fragment then carries none, as a malformed list is never
// copied).
uint32_t copied_options(const uint8_t* opt, uint32_t len, uint8_t* to) {
  uint32_t n = 0;
  for (uint32_t k = 0; k < len;) {
    const uint8_t type = opt[k];
    if (type == 0) break;           // End of Option List
    if (type == 1) { ++k; continue; }  // No Operation: never copied
    if (k + 1 >= len || opt[k + 1] < 2 || k + opt[k + 1] > len) return 0;
    const uint8_t olen = opt[k + 1];
    if (type & 0x80) {
      std::memcpy(to + n, opt + k, olen);
      n += olen;
    }
    k += olen;
  }
  while (n % 4) to[n++] = 0;
  return n;
}

FragmentResult fragment_v4(const uint8_t* frame, uint32_t l3, uint32_t mtu, uint64_t ts,
                           uint16_t port, packet::PacketBatch& out) {
  const uint8_t* ip  = frame + l3;
  const uint32_t ihl = (ip[0] & 0x0f) * 4u;
  const uint32_t total = load_be16(ip + 2);
  const uint16_t frag  = load_be16(ip + 6);
  if (total <= mtu) return {FragmentOutcome::kFits, 0};
  if ((frag & 0x4000) || mtu < 68 || ihl < 20 || total < ihl) return {FragmentOutcome::kRefused, 0};
  uint8_t later_opts[40];
  const uint32_t later_ihl = 20 + copied_options(ip + 20, ihl - 20, later_opts);
  // Payload per fragment: a multiple of 8 (the first fragment's header is the largest).
  const uint32_t chunk = (mtu - ihl) / 8 * 8;
  if (chunk == 0) return {FragmentOutcome::kRefused, 0};
  const uint32_t payload = total - ihl;
  const uint32_t first   = payload < chunk ? payload : chunk;
  const uint32_t later   = (mtu - later_ihl) / 8 * 8;
  const uint32_t count   = 1 + (payload - first + later - 1) / later;
  if (!out.can_append(count, l3 + mtu)) return {FragmentOutcome::kNoRoom, 0};
  // The packet's own offset and MF: fragmenting a fragment keeps its place in the datagram
  // (whose end must stay within the 13-bit offset's reach).
  const uint32_t base  = uint32_t(frag & 0x1fff) * 8;
  const bool last_more = frag & 0x2000;
  if (base + payload > 65535 - ihl) return {FragmentOutcome::kRefused, 0};
  uint32_t at = 0;
  for (uint32_t k = 0; k < count; ++k) {
    const uint32_t hl   = k == 0 ? ihl : later_ihl;
    const uint32_t size = k == 0 ? first : (payload - at < later ? payload - at : later);
    uint8_t* p = out.append_uninitialized(l3 + hl + size, l3 + hl + size, ts, port);
    if (!p) return {FragmentOutcome::kNoRoom, k};  // not after can_append(); never half-silent
    std::memcpy(p, frame, l3);
    uint8_t* h = p + l3;
    std::memcpy(h, ip, 20);
    if (k == 0) std::memcpy(h + 20, ip + 20, ihl - 20);
    else std::memcpy(h + 20, later_opts, later_ihl - 20);
    h[0] = uint8_t(0x40 | hl / 4);
    store_be16(h + 2, uint16_t(hl + size));
    const bool more = at + size < payload || last_more;
    store_be16(h + 6, uint16_t((frag & 0x8000) | (more ? 0x2000 : 0) | ((base + at) / 8)));
    store_be16(h + 10, 0);
    store_be16(h + 10, fold_checksum(ones_sum(h, hl)));
    std::memcpy(h + hl, ip + ihl + at, size);
    at += size;
  }
  return {FragmentOutcome::kFragmented, count};
}

FragmentResult fragment_v6(const uint8_t* frame, uint32_t l3, uint32_t mtu, uint32_t ident,
                           uint64_t ts, uint16_t port, packet::PacketBatch& out) {
  const uint8_t* ip      = frame + l3;
  const uint32_t payload = load_be16(ip + 4);
  const uint8_t next     = ip[6];
  if (40 + payload <= mtu) return {FragmentOutcome::kFits, 0};
  // Hop-by-hop, routing and destination options belong to the unfragmentable part; a
  // fragment is not fragmented again. Jumbograms (payload length 0) are refused too.
  if (next == 0 || next == 43 || next == 60 || next == 44 || payload == 0 || mtu < 1280)
    return {FragmentOutcome::kRefused, 0};
  const uint32_t chunk = (mtu - 48) / 8 * 8;
  const uint32_t count = (payload + chunk - 1) / chunk;
  if (!out.can_append(count, l3 + mtu)) return {FragmentOutcome::kNoRoom, 0};
  for (uint32_t k = 0, at = 0; k < count; ++k, at += chunk) {
    const uint32_t size = payload - at < chunk ? payload - at : chunk;
    uint8_t* p = out.append_uninitialized(l3 + 48 + size, l3 + 48 + size, ts, port);
    if (!p) return {FragmentOutcome::kNoRoom, k};
    std::memcpy(p, frame, l3 + 40);
    uint8_t* h = p + l3;
    store_be16(h + 4, uint16_t(8 + size));
    h[6]       = 44;
    uint8_t* fh = h + 40;
    fh[0] = next;
    fh[1] = 0;
    store_be16(fh + 2, uint16_t(at | (at + size < payload ? 1 : 0)));
    store_be32(fh + 4, ident);
    std::memcpy(fh + 8, ip + 40 + at, size);
  }
  return {FragmentOutcome::kFragmented, count};
}

}  // namespace

FragmentResult fragment_packet(const uint8_t* frame, uint32_t caplen,
                               const packet::PacketInfo& info, uint32_t mtu, uint32_t ident,
                               uint64_t timestamp_ns, uint16_t port, packet::PacketBatch& out) {
  const uint32_t l3 = info.l3_offset;
  if (info.ip_version == 4 && l3 + 20 <= caplen) {
    const uint32_t ihl = (frame[l3] & 0x0f) * 4u;
    if (l3 + ihl <= caplen && l3 + load_be16(frame + l3 + 2) <= caplen)
      return fragment_v4(frame, l3, mtu, timestamp_ns, port, out);
  } else if (info.ip_version == 6 && l3 + 40 <= caplen &&
             l3 + 40 + load_be16(frame + l3 + 4) <= caplen) {
    return fragment_v6(frame, l3, mtu, ident, timestamp_ns, port, out);
  }
  return {FragmentOutcome::kRefused, 0};
}

}  // namespace warpath::forward
