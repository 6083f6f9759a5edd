// src/modules/match_module.cpp: the `match` module: a pattern set scanned over the
// traffic of a chain (include/warpath/pattern/pattern.hpp has the semantics).
//
// What: with a stream module before it, the in-order bytes of every TCP stream (its side queue
// `chunks`) are scanned as streams, one per flow and direction, so a match spanning segments is
// found once; a gap (bytes the capture lost) ends a stream and the next bytes start a new one
// (no match is reported across a gap); a flow the flow module ended closes its streams. The
// payload of every other packet of the selection (UDP, ICMP, ..., and TCP when there is no
// stream module) is scanned as a block, all of a frame's at once (a batch, as a GPU engine
// wants). Matches are counted and, with `log=`, written as JSON lines (stream matches with the
// flow serial, direction and stream offset; packet matches with the frame's packet index). The
// packets continue undecided: matching observes (the NIDS decides).
//
// State: per worker, a matcher (engines keep scratch: one thread per Matcher; the first worker
// takes the one compiled at build, where errors show), the open streams and scratch.
//
// Contract: reads parse (and a stream module's chunks and a flow module's ended flows when
// they are there); sets nothing of the packets'.
#include <mutex>
#include <unordered_map>

#include "warpath/runtime/module.hpp"
#include "modules/flow_state.hpp"
#include "modules/module_helpers.hpp"
#include "modules/stream_state.hpp"
#include "warpath/pattern/pattern.hpp"

namespace warpath::runtime {
namespace {

// Scans payloads, or the "streams" side queue when a stream module runs before it (and names
// flows from "flows" in its log when a flow module does).
ModuleContract match_contract() {
  return {field_bit(Field::kParse), 0, {}, {}, {},
          {std::string(FlowWorkerState::kQueue), std::string(StreamWorkerState::kQueue)}};
}

enum Stat : size_t { kBlocks, kBlockBytes, kStreamBytes, kStreams, kGapResets, kMatches, kStatCount };

struct MatchWorkerState final : ModuleState {
  explicit MatchWorkerState(size_t count) : ModuleState(count) {}
  std::unique_ptr<pattern::Matcher> matcher;
  struct Open {
    std::unique_ptr<pattern::Stream> stream;
    uint64_t base = 0;  ///< stream offset of the stream's first byte (after a gap)
  };
  std::unordered_map<uint64_t, Open> streams;  ///< key: flow serial * 2 + direction
  std::vector<pattern::Block> blocks;
  std::vector<uint32_t> block_packet;
  std::vector<std::vector<pattern::Match>> block_matches;
  std::vector<pattern::Match> matches;
  std::string log;  ///< this frame's lines
};

class MatchModule final : public Module {
 public:
  MatchModule(std::vector<pattern::Pattern> ps, std::unique_ptr<pattern::Matcher> first,
              size_t flow_slot, size_t stream_slot, std::FILE* log, std::string log_path)
      : patterns_(std::move(ps)), engine_(first->id()), flow_slot_(flow_slot),
        stream_slot_(stream_slot), log_(log), log_path_(std::move(log_path)), spare_(std::move(first)) {}
  ~MatchModule() override {
    if (log_) std::fclose(log_);
  }
  std::string_view kind() const noexcept override { return "match"; }
  ModuleContract contract() const override {
    return match_contract();
  }
  std::string describe() const override {
    return std::to_string(patterns_.size()) + " patterns on " + engine_ +
           (stream_slot_ != kNone ? ", streams" : ", payloads") + (log_ ? ", log " + log_path_ : "");
  }
  std::string engines(Place) const override { return engine_; }
  std::vector<std::string> stat_names() const override {
    return {"blocks", "block_bytes", "stream_bytes", "streams", "gap_resets", "matches"};
  }
  Result<std::unique_ptr<ModuleState>> make_state() const override {
    auto st = std::make_unique<MatchWorkerState>(kStatCount);
    WARPATH_ASSIGN_OR_RETURN(st->matcher, spare_.take(engine_, patterns_));
    return std::unique_ptr<ModuleState>(std::move(st));
  }

  void post(Frame& f, ModuleSlot* slot, const Selection& sel) const override {
    auto& st = static_cast<MatchWorkerState&>(*slot->state);
    st.log.clear();
    // Packets: every payload of the selection that no stream carries, in one batch.
    st.blocks.clear();
    st.block_packet.clear();
    const auto view = f.batch.view();
    for (uint32_t i = 0; i < f.size(); ++i) {
      if (sel.mask && !sel.mask[i]) continue;
      const packet::PacketInfo& p = f.infos[i];
      if (p.proto == 6 && stream_slot_ != kNone) continue;
      const uint8_t* data = nullptr;
      uint32_t len        = 0;
      if (!stream::payload_of(p, view.data(i), view.metas[i].caplen, data, len)) continue;
      st.blocks.push_back({data, len});
      st.block_packet.push_back(i);
    }
    if (st.block_matches.size() < st.blocks.size()) st.block_matches.resize(st.blocks.size());
    uint64_t matched = 0, bytes = 0;
    if (!st.blocks.empty() &&
        st.matcher->scan_blocks(st.blocks.data(), uint32_t(st.blocks.size()), st.block_matches.data()).is_ok())
      for (size_t b = 0; b < st.blocks.size(); ++b) {
        bytes += st.blocks[b].len;
        matched += st.block_matches[b].size();
        for (const pattern::Match& m : st.block_matches[b])
          if (log_) append_packet(st.log, st.block_packet[b], m);
      }
    add(st, kBlocks, st.blocks.size());
    add(st, kBlockBytes, bytes);
    // Streams: the chunks the stream module delivered for this frame, then the ended flows.
    if (stream_slot_ != kNone) {
      const auto& ss = side_queue<StreamWorkerState>(f, stream_slot_);
      uint64_t stream_bytes = 0;
      for (const stream::Chunk& c : ss.chunks) {
        const uint64_t key = c.flow * 2 + c.dir;
        if (c.gap) {
          if (close(st, key)) add(st, kGapResets, 1);
          continue;
        }
        auto it = st.streams.find(key);
        if (it == st.streams.end()) {
          auto s = st.matcher->open_stream();
          if (!s.is_ok()) continue;
          it = st.streams.emplace(key, MatchWorkerState::Open{std::move(*s), c.offset}).first;
          add(st, kStreams, 1);
        }
        st.matches.clear();
        if (it->second.stream->write(c.data, c.len, st.matches).is_ok()) {
          stream_bytes += c.len;
          matched += st.matches.size();
          if (log_)
            for (const pattern::Match& m : st.matches) append_stream(st.log, key, it->second.base, m);
        }
      }
      add(st, kStreamBytes, stream_bytes);
      if (flow_slot_ != kNone) {
        const auto& fs = side_queue<FlowWorkerState>(f, flow_slot_);
        for (const flow::FlowRecord& r : fs.ended)
          for (uint8_t d = 0; d < 2; ++d) close(st, r.serial * 2 + d);
      }
    }
    add(st, kMatches, matched);
    write_log(st);
  }

  Status finish(ModuleState& state) const override {
    auto& st = static_cast<MatchWorkerState&>(state);
    st.log.clear();
    while (!st.streams.empty()) close(st, st.streams.begin()->first);
    write_log(st);
    if (log_) {
      std::lock_guard<std::mutex> lock(log_mutex_);
      if (std::fflush(log_) != 0 || std::ferror(log_)) return Status(Errc::kIoError, log_path_ + ": write failed");
    }
    return Status::ok();
  }

 private:
  static constexpr size_t kNone = SIZE_MAX;

  static void add(MatchWorkerState& st, Stat s, uint64_t v) {
    st.stats[s].fetch_add(v, std::memory_order_relaxed);
  }
  // Ends the stream of `key`, if open: its end-anchored matches are counted and logged.
  bool close(MatchWorkerState& st, uint64_t key) const {
    auto it = st.streams.find(key);
    if (it == st.streams.end()) return false;
    st.matches.clear();
    if (it->second.stream->close(st.matches).is_ok()) {
      add(st, kMatches, st.matches.size());
      if (log_)
        for (const pattern::Match& m : st.matches) append_stream(st.log, key, it->second.base, m);
    }
    st.streams.erase(it);
    return true;
  }
  static void append_stream(std::string& log, uint64_t key, uint64_t base, const pattern::Match& m) {
    log += "{\"flow\": " + std::to_string(key / 2) + ", \"dir\": " + std::to_string(key % 2) +
           ", \"id\": " + std::to_string(m.id) + ", \"end\": " + std::to_string(base + m.end) + "}\n";
  }
  static void append_packet(std::string& log, uint32_t packet, const pattern::Match& m) {
    log += "{\"packet\": " + std::to_string(packet) + ", \"id\": " + std::to_string(m.id) +
           ", \"end\": " + std::to_string(m.end) + "}\n";
  }
  void write_log(const MatchWorkerState& st) const {
    if (!log_ || st.log.empty()) return;
    std::lock_guard<std::mutex> lock(log_mutex_);
    std::fwrite(st.log.data(), 1, st.log.size(), log_);
  }

  std::vector<pattern::Pattern> patterns_;
  std::string engine_;
  size_t flow_slot_, stream_slot_;
  std::FILE* log_;
  std::string log_path_;
  mutable std::mutex log_mutex_;
  SpareMatcher spare_;  ///< compiled at build, for the first worker
};

}  // namespace

ModuleInfo match_module_info() {
  ModuleInfo i;
  i.kind    = "match";
  i.summary = "scan a pattern set over TCP streams (after a stream module) and packet payloads; count, log";
  i.args = {
      {"patterns", "",
       "pattern file (ID:/REGEX/FLAGS lines, one regex per line, or the shared data's tables)",
       ArgFile::kInput},
      {"engine", "auto",
       "pattern engine: auto, cpu.hs, cpu.ac, cpu.dfa, ref.pattern, ... (warpath info)"},
      {"log", "", "write every match here as JSON lines", ArgFile::kOutput},
  };
  i.contract = match_contract();
  i.make  = [](const ModuleArgs& args, BuildEnv& env) -> Result<std::unique_ptr<Module>> {
    const std::string file = args.get("patterns");
    if (file.empty()) return Status(Errc::kInvalidArgument, "needs patterns=FILE");
    if (!env.tables || !env.tables->read_text)
      return Status(Errc::kNotSupported, "patterns=" + file + ": this program cannot load files");
    WARPATH_ASSIGN_OR_RETURN(const std::string text, env.tables->read_text(file));
    WARPATH_ASSIGN_OR_RETURN(auto ps, pattern::parse_pattern_text(text, file));
    if (ps.empty()) return Status(Errc::kInvalidArgument, "patterns=" + file + ": no patterns");
    // Compiled now (errors at build, not per worker), and used by the first worker.
    WARPATH_ASSIGN_OR_RETURN(auto m, pattern::make_matcher(args.get("engine", "auto"), ps));
    // The stream and flow modules before it, when there are (the nearest of each).
    size_t flow_slot = producer<FlowWorkerState>(env), stream_slot = producer<StreamWorkerState>(env);
    if (flow_slot == env.earlier.size()) flow_slot = SIZE_MAX;
    if (stream_slot == env.earlier.size()) stream_slot = SIZE_MAX;
    const std::string path = args.get("log");
    std::FILE* log         = nullptr;
    if (!path.empty()) {
      log = std::fopen(path.c_str(), "w");
      if (!log) return Status(Errc::kIoError, "log=" + path + ": cannot open for writing");
    }
    return std::unique_ptr<Module>(
        std::make_unique<MatchModule>(std::move(ps), std::move(m), flow_slot, stream_slot, log, path));
  };
  return i;
}

WARPATH_REGISTER_MODULE(match_module_info);

}  // namespace warpath::runtime
