// Generated IP fragments (src/defrag/generate.hpp).
#include "defrag/generate.hpp"

#include <algorithm>

#include "gen/packet_builder.hpp"
#include "warpath/gen/traffic.hpp"

namespace warpath::defrag {

std::vector<uint8_t> fragment_frame(bool v6, uint8_t proto, uint32_t id, uint32_t offset, bool more,
                                    const uint8_t* data, uint32_t len) {
  std::vector<uint8_t> f(14 + (v6 ? 48 : 20) + len, 0);
  f[12] = v6 ? 0x86 : 0x08;
  f[13] = v6 ? 0xdd : 0x00;
  uint8_t* ip = f.data() + 14;
  if (!v6) {
    const uint32_t total = 20 + len, word = (offset / 8) | (more ? 0x2000u : 0);
    ip[0] = 0x45;
    ip[2] = uint8_t(total >> 8), ip[3] = uint8_t(total);
    ip[4] = uint8_t(id >> 8), ip[5] = uint8_t(id);
    ip[6] = uint8_t(word >> 8), ip[7] = uint8_t(word);
    ip[8] = 64, ip[9] = proto;
    ip[12] = 10, ip[15] = 1, ip[16] = 10, ip[19] = 2;
    const uint16_t sum = gen::internet_checksum(ip, 20);
    ip[10] = uint8_t(sum >> 8), ip[11] = uint8_t(sum);
    std::copy(data, data + len, ip + 20);
  } else {
    const uint32_t plen = 8 + len, word = offset | (more ? 1u : 0);
    ip[0] = 0x60;
    ip[4] = uint8_t(plen >> 8), ip[5] = uint8_t(plen);
    ip[6] = 44, ip[7] = 64;
    ip[8] = 0x20, ip[9] = 0x01, ip[10] = 0x0d, ip[11] = 0xb8, ip[23] = 1;
    ip[24] = 0x20, ip[25] = 0x01, ip[26] = 0x0d, ip[27] = 0xb8, ip[39] = 2;
    uint8_t* fh = ip + 40;
    fh[0] = proto;
    fh[2] = uint8_t(word >> 8), fh[3] = uint8_t(word);
    fh[4] = uint8_t(id >> 24), fh[5] = uint8_t(id >> 16), fh[6] = uint8_t(id >> 8), fh[7] = uint8_t(id);
    std::copy(data, data + len, fh + 8);
  }
  return f;
}

FragFrames generate_fragments(const FragGenParams& p) {
  gen::detail::Rng rng(p.seed, 0xf7a9);
  FragFrames g;
  for (uint32_t d = 0; d < p.datagrams; ++d) {
    const bool v6       = rng.below(100) < p.v6_percent;
    static constexpr uint8_t kProtos[] = {6, 17, 1};
    uint8_t proto       = kProtos[rng.below(3)];
    if (v6 && proto == 1) proto = 58;
    const uint32_t size = 40 + rng.below(std::max<uint32_t>(p.max_payload, 1));
    std::vector<uint8_t> payload(size);
    for (auto& b : payload) b = uint8_t('a' + rng.below(26));
    g.payloads.push_back(payload);
    const uint32_t id = 1000 + d;
    // Cut at 8-byte boundaries; TCP's first cut keeps the header whole and none starts at 8.
    uint32_t at = 0;
    while (at < size) {
      uint32_t len = 8 * (1 + rng.below(64));
      if (proto == 6 && at == 0) len = std::max<uint32_t>(len, 24);
      if (at == 0 && len >= size) len = 8 * ((size - 1) / 8);  // always two fragments or more
      if (at + len >= size) len = size - at;
      const bool more = at + len < size;
      g.frames.push_back(fragment_frame(v6, proto, id, at, more, payload.data() + at, len));
      if (p.overlap_percent && at >= 24 && rng.below(100) < p.overlap_percent) {
        const uint32_t from = at - 8 * (1 + rng.below(std::min<uint32_t>(at / 8 - 1, 8)));
        const uint32_t to   = std::min(size, at + len + 8 * rng.below(4));
        if (proto != 6 || from != 8) {
          std::vector<uint8_t> bytes(payload.begin() + from, payload.begin() + to);
          if (p.conflict_percent && rng.below(100) < p.conflict_percent)
            for (auto& b : bytes) b = uint8_t('A' + rng.below(26));
          g.frames.push_back(fragment_frame(v6, proto, id, from, to < size, bytes.data(),
                                            uint32_t(bytes.size())));
        }
      }
      at += len;
    }
  }
  for (size_t i = 0; i + 1 < g.frames.size(); ++i)
    if (rng.below(100) < p.shuffle_percent)
      std::swap(g.frames[i], g.frames[i + 1 + rng.below(uint32_t(std::min<size_t>(6, g.frames.size() - i - 1)))]);
  return g;
}

}  // namespace warpath::defrag
