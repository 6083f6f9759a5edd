// warpath lookup: longest-prefix match of an address file against a FIB, one line per address.
//
//   warpath lookup --fib FILE --addrs FILE [--engine cpu|gpu|ref|auto|<id>] [--threads N]
//                  [--updates FILE] [--out FILE] [--stats FILE]
//
// With --updates, the update stream is applied while a second thread keeps looking the addresses
// up (the control plane and the data plane at once); the answers written are those of the table
// after the last update, and --stats reports updates per second and the lookups done meanwhile.
#include <fmt/core.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "commands.hpp"
#include "output_file.hpp"
#include "warpath/core/memory.hpp"
#include "warpath/core/version.hpp"
#include "warpath/lookup/fib.hpp"
#include "warpath/packet/format.hpp"

namespace warpath::cli {
namespace {

struct LookupOptions {
  std::string fib, addrs, engine = "auto", updates, out, stats;
  std::vector<std::string> queries;  ///< addresses on the command line (like `ip route get`)
  uint32_t threads = 1;
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Addresses and answers in page-locked memory where a GPU is (warpath/core/memory.hpp): a GPU
// engine copies them straight, as in the benchmark.
using NextHops = PinnedVector<lookup::NextHop>;

struct Split {
  PinnedVector<uint32_t> v4;
  PinnedVector<lookup::Ip6> v6;
  std::vector<uint8_t> is_v6;  // per input line
};

Status lookup_all(const lookup::Fib& fib, const Split& in, NextHops& r4, NextHops& r6,
                  ExecContext& ctx) {
  r4.resize(in.v4.size());
  r6.resize(in.v6.size());
  // Spans are 32-bit; address files are far smaller, but stay correct for any size.
  constexpr size_t kChunk = size_t(1) << 30;
  for (size_t off = 0; off < in.v4.size(); off += kChunk) {
    const auto n = uint32_t(std::min(kChunk, in.v4.size() - off));
    WARPATH_TRY(fib.lookup4({in.v4.data() + off, n}, {r4.data() + off, n}, ctx));
  }
  for (size_t off = 0; off < in.v6.size(); off += kChunk) {
    const auto n = uint32_t(std::min(kChunk, in.v6.size() - off));
    WARPATH_TRY(fib.lookup6({in.v6.data() + off, n}, {r6.data() + off, n}, ctx));
  }
  return Status::ok();
}

/// `warpath lookup --fib F ADDR...`: one line per address, like `ip route get`: the next hop
/// the engine gives and the route it comes from (the longest matching prefix of the table,
/// found by a scan and checked against the engine's answer).
int run_queries(const LookupOptions& o, const lookup::RouteTable& table) {
  std::vector<lookup::Address> parsed;  // one per argument, in order
  for (const std::string& q : o.queries) {
    if (q.empty() || q.find_first_of(" \t\r\n#") != std::string::npos)
      return fail("address '" + q + "': expected one IPv4 or IPv6 address");
    auto one = lookup::parse_addresses("address", q);
    if (!one.is_ok()) return fail(one.status());
    if (one->size() != 1) return fail("address '" + q + "': expected one IPv4 or IPv6 address");
    parsed.push_back(one->front());
  }
  auto fib = lookup::make_fib(o.engine, table);
  if (!fib.is_ok()) return fail(fib.status());
  ExecContext ctx;
  for (size_t i = 0; i < parsed.size(); ++i) {
    const lookup::Address& a = parsed[i];
    lookup::NextHop nh       = lookup::kNoRoute;
    std::string prefix;
    int best = -1;
    if (!a.is_v6) {
      if (Status s = (*fib)->lookup4({&a.v4, 1}, {&nh, 1}, ctx); !s.is_ok()) return fail(s);
      for (const auto& r : table.v4)
        if (int(r.len) > best && lookup::mask4(a.v4, r.len) == r.prefix) {
          best          = r.len;
          const uint8_t b[4] = {uint8_t(r.prefix >> 24), uint8_t(r.prefix >> 16),
                                uint8_t(r.prefix >> 8), uint8_t(r.prefix)};
          prefix        = packet::ipv4_to_string(b) + "/" + std::to_string(r.len);
        }
    } else {
      if (Status s = (*fib)->lookup6({&a.v6, 1}, {&nh, 1}, ctx); !s.is_ok()) return fail(s);
      for (const auto& r : table.v6)
        if (int(r.len) > best && lookup::mask6(a.v6, r.len) == r.prefix) {
          best = r.len;
          uint8_t b[16];
          for (int k = 0; k < 8; ++k) b[k] = uint8_t(r.prefix.hi >> (56 - 8 * k));
          for (int k = 0; k < 8; ++k) b[8 + k] = uint8_t(r.prefix.lo >> (56 - 8 * k));
          prefix = packet::ipv6_to_string(b) + "/" + std::to_string(r.len);
        }
    }
    if ((best < 0) != (nh == lookup::kNoRoute))
      return fail("internal error: " + std::string((*fib)->id()) + " and the table disagree about " +
                  o.queries[i]);
    if (best < 0)
      fmt::print("{} no route\n", o.queries[i]);
    else
      fmt::print("{} via {} ({})\n", o.queries[i], table.nexthop_text(nh), prefix);
  }
  return 0;
}

int run_lookup(const LookupOptions& o) {
  auto table = lookup::load_routes(o.fib);
  if (!table.is_ok()) return fail(table.status());
  if (!o.queries.empty()) {
    if (!o.addrs.empty() || !o.updates.empty() || !o.out.empty() || !o.stats.empty()) {
      fail("addresses on the command line go without --addrs, --updates, --out, --stats");
      return 2;  // a usage error, like a bad flag
    }
    return run_queries(o, *table);
  }
  if (o.addrs.empty()) {
    fail("--addrs FILE or addresses on the command line are required");
    return 2;
  }
  std::vector<lookup::RouteUpdate> updates;
  if (!o.updates.empty()) {
    auto u = lookup::load_route_updates(o.updates, *table);
    if (!u.is_ok()) return fail(u.status());
    updates = std::move(u).value();
  }
  auto addrs = lookup::load_addresses(o.addrs);
  if (!addrs.is_ok()) return fail(addrs.status());
  Split in;
  in.is_v6.reserve(addrs->size());
  for (const auto& a : *addrs) {
    in.is_v6.push_back(a.is_v6);
    if (a.is_v6) {
      in.v6.push_back(a.v6);
    } else {
      in.v4.push_back(a.v4);
    }
  }

  const auto t_build = Clock::now();
  auto fib           = lookup::make_fib(o.engine, *table);
  if (!fib.is_ok()) return fail(fib.status());
  const double build_ms = seconds_since(t_build) * 1e3;
  ExecContext ctx;
  ctx.threads = o.threads;

  // Updates, with a reader thread looking up all the while.
  double update_s = 0;
  uint64_t absent = 0, concurrent_lookups = 0;
  if (!updates.empty()) {
    std::atomic<bool> done{false};
    std::atomic<uint64_t> looked{0};
    Status reader_status;
    std::thread reader([&] {
      NextHops r4, r6;
      ExecContext rctx;
      while (!done.load(std::memory_order_relaxed)) {
        if (Status s = lookup_all(**fib, in, r4, r6, rctx); !s.is_ok()) {
          reader_status = s;
          return;
        }
        looked += in.v4.size() + in.v6.size();
        if (in.v4.empty() && in.v6.empty()) std::this_thread::yield();
      }
    });
    const auto t0 = Clock::now();
    Status failed;
    for (const auto& u : updates)
      if (Status s = lookup::apply_update(**fib, u, &absent); !s.is_ok()) {
        failed = Status(s.code(), fmt::format("{}:{}: {}", o.updates, u.line, s.message()));
        break;
      }
    update_s = seconds_since(t0);
    done     = true;
    reader.join();
    if (!failed.is_ok()) return fail(failed);
    if (!reader_status.is_ok()) return fail(reader_status);
    concurrent_lookups = looked.load();
  }

  NextHops r4, r6;
  const auto t0 = Clock::now();
  if (Status s = lookup_all(**fib, in, r4, r6, ctx); !s.is_ok()) return fail(s);
  const double lookup_s = seconds_since(t0);

  // Results in input order, next hops as the FIB file wrote them.
  OutputFile out(o.out);
  if (Status s = out.open({o.fib, o.addrs, o.updates}); !s.is_ok()) return fail(s);
  size_t i4 = 0, i6 = 0;
  for (uint8_t v6 : in.is_v6) {
    const lookup::NextHop nh = v6 ? r6[i6++] : r4[i4++];
    std::fputs(table->nexthop_text(nh).c_str(), out.get());
    std::fputc('\n', out.get());
  }
  if (Status s = out.commit(); !s.is_ok()) return fail(s);

  if (!o.stats.empty()) {
    const lookup::FibStats st = (*fib)->stats();
    const uint64_t n          = in.is_v6.size();
    nlohmann::ordered_json j;
    j["fib"]          = o.fib;
    j["routes"]       = table->size();
    j["routes4"]      = st.routes4;
    j["routes6"]      = st.routes6;
    j["lookups"]      = n;
    j["lookups4"]     = in.v4.size();
    j["lookups6"]     = in.v6.size();
    j["engine"]       = std::string((*fib)->id());
    j["threads"]      = o.threads;
    j["build_ms"]     = build_ms;
    j["memory_bytes"] = st.memory_bytes;
    j["rib_bytes"]    = st.rib_bytes;
    j["entry_bits"]   = st.entry_bits;
    j["tbl8_groups"]  = st.tbl8_groups;
    j["v6_lengths"]   = st.v6_lengths;
    j["v6_markers"]   = st.v6_markers;
    j["lookup_s"]     = lookup_s;
    j["mlps"]         = lookup_s > 0 ? double(n) / lookup_s / 1e6 : 0.0;
    if (!updates.empty()) {
      j["updates"]            = updates.size();
      j["updates_absent"]     = absent;
      j["update_s"]           = update_s;
      j["updates_per_s"]      = update_s > 0 ? double(updates.size()) / update_s : 0.0;
      j["rebuilds"]           = st.rebuilds;
      j["concurrent_lookups"] = concurrent_lookups;
    }
    j["commit"] = build_info().git_commit;
    OutputFile stats(o.stats);
    if (Status s = stats.open({o.fib, o.addrs, o.updates}); !s.is_ok()) return fail(s);
    std::fputs((j.dump(2) + "\n").c_str(), stats.get());
    if (Status s = stats.commit(); !s.is_ok()) return fail(s);
  }
  return 0;
}

}  // namespace

void add_lookup(CLI::App& app, Runner& run) {
  auto o    = std::make_shared<LookupOptions>();
  auto* cmd = app.add_subcommand("lookup", "Longest-prefix match of addresses against a FIB");
  cmd->footer("Examples: warpath lookup --fib table.txt 8.8.8.8 2001:db8::1\n"
              "          warpath lookup --fib table.txt --addrs addrs.txt --out nexthops.txt");
  cmd->add_option("--fib", o->fib, "Route file: 'prefix/len [nexthop]' lines, IPv4 and IPv6")
      ->required();
  cmd->add_option("--addrs", o->addrs, "Address file: one IPv4 or IPv6 address per line");
  cmd->add_option("address", o->queries,
                  "Addresses to look up instead of a file: one line each, 'ADDR via NEXTHOP "
                  "(PREFIX/LEN)' or 'ADDR no route' (like ip route get)");
  cmd->add_option("--engine", o->engine,
                  "cpu, gpu, ref, auto, or an engine id (see 'warpath info'; validate:<id> "
                  "checks against ref.lpm)")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "CPU threads for one lookup call")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--updates", o->updates,
                  "Update stream ('unixtime a|w prefix nexthop') applied while a second thread "
                  "keeps looking up");
  cmd->add_option("--out", o->out, "Write the next hops here instead of stdout");
  cmd->add_option("--stats", o->stats, "Write JSON statistics here");
  cmd->callback([o, &run] { run = [o] { return run_lookup(*o); }; });
}

}  // namespace warpath::cli
