#include "lookup/fib_state.hpp"

#include <chrono>

#include "lookup/engines.hpp"

namespace warpath::lookup::detail {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

FibState::~FibState() {
  delete v4_.load();
  delete v6_.load();
}

Result<std::unique_ptr<FibState>> FibState::create(const RouteTable& table, const FibParams& params,
                                                   bool compress4) {
  std::unique_ptr<FibState> s(new FibState());
  s->params_    = params;
  s->compress4_ = compress4;
  const auto t0 = std::chrono::steady_clock::now();
  for (const Route4& r : table.v4) {
    WARPATH_TRY(check_route(r));
    s->rib4_.insert(r);
  }
  for (const Route6& r : table.v6) {
    WARPATH_TRY(check_route(r));
    s->rib6_.insert(r);
  }
  // No IPv4 routes, no 32 MiB tbl24: lookups answer kNoRoute until the first add4 builds one.
  if (s->rib4_.size() > 0) {
    WARPATH_ASSIGN_OR_RETURN(
        auto v4, Dir24_8Image::build(s->rib4_, params.entry_bits, params.spare_groups, compress4));
    s->v4_.store(v4.release());
  }
  WARPATH_ASSIGN_OR_RETURN(auto v6, Bsl6Image::build(table.v6));
  s->v6_.store(v6.release());
  s->build_ms_ = ms_since(t0);
  return s;
}

Status FibState::rebuild4() {
  WARPATH_ASSIGN_OR_RETURN(
      auto fresh, Dir24_8Image::build(rib4_, params_.entry_bits, params_.spare_groups, compress4_));
  if (on_v4_change) WARPATH_TRY(on_v4_change(*fresh, true));
  Dir24_8Image* old = v4_.exchange(fresh.release(), std::memory_order_acq_rel);
  guard_.synchronize();
  delete old;
  ++rebuilds_;
  return Status::ok();
}

Status FibState::rebuild6() {
  WARPATH_ASSIGN_OR_RETURN(auto fresh, Bsl6Image::build(rib6_.routes()));
  if (on_v6_change) WARPATH_TRY(on_v6_change(*fresh));
  Bsl6Image* old = v6_.exchange(fresh.release(), std::memory_order_acq_rel);
  guard_.synchronize();
  delete old;
  retired6_.clear();  // unpublished before the synchronize
  return Status::ok();
}

// After an in-place update: mirror it, then recycle collapsed groups once no reader, on the
// host or (after the mirror's copy) on the device, can still reach them.
Status FibState::changed4(Dir24_8Image& img) {
  if (on_v4_change) {
    WARPATH_TRY(on_v4_change(img, false));
  } else {
    img.drain_dirty();
  }
  if (img.has_retired()) {
    guard_.synchronize();
    img.release_retired();
  }
  return Status::ok();
}

Status FibState::add4(const Route4& r) {
  WARPATH_TRY(check_route(r));
  std::lock_guard lock(writer_);
  rib4_.insert(r);
  Dir24_8Image* img = v4_.load(std::memory_order_relaxed);
  if (!img) return rebuild4();
  Status s = img->add(r);
  if (s.code() == Errc::kCapacity) return rebuild4();
  WARPATH_TRY(s);
  return changed4(*img);
}

Status FibState::remove4(uint32_t prefix, uint8_t len) {
  WARPATH_TRY(check_route(Route4{prefix, len, 0}));
  std::lock_guard lock(writer_);
  if (!rib4_.erase(prefix, len))
    return Status(Errc::kNotFound, "no route " + format_ipv4(prefix) + "/" + std::to_string(len));
  Dir24_8Image* img = v4_.load(std::memory_order_relaxed);
  Status s = img->remove(rib4_, prefix, len);  // the RIB had the route, so the image exists
  if (s.code() == Errc::kCapacity) return rebuild4();
  WARPATH_TRY(s);
  return changed4(*img);
}

Status FibState::add6(const Route6& r) {
  WARPATH_TRY(check_route(r));
  std::lock_guard lock(writer_);
  rib6_.insert(r);
  return update6(r, false);
}

Status FibState::remove6(Ip6 prefix, uint8_t len) {
  WARPATH_TRY(check_route(Route6{prefix, len, 0}));
  std::lock_guard lock(writer_);
  if (!rib6_.erase(prefix, len))
    return Status(Errc::kNotFound, "no route " + format_ipv6(prefix) + "/" + std::to_string(len));
  return update6(Route6{prefix, len, 0}, true);
}

// The RIB has the change: derive the next image from the current one (only the touched
// leaves' entries change), or rebuild it from the RIB when the image cannot take it.
Status FibState::update6(const Route6& r, bool remove) {
  auto next = v6()->updated(r, remove);
  if (!next.is_ok()) {
    if (next.status().code() != Errc::kCapacity) return next.status();
    ++rebuilds_;
    return rebuild6();
  }
  if (on_v6_change) WARPATH_TRY(on_v6_change(**next));
  retired6_.emplace_back(v6_.exchange(next->release(), std::memory_order_acq_rel));
  // Waiting for readers costs a reader's batch in flight; one wait frees a few old images.
  if (retired6_.size() >= kMaxRetired6) {
    guard_.synchronize();
    retired6_.clear();
  }
  return Status::ok();
}

FibStats FibState::stats() const {
  std::lock_guard lock(writer_);
  FibStats s;
  const Dir24_8Image* a = v4();
  const Bsl6Image* b    = v6();
  s.routes4             = rib4_.size();
  s.routes6             = rib6_.size();
  s.memory_bytes        = (a ? a->memory_bytes() : 0) + b->memory_bytes();
  s.rib_bytes           = rib4_.memory_bytes() + rib6_.memory_bytes() + (a ? a->writer_bytes() : 0);
  s.build_ms            = build_ms_;
  s.entry_bits          = a ? a->entry_bits() : 0;
  s.tbl8_groups         = a ? a->groups_used() : 0;
  s.v6_lengths          = b->lengths();
  s.v6_markers          = b->markers();
  s.rebuilds            = rebuilds_;
  return s;
}

}  // namespace warpath::lookup::detail
