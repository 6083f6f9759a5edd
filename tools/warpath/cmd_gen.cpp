// warpath gen traffic: write a pcap from the seeded traffic generator or a ClassBench trace.
#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "commands.hpp"
#include "warpath/classify/check.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/io/classbench.hpp"
#include "warpath/io/pcap_file.hpp"

namespace warpath::cli {

namespace {

struct GenTrafficOptions {
  gen::TrafficParams params;
  std::string out, sizes = "imix", trace;
  uint32_t size = 0;
  bool pcapng = false, micro = false;
  bool count_given = false;
};

// The generator builds one batch in memory; 2 KiB cells make this about 2 GiB at the limit.
constexpr uint32_t kMaxPackets = 1'000'000;

/// The library names its parameters (TrafficParams.min_size); a user typed flags (--min-size).
Status in_flag_words(const Status& s) {
  std::string m = s.message();
  auto replace_all = [&m](std::string_view from, std::string_view to) {
    for (size_t at = m.find(from); at != std::string::npos; at = m.find(from, at + to.size()))
      m.replace(at, from.size(), to);
  };
  replace_all("TraceFrameParams.size", "--size");  // before the prefixes go: "size" is short
  replace_all("TrafficParams.", "");
  replace_all("TraceFrameParams.", "");
  static const std::pair<std::string_view, std::string_view> kFlags[] = {
      {"tcp_share", "--tcp"},          {"udp_share", "--udp"},         {"icmp_share", "--icmp"},
      {"ipv6_share", "--ipv6-share"}, {"vlan_share", "--vlan-share"}, {"min_size", "--min-size"},
      {"max_size", "--max-size"},     {"gap_ns", "--gap-ns"},         {"flows", "--flows"}};
  for (const auto& [field, flag] : kFlags) replace_all(field, flag);
  return Status(s.code(), m);
}

int run_gen_traffic(GenTrafficOptions o) {
  packet::PacketBatch batch;
  if (!o.trace.empty()) {
    auto trace = io::load_trace(o.trace);
    if (!trace.is_ok()) return fail(trace.status());
    if (trace->empty()) return fail(o.trace + ": the trace has no lines");
    if (o.count_given && o.params.count < trace->size()) trace->resize(o.params.count);
    if (trace->size() > kMaxPackets)
      return fail(fmt::format("{}: {} lines; at most {} packets per file", o.trace, trace->size(),
                              kMaxPackets));
    auto b = gen::batch_for(uint32_t(trace->size()), o.size ? o.size : 64);
    if (!b.is_ok()) return fail(b.status());
    batch = std::move(*b);
    gen::TraceFrameParams tp;
    tp.size     = o.size ? o.size : 64;
    tp.start_ns = o.params.start_ns;
    tp.gap_ns   = o.params.gap_ns;
    if (Status s = gen::frames_from_trace(*trace, tp, batch); !s.is_ok())
      return fail(in_flag_words(s));
  } else {
    o.params.sizes = o.sizes == "imix"      ? gen::SizeMix::kImix
                     : o.sizes == "uniform" ? gen::SizeMix::kUniform
                                            : gen::SizeMix::kFixed;
    if (o.size) {
      o.params.sizes    = gen::SizeMix::kFixed;
      o.params.min_size = o.params.max_size = o.size;
    }
    if (Status s = o.params.validate(); !s.is_ok()) return fail(in_flag_words(s));
    auto b = gen::batch_for(o.params.count, o.params.max_size);
    if (!b.is_ok()) return fail(b.status());
    batch = std::move(*b);
    if (Status s = gen::generate_traffic(o.params, batch); !s.is_ok())
      return fail(in_flag_words(s));
  }
  io::CaptureInfo info;
  info.format    = o.pcapng ? io::CaptureFormat::kPcapng : io::CaptureFormat::kPcap;
  info.precision = o.micro ? io::TimePrecision::kMicro : io::TimePrecision::kNano;
  auto writer    = io::PcapWriter::create(o.out, info);
  if (!writer.is_ok()) return fail(writer.status());
  if (Status s = writer->write(batch); !s.is_ok()) return fail(s);
  if (Status s = writer->close(); !s.is_ok()) return fail(s);
  fmt::print("wrote {} packets to {}\n", batch.size(), o.out);
  return 0;
}

struct GenRulesOptions {
  classify::SyntheticParams params;
  std::string out, trace;
};

// GSwitch's synthetic rule sets: ClassBench files for f = 5 (file order = priority order, so
// rules are written best first), ovs-ofctl flows for f = 12; the trace in the matching format.
int run_gen_rules(const GenRulesOptions& o) {
  auto set = classify::synthetic_rules(o.params);
  if (!set.is_ok()) return fail(set.status());
  const classify::RuleSet& rules = set->rules;
  std::vector<uint32_t> order(rules.rules.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  const bool five = rules.layout == classify::KeyLayout::kFiveTuple;
  if (five)
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return rules.rules[a].priority > rules.rules[b].priority;
    });
  std::FILE* f = std::fopen(o.out.c_str(), "w");
  if (!f) return fail(o.out + ": cannot create: " + std::strerror(errno));
  fmt::print(f, "{}", five ? "" : "# " + rules.name + "\n");
  for (uint32_t i : order) {
    if (five) {
      auto line = classify::format_classbench(rules.rules[i]);
      if (!line.is_ok()) {
        std::fclose(f);
        return fail(line.status());
      }
      fmt::print(f, "{}\n", *line);
    } else {
      fmt::print(f, "{}\n", classify::format_openflow_rule(rules.rules[i]));
    }
  }
  if (std::fclose(f) != 0) return fail(o.out + ": write failed");
  if (!o.trace.empty()) {
    std::FILE* t = std::fopen(o.trace.c_str(), "w");
    if (!t) return fail(o.trace + ": cannot create: " + std::strerror(errno));
    uint32_t key[classify::kMaxKeyWords];
    for (uint32_t i = 0; i < set->keys.size(); ++i) {
      set->keys.get(i, key);
      if (five) {
        fmt::print(t, "{}\t{}\t{}\t{}\t{}\n", key[0], key[1], key[2] >> 16, key[2] & 0xFFFF,
                   key[3]);
      } else {
        fmt::print(t, "{}\n", classify::format_openflow_key(key));
      }
    }
    if (std::fclose(t) != 0) return fail(o.trace + ": write failed");
  }
  fmt::print("wrote {} rules ({}) to {}{}\n", rules.rules.size(), rules.name, o.out,
             o.trace.empty() ? "" : fmt::format(" and {} tuples to {}", set->keys.size(), o.trace));
  return 0;
}

}  // namespace

void add_gen(CLI::App& app, Runner& run) {
  auto* gen_cmd = app.add_subcommand("gen", "Generate inputs (traffic captures, rule sets)");
  gen_cmd->require_subcommand(1);
  auto o    = std::make_shared<GenTrafficOptions>();
  auto* cmd = gen_cmd->add_subcommand("traffic", "Write a pcap of generated traffic");
  auto& p   = o->params;
  cmd->add_option("--out", o->out, "Output capture")->required();
  cmd->add_option("--count", p.count, "Packets (with --trace: at most this many trace lines)")
      ->check(CLI::Range(1u, kMaxPackets));
  cmd->add_option("--seed", p.seed, "Random seed (same seed, same bytes)");
  cmd->add_option("--flows", p.flows, "Distinct flows")->check(CLI::Range(1u, 1u << 24));
  cmd->add_option("--ipv6-share", p.ipv6_share, "Fraction of IPv6 flows")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--vlan-share", p.vlan_share, "Fraction of 802.1Q-tagged flows")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--tcp", p.tcp_share, "TCP weight")->check(CLI::NonNegativeNumber);
  cmd->add_option("--udp", p.udp_share, "UDP weight")->check(CLI::NonNegativeNumber);
  cmd->add_option("--icmp", p.icmp_share, "ICMP weight")->check(CLI::NonNegativeNumber);
  cmd->add_option("--sizes", o->sizes,
                  "Frame sizes: imix, uniform (--min-size..--max-size) or fixed")
      ->check(CLI::IsMember({"imix", "uniform", "fixed"}));
  const auto sizes = CLI::Range(64u, 9018u);
  cmd->add_option("--min-size", p.min_size, "Smallest frame (bytes, with FCS)")->check(sizes);
  cmd->add_option("--max-size", p.max_size, "Largest frame (bytes, with FCS)")->check(sizes);
  cmd->add_option("--size", o->size, "Fixed frame size (bytes, with FCS; grown to fit the headers)")
      ->check(sizes);
  cmd->add_option("--gap-ns", p.gap_ns, "Time between packets (ns)");
  cmd->add_option("--trace", o->trace, "Build one IPv4 frame per line of this ClassBench trace");
  cmd->add_flag("--pcapng", o->pcapng, "Write pcapng instead of pcap");
  cmd->add_flag("--micro", o->micro, "Microsecond timestamps (default nanosecond)");
  cmd->callback([o, cmd, &run] {
    o->count_given = cmd->count("--count") > 0;
    run            = [o] { return run_gen_traffic(*o); };
  });

  auto r     = std::make_shared<GenRulesOptions>();
  auto* rcmd = gen_cmd->add_subcommand(
      "rules", "Write a GSwitch synthetic rule set (N rules, C classes, F full, Cm matching)");
  auto& q = r->params;
  rcmd->add_option("--out", r->out, "Rule file (ClassBench for --fields 5, ovs-ofctl for 12)")
      ->required();
  rcmd->add_option("--trace", r->trace, "Also write the tuples to classify here");
  rcmd->add_option("--rules,-N", q.rules, "Rules")
      ->check(CLI::Range(1u, 1u << 22))
      ->capture_default_str();
  rcmd->add_option("--classes,-C", q.classes, "Classes (distinct masks)")
      ->check(CLI::Range(1u, 1u << 16))
      ->capture_default_str();
  rcmd->add_option("--full,-F", q.full, "Full classes (the others hold one rule)")
      ->check(CLI::Range(1u, 1u << 16))
      ->capture_default_str();
  rcmd->add_option("--matching", q.matching, "Classes each tuple matches (Cm)")
      ->check(CLI::Range(1u, 1u << 16))
      ->capture_default_str();
  rcmd->add_option("--fields,-f", q.fields, "Fields per rule: 5 (5-tuple) or 12 (OpenFlow)")
      ->check(CLI::IsMember({5u, 12u}))
      ->capture_default_str();
  rcmd->add_option("--tuples", q.tuples, "Tuples in the trace")
      ->check(CLI::Range(1u, 1u << 24))
      ->capture_default_str();
  rcmd->add_option("--seed", q.seed, "Random seed")->capture_default_str();
  rcmd->callback([r, &run] { run = [r] { return run_gen_rules(*r); }; });
}

}  // namespace warpath::cli
