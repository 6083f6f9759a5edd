// cpu.hs: Vectorscan (Hyperscan's portable fork, Debian's libvectorscan-dev) as an engine: the
// field's best CPU matcher and the anchor of every pattern benchmark. A set of literals only
// goes to its literal compiler (hs_compile_lit_multi: the same database, compiled about a
// third faster); a mixed set is given as expressions, literals escaped (regex_of). A set's
// block and streaming databases are each compiled once for all the matchers sharing them
// (clone()): the one its matcher was made for (make_hs_matcher) at once, the other at its
// first use. Each matcher has its own scratch per mode, the streaming one shared by all its
// streams (one thread per matcher); streams end before their matcher. Built only where the
// library is found (WARPATH_HAVE_HS); elsewhere the engine is not in the registry.
//
// Which of the library's entry points it calls is decided once (hs_runtime): Debian's
// Vectorscan 5.4.9 is a "fat" build whose hs_scan dispatches to a variant per CPU, and its
// AVX-512 variant misses literal matches past the first 64 bytes of a buffer for some pattern
// sets (upstream's issue 317, fixed after 5.4.11: 40 literals "k10".."k49" miss "k33" at
// offset 70 of a run of one byte). A canary set with such matches planted runs through the
// dispatched entry points at the first use; if they miss any, cpu.hs compiles for AVX2 and
// calls the library's AVX2 variants (avx2_hs_scan, ..., exported by the fat build), which find
// them all; if those are not there or miss too, cpu.hs says it is not available and the
// engines that pick the fastest CPU matcher take the next (cpu.ac).
#include <dlfcn.h>
#include <hs/hs.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string>

#include "pattern/engines.hpp"
#include "pattern/matches.hpp"

namespace warpath::pattern::detail {
namespace {

unsigned hs_flags(const Pattern& p) {
  unsigned f = 0;
  if (p.flags & kCaseless) f |= HS_FLAG_CASELESS;
  if (p.flags & kDotAll) f |= HS_FLAG_DOTALL;
  if (p.flags & kMultiLine) f |= HS_FLAG_MULTILINE;
  if (p.flags & kSingleMatch) f |= HS_FLAG_SINGLEMATCH;
  return f;
}


std::string name_of(const Pattern& p) {
  return "pattern " + std::to_string(p.id) + (p.where.empty() ? "" : " (" + p.where + ")");
}

struct Compiled {
  hs_database_t* db = nullptr;
  Status status;
};

Compiled compile_for(const std::vector<Pattern>& patterns, unsigned mode,
                     const hs_platform_info_t* platform);

// The entry points cpu.hs calls, and the platform its databases are compiled for (null: the
// host's). hs_alloc_scratch, hs_free_* and the compilers are not dispatched.
struct HsRuntime {
  decltype(&hs_scan) scan                 = &hs_scan;
  decltype(&hs_open_stream) open_stream   = &hs_open_stream;
  decltype(&hs_scan_stream) scan_stream   = &hs_scan_stream;
  decltype(&hs_close_stream) close_stream = &hs_close_stream;
  decltype(&hs_stream_size) stream_size   = &hs_stream_size;
  hs_platform_info_t target{};  ///< with `avx2`: what databases are compiled for
  bool avx2  = false;           ///< the AVX2 variants, databases compiled for AVX2
  bool works = true;
  const hs_platform_info_t* platform() const { return avx2 ? &target : nullptr; }
  const char* path() const { return avx2 ? "avx2" : "dispatched"; }
};

int count_match(unsigned, unsigned long long, unsigned long long, unsigned, void* ctx) {
  ++*static_cast<uint64_t*>(ctx);
  return 0;
}

// Does `rt` find every planted match of the canary, in block and streaming mode? 40 literals
// "k10".."k49" (every fourth with "-spanning-key" after it); "k33" planted after a run of one
// byte at each offset from 0 to 191 (the AVX-512 variant of 5.4.9 misses 64-67, 76-91, ...).
bool canary(const HsRuntime& rt) {
  const std::vector<Pattern> ps = vectorscan_miss_patterns();
  bool ok                       = true;
  for (const unsigned mode : {unsigned(HS_MODE_BLOCK), unsigned(HS_MODE_STREAM)}) {
    Compiled c            = compile_for(ps, mode, rt.platform());
    hs_scratch_t* scratch = nullptr;
    if (!c.db || hs_alloc_scratch(c.db, &scratch) != HS_SUCCESS) {
      if (c.db) hs_free_database(c.db);
      return false;
    }
    for (uint32_t off = 0; off < 192 && ok; ++off) {
      const std::string d = std::string(off, 'd') + "k33" + std::string(15, 'd');
      uint64_t n          = 0;
      if (mode == HS_MODE_BLOCK) {
        ok = rt.scan(c.db, d.data(), unsigned(d.size()), 0, scratch, count_match, &n) == HS_SUCCESS;
      } else {
        hs_stream_t* st = nullptr;
        ok              = rt.open_stream(c.db, 0, &st) == HS_SUCCESS &&
             rt.scan_stream(st, d.data(), unsigned(d.size()), 0, scratch, count_match, &n) ==
                 HS_SUCCESS &&
             rt.close_stream(st, scratch, count_match, &n) == HS_SUCCESS;
      }
      ok = ok && n == 1;
    }
    hs_free_scratch(scratch);
    hs_free_database(c.db);
  }
  return ok;
}

template <class F>
bool resolve(F& f, const char* name) {
  void* sym = dlsym(RTLD_DEFAULT, name);
  if (sym) f = reinterpret_cast<F>(sym);
  return sym != nullptr;
}

HsRuntime make_runtime() {
  HsRuntime d;
  if (canary(d)) return d;
#if defined(__x86_64__)
  HsRuntime a;
  a.avx2 = true;
  __builtin_cpu_init();  // (the first use may come before the library's constructors ran)
  a.works = __builtin_cpu_supports("avx2") && resolve(a.scan, "avx2_hs_scan") &&
            resolve(a.open_stream, "avx2_hs_open_stream") &&
            resolve(a.scan_stream, "avx2_hs_scan_stream") &&
            resolve(a.close_stream, "avx2_hs_close_stream") &&
            resolve(a.stream_size, "avx2_hs_stream_size") &&
            hs_populate_platform(&a.target) == HS_SUCCESS;
  if (a.works) {
    a.target.cpu_features = HS_CPU_FEATURES_AVX2;
    a.works               = canary(a);
  }
  if (a.works) return a;
#endif  // elsewhere no other variant to take
  std::fprintf(stderr,
               "warpath: this Vectorscan (%s) misses literal matches (its issue 317) and has no "
               "AVX2 entry points that find them: cpu.hs is not available\n",
               hs_version());
  d.works = false;
  return d;
}

const HsRuntime& hs_runtime() {
  static const HsRuntime rt = make_runtime();
  return rt;
}

Compiled compile(const std::vector<Pattern>& patterns, unsigned mode) {
  return compile_for(patterns, mode, hs_runtime().platform());
}

Compiled compile_for(const std::vector<Pattern>& patterns, unsigned mode,
                     const hs_platform_info_t* platform) {
  Compiled c;
  for (const Pattern& p : patterns)
    if (!p.unsupported.empty()) {
      c.status = Status(Errc::kNotSupported, name_of(p) + ": " + p.unsupported);
      return c;
    }
  if (patterns.empty()) {
    c.status = Status(Errc::kInvalidArgument, "no patterns to compile");
    return c;
  }
  hs_compile_error_t* err = nullptr;
  std::vector<const char*> ptrs;
  std::vector<unsigned> flags, ids;
  // Literals only (caseless and single-match are the flags a literal can take): the literal
  // compiler. Vectorscan 5.4.9's takes no literal that starts with a zero byte ("doesn't
  // support empty string", lengths notwithstanding): such a set goes as expressions.
  const bool literals = std::all_of(patterns.begin(), patterns.end(), [](const Pattern& p) {
    return p.literal && !p.expression.empty() && p.expression[0] != '\0';
  });
  hs_error_t e        = HS_SUCCESS;
  std::vector<std::string> exprs;
  if (literals) {
    std::vector<size_t> lens;
    for (const Pattern& p : patterns) {
      ptrs.push_back(p.expression.data());
      lens.push_back(p.expression.size());
      flags.push_back(hs_flags(p) & (HS_FLAG_CASELESS | HS_FLAG_SINGLEMATCH));
      ids.push_back(p.id);
    }
    e = hs_compile_lit_multi(ptrs.data(), flags.data(), ids.data(), lens.data(),
                             unsigned(ptrs.size()), mode, platform, &c.db, &err);
  } else {
    exprs.reserve(patterns.size());
    for (const Pattern& p : patterns) {
      exprs.push_back(regex_of(p));
      flags.push_back(hs_flags(p));
      ids.push_back(p.id);
    }
    for (const auto& x : exprs) ptrs.push_back(x.c_str());
    e = hs_compile_multi(ptrs.data(), flags.data(), ids.data(), unsigned(ptrs.size()), mode,
                         platform, &c.db, &err);
  }
  if (e != HS_SUCCESS) {
    std::string why = err && err->message ? err->message : "compile failed";
    if (err && err->expression >= 0 && size_t(err->expression) < patterns.size())
      why = name_of(patterns[size_t(err->expression)]) + ": vectorscan: " + why;
    else
      why = "vectorscan: " + why;
    hs_free_compile_error(err);
    c.status = Status(Errc::kNotSupported, why);
    c.db     = nullptr;
  }
  return c;
}

// Matches into out[from, ...) in (end, id) order as they arrive: Vectorscan reports by end
// offset, ids at one offset in any order, so a new match steps back over the few it sorts
// before (no pass over the matches afterwards: cpu.hs is the CPU path and must cost what
// Vectorscan costs), and a repeat is dropped.
struct Into {
  std::vector<Match>* out;
  size_t from;
};

int on_match(unsigned id, unsigned long long, unsigned long long to, unsigned, void* ctx) {
  auto* into             = static_cast<Into*>(ctx);
  std::vector<Match>& v  = *into->out;
  const Match m{id, uint64_t(to)};
  size_t i = v.size();
  while (i > into->from && m < v[i - 1]) --i;
  if (i > into->from && v[i - 1] == m) return 0;
  if (i == v.size()) v.push_back(m);
  else v.insert(v.begin() + long(i), m);
  return 0;
}

// The any-order scans: matches appended as Vectorscan reports them, nothing else (what a caller
// of hs_scan that keeps its matches pays).
int on_match_any_order(unsigned id, unsigned long long, unsigned long long to, unsigned, void* ctx) {
  static_cast<std::vector<Match>*>(ctx)->push_back(Match{id, uint64_t(to)});
  return 0;
}

// A Vectorscan error as a Status naming the call.
Status hs_status(hs_error_t e, const char* call) {
  if (e == HS_SUCCESS) return Status::ok();
  if (e == HS_NOMEM) return Status(Errc::kOutOfMemory, std::string("cpu.hs: ") + call + ": out of memory");
  if (e == HS_SCRATCH_IN_USE)
    return Status(Errc::kInvalidArgument,
                  std::string("cpu.hs: ") + call + ": scratch in use (one thread per matcher)");
  return Status(Errc::kInvalidArgument, std::string("cpu.hs: ") + call + " failed (hs_error_t " + std::to_string(e) + ")");
}

// Vectorscan takes no null buffer, even empty: an empty block still reports /^a?/'s empty match.
const char* bytes_of(const uint8_t* data, size_t len) {
  return len ? reinterpret_cast<const char*>(data) : "";
}

// A stream uses its matcher's stream scratch (one thread per matcher): a flow costs its stream
// state (hs_stream_size) only.
class HsStream final : public Stream {
 public:
  HsStream(hs_stream_t* s, hs_scratch_t* scratch, size_t state) : stream_(s), scratch_(scratch), state_(state) {}
  ~HsStream() override {
    if (stream_)  // no scratch needed without a callback
      hs_runtime().close_stream(stream_, nullptr, nullptr, nullptr);
  }
  Status write(const uint8_t* data, size_t len, std::vector<Match>& out) override {
    Into into{&out, out.size()};
    return write_with(data, len, on_match, &into);
  }
  Status write_any_order(const uint8_t* data, size_t len, std::vector<Match>& out) override {
    return write_with(data, len, on_match_any_order, &out);
  }
  Status close(std::vector<Match>& out) override {
    if (!stream_) return Status::ok();
    Into into{&out, out.size()};
    const hs_error_t e = hs_runtime().close_stream(stream_, scratch_, on_match, &into);
    stream_ = nullptr;
    return hs_status(e, "hs_close_stream");
  }
  size_t state_bytes() const override { return state_; }

 private:
  Status write_with(const uint8_t* data, size_t len, match_event_handler handler, void* ctx) {
    if (!stream_) return Status(Errc::kInvalidArgument, "cpu.hs: write after close");
    for (size_t done = 0; done < len;) {
      const unsigned part = unsigned(std::min<size_t>(len - done, 1u << 30));
      WARPATH_TRY(hs_status(hs_runtime().scan_stream(stream_, bytes_of(data, len) + done, part, 0,
                                                     scratch_, handler, ctx),
                            "hs_scan_stream"));
      done += part;
    }
    return Status::ok();
  }

  hs_stream_t* stream_;
  hs_scratch_t* scratch_;
  size_t state_;
};

// The databases the matchers of one pattern set share (clone()), each compiled once, when the
// set is made for its mode (make_hs_matcher) or at its first use by any of them.
struct HsDatabases {
  struct Mode {
    std::once_flag once;
    hs_database_t* db = nullptr;
    Status status;
  };
  std::vector<Pattern> patterns;
  Mode block, stream;

  explicit HsDatabases(std::vector<Pattern> p) : patterns(std::move(p)) {}
  ~HsDatabases() {
    if (block.db) hs_free_database(block.db);
    if (stream.db) hs_free_database(stream.db);
  }
  HsDatabases(const HsDatabases&)            = delete;
  HsDatabases& operator=(const HsDatabases&) = delete;
  Status compile(Mode& m, unsigned mode) {
    std::call_once(m.once, [&] {
      Compiled c = detail::compile(patterns, mode);
      m.db       = c.db;
      m.status   = c.status;
    });
    return m.status;
  }
};

// A matcher's scratch per mode is its own, allocated at its first scan or stream of the mode.
class HsMatcher final : public Matcher {
 public:
  explicit HsMatcher(std::shared_ptr<HsDatabases> dbs) : dbs_(std::move(dbs)) {}
  ~HsMatcher() override {
    hs_free_scratch(scratch_);
    hs_free_scratch(stream_scratch_);
  }
  std::string_view id() const noexcept override { return "cpu.hs"; }
  size_t patterns() const override { return dbs_->patterns.size(); }
  /// The block database's bytes (the streaming one's for a matcher made for streams).
  size_t database_bytes() const override {
    size_t n = 0;
    if (hs_database_t* db = dbs_->block.db ? dbs_->block.db : dbs_->stream.db)
      hs_database_size(db, &n);
    return n;
  }
  Result<std::unique_ptr<Matcher>> clone() const override {
    return std::unique_ptr<Matcher>(std::make_unique<HsMatcher>(dbs_));
  }
  // This matcher's scratch for `mode`, its database compiled first if no matcher of the set has.
  Status prepare(HsDatabases::Mode& m, unsigned mode, hs_database_t*& db, hs_scratch_t*& scratch) {
    if (db) return Status::ok();
    WARPATH_TRY(dbs_->compile(m, mode));
    WARPATH_TRY(hs_status(hs_alloc_scratch(m.db, &scratch), "hs_alloc_scratch"));
    db = m.db;
    return Status::ok();
  }
  Status prepare_block() { return prepare(dbs_->block, HS_MODE_BLOCK, block_, scratch_); }
  Status prepare_stream() {
    return prepare(dbs_->stream, HS_MODE_STREAM, stream_db_, stream_scratch_);
  }
  Status scan(const uint8_t* data, size_t len, std::vector<Match>& out) override {
    Into into{&out, out.size()};
    return scan_with(data, len, on_match, &into);
  }
  Status scan_any_order(const uint8_t* data, size_t len, std::vector<Match>& out) override {
    return scan_with(data, len, on_match_any_order, &out);
  }
  Result<std::unique_ptr<Stream>> open_stream() override {
    WARPATH_TRY(prepare_stream());
    hs_stream_t* s = nullptr;
    WARPATH_TRY(hs_status(hs_runtime().open_stream(stream_db_, 0, &s), "hs_open_stream"));
    size_t state = 0;
    hs_runtime().stream_size(stream_db_, &state);
    return std::unique_ptr<Stream>(std::make_unique<HsStream>(s, stream_scratch_, state));
  }

 private:
  Status scan_with(const uint8_t* data, size_t len, match_event_handler handler, void* ctx) {
    if (len > UINT32_MAX) return Status(Errc::kInvalidArgument, "cpu.hs: a block above 4 GiB");
    if (!block_) WARPATH_TRY(prepare_block());
    return hs_status(
        hs_runtime().scan(block_, bytes_of(data, len), unsigned(len), 0, scratch_, handler, ctx),
        "hs_scan");
  }
  std::shared_ptr<HsDatabases> dbs_;
  hs_database_t* block_          = nullptr;  // dbs_'s, once this matcher has its scratch
  hs_scratch_t* scratch_         = nullptr;
  hs_database_t* stream_db_      = nullptr;  // likewise for streams
  hs_scratch_t* stream_scratch_  = nullptr;
};

}  // namespace

Result<std::unique_ptr<Matcher>> make_hs_matcher(const std::vector<Pattern>& patterns,
                                                 bool streams) {
  auto m = std::make_unique<HsMatcher>(std::make_shared<HsDatabases>(patterns));
  WARPATH_TRY(streams ? m->prepare_stream() : m->prepare_block());
  return std::unique_ptr<Matcher>(std::move(m));
}

Result<hs_database_t*> hs_block_database(const std::vector<Pattern>& patterns) {
  Compiled c = compile(patterns, HS_MODE_BLOCK);
  if (!c.status.is_ok()) return c.status;
  return c.db;
}

const char* hs_entry_points() { return hs_runtime().works ? hs_runtime().path() : "none"; }
bool hs_available() { return hs_runtime().works; }
const char* hs_library_version() { return hs_version(); }
HsScanFn hs_scan_entry() { return hs_runtime().scan; }

Status hs_supports(const Pattern& p) {
  Compiled c = compile({p}, HS_MODE_BLOCK);
  if (c.db) hs_free_database(c.db);
  return c.status;
}

}  // namespace warpath::pattern::detail
