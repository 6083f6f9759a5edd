// warpath demo: the main job on built-in data. At this stage: generate traffic, write it to a
// pcap, read it back, parse it with the best engine (checked against the reference), print a
// per-protocol summary, then route every packet through a built-in FIB shaped like the
// Internet table (lookup + router data path, counters that add up) and classify the IPv4
// 5-tuples against a built-in ACL (every answer checked against ref.linear). `warpath run`
// (the pipeline) will make it the full switch/router.
#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "forward_print.hpp"
#include "summary_print.hpp"
#include "warpath/classify/check.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/modules/builtin.hpp"

namespace warpath::cli {

namespace {

struct DemoOptions {
  uint32_t packets    = 200'000;
  uint64_t seed       = 1;
  std::string out_dir;  ///< empty: a temporary directory, removed at the end
  std::string json;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A directory made for the run (mkdtemp under $TMPDIR) and removed with what is in it.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string t    = std::string(base && *base ? base : "/tmp") + "/warpath-demo-XXXXXX";
    if (::mkdtemp(t.data())) path_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// What step 6 reports: the ACL's size, its engine, the keys classified, those that matched a
// specific rule.
struct DemoAcl {
  size_t rules = 0;
  std::string engine;
  uint32_t keys     = 0;
  uint64_t specific = 0;
};

// [6/6] Classify the IPv4 5-tuples of `infos` against a ClassBench-like ACL (catch-all last),
// checked against ref.linear.
Result<DemoAcl> demo_classify(const DemoOptions& o, const std::vector<packet::PacketInfo>& infos,
                              uint32_t n, ExecContext& ctx) {
  const classify::RuleSet acl =
      classify::random_rule_set(o.seed, classify::KeyLayout::kFiveTuple, 1000);
  auto classifier = classify::make_classifier("auto", acl);
  if (!classifier.is_ok()) return classifier.status();
  std::vector<packet::FiveTuple4> tuples(n);
  std::vector<uint8_t> present(n);
  packet::extract_five_tuple4({infos.data(), n}, tuples.data(), present.data());
  std::vector<packet::FiveTuple4> v4;
  for (uint32_t i = 0; i < n; ++i)
    if (present[i]) v4.push_back(tuples[i]);
  classify::KeyBuffer acl_keys(classify::KeyLayout::kFiveTuple, uint32_t(v4.size()));
  uint32_t w[classify::kMaxKeyWords];
  for (uint32_t i = 0; i < v4.size(); ++i) {
    classify::five_tuple_words(v4[i], w);
    acl_keys.set(i, w);
  }
  fmt::print(
      "\n[6/6] classifying {} IPv4 5-tuples against a {}-rule ACL with {}, checked "
      "against ref.linear\n",
      v4.size(), acl.rules.size(), (*classifier)->id());
  std::vector<uint32_t> match(v4.size());
  const auto t2 = std::chrono::steady_clock::now();
  if (Status s = (*classifier)->classify(acl_keys.view(), {match.data(), acl_keys.size()}, ctx);
      !s.is_ok())
    return s;
  const double classify_s = seconds_since(t2);
  auto acl_ref            = classify::make_classifier("ref.linear", acl);
  if (!acl_ref.is_ok()) return acl_ref.status();
  const std::string diff =
      classify::compare_classifier(**classifier, **acl_ref, acl_keys, {acl_keys.size()});
  if (!diff.empty()) return Status(Errc::kInvalidArgument, "classifier differs from ref.linear: " + diff);
  const uint32_t catch_all = uint32_t(acl.rules.size() - 1);
  const auto specific =
      std::count_if(match.begin(), match.end(), [&](uint32_t m) { return m != catch_all; });
  fmt::print("{} matched a specific rule, {} only the catch-all; {:.1f} ms; reference agrees\n",
             specific, match.size() - specific, classify_s * 1e3);

  return DemoAcl{acl.rules.size(), std::string((*classifier)->id()), acl_keys.size(), uint64_t(specific)};
}

int run_demo(const DemoOptions& given) {
  namespace fs = std::filesystem;
  DemoOptions o = given;
  // Nothing is left in the current directory unasked: without --out-dir the capture goes to a
  // temporary directory that is removed at the end.
  std::optional<TempDir> temp;
  if (o.out_dir.empty()) {
    temp.emplace();
    if (temp->path().empty()) return fail(std::string("cannot create a temporary directory: ") + std::strerror(errno));
    o.out_dir = temp->path();
  }
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec) return fail(o.out_dir + ": cannot create: " + ec.message());
  const std::string pcap = (fs::path(o.out_dir) / "demo.pcap").string();

  fmt::print(
      "[1/6] generating {} packets (seed {}, IMIX sizes, TCP/UDP/ICMP over IPv4/IPv6, VLANs)\n",
      o.packets, o.seed);
  gen::TrafficParams params;
  params.seed  = o.seed;
  params.count = o.packets;
  auto batch   = gen::batch_for(o.packets);
  if (!batch.is_ok()) return fail(batch.status());
  if (Status s = gen::generate_traffic(params, *batch); !s.is_ok()) return fail(s);

  {
    std::error_code abs_ec;
    const auto where = std::filesystem::absolute(pcap, abs_ec);
    fmt::print("[2/6] writing {} packets to {}\n", batch->size(), abs_ec ? pcap : where.string());
  }
  auto writer = io::PcapWriter::create(pcap);
  if (!writer.is_ok()) return fail(writer.status());
  if (Status s = writer->write(*batch); !s.is_ok()) return fail(s);
  if (Status s = writer->close(); !s.is_ok()) return fail(s);
  {
    std::error_code size_ec;
    const auto bytes = std::filesystem::file_size(pcap, size_ec);
    if (!size_ec)
      fmt::print("      {:.2f} MB written ({})\n", double(bytes) / 1e6,
                 temp ? "a temporary directory, removed at the end; --out-dir keeps it"
                      : "the directory is --out-dir");
  }

  fmt::print("[3/6] reading it back through libpcap\n");
  auto back = io::read_capture(pcap);
  if (!back.is_ok()) return fail(back.status());
  if (back->size() != batch->size())
    return fail(fmt::format("read back {} packets, wrote {}", back->size(), batch->size()));

  auto parser = packet::make_parser("auto");
  if (!parser.is_ok()) return fail(parser.status());
  fmt::print("[4/6] parsing with {} and checking every packet against ref.parse\n",
             (*parser)->id());
  std::vector<packet::PacketInfo> infos(back->size());
  ExecContext ctx;
  const auto t0 = std::chrono::steady_clock::now();
  if (Status s = (*parser)->parse(back->view(), {infos.data(), back->size()}, ctx); !s.is_ok())
    return fail(s);
  const double parse_s = seconds_since(t0);
  auto validator       = packet::make_parser("validate:" + std::string((*parser)->id()));
  std::vector<packet::PacketInfo> checked(back->size());
  if (!validator.is_ok()) return fail(validator.status());
  if (Status s = (*validator)->parse(back->view(), {checked.data(), back->size()}, ctx); !s.is_ok())
    return fail(s);

  const auto summary = packet::summarize(back->view(), {infos.data(), back->size()});
  fmt::print("\n");
  print_summary(summary);
  const double mpps = parse_s > 0 ? back->size() / parse_s / 1e6 : 0.0;
  fmt::print(
      "\nparsed {} packets in {:.1f} ms ({:.1f} Mpps, one thread, {}); reference agrees on all\n",
      back->size(), parse_s * 1e3, mpps, (*parser)->id());

  // [5/6] Route: a synthetic Internet-shaped FIB (plus default routes so every destination
  // has one), the default neighbours, lookup + router data path on the whole batch.
  lookup::RouteTable fib_table = runtime::builtin_fib(o.seed);
  auto fib                     = lookup::make_fib("auto", fib_table);
  if (!fib.is_ok()) return fail(fib.status());
  fmt::print(
      "\n[5/6] routing through a {}-route FIB ({}): lookup, TTL and checksum update, "
      "neighbour MACs\n",
      fib_table.size(), (*fib)->id());
  auto tables = forward::RouterTables::build(forward::default_neighbors(fib_table));
  if (!tables.is_ok()) return fail(tables.status());
  const uint32_t n = back->size();
  forward::RouteKeys keys(n);
  std::vector<lookup::NextHop> nexthops(n);
  std::vector<forward::ForwardResult> results(n);
  const auto t1 = std::chrono::steady_clock::now();
  if (Status s = forward::route_batch(*back, {infos.data(), n}, **fib, *tables, keys,
                                      {nexthops.data(), n}, {results.data(), n}, ctx);
      !s.is_ok())
    return fail(s);
  const double route_s = seconds_since(t1);
  forward::ForwardCounters counters;
  counters.add({results.data(), n});
  if (Status s = counters.check(); !s.is_ok()) return fail("internal error: " + s.message());
  print_counters(counters);
  fmt::print("routed {} packets in {:.1f} ms; rx = tx + dropped + slow_path: {} = {} + {} + {}\n",
             n, route_s * 1e3, counters.rx, counters.tx, counters.dropped, counters.slow_path);

  auto acl = demo_classify(o, infos, n, ctx);
  if (!acl.is_ok()) return fail(acl.status());

  if (!o.json.empty()) {
    nlohmann::json j = {{"packets", back->size()},
                        {"pcap", pcap},
                        {"engine", (*parser)->id()},
                        {"parse_mpps", mpps},
                        {"validated", true},
                        {"summary", summary_json(summary)},
                        {"route",
                         {{"fib_routes", fib_table.size()},
                          {"engine", (*fib)->id()},
                          {"counters", counters_json(counters)}}},
                        {"classify",
                         {{"rules", acl->rules},
                          {"engine", acl->engine},
                          {"keys", acl->keys},
                          {"specific_matches", acl->specific}}}};
    std::ofstream(o.json) << j.dump(2) << "\n";
  }
  return 0;
}

}  // namespace

void add_demo(CLI::App& app, Runner& run) {
  auto o    = std::make_shared<DemoOptions>();
  auto* cmd = app.add_subcommand("demo", "Run warpath's main job on built-in data");
  cmd->add_option("--packets", o->packets, "Packets to generate")
      ->check(CLI::Range(1u, 1'000'000u));
  cmd->add_option("--seed", o->seed, "Generator seed");
  cmd->add_option("--out-dir", o->out_dir,
                  "Where the demo writes its capture, kept (default: a temporary directory, "
                  "removed at the end)");
  cmd->add_option("--json", o->json, "Also write the summary as JSON");
  cmd->callback([o, &run] { run = [o] { return run_demo(*o); }; });
}

}  // namespace warpath::cli
