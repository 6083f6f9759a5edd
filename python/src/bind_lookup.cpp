// python/src/bind_lookup.cpp: warpath.Fib, longest-prefix match over numpy arrays
// (include/warpath/lookup/fib.hpp), and the address helpers.
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <mutex>

#include "common.hpp"
#include "warpath/lookup/fib.hpp"
#include "warpath/lookup/route.hpp"

namespace warpath::py {
namespace {

using lookup::NextHop;
using Addrs4 = nb::ndarray<const uint32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Addrs6 = nb::ndarray<const uint64_t, nb::shape<-1, 2>, nb::c_contig, nb::device::cpu>;

// Spans are 32-bit: larger arrays go in chunks.
constexpr size_t kChunk = size_t(1) << 30;

class PyFib {
 public:
  PyFib(lookup::RouteTable table, const std::string& engine, bool validate)
      : table_(std::move(table)) {
    fib_ = take(lookup::make_fib(with_validate(engine, validate), table_));
  }
  PyFib(const std::string& path, const std::string& engine, bool validate)
      : PyFib(take(lookup::load_routes(path)), engine, validate) {}
  static std::unique_ptr<PyFib> from_text(const std::string& text, const std::string& engine,
                                          bool validate) {
    return std::make_unique<PyFib>(take(lookup::parse_routes("<text>", text)), engine, validate);
  }

  std::string engine() const { return std::string(fib_->id()); }

  template <class In, class Addr>
  nb::object lookup_into(const In& addrs, const Addr* data, nb::object out, uint32_t threads) const {
    const size_t n          = addrs.shape(0);
    const Answers answers   = answers_for(std::move(out), n, "addresses");
    {
      nb::gil_scoped_release unlocked;
      ExecContext ctx;
      ctx.threads = threads;
      for (size_t off = 0; off < n; off += kChunk) {
        const auto k = uint32_t(std::min(kChunk, n - off));
        if constexpr (std::is_same_v<Addr, uint32_t>) {
          check(fib_->lookup4({data + off, k}, {answers.data + off, k}, ctx));
        } else {
          check(fib_->lookup6({data + off, k}, {answers.data + off, k}, ctx));
        }
      }
    }
    return answers.object;
  }

  nb::object lookup4(const Addrs4& a, nb::object out, uint32_t threads) const {
    return lookup_into(a, a.data(), std::move(out), threads);
  }
  nb::object lookup6(const Addrs6& a, nb::object out, uint32_t threads) const {
    static_assert(sizeof(lookup::Ip6) == 16);
    return lookup_into(a, reinterpret_cast<const lookup::Ip6*>(a.data()), std::move(out), threads);
  }

  /// One update line through the update parser (next hops interned as the file's are).
  void update(const std::string& line) {
    nb::gil_scoped_release unlocked;  // before the lock: a waiter must not hold the GIL
    std::lock_guard lock(update_mutex_);
    auto u = take(lookup::parse_route_updates("<update>", line, table_));
    for (const auto& x : u) check(lookup::apply_update(*fib_, x));
  }
  void add(const std::string& prefix, const std::string& nexthop) {
    update("0 a " + prefix + " " + nexthop);
  }
  void remove(const std::string& prefix) {
    nb::gil_scoped_release unlocked;
    std::lock_guard lock(update_mutex_);
    auto u = take(lookup::parse_route_updates("<update>", "0 w " + prefix + " 0", table_));
    for (const auto& x : u)  // kNotFound when absent (an update file's withdrawal is not)
      check(x.is_v6 ? fib_->remove6(x.r6.prefix, x.r6.len) : fib_->remove4(x.r4.prefix, x.r4.len));
  }
  uint64_t apply_updates(const std::string& path) {
    nb::gil_scoped_release unlocked;
    std::lock_guard lock(update_mutex_);
    auto updates    = take(lookup::load_route_updates(path, table_));
    uint64_t absent = 0;
    for (const auto& u : updates) {
      Status s = lookup::apply_update(*fib_, u, &absent);
      if (!s.is_ok())
        throw StatusError(Status(s.code(), path + ":" + std::to_string(u.line) + ": " + s.message()));
    }
    return absent;
  }

  /// Under the update lock: an update interns new next hop names into the table.
  std::string nexthop_text(uint32_t nh) const {
    nb::gil_scoped_release unlocked;
    std::lock_guard lock(update_mutex_);
    return table_.nexthop_text(nh);
  }
  nb::dict stats() const {
    const lookup::FibStats s = fib_->stats();
    nb::dict d;
    d["engine"]       = engine();
    d["routes4"]      = s.routes4;
    d["routes6"]      = s.routes6;
    d["memory_bytes"] = s.memory_bytes;
    d["build_ms"]     = s.build_ms;
    d["entry_bits"]   = s.entry_bits;
    d["tbl8_groups"]  = s.tbl8_groups;
    d["v6_lengths"]   = s.v6_lengths;
    d["rebuilds"]     = s.rebuilds;
    return d;
  }
  size_t size() const { return table_.size(); }

 private:
  lookup::RouteTable table_;
  std::unique_ptr<lookup::Fib> fib_;
  mutable std::mutex update_mutex_;  // one updater at a time (the Fib's rule); the table's names
};

/// Address strings to arrays: IPv4 as uint32 (host order), IPv6 as (n, 2) uint64 (hi, lo).
Array<uint32_t> ipv4(const std::vector<std::string>& texts) {
  auto v = std::vector<uint32_t>(texts.size());
  for (size_t i = 0; i < texts.size(); ++i)
    if (!net::parse_ipv4(texts[i], v[i]))
      throw StatusError(Status(Errc::kParseError, "address " + std::to_string(i) + " '" +
                                                      texts[i] + "': not an IPv4 address"));
  return owned_vector<uint32_t>(std::move(v));
}
Array<uint64_t> ipv6(const std::vector<std::string>& texts) {
  auto v = std::make_unique<std::vector<lookup::Ip6>>(texts.size());
  for (size_t i = 0; i < texts.size(); ++i)
    if (!net::parse_ipv6(texts[i], (*v)[i]))
      throw StatusError(Status(Errc::kParseError, "address " + std::to_string(i) + " '" +
                                                      texts[i] + "': not an IPv6 address"));
  const size_t n = v->size();
  auto* data     = reinterpret_cast<uint64_t*>(v->data());
  return owned<uint64_t>(std::move(v), data, {n, 2});
}
std::vector<std::string> format4(const Addrs4& a) {
  std::vector<std::string> out(a.shape(0));
  for (size_t i = 0; i < out.size(); ++i) out[i] = net::format_ipv4(a.data()[i]);
  return out;
}
std::vector<std::string> format6(const Addrs6& a) {
  std::vector<std::string> out(a.shape(0));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = net::format_ipv6({a.data()[2 * i], a.data()[2 * i + 1]});
  return out;
}

}  // namespace

void bind_lookup(nb::module_& m) {
  m.attr("NO_ROUTE") = lookup::kNoRoute;
  nb::class_<PyFib>(m, "Fib",
                    "A longest-prefix-match forwarding table (IPv4 and IPv6) on one engine.\n\n"
                    "Built from a route file (``prefix/len [nexthop]`` lines; .gz/.xz read "
                    "directly) or from text; answers numpy arrays of addresses with next hop "
                    "ids (``NO_ROUTE`` where no prefix matches). Lookups run without the GIL "
                    "and may run on many threads at once; one thread at a time may update.")
      .def(nb::init<const std::string&, const std::string&, bool>(), nb::arg("routes"), nb::arg("engine") = "auto",
           nb::arg("validate") = false,
           "Builds the table of the route file ``routes`` on ``engine`` (``auto``, ``cpu``, "
           "``gpu``, ``ref`` or an engine id from ``engines('lookup')``); ``validate`` checks "
           "every batch against the reference engine (as ``validate:<id>``).")
      .def_static("from_text", &PyFib::from_text, nb::arg("text"), nb::arg("engine") = "auto",
                  nb::arg("validate") = false, "Builds the table from route-file text.")
      .def_prop_ro("engine", &PyFib::engine, "The engine id that answers (``cpu.lpm.compressed``).")
      .def("__len__", &PyFib::size, "Routes in the table as built (both families).")
      .def("lookup", &PyFib::lookup4, nb::arg("addrs").noconvert(), nb::arg("out") = nb::none(),
           nb::arg("threads") = 1,
           "Next hops of IPv4 addresses: ``addrs`` a 1-D uint32 array in host order "
           "(``ipv4([...])`` makes one), read in place. Returns a uint32 array, or fills "
           "``out`` (no allocation) and returns it.")
      .def("lookup6", &PyFib::lookup6, nb::arg("addrs").noconvert(), nb::arg("out") = nb::none(),
           nb::arg("threads") = 1,
           "Next hops of IPv6 addresses: ``addrs`` an (n, 2) uint64 array of (hi, lo) in host "
           "order (``ipv6([...])`` makes one), read in place.")
      .def("add", &PyFib::add, nb::arg("prefix"), nb::arg("nexthop"),
           "Adds a route (``'10.1.0.0/16'``, ``'7'`` or a next hop name) or replaces its next "
           "hop, while other threads may look up.")
      .def("remove", &PyFib::remove, nb::arg("prefix"),
           "Removes a route; ``NotFoundError`` when the table does not have it.")
      .def("apply_updates", &PyFib::apply_updates, nb::arg("path"),
           "Applies an update file (``<time> a|w <prefix> <nexthop>`` lines); returns the "
           "withdrawals of absent routes (counted, not errors).")
      .def("nexthop_text", &PyFib::nexthop_text, nb::arg("nexthop"),
           "A next hop id as the route file wrote it (a name, or the number; ``'-1'`` for "
           "``NO_ROUTE``).")
      .def("stats", &PyFib::stats, "The engine's figures: routes, image bytes, build time.");

  m.def("ipv4", &ipv4, nb::arg("texts"),
        "IPv4 address strings as a uint32 array (host order), for ``Fib.lookup``.");
  m.def("ipv6", &ipv6, nb::arg("texts"),
        "IPv6 address strings as an (n, 2) uint64 array of (hi, lo), for ``Fib.lookup6``.");
  m.def("format_ipv4", &format4, nb::arg("addrs"), "A uint32 array of IPv4 addresses as strings.");
  m.def("format_ipv6", &format6, nb::arg("addrs"), "An (n, 2) uint64 array of IPv6 addresses as strings.");
}

}  // namespace warpath::py
