// cpu.hs: Vectorscan (Hyperscan's portable fork, Debian's libvectorscan-dev) as an engine: the
// field's best CPU matcher and the anchor of every pattern benchmark. Literals are given to it
// as escaped expressions (to_pattern_line's form), so one database holds a mixed set. The
// streaming database is compiled on the first open_stream(). Built only where the library is
// found (WARPATH_HAVE_HS); elsewhere the engine is not in the registry.
#include <hs/hs.h>

#include <algorithm>
#include <mutex>

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

// The expression as Vectorscan reads it: a literal's bytes escaped.
std::string hs_expression(const Pattern& p) {
  if (!p.literal) return p.expression;
  Pattern copy = p;
  copy.flags   = 0;
  std::string line = to_pattern_line(copy);  // "ID:/escaped/"
  const size_t a = line.find('/');
  return line.substr(a + 1, line.size() - a - 2);
}

std::string name_of(const Pattern& p) {
  return "pattern " + std::to_string(p.id) + (p.where.empty() ? "" : " (" + p.where + ")");
}

struct Compiled {
  hs_database_t* db = nullptr;
  Status status;
};

Compiled compile(const std::vector<Pattern>& patterns, unsigned mode) {
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
  std::vector<std::string> exprs;
  std::vector<const char*> ptrs;
  std::vector<unsigned> flags, ids;
  exprs.reserve(patterns.size());
  for (const Pattern& p : patterns) {
    exprs.push_back(hs_expression(p));
    flags.push_back(hs_flags(p));
    ids.push_back(p.id);
  }
  for (const auto& e : exprs) ptrs.push_back(e.c_str());
  hs_compile_error_t* err = nullptr;
  if (hs_compile_multi(ptrs.data(), flags.data(), ids.data(), unsigned(ptrs.size()), mode,
                       nullptr, &c.db, &err) != HS_SUCCESS) {
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

class HsMatcher;

class HsStream final : public Stream {
 public:
  HsStream(hs_stream_t* s, hs_scratch_t* scratch, size_t state) : s_(s), scratch_(scratch), state_(state) {}
  ~HsStream() override {
    if (s_) hs_close_stream(s_, scratch_, nullptr, nullptr);
    hs_free_scratch(scratch_);
  }
  Status write(const uint8_t* data, size_t len, std::vector<Match>& out) override {
    if (!s_) return Status(Errc::kInvalidArgument, "cpu.hs: write after close");
    Into into{&out, out.size()};
    for (size_t done = 0; done < len;) {
      const unsigned part = unsigned(std::min<size_t>(len - done, 1u << 30));
      if (hs_scan_stream(s_, reinterpret_cast<const char*>(data) + done, part, 0, scratch_,
                         on_match, &into) != HS_SUCCESS)
        return Status(Errc::kOutOfMemory, "cpu.hs: hs_scan_stream failed");
      done += part;
    }
    return Status::ok();
  }
  Status close(std::vector<Match>& out) override {
    if (!s_) return Status::ok();
    Into into{&out, out.size()};
    const hs_error_t e = hs_close_stream(s_, scratch_, on_match, &into);
    s_ = nullptr;
    return e == HS_SUCCESS ? Status::ok() : Status(Errc::kOutOfMemory, "cpu.hs: hs_close_stream failed");
  }
  size_t state_bytes() const override { return state_; }

 private:
  hs_stream_t* s_;
  hs_scratch_t* scratch_;
  size_t state_;
};

class HsMatcher final : public Matcher {
 public:
  HsMatcher(std::vector<Pattern> patterns, hs_database_t* block, hs_scratch_t* scratch)
      : patterns_(std::move(patterns)), block_(block), scratch_(scratch) {}
  ~HsMatcher() override {
    hs_free_scratch(scratch_);
    hs_free_database(block_);
    if (stream_db_) hs_free_database(stream_db_);
  }
  std::string_view id() const noexcept override { return "cpu.hs"; }
  size_t patterns() const override { return patterns_.size(); }
  size_t database_bytes() const override {
    size_t n = 0;
    hs_database_size(block_, &n);
    return n;
  }
  Status scan(const uint8_t* data, size_t len, std::vector<Match>& out) override {
    if (len > UINT32_MAX) return Status(Errc::kInvalidArgument, "cpu.hs: a block above 4 GiB");
    Into into{&out, out.size()};
    if (hs_scan(block_, reinterpret_cast<const char*>(data), unsigned(len), 0, scratch_, on_match,
                &into) != HS_SUCCESS)
      return Status(Errc::kOutOfMemory, "cpu.hs: hs_scan failed");
    return Status::ok();
  }
  Result<std::unique_ptr<Stream>> open_stream() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!stream_db_) {
        Compiled c = compile(patterns_, HS_MODE_STREAM);
        if (!c.status.is_ok()) return c.status;
        stream_db_ = c.db;
      }
    }
    hs_scratch_t* scratch = nullptr;
    if (hs_alloc_scratch(stream_db_, &scratch) != HS_SUCCESS)
      return Status(Errc::kOutOfMemory, "cpu.hs: hs_alloc_scratch failed");
    hs_stream_t* s = nullptr;
    if (hs_open_stream(stream_db_, 0, &s) != HS_SUCCESS) {
      hs_free_scratch(scratch);
      return Status(Errc::kOutOfMemory, "cpu.hs: hs_open_stream failed");
    }
    size_t state = 0;
    hs_stream_size(stream_db_, &state);
    return std::unique_ptr<Stream>(std::make_unique<HsStream>(s, scratch, state));
  }

 private:
  std::vector<Pattern> patterns_;
  hs_database_t* block_;
  hs_scratch_t* scratch_;
  std::mutex mu_;
  hs_database_t* stream_db_ = nullptr;
};

}  // namespace

bool have_hs() { return true; }

Result<std::unique_ptr<Matcher>> make_hs_matcher(const std::vector<Pattern>& patterns) {
  Compiled c = compile(patterns, HS_MODE_BLOCK);
  if (!c.status.is_ok()) return c.status;
  hs_scratch_t* scratch = nullptr;
  if (hs_alloc_scratch(c.db, &scratch) != HS_SUCCESS) {
    hs_free_database(c.db);
    return Status(Errc::kOutOfMemory, "cpu.hs: hs_alloc_scratch failed");
  }
  return std::unique_ptr<Matcher>(std::make_unique<HsMatcher>(patterns, c.db, scratch));
}

Result<hs_database_t*> hs_block_database(const std::vector<Pattern>& patterns) {
  Compiled c = compile(patterns, HS_MODE_BLOCK);
  if (!c.status.is_ok()) return c.status;
  return c.db;
}

Status hs_supports(const Pattern& p) {
  Compiled c = compile({p}, HS_MODE_BLOCK);
  if (c.db) hs_free_database(c.db);
  return c.status;
}

}  // namespace warpath::pattern::detail
