// warpath reassemble: every TCP stream of a capture to files (like tcpflow): one file per
// direction of each flow with the bytes the receiver accepted, in order, and index.json
// listing the files, their gaps and the counters.
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <list>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "capture_progress.hpp"
#include "commands.hpp"
#include "warpath/core/json_text.hpp"
#include "warpath/flow/flow.hpp"
#include "warpath/io/capture_input.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/packet/format.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/stream/stream.hpp"

namespace warpath::cli {

using io::CaptureInput;

namespace {

struct ReassembleOptions {
  std::string in, out_dir, engine = "auto", flow_engine = "auto", policy = "bsd", filter;
  std::string mode = "ids", shard = "0/1";
  uint32_t capacity = 1u << 18;
  uint32_t max_open = 0;  ///< stream files open at once (0: open_file_cap())
  uint64_t depth    = 0;
  bool midstream    = false;
  bool defrag       = false;
  bool no_checksum  = false;
  bool strict       = false;
  bool progress     = false;
  std::vector<std::string> hosts;
};

using FileKey = std::pair<uint64_t, uint8_t>;  // (flow, direction)

// An output file written through a buffer of its own. A stdio FILE would do the same, but
// glibc keeps every FILE on one list that fclose walks: with thousands of stream files open,
// closing one cost more than everything else a short connection costs (100,000 one-segment
// connections took 8.2 s, 55% of it in _IO_un_link; tcpflow took 4.0 s).
class OutFile {
 public:
  /// The buffer starts small and doubles each time it fills, up to kMaxBuffer, while the
  /// buffers of all files (`*pool` bytes) stay within kMaxPool: a bulk stream writes 64 KiB a
  /// system call (4 KiB took 0.17 s where 64 KiB took 0.13 on 200 bulk connections), thousands
  /// of short ones hold 4 KiB each, and the growth stops at 16 MiB of buffers in all: every
  /// page of a buffer is faulted in and missed in cache as it fills (2,000 interleaved
  /// connections grew 16-32 KiB each under a 64 MiB cap: 0.94x the time at 16, paired).
  static constexpr size_t kMinBuffer = 4096, kMaxBuffer = 65536, kMaxPool = size_t(16) << 20;
  OutFile(int fd, size_t* pool)
      : fd_(fd), buf_(new uint8_t[kMinBuffer]), size_(kMinBuffer), pool_(pool) {
    *pool_ += size_;
  }
  OutFile(const OutFile&)            = delete;
  OutFile& operator=(const OutFile&) = delete;
  /// Closes without writing what is buffered: close() writes it (every path that keeps the
  /// files calls it; after a failure the files are removed).
  ~OutFile() {
    *pool_ -= size_;
    if (fd_ >= 0) ::close(fd_);
  }
  /// False on a failed write (errno says why).
  bool write(const void* data, size_t n) {
    if (used_ + n > size_) {
      if (!flush()) return false;
      if (size_ < kMaxBuffer && *pool_ + size_ <= kMaxPool) {
        buf_.reset(new uint8_t[2 * size_]);
        *pool_ += size_;
        size_ *= 2;
      }
    }
    if (n >= size_) return write_all(data, n);
    std::memcpy(buf_.get() + used_, data, n);
    used_ += n;
    return true;
  }
  /// Writes what is buffered and closes; false when either failed (errno says why).
  bool close() {
    const bool ok   = flush();
    const int e     = errno;
    const bool shut = ::close(fd_) == 0;
    fd_             = -1;
    if (!ok) errno = e;
    return ok && shut;
  }

 private:
  bool flush() {
    const bool ok = write_all(buf_.get(), used_);
    used_         = 0;
    return ok;
  }
  bool write_all(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      p += w;
      n -= size_t(w);
    }
    return true;
  }
  int fd_;
  std::unique_ptr<uint8_t[]> buf_;
  size_t size_, used_ = 0;
  size_t* pool_;  ///< the bytes of every open file's buffer
};

struct StreamFile {
  std::string name;
  std::unique_ptr<OutFile> f;
  uint64_t bytes = 0;
  std::vector<std::pair<uint64_t, uint64_t>> gaps;  ///< (stream offset, length) of each gap
  std::list<FileKey>::iterator lru;  ///< its place among the open files (while f is open)
  bool recent = false;                ///< written since the clock hand last passed it
};

// How many stream files may be open at once: the process's descriptor limit, its soft limit
// raised to the hard one first (as tcpflow does with its -f), less some for the rest, and at
// most kMaxOpen (each open file holds a buffer of 4 to 64 KiB, the larger ones for streams
// that keep writing: OutFile). A capture with more streams alive at once than that reopens
// files to append; closing all of them when the cap was reached (as until 2026-11-27) reopened
// a file for nearly every chunk once more streams than the cap were alive: 2,000 interleaved
// connections of 100-byte segments took 3.6 s, five system calls a chunk.
constexpr size_t kMaxOpen = 8192;
size_t open_file_cap() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return 256;
  if (r.rlim_cur < r.rlim_max) {
    rlimit raised   = r;
    raised.rlim_cur = r.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) r = raised;
  }
  const rlim_t have = r.rlim_cur == RLIM_INFINITY ? rlim_t(1) << 20 : r.rlim_cur;
  return size_t(std::clamp<rlim_t>(have > 64 ? have - 64 : 16, 16, kMaxOpen));
}

// The output directory, opened once: every output is created under it by name (openat), so
// a symbolic link planted there is never followed out of it, and a file already there under an
// output's name is replaced, never written through (a hard link to a file elsewhere keeps its
// bytes); the input capture under an output's name is refused, not destroyed.
class OutDir {
 public:
  /// Creates `path` if needed and opens it; `input` (empty or "-": none) is the capture read.
  Status open(const std::string& path, const std::string& input) {
    path_ = path;
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return Status(Errc::kIoError, path + ": " + ec.message());
    fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) return Status(Errc::kIoError, path + ": " + std::strerror(errno));
    struct stat st {};
    if (!input.empty() && input != "-" && ::stat(input.c_str(), &st) == 0) {
      input_     = {st.st_dev, st.st_ino};
      has_input_ = true;
    }
    return Status::ok();
  }
  ~OutDir() {
    if (fd_ >= 0) ::close(fd_);
  }
  std::string where(const std::string& name) const { return path_ + "/" + name; }

  /// kInvalidArgument when `name` in the directory is the input capture (any hard link to it).
  Status check_not_input(const std::string& name) const {
    struct stat st {};
    if (has_input_ && ::fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        std::pair(st.st_dev, st.st_ino) == input_)
      return Status(Errc::kInvalidArgument, where(name) + ": is the input capture; refusing to "
                                                          "overwrite it (another --out-dir)");
    return Status::ok();
  }
  /// A new file `name` (whatever was there removed first, a link never followed), or with
  /// `append` the one this run created, opened to append without following a link; its
  /// buffer counted in `*pool`.
  Result<std::unique_ptr<OutFile>> create(const std::string& name, bool append, size_t* pool) {
    int fd = -1;
    if (append) {
      fd = ::openat(fd_, name.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    } else {
      // Made new where nothing has the name (the usual case: no stat, no unlink); else what is
      // there is checked not to be the input, removed, and the file made again.
      const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
      fd              = ::openat(fd_, name.c_str(), flags, 0644);
      if (fd < 0 && errno == EEXIST) {
        WARPATH_TRY(check_not_input(name));
        if (::unlinkat(fd_, name.c_str(), 0) != 0 && errno != ENOENT)
          return Status(Errc::kIoError, where(name) + ": " + std::strerror(errno));
        fd = ::openat(fd_, name.c_str(), flags, 0644);
      }
      if (fd >= 0) created_.push_back(name);
    }
    if (fd < 0) {
      const int e = errno;
      Status s(Errc::kIoError, where(name) + ": " +
                                   (e == ELOOP ? std::string("is a symbolic link; not followed")
                                               : std::string(std::strerror(e))));
      errno = e;  // the caller tells a descriptor shortage by it
      return s;
    }
    return std::make_unique<OutFile>(fd, pool);
  }
  /// Writes `pieces`, one after another, to `name` through "NAME.partial", renamed over it once
  /// whole.
  Status write_whole(const std::string& name, const std::vector<std::string_view>& pieces) {
    const std::string partial = name + ".partial";
    WARPATH_TRY(check_not_input(name));
    size_t pool = 0;  // one file, written whole
    WARPATH_ASSIGN_OR_RETURN(std::unique_ptr<OutFile> f, create(partial, false, &pool));
    bool ok = true;
    for (const std::string_view piece : pieces) ok = ok && f->write(piece.data(), piece.size());
    const int e     = errno;
    const bool shut = f->close();
    if (!ok || !shut) {
      const int why = !ok ? e : errno;
      ::unlinkat(fd_, partial.c_str(), 0);
      return Status(Errc::kIoError, where(name) + ": write failed: " + std::strerror(why));
    }
    if (::renameat(fd_, partial.c_str(), fd_, name.c_str()) != 0) {
      const int e2 = errno;
      ::unlinkat(fd_, partial.c_str(), 0);
      return Status(Errc::kIoError, where(name) + ": " + std::strerror(e2));
    }
    return Status::ok();
  }
  /// Removes every file this run created (after a failure: a torn output is not left behind).
  size_t remove_created() {
    size_t n = 0;
    for (const std::string& name : created_) n += ::unlinkat(fd_, name.c_str(), 0) == 0;
    created_.clear();
    return n;
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::pair<dev_t, ino_t> input_{};
  bool has_input_ = false;
  std::vector<std::string> created_;
};

// Files by (flow, dir); at most `cap` open at once, one not written for a while closed first
// (victim(); reopened to append when its stream goes on).
class Files {
 public:
  Files(OutDir& dir, size_t cap) : dir_(dir), cap_(cap) {}
  // (Files still open at the end close with their StreamFile, without a check: after a
  // failure; close_all() checks them on the way to the index.)
  void name(uint64_t flow, uint8_t dir, std::string n) { files_[{flow, dir}].name = std::move(n); }
  Status write(const stream::Chunk& c) {
    const FileKey key{c.flow, c.dir};
    StreamFile& sf = files_[key];
    if (c.gap) {
      sf.gaps.emplace_back(c.offset, c.len);
      return Status::ok();
    }
    if (!sf.f) {
      // At the cap, or out of descriptors anyway (another part of the process holds more than
      // the margin): one not written for a while is closed first.
      bool full = lru_.size() >= cap_;
      for (;;) {
        if (full) WARPATH_TRY(shut(victim()));
        errno  = 0;
        auto f = dir_.create(sf.name, sf.bytes != 0, &buffered_);
        if (f.is_ok()) {
          sf.f = std::move(*f);
          break;
        }
        full = (errno == EMFILE || errno == ENFILE) && !lru_.empty();
        if (!full) return f.status();
      }
      sf.lru = lru_.insert(lru_.end(), key);
    }
    sf.recent = true;  // a write marks it (CLOCK: the order is kept only when one closes)
    if (!sf.f->write(c.data, c.len))
      return Status(Errc::kIoError, dir_.where(sf.name) + ": write failed: " + std::strerror(errno));
    sf.bytes += c.len;
    return Status::ok();
  }
  Status close(uint64_t flow, uint8_t dir) {
    auto it = files_.find({flow, dir});
    if (it == files_.end() || !it->second.f) return Status::ok();
    return shut(it->second);
  }
  /// Closes every open file (before the index is written, or after a failure).
  Status close_all() {
    Status first;
    while (!lru_.empty())
      if (Status s = shut(files_.at(lru_.front())); !s.is_ok() && first.is_ok()) first = s;
    return first;
  }
  /// Drops what is kept of a flow whose files are closed and indexed.
  void forget(uint64_t flow) {
    files_.erase({flow, 0});
    files_.erase({flow, 1});
  }
  const StreamFile* find(uint64_t flow, uint8_t dir) const {
    auto it = files_.find({flow, dir});
    return it == files_.end() ? nullptr : &it->second;
  }

 private:
  // The open file to close for room: the least recently opened one not written since the
  // clock hand last passed it (CLOCK, LRU's usual approximation); written ones go to the end
  // of the list, unmarked. A splice per write before (four scattered nodes a chunk: 5% of a
  // capture of 2,000 interleaved connections, each file written in turn).
  StreamFile& victim() {
    for (;;) {
      StreamFile& sf = files_.at(lru_.front());
      if (!sf.recent) return sf;
      sf.recent = false;
      lru_.splice(lru_.end(), lru_, sf.lru);
    }
  }

  Status shut(StreamFile& sf) {
    const bool bad = !sf.f->close();
    const int e    = errno;
    sf.f.reset();
    sf.recent = false;
    lru_.erase(sf.lru);
    return bad ? Status(Errc::kIoError, dir_.where(sf.name) + ": write failed: " + std::strerror(e))
               : Status::ok();
  }

  OutDir& dir_;
  size_t cap_;
  size_t buffered_ = 0;  ///< the bytes of the open files' buffers (OutFile; outlives files_)
  struct KeyHash {
    size_t operator()(const FileKey& k) const noexcept {
      return std::hash<uint64_t>()(k.first * 2 + k.second);
    }
  };
  std::unordered_map<FileKey, StreamFile, KeyHash> files_;  // nodes: references stay valid
  std::list<FileKey> lru_;  ///< the open files, in the clock hand's order (victim())
};

std::string endpoint(const flow::FlowRecord& r, bool src) {
  const uint8_t* a = src ? r.src : r.dst;
  return packet::ip_to_string(r.ip_version, a) + "." +
         std::to_string(src ? r.sport : r.dport);
}

// A JSON string, escaped by the project's one escaper (the names, addresses and end reasons
// written here are printable ASCII, which it and nlohmann leave as they are).
void append_json_string(std::string& out, std::string_view v) {
  out += '"';
  out += json_escape(v);
  out += '"';
}

// One entry of index.json's "streams", byte for byte as nlohmann's dump(2) writes the object two
// levels into the document. Written directly: making it as an object and dumping it took a
// tenth of a capture of 100,000 short connections (allocations, a character at a time).
void append_index_entry(std::string& out, const flow::FlowRecord& r, uint8_t dir,
                        const StreamFile& sf) {
  out +=
      fmt::format("    {{\n      \"flow\": {},\n      \"dir\": \"{}\",\n      \"file\": ", r.serial,
                  dir ? "responder" : "initiator");
  append_json_string(out, sf.name);
  out += ",\n      \"src\": ";
  append_json_string(out, endpoint(r, dir == 0));
  out += ",\n      \"dst\": ";
  append_json_string(out, endpoint(r, dir != 0));
  out += fmt::format(",\n      \"bytes\": {},\n      \"gaps\": ", sf.bytes);
  if (sf.gaps.empty()) {
    out += "[]";
  } else {
    out += "[";
    for (size_t k = 0; k < sf.gaps.size(); ++k)
      out += fmt::format(
          "{}\n        {{\n          \"offset\": {},\n          \"length\": {}\n        }}",
          k ? "," : "", sf.gaps[k].first, sf.gaps[k].second);
    out += "\n      ]";
  }
  out += ",\n      \"end\": ";
  append_json_string(out, flow::flow_end_name(r.end));
  out += "\n    }";
}

nlohmann::ordered_json stream_counters(const stream::StreamCounters& c) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  stream::for_each_counter(c, [&](const char* name, uint64_t v) { j[name] = v; });
  return j;
}

/// index.json: the document with `entries` (append_index_entry's, `count` of them) between the
/// brackets of its "streams".
Status write_index(OutDir& out, const ReassembleOptions& o, const stream::StreamConfig& sc,
                   const stream::Reassembler& reassembler, const std::vector<std::string>& warnings,
                   const std::vector<std::string>& entries, size_t count) {
  nlohmann::ordered_json doc;
  doc["capture"]   = o.in;
  doc["engine"]    = reassembler.id();
  doc["policy"]    = stream::policy_name(sc.policy);
  doc["mode"]      = o.mode;
  doc["streams"]   = nlohmann::ordered_json::array();  // the entries, put in below
  doc["counters"]  = stream_counters(reassembler.counters());
  doc["warnings"]  = warnings;
  std::string text = doc.dump(2);
  text += "\n";
  // `"streams": []` is there once (a string value's quotes would be escaped): the entries go
  // between its brackets.
  const std::string_view all(text), empty = "\"streams\": []";
  const size_t at = all.find(empty);
  std::vector<std::string_view> pieces{all};
  if (count) {
    pieces = {all.substr(0, at + empty.size() - 1), "\n"};
    for (const std::string& part : entries) pieces.emplace_back(part);
    pieces.insert(pieces.end(), {"\n  ", all.substr(at + empty.size() - 1)});
  }
  return out.write_whole("index.json", pieces);
}

/// The run's engines, as the options make them.
struct Engines {
  stream::StreamConfig config;
  std::unique_ptr<stream::Reassembler> reassembler;
  std::unique_ptr<flow::FlowTracker> tracker;
};

Result<Engines> make_engines(const ReassembleOptions& o) {
  Engines e;
  stream::StreamConfig& sc = e.config;
  WARPATH_ASSIGN_OR_RETURN(sc.policy, stream::parse_policy(o.policy));
  for (const std::string& h : o.hosts) {
    WARPATH_ASSIGN_OR_RETURN(stream::HostPolicy hp, stream::parse_host_policy(h));
    sc.hosts.push_back(hp);
  }
  sc.mode      = o.mode == "inline" ? stream::Mode::kInline : stream::Mode::kIds;
  sc.midstream = o.midstream;
  sc.depth     = o.depth;
  sc.stream_cap = 64u << 20;
  sc.memcap     = 1ull << 30;
  // No preallocated room: a capture's connections fault in what they use. (The stream
  // module preallocates for the flow table's capacity, so that a data plane never faults;
  // for a command run once on a capture of a few connections that took most of its time:
  // 0.2 s of zeroed memory for 262,144 flows.)
  sc.prealloc_flows = 0;
  WARPATH_ASSIGN_OR_RETURN(e.reassembler, stream::make_reassembler(o.engine, sc));
  flow::FlowConfig fc;
  fc.capacity             = o.capacity;
  fc.ignore_ipv4_checksum = o.no_checksum;
  fc.prefault             = false;  // as sc.prealloc_flows: pages as flows arrive
  WARPATH_ASSIGN_OR_RETURN(e.tracker, flow::make_flow_tracker(o.flow_engine, fc));
  return e;
}

int run_reassemble(const ReassembleOptions& o) {
  auto engines = make_engines(o);
  if (!engines.is_ok()) return fail(engines.status());
  const stream::StreamConfig& sc = engines->config;
  auto& reassembler              = engines->reassembler;
  auto& tracker                  = engines->tracker;
  auto shard = io::parse_shard(o.shard);
  if (!shard.is_ok()) return fail(shard.status());
  auto input = CaptureInput::open(o.in, o.filter, o.defrag ? "auto" : "", {},
                                  CaptureInput::kBatch, *shard);
  if (!input.is_ok()) return fail(input.status());
  OutDir out;
  if (Status s = out.open(o.out_dir, o.in); !s.is_ok()) return fail(s);
  // The index is written last: an input under its name is refused before any work.
  if (Status s = out.check_not_input("index.json"); !s.is_ok()) return fail(s);
  std::vector<packet::PacketInfo> infos;
  std::vector<flow::PacketFlow> answers;
  std::vector<flow::FlowRecord> ended;
  const size_t cap = open_file_cap();  // raises the descriptor limit: --max-open may not
  Files files(out, o.max_open ? std::min<size_t>(o.max_open, cap) : cap);
  // A failure after files were written (a full disk): they are removed, not left torn and
  // unindexed, and the message says so.
  CaptureProgress progress(o.progress || isatty(STDERR_FILENO));
  auto failed = [&](const Status& s) {
    progress.clear();
    (void)files.close_all();
    const size_t n = out.remove_created();
    return fail(n ? Status(s.code(), s.message() + fmt::format("; the {} file(s) this run wrote "
                                                               "in {} were removed", n, o.out_dir))
                  : s);
  };
  Status write_error;
  const stream::ChunkSink sink = [&](const stream::Chunk& c) {
    if (Status s = files.write(c); !s.is_ok() && write_error.is_ok()) write_error = s;
  };
  // index.json's streams, each entry written as dump(2) writes it inside the document (two
  // levels in), not kept as objects and then copied into the document (100,000 short
  // connections: 0.95x the time, paired), nor made as an object and dumped (append_index_entry).
  // In parts of about a megabyte: one string doubling to the whole index copied it into fresh
  // pages at each step (100,000 connections: 25 MB, half the run's page faults with the
  // document's assembly; now written piece by piece).
  std::vector<std::string> index(1);
  size_t indexed = 0;
  auto finish = [&](const flow::FlowRecord& r) -> Status {
    if (r.proto != 6) return Status::ok();
    WARPATH_TRY(reassembler->close(r.serial, sink));
    for (uint8_t dir = 0; dir < 2; ++dir) {
      WARPATH_TRY(files.close(r.serial, dir));
      const StreamFile* sf = files.find(r.serial, dir);
      if (!sf || (!sf->bytes && sf->gaps.empty())) continue;
      if (index.back().size() >= (size_t(1) << 20)) index.emplace_back().reserve(size_t(1) << 21);
      index.back() += indexed++ ? ",\n" : "";
      append_index_entry(index.back(), r, dir, *sf);
    }
    files.forget(r.serial);  // a capture of many flows keeps only the live ones
    return Status::ok();
  };
  // Names need the flow's orientation, known from its first packet.
  auto name_of = [&](uint64_t serial, const packet::PacketInfo& p, uint8_t dir) {
    if (files.find(serial, 0)) return;
    // The packet runs src -> dst in direction `dir`.
    const std::string s = packet::ip_to_string(p.ip_version, p.src) + "." + std::to_string(p.sport);
    const std::string d = packet::ip_to_string(p.ip_version, p.dst) + "." + std::to_string(p.dport);
    const std::string ini = dir == 0 ? s : d, res = dir == 0 ? d : s;
    files.name(serial, 0, fmt::format("{:06}-{}-{}", serial, ini, res));
    files.name(serial, 1, fmt::format("{:06}-{}-{}", serial, res, ini));
  };
  for (;;) {
    auto got = input->next(infos);
    if (!got.is_ok()) return failed(got.status());
    const packet::PacketBatch& batch = **got;
    const uint32_t n                 = batch.size();
    if (n == 0) break;
    answers.resize(n);
    const packet::BatchView v = batch.view();
    ended.clear();
    if (Status s = tracker->track({infos.data(), n}, {v.metas, n}, {answers.data(), n}, ended);
        !s.is_ok())
      return failed(s);
    for (uint32_t i = 0; i < n; ++i)  // files are named from the flow's first TCP packet
      if (answers[i].created && answers[i].serial && infos[i].proto == 6)
        name_of(answers[i].serial, infos[i], answers[i].dir);
    if (Status st = stream::reassemble_batch(*reassembler, v, infos.data(), answers.data(), n, sink,
                                             o.no_checksum);
        !st.is_ok())
      return failed(st);
    for (const flow::FlowRecord& r : ended)
      if (Status st = finish(r); !st.is_ok()) return failed(st);
    if (!write_error.is_ok()) return failed(write_error);
    progress.batch(batch, [&] {
      const stream::StreamCounters c = reassembler->counters();
      return fmt::format(", {} streams, {:.1f} MB delivered", c.streams,
                         double(c.delivered_bytes) / 1e6);
    });
  }
  progress.clear();
  ended.clear();
  // A part's clock goes on to the whole capture's last packet first (a no-op for the whole).
  if (Status s = tracker->advance(input->clock_ns(), ended); !s.is_ok()) return failed(s);
  if (Status s = tracker->flush(ended); !s.is_ok()) return failed(s);
  for (const flow::FlowRecord& r : ended)
    if (Status st = finish(r); !st.is_ok()) return failed(st);
  if (!write_error.is_ok()) return failed(write_error);
  if (Status s = files.close_all(); !s.is_ok()) return failed(s);
  if (Status s = write_index(out, o, sc, *reassembler, input->warnings(), index, indexed);
      !s.is_ok())
    return failed(s);
  const stream::StreamCounters c = reassembler->counters();
  // Every hole index.json lists: those the receiver acknowledged (capture loss) and those
  // still open when their flow ended.
  fmt::print("{}: {} streams to {} ({} bytes delivered, {} gaps ({} lost by the capture, {} "
             "never acknowledged), {} overlaps ({} with different bytes), {} retransmitted "
             "bytes)\n",
             o.in, indexed, o.out_dir, c.delivered_bytes, c.gaps + c.unacked_holes, c.gaps,
             c.unacked_holes, c.overlaps, c.overlap_diff, c.retransmitted_bytes);
  print_warnings(input->warnings());
  return strict_exit(o.strict, input->warnings());
}

}  // namespace

void add_reassemble(CLI::App& app, Runner& run) {
  auto o    = std::make_shared<ReassembleOptions>();
  auto* cmd = app.add_subcommand(
      "reassemble", "Reassemble the TCP streams of a capture into files, one per direction");
  cmd->add_option("--in", o->in, "Capture file (pcap or pcapng; - for standard input)")
      ->required();
  cmd->add_option("--out-dir", o->out_dir, "Directory for the stream files and index.json")
      ->required();
  cmd->add_option("--engine", o->engine,
                  "Reassembly engine: auto, ref.stream, cpu.stream, cuda.stream, emu.stream, validate:<engine>");
  cmd->add_option("--flow-engine", o->flow_engine, "Flow engine: auto, ref.flow, cpu.flow");
  cmd->add_option("--policy", o->policy,
                  "Overlap policy of the receivers: first, last, bsd, linux, old-linux, "
                  "solaris, vista, windows");
  cmd->add_option("--host-policy", o->hosts,
                  "PREFIX=POLICY: the policy of the receiving hosts in PREFIX (longest prefix "
                  "first; repeat for more), e.g. 10.0.0.0/8=linux");
  cmd->add_option("--mode", o->mode, "ids (deliver what the receiver acknowledged) or inline")
      ->check(CLI::IsMember({"ids", "inline"}));
  cmd->add_option("--depth", o->depth, "Bytes per direction to keep (0: all)");
  cmd->add_option("--capacity", o->capacity, "Flows the flow table holds")
      ->check(CLI::Range(1u, 1u << 26));
  cmd->add_option("--max-open", o->max_open,
                  "Stream files open at once; more streams alive than that are closed and "
                  "reopened to append, one not written for a while first, by CLOCK (default and most: the "
                  "descriptor limit, raised to its maximum, less 64, and at most 8192)")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_flag("--midstream", o->midstream,
                "Pick up connections whose handshake the capture missed");
  cmd->add_option("--filter", o->filter, "BPF filter expression, as tcpdump takes it");
  cmd->add_flag("--defrag", o->defrag, "Put IP fragments back together first");
  cmd->add_flag("--no-checksum", o->no_checksum,
                "Take IPv4 packets whose header checksum does not verify (captures taken before "
                "checksum offload, like Suricata's -k none)");
  add_shard_option(cmd, o->shard);
  add_strict_flag(cmd, o->strict, "the streams", "are written");
  add_progress_flag(cmd, o->progress);
  cmd->footer("Files are named FLOW-SRC.PORT-DST.PORT (the sender first). Gaps (bytes the "
              "capture lost but the receiver acknowledged, and holes still open when a flow "
              "ended) are not written: index.json lists them by stream offset. Outputs are "
              "created in --out-dir by name: a file already there under an output's name is "
              "replaced (a symbolic link is never followed), and the input capture among them "
              "is refused. After a failure (a full disk) the files written are removed.");
  cmd->callback([o, &run] { run = [o] { return run_reassemble(*o); }; });
}

}  // namespace warpath::cli
