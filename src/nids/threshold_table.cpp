// threshold / detection_filter windows (src/nids/threshold_table.hpp).
#include "nids/threshold_table.hpp"

#include <iterator>

namespace warpath::nids::detail {

bool ThresholdTable::allows(uint32_t rule, const Threshold& t, const PacketView& p, uint64_t ts,
                            bool& full) {
  std::string key(reinterpret_cast<const char*>(&rule), sizeof rule);
  const size_t alen = p.ip_version == 6 ? 16 : 4;
  if (t.track == Threshold::kBySrc || t.track == Threshold::kByBoth)
    key.append(reinterpret_cast<const char*>(p.src), alen);
  if (t.track == Threshold::kByDst || t.track == Threshold::kByBoth)
    key.append(reinterpret_cast<const char*>(p.dst), alen);
  const uint64_t length = uint64_t(t.seconds) * 1'000'000'000ull;
  auto expired = [&](const Window& w) { return ts > w.first && ts - w.first > w.length; };
  auto it = windows_.find(key);
  if (it == windows_.end()) {
    if (windows_.size() >= kMaxEntries && ts >= last_sweep_ + 1'000'000'000ull) {
      last_sweep_ = ts;
      for (auto e = windows_.begin(); e != windows_.end();) e = expired(e->second) ? windows_.erase(e) : std::next(e);
    }
    if (windows_.size() >= kMaxEntries) {
      full = true;
      return true;
    }
    it = windows_.emplace(std::move(key), Window{ts, length, 0, false}).first;
  }
  Window& w = it->second;
  if (expired(w)) w = Window{ts, length, 0, false};
  ++w.count;
  switch (t.type) {
    case Threshold::kLimit: return w.count <= t.count;
    case Threshold::kThreshold:
      if (w.count < t.count) return false;
      w.count = 0;  // every count-th match of the window
      return true;
    case Threshold::kBoth:
      if (w.count < t.count || w.alerted) return false;
      w.alerted = true;
      return true;
    case Threshold::kDetectionFilter: return w.count > t.count;
    case Threshold::kNone: break;
  }
  return true;
}

}  // namespace warpath::nids::detail
