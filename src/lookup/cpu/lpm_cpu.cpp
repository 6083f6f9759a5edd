// cpu.lpm, cpu.lpm.scalar and cpu.lpm.compressed: DIR-24-8 (IPv4; compressed: its tbl24 by
// /16 chunk) and binary search on prefix lengths (IPv6) over the images of a FibState, one
// address at a time or G-Opt batched, optionally over threads.
#include <algorithm>

#include "core/parallel.hpp"
#include "lookup/cpu/bsl6_cpu.hpp"
#include "lookup/cpu/dir24_8_cpu.hpp"
#include "lookup/engines.hpp"
#include "lookup/fib_state.hpp"

namespace warpath::lookup::detail {
namespace {

// Below this many addresses per thread, starting threads costs more than it saves.
constexpr uint32_t kMinPerThread = 1u << 16;

// Probed on first use, not during static initialisation (__builtin_cpu_init() first).
bool have_popcnt() {
  static const bool yes = (__builtin_cpu_init(), __builtin_cpu_supports("popcnt") != 0);
  return yes;
}

class CpuFib final : public Fib {
 public:
  CpuFib(std::unique_ptr<FibState> state, CpuLpm kind) : state_(std::move(state)), kind_(kind) {}
  std::string_view id() const noexcept override {
    switch (kind_) {
      case CpuLpm::kScalar:
        return "cpu.lpm.scalar";
      case CpuLpm::kBatched:
        return "cpu.lpm";
      case CpuLpm::kCompressed:
        return "cpu.lpm.compressed";
    }
    return "cpu.lpm";
  }

  Status do_lookup4(Span<const uint32_t> addrs, Span<NextHop> out, ExecContext& ctx) const override {
    parallel_ranges(addrs.size, ctx.threads, kMinPerThread, [&](uint32_t begin, uint32_t end) {
      ReadGuard::Section section(state_->guard());
      const Dir24_8Image* img = state_->v4();
      if (!img) {
        std::fill(out.data + begin, out.data + end, kNoRoute);
        return;
      }
      const uint32_t* a = addrs.data + begin;
      NextHop* o        = out.data + begin;
      const uint32_t n  = end - begin;
      if (img->entry_bits() == 16) {
        run4(*img, img->view16(), a, o, n);
      } else {
        run4(*img, img->view32(), a, o, n);
      }
    });
    return Status::ok();
  }

  Status do_lookup6(Span<const Ip6> addrs, Span<NextHop> out, ExecContext& ctx) const override {
    parallel_ranges(addrs.size, ctx.threads, kMinPerThread, [&](uint32_t begin, uint32_t end) {
      ReadGuard::Section section(state_->guard());
      const core::Bsl6View view = state_->v6()->view();
      kind_ != CpuLpm::kScalar
          ? bsl6_lookup_batched(view, addrs.data + begin, out.data + begin, end - begin)
          : bsl6_lookup_scalar(view, addrs.data + begin, out.data + begin, end - begin);
    });
    return Status::ok();
  }

  Status add4(const Route4& r) override { return state_->add4(r); }
  Status add6(const Route6& r) override { return state_->add6(r); }
  Status remove4(uint32_t prefix, uint8_t len) override { return state_->remove4(prefix, len); }
  Status remove6(Ip6 prefix, uint8_t len) override { return state_->remove6(prefix, len); }
  FibStats stats() const override { return state_->stats(); }

 private:
  template <class E>
  void run4(const Dir24_8Image& img, const core::Dir24_8View<E>& v, const uint32_t* a, NextHop* o,
            uint32_t n) const {
    switch (kind_) {
      case CpuLpm::kScalar:
        return dir24_8_lookup_scalar(v, a, o, n);
      case CpuLpm::kBatched:
        return dir24_8_lookup_batched(v, a, o, n);
      case CpuLpm::kCompressed:
        return have_popcnt()
                   ? dir24_8_chunked_lookup_batched_popcnt(v, img.chunks()->view(), a, o, n)
                   : dir24_8_chunked_lookup_batched(v, img.chunks()->view(), a, o, n);
    }
  }

  std::unique_ptr<FibState> state_;
  CpuLpm kind_;
};

}  // namespace

Result<std::unique_ptr<Fib>> make_cpu_fib(const RouteTable& table, const FibParams& params,
                                          CpuLpm kind) {
  WARPATH_ASSIGN_OR_RETURN(auto state,
                           FibState::create(table, params, kind == CpuLpm::kCompressed));
  return std::unique_ptr<Fib>(std::make_unique<CpuFib>(std::move(state), kind));
}

}  // namespace warpath::lookup::detail
