// Detection patterns of the protocols warpath only detects (src/nids/app/label_probe.hpp).
#include "nids/app/label_probe.hpp"

#include <cctype>
#include <string_view>

namespace warpath::nids::detail {
namespace {

struct Pattern {
  AppLayer layer;
  int8_t dir;  // 0, 1, or -1: either
  uint8_t offset;
  std::string_view bytes;
  bool caseless;
};

constexpr Pattern kPatterns[] = {
    {AppLayer::kFtp, 0, 0, "FEAT", true},       {AppLayer::kFtp, 0, 0, "USER ", true},
    {AppLayer::kFtp, 0, 0, "PASS ", true},      {AppLayer::kFtp, 0, 0, "PORT ", true},
    {AppLayer::kFtp, 1, 0, "220 (", true},      {AppLayer::kSmtp, 0, 0, "EHLO", true},
    {AppLayer::kSmtp, 0, 0, "HELO", true},      {AppLayer::kSmtp, 0, 0, "QUIT", true},
    {AppLayer::kSsh, -1, 0, "SSH-", false},     {AppLayer::kSmb, -1, 4, "\xffSMB", false},
    {AppLayer::kSmb, -1, 4, "\xfeSMB", false},  {AppLayer::kSmb, -1, 4, "\xfdSMB", false},
};

bool same(uint8_t a, char b, bool caseless) {
  return caseless ? std::toupper(a) == std::toupper(static_cast<unsigned char>(b)) : a == uint8_t(b);
}

}  // namespace

Probe probe_label(AppLayer layer, uint8_t dir, const uint8_t* data, size_t len) noexcept {
  bool more = false;
  for (const Pattern& p : kPatterns) {
    if (p.layer != layer || (p.dir >= 0 && p.dir != dir)) continue;
    bool agrees = true;  // with the bytes there are
    for (size_t i = 0; i < p.bytes.size() && agrees; ++i)
      if (p.offset + i < len) agrees = same(data[p.offset + i], p.bytes[i], p.caseless);
    if (!agrees) continue;
    if (len >= p.offset + p.bytes.size()) return Probe::kYes;
    more = true;
  }
  return more ? Probe::kMore : Probe::kNo;
}

}  // namespace warpath::nids::detail
