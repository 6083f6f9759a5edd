// warpath demo: the main job on built-in data. At this stage: generate traffic, write it to a
// pcap, read it back, parse it with the best engine (checked against the reference), and print
// a per-protocol summary. Later stages extend it until it is the full switch/router.
#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>

#include "commands.hpp"
#include "summary_print.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::cli {

namespace {

struct DemoOptions {
  uint32_t packets    = 200'000;
  uint64_t seed       = 1;
  std::string out_dir = "warpath-demo";
  std::string json;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run_demo(const DemoOptions& o) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec) return fail(o.out_dir + ": cannot create: " + ec.message());
  const std::string pcap = (fs::path(o.out_dir) / "demo.pcap").string();

  fmt::print(
      "[1/4] generating {} packets (seed {}, IMIX sizes, TCP/UDP/ICMP over IPv4/IPv6, VLANs)\n",
      o.packets, o.seed);
  gen::TrafficParams params;
  params.seed  = o.seed;
  params.count = o.packets;
  auto batch   = gen::batch_for(o.packets);
  if (!batch.is_ok()) return fail(batch.status());
  if (Status s = gen::generate_traffic(params, *batch); !s.is_ok()) return fail(s);

  fmt::print("[2/4] writing {}\n", pcap);
  auto writer = io::PcapWriter::create(pcap);
  if (!writer.is_ok()) return fail(writer.status());
  if (Status s = writer->write(*batch); !s.is_ok()) return fail(s);
  if (Status s = writer->close(); !s.is_ok()) return fail(s);

  fmt::print("[3/4] reading it back through libpcap\n");
  auto back = io::read_capture(pcap);
  if (!back.is_ok()) return fail(back.status());
  if (back->size() != batch->size())
    return fail(fmt::format("read back {} packets, wrote {}", back->size(), batch->size()));

  auto parser = packet::make_parser("auto");
  if (!parser.is_ok()) return fail(parser.status());
  fmt::print("[4/4] parsing with {} and checking every packet against ref.parse\n",
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
  if (!o.json.empty()) {
    nlohmann::json j = {{"packets", back->size()},   {"pcap", pcap},
                        {"engine", (*parser)->id()}, {"parse_mpps", mpps},
                        {"validated", true},         {"summary", summary_json(summary)}};
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
  cmd->add_option("--out-dir", o->out_dir, "Where the demo writes its capture");
  cmd->add_option("--json", o->json, "Also write the summary as JSON");
  cmd->callback([o, &run] { run = [o] { return run_demo(*o); }; });
}

}  // namespace warpath::cli
