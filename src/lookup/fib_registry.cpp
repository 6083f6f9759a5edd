// The lookup engine registry: the only list of lookup engines (see
// include/warpath/lookup/fib.hpp), the validating wrapper, and route checks.
#include <chrono>
#include <mutex>
#include <vector>

#include "core/engine_table.hpp"
#include "core/validating.hpp"
#include "lookup/engines.hpp"
#include "warpath/core/registry.hpp"
#include "warpath/lookup/check.hpp"

namespace warpath::lookup {
namespace {

std::string route_text(uint32_t prefix, unsigned len) {
  return format_ipv4(prefix) + "/" + std::to_string(len);
}
std::string route_text(Ip6 prefix, unsigned len) {
  return format_ipv6(prefix) + "/" + std::to_string(len);
}

// An engine beside ref.lpm (core/validating.hpp): updates go to both, every lookup batch is
// compared.
class ValidatingFib final : public ValidatingPair<Fib> {
 public:
  ValidatingFib(std::unique_ptr<Fib> engine, std::unique_ptr<Fib> ref)
      : ValidatingPair(std::move(engine), std::move(ref), "ref.lpm") {}

  Status do_lookup4(Span<const uint32_t> addrs, Span<NextHop> out, ExecContext& ctx) const override {
    std::shared_lock lock(mutex_);
    WARPATH_TRY(engine_->lookup4(addrs, out, ctx));
    std::vector<NextHop> want(addrs.size);
    WARPATH_TRY(ref_->lookup4(addrs, {want.data(), addrs.size}, ctx));
    return first_difference(
        addrs.size, "address", [&](uint32_t i) { return out[i] == want[i]; },
        [&](uint32_t i) { return answers(format_ipv4(addrs[i]), out[i], want[i]); });
  }
  Status do_lookup6(Span<const Ip6> addrs, Span<NextHop> out, ExecContext& ctx) const override {
    std::shared_lock lock(mutex_);
    WARPATH_TRY(engine_->lookup6(addrs, out, ctx));
    std::vector<NextHop> want(addrs.size);
    WARPATH_TRY(ref_->lookup6(addrs, {want.data(), addrs.size}, ctx));
    return first_difference(
        addrs.size, "address", [&](uint32_t i) { return out[i] == want[i]; },
        [&](uint32_t i) { return answers(format_ipv6(addrs[i]), out[i], want[i]); });
  }
  Status add4(const Route4& r) override { return update_both([&](Fib& f) { return f.add4(r); }); }
  Status add6(const Route6& r) override { return update_both([&](Fib& f) { return f.add6(r); }); }
  Status remove4(uint32_t p, uint8_t len) override {
    return update_both([&](Fib& f) { return f.remove4(p, len); });
  }
  Status remove6(Ip6 p, uint8_t len) override {
    return update_both([&](Fib& f) { return f.remove6(p, len); });
  }
  FibStats stats() const override { return engine_->stats(); }

 private:
  static std::string answers(const std::string& addr, NextHop got, NextHop want) {
    auto text = [](NextHop nh) { return nh == kNoRoute ? std::string("-1") : std::to_string(nh); };
    return " (" + addr + "): got " + text(got) + ", reference " + text(want);
  }
};

}  // namespace

namespace detail {

namespace {

// The checks both families share: the length within the family's bits, no host bits, a next
// hop the tables can hold.
template <class Route, class Mask>
Status check_route_of(const Route& r, unsigned bits, const char* family, Mask mask) {
  if (r.len > bits)
    return Status(Errc::kInvalidArgument, std::string(family) + " prefix length " +
                                              std::to_string(r.len) + " > " + std::to_string(bits));
  if (mask(r.prefix, r.len) != r.prefix)
    return Status(Errc::kInvalidArgument,
                  "route " + route_text(r.prefix, r.len) + " has host bits set");
  if (r.nh > kMaxNextHop)
    return Status(Errc::kInvalidArgument, "route " + route_text(r.prefix, r.len) + ": next hop " +
                                              std::to_string(r.nh) + " above " +
                                              std::to_string(kMaxNextHop));
  return Status::ok();
}

}  // namespace

Status check_route(const Route4& r) {
  return check_route_of(r, 32, "IPv4", [](uint32_t p, unsigned len) { return mask4(p, len); });
}

Status check_route(const Route6& r) {
  return check_route_of(r, 128, "IPv6", [](Ip6 p, unsigned len) { return mask6(p, len); });
}

}  // namespace detail

namespace {

using FibTable = EngineTable<Fib(const RouteTable&, const FibParams&)>;

FibTable::Made validated(std::unique_ptr<Fib> engine, const RouteTable& table, const FibParams&) {
  WARPATH_ASSIGN_OR_RETURN(auto ref, detail::make_ref_fib(table));
  return std::unique_ptr<Fib>(std::make_unique<ValidatingFib>(std::move(engine), std::move(ref)));
}

const FibTable& fib_table() {
  using detail::CpuLpm;
  static const FibTable table(
      "lookup",
      {
          {{"ref.lpm", "binary trie per family, one bit per step (the oracle)", 0, engine_always},
           [](const RouteTable& t, const FibParams&) { return detail::make_ref_fib(t); }},
          {{"cpu.lpm.scalar", "DIR-24-8 / binary search on lengths, one address at a time", 5,
            engine_always},
           [](const RouteTable& t, const FibParams& p) {
             return detail::make_cpu_fib(t, p, CpuLpm::kScalar);
           }},
          {{"cpu.lpm", "DIR-24-8 / binary search on lengths, G-Opt batched prefetch, threads", 10,
            engine_always},
           [](const RouteTable& t, const FibParams& p) {
             return detail::make_cpu_fib(t, p, CpuLpm::kBatched);
           }},
          {{"cpu.lpm.compressed",
            "DIR-24-8 with tbl24 compressed by /16 (4 MiB on the full table) / binary search on "
            "lengths, staged prefetch, threads",
            11, engine_always},
           [](const RouteTable& t, const FibParams& p) {
             return detail::make_cpu_fib(t, p, CpuLpm::kCompressed);
           }},
#if defined(WARPATH_HAVE_CUDA)
          {{"cuda.lpm", "DIR-24-8 / binary search on lengths in CUDA kernels", 8,
            cuda_engine_available},
           [](const RouteTable& t, const FibParams& p) { return detail::make_cuda_fib(t, p); }},
#endif
      },
      &validated);
  return table;
}

}  // namespace

std::vector<EngineInfo> fib_engines() { return fib_table().infos(); }

Result<std::unique_ptr<Fib>> make_fib(std::string_view requested, const RouteTable& table,
                                      const FibParams& params) {
  return fib_table().make(requested, table, params);
}

Status apply_update(Fib& fib, const RouteUpdate& u, uint64_t* absent) {
  Status s = u.is_v6 ? (u.announce ? fib.add6(u.r6) : fib.remove6(u.r6.prefix, u.r6.len))
                     : (u.announce ? fib.add4(u.r4) : fib.remove4(u.r4.prefix, u.r4.len));
  if (!u.announce && s.code() == Errc::kNotFound) {
    if (absent) ++*absent;
    return Status::ok();
  }
  return s;
}

// The family in `warpath info` and `warpath selftest` (core/registry.hpp).
WARPATH_REGISTER_ENGINE_FAMILY(lookup, "lookup", 20, &fib_engines, &check_fib_engine);

}  // namespace warpath::lookup
