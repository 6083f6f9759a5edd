// warpath parse: one row per packet of a capture (CSV or JSON), or a summary.
#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "output_file.hpp"
#include "summary_print.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/packet/format.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::cli {

namespace {

struct ParseOptions {
  std::string in, out, format = "csv", engine = "auto", filter;
  uint32_t batch   = 8192;
  uint32_t threads = 1;
  uint64_t count   = 0;  ///< stop after this many packets (0: all)
  bool times       = false;
};

/// --times: the capture time (seconds.nanoseconds since the epoch) and the captured and wire
/// lengths, in front of the parse columns.
std::string time_columns(const packet::PacketMeta& m) {
  return fmt::format("{}.{:09},{},{}", m.timestamp_ns / 1000000000u, m.timestamp_ns % 1000000000u,
                     m.caplen, m.len);
}

// The CSV columns as a JSON object: the header names as keys, numbers as numbers, and null
// for a field that does not apply.
nlohmann::ordered_json row_json(uint64_t frame, const packet::PacketInfo& info) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    std::string header = packet::kParseCsvHeader;
    for (size_t start = 0, comma; start <= header.size(); start = comma + 1) {
      comma = std::min(header.find(',', start), header.size());
      v.push_back(header.substr(start, comma - start));
    }
    return v;
  }();
  const auto columns       = packet::parse_columns(frame, info);
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (int i = 0; i < packet::kParseColumns; ++i) {
    const std::string& c = columns[i];
    const bool text      = names[i] == "status" || names[i] == "src" || names[i] == "dst";
    j[names[i]]          = c.empty() ? nlohmann::ordered_json()
                           : text    ? nlohmann::ordered_json(c)
                                     : nlohmann::ordered_json(std::stoull(c));
  }
  return j;
}

int parse_to(const ParseOptions& o, std::FILE* out);

int run_parse(const ParseOptions& o) {
  OutputFile out(o.out);
  if (Status s = out.open({o.in}); !s.is_ok()) return fail(s);
  int rc = 0;
  if (Status s = out.guarded([&](std::FILE* f) { rc = parse_to(o, f); }); !s.is_ok())
    return fail(s);
  if (rc != 0) return rc;
  if (Status s = out.commit(); !s.is_ok()) return fail(s);
  return 0;
}

int parse_to(const ParseOptions& o, std::FILE* out) {
  auto reader = io::PcapReader::open(o.in);
  if (!reader.is_ok()) return fail(reader.status());
  if (reader->info().linktype != 1)  // DLT_EN10MB (Linux cooked and raw IP are converted)
    return fail(fmt::format("{}: link type {} is not supported (Ethernet, Linux cooked SLL/SLL2 "
                            "and raw IP captures only)",
                            o.in, reader->info().file_linktype));
  if (!o.filter.empty())
    if (Status s = reader->set_filter(o.filter); !s.is_ok()) return fail(s);
  auto parser = packet::make_parser(o.engine);
  if (!parser.is_ok()) return fail(parser.status());
  // With -c, no bigger batches than needed: a pipe's first packets print without waiting for
  // a full batch.
  const uint32_t per_batch = o.count ? uint32_t(std::min<uint64_t>(o.batch, o.count)) : o.batch;
  auto batch = packet::PacketBatch::create(per_batch, 2048, size_t(per_batch) * 2048 + (1u << 17));
  if (!batch.is_ok()) return fail(batch.status());

  const bool csv = o.format == "csv", json = o.format == "json";
  if (csv)
    fmt::print(out, "{}{}\n", o.times ? "frame,time,caplen,len," : "",
               o.times ? std::string(packet::kParseCsvHeader).substr(6) : packet::kParseCsvHeader);
  if (json) fmt::print(out, "[");
  packet::ParseSummary summary;
  std::vector<packet::PacketInfo> infos(o.batch);
  ExecContext ctx;
  ctx.threads    = o.threads;
  uint64_t frame = 0;
  for (;;) {
    batch->clear();
    auto got = reader->read(*batch);
    if (!got.is_ok()) return fail(got.status());
    if (batch->size() == 0 && reader->at_end()) break;
    Status s = (*parser)->parse(batch->view(), {infos.data(), batch->size()}, ctx);
    if (!s.is_ok()) return fail(s);
    bool enough = false;
    for (uint32_t i = 0; i < batch->size(); ++i) {
      if (o.count && frame >= o.count) {
        enough = true;
        break;
      }
      ++frame;
      const packet::PacketMeta& m = batch->meta(i);
      summary.add(infos[i], m.len);
      if (csv) {
        std::string row = packet::parse_csv_row(frame, infos[i]);
        if (o.times) row.insert(row.find(',') + 1, time_columns(m) + ",");
        fmt::print(out, "{}\n", row);
      }
      if (json) {
        auto row = row_json(frame, infos[i]);
        if (o.times) {
          nlohmann::ordered_json t;
          t["frame"]  = row["frame"];
          t["time"]   = double(m.timestamp_ns) / 1e9;
          t["caplen"] = m.caplen;
          t["len"]    = m.len;
          for (auto it = row.begin(); it != row.end(); ++it)
            if (it.key() != "frame") t[it.key()] = it.value();
          row = std::move(t);
        }
        fmt::print(out, "{}\n  {}", frame == 1 ? "" : ",", row.dump());
      }
    }
    if (enough || reader->at_end()) break;
  }
  if (json) fmt::print(out, "{}]\n", frame ? "\n" : "");
  if (o.format == "summary") {
    fmt::print(out, "{}: {} packets, parsed by {}\n", o.in, frame, (*parser)->id());
    print_summary(summary, out);
  }
  return 0;
}

}  // namespace

void add_parse(CLI::App& app, Runner& run) {
  auto o    = std::make_shared<ParseOptions>();
  auto* cmd = app.add_subcommand("parse", "Parse a pcap/pcapng capture: one row per packet");
  cmd->add_option("--in", o->in, "Capture file (pcap or pcapng)")->required();
  cmd->add_option("--format", o->format, "csv, json or summary")
      ->check(CLI::IsMember({"csv", "json", "summary"}));
  cmd->add_option("--engine", o->engine,
                  "Parser engine: auto, ref.parse, cpu.parse, cuda.parse, validate:<engine>");
  cmd->add_option("--out", o->out, "Write rows here instead of standard output");
  cmd->add_option("--batch", o->batch, "Packets per batch")->check(CLI::Range(1u, 1u << 22));
  cmd->add_option("--threads", o->threads, "CPU threads for cpu.parse")
      ->check(CLI::Range(1u, 1024u));
  cmd->add_option("-c,--count", o->count, "Stop after this many packets (after --filter)");
  cmd->add_option("--filter", o->filter,
                  "BPF filter expression, as tcpdump takes it (e.g. \"udp port 53\")");
  cmd->add_flag("--times", o->times,
                "Also the capture time and the captured and wire lengths of each packet");
  cmd->footer("--in - reads standard input (tcpdump -w - | warpath parse --in -). Linux cooked "
              "(SLL, SLL2: tcpdump -i any) and raw-IP captures are read as Ethernet frames.");
  cmd->callback([o, &run] { run = [o] { return run_parse(*o); }; });
}

}  // namespace warpath::cli
