// warpath defrag: a capture with its IP fragments put back together (the datagrams whole, in
// place of the fragment that completed each), and the defragmentation counters.
#include <fmt/core.h>

#include <memory>

#include "warpath/io/capture_input.hpp"
#include "commands.hpp"
#include "warpath/io/same_file.hpp"

namespace warpath::cli {

using io::CaptureInput;

namespace {

struct DefragOptions {
  std::string in, out, engine = "auto", policy = "bsd", filter;
  uint32_t timeout = 60;
  bool ipv6_overlap = false;
  bool strict       = false;
};

int run_defrag(const DefragOptions& o) {
  defrag::DefragConfig c;
  auto policy = defrag::parse_frag_policy(o.policy);
  if (!policy.is_ok()) return fail(policy.status());
  c.policy            = *policy;
  c.timeout_s         = o.timeout;
  c.ipv6_overlap_drop = !o.ipv6_overlap;
  if (io::same_file(o.in, o.out)) return fail(o.out + ": is the input capture");
  auto input = CaptureInput::open(o.in, o.filter, o.engine, c);
  if (!input.is_ok()) return fail(input.status());
  auto writer = io::PcapWriter::create(o.out, input->info());
  if (!writer.is_ok()) return fail(writer.status());
  std::vector<packet::PacketInfo> infos;
  uint64_t packets = 0;
  for (;;) {
    auto batch = input->next(infos);
    if (!batch.is_ok()) return fail(batch.status());
    if ((*batch)->size() == 0) break;
    packets += (*batch)->size();
    if (Status s = writer->write(**batch); !s.is_ok()) return fail(s);
  }
  if (Status s = writer->close(); !s.is_ok()) return fail(s);
  if (Status s = input->defrag_status(); !s.is_ok()) return fail(s);
  const defrag::DefragCounters k = input->defrag_counters();
  fmt::print("{}: {} packets to {} by {} (policy {}): {} fragments, {} datagrams reassembled, "
             "{} overlaps ({} with different bytes)\n",
             o.in, packets, o.out, input->defrag_engine(), o.policy, k.fragments, k.completed,
             k.overlaps, k.overlap_diff);
  fmt::print("dropped: {} IPv6 overlaps (RFC 5722), {} tiny (RFC 1858/3128), {} too large, "
             "{} past the fragment limit, {} timed out, {} by memcap, {} by the datagram limit, "
             "{} malformed; {} datagrams unfinished at the end\n",
             k.ipv6_overlap, k.tiny, k.too_large, k.too_many, k.timeout, k.memcap,
             k.max_datagrams, k.malformed, k.datagrams);
  print_warnings(input->warnings());
  return strict_exit(o.strict, input->warnings());
}

}  // namespace

void add_defrag(CLI::App& app, Runner& run) {
  auto o    = std::make_shared<DefragOptions>();
  auto* cmd = app.add_subcommand("defrag", "Put the IP fragments of a capture back together");
  cmd->add_option("--in", o->in, "Capture file (pcap or pcapng; - for standard input)")->required();
  cmd->add_option("--out", o->out, "The defragmented capture (pcap)")->required();
  cmd->add_option("--engine", o->engine, "Engine: auto, ref.defrag, cpu.defrag, validate:<engine>");
  cmd->add_option("--policy", o->policy,
                  "Overlap policy of the receivers: first, last, bsd, linux, windows, solaris");
  cmd->add_option("--timeout", o->timeout, "Seconds a datagram may take to complete")
      ->check(CLI::Range(1u, 86400u));
  cmd->add_flag("--ipv6-overlap", o->ipv6_overlap,
                "Resolve overlapping IPv6 fragments by the policy instead of dropping the "
                "datagram (RFC 5722)");
  cmd->add_option("--filter", o->filter, "BPF filter expression, as tcpdump takes it");
  add_strict_flag(cmd, o->strict, "the whole datagrams", "are written");
  cmd->footer("Fragments are held until their datagram completes; the datagram then takes the "
              "place of the fragment that completed it, with MF and the offset cleared.");
  cmd->callback([o, &run] { run = [o] { return run_defrag(*o); }; });
}

}  // namespace warpath::cli
