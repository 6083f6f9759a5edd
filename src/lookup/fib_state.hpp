// src/lookup/fib_state.hpp: what every non-reference lookup engine shares: the RIBs, the host
// images built from them, the ReadGuard, and the one-writer update logic (fib.hpp, Updates).
//
// Readers: open a ReadGuard::Section, load v4()/v6() once, look up a batch, close the section.
// Writer: add/remove keep RIB and images equal. IPv4 routes go into the DIR-24-8 image in
// place; when it is full (kCapacity) a larger image is built from the RIB and published by
// pointer swap. An IPv6 update derives a copy of the image in which only the entries of the
// leaves the route touches change (Bsl6Image::updated) and swaps it in; when the image cannot
// take the change it is rebuilt from the RIB. An old image (IPv6 ones in groups) is freed
// after one ReadGuard::synchronize(). Device mirrors hook on_v4_change / on_v6_change,
// which run on the writer's thread after each change and before the old image is freed.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "lookup/bsl6_image.hpp"
#include "lookup/dir24_8_image.hpp"
#include "lookup/rib.hpp"
#include "warpath/core/read_guard.hpp"
#include "warpath/lookup/fib.hpp"

namespace warpath::lookup::detail {

class FibState {
 public:
  /// compress4: IPv4 images also keep tbl24 compressed by /16 (cpu.lpm.compressed).
  static Result<std::unique_ptr<FibState>> create(const RouteTable& table, const FibParams& params,
                                                  bool compress4 = false);
  ~FibState();

  Status add4(const Route4& r);
  Status remove4(uint32_t prefix, uint8_t len);
  Status add6(const Route6& r);
  Status remove6(Ip6 prefix, uint8_t len);

  const ReadGuard& guard() const { return guard_; }
  /// nullptr while the table has had no IPv4 route (no address has a route then).
  const Dir24_8Image* v4() const { return v4_.load(std::memory_order_acquire); }
  const Bsl6Image* v6() const { return v6_.load(std::memory_order_acquire); }
  /// Host image statistics; engines add their own memory.
  FibStats stats() const;

  /// `rebuilt`: a new image replaced the old one (upload it whole); otherwise drain its dirty
  /// ranges. A failure is returned by the update that caused it.
  std::function<Status(Dir24_8Image&, bool rebuilt)> on_v4_change;
  std::function<Status(const Bsl6Image&)> on_v6_change;

 private:
  FibState() = default;
  Status rebuild4();
  Status changed4(Dir24_8Image& img);
  Status rebuild6();
  Status update6(const Route6& r, bool remove);

  // Old IPv6 images of in-place updates, freed together after one ReadGuard::synchronize
  // (about 5 MiB each on the full table); the destructor frees the rest (readers are gone).
  static constexpr size_t kMaxRetired6 = 8;
  std::vector<std::unique_ptr<Bsl6Image>> retired6_;

  FibParams params_;
  bool compress4_ = false;
  Rib4 rib4_;
  Rib6 rib6_;
  std::atomic<Dir24_8Image*> v4_{nullptr};
  std::atomic<Bsl6Image*> v6_{nullptr};
  ReadGuard guard_;
  mutable std::mutex writer_;  // updates are single-writer; the lock makes misuse safe
  double build_ms_   = 0;
  uint64_t rebuilds_ = 0;
};

}  // namespace warpath::lookup::detail
