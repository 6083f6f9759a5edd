// cpu.pcre2: PCRE2 (Debian's libpcre2-dev) for what neither warpath's subset nor Vectorscan
// takes: back-references and look-around (about 7% of ET Open's pcre options). PCRE2 finds
// one leftmost match; Hyperscan's semantics need every end offset, so each pattern is compiled
// with a callout after it that records where a match ends and then fails, making PCRE2
// backtrack through every path from every start (start-of-match optimisations off, so none is
// skipped). Exhaustive: a match limit bounds the work per scan (kCapacity naming the pattern
// when reached). Streams are kept whole and scanned at close, so this engine is for short
// buffers and confirmations, not for scanning links. Built only where libpcre2-8 is found.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>

#include "pattern/engines.hpp"
#include "pattern/matches.hpp"

namespace warpath::pattern::detail {
namespace {

constexpr uint32_t kMatchLimit = 50'000'000;

std::string name_of(const Pattern& p) {
  return "pattern " + std::to_string(p.id) + (p.where.empty() ? "" : " (" + p.where + ")");
}

struct Compiled {
  uint32_t id;
  bool single;
  pcre2_code* code;
};

struct Recorder {
  std::vector<uint8_t>* ends;
};

int on_callout(pcre2_callout_block* cb, void* data) {
  auto* r = static_cast<Recorder*>(data);
  (*r->ends)[cb->current_position] = 1;
  return 1;  // fail here: backtrack into every other path
}

Result<Compiled> compile(const Pattern& p) {
  if (!p.unsupported.empty()) return Status(Errc::kNotSupported, name_of(p) + ": " + p.unsupported);
  // Closed off in a group first, so nothing in it (a final \, an open comment) eats the callout.
  std::string expr = "(?:" + regex_of(p) + ")(?C1)";
  uint32_t options = PCRE2_NO_AUTO_POSSESS | PCRE2_NO_START_OPTIMIZE | PCRE2_NO_DOTSTAR_ANCHOR;
  if (p.flags & kCaseless) options |= PCRE2_CASELESS;
  if (p.flags & kDotAll) options |= PCRE2_DOTALL;
  if (p.flags & kMultiLine) options |= PCRE2_MULTILINE;
  int err           = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code  = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(expr.data()), expr.size(), options,
                                    &err, &offset, nullptr);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    return Status(Errc::kNotSupported, name_of(p) + ": pcre2: " + reinterpret_cast<const char*>(msg));
  }
  // Empty matches: as warpath's subset says where it can judge (/^a?/ is taken: empty at offset
  // 0 only), else PCRE2's lower bound on a match's length must be above 0.
  const Status ours = check_pattern(p);
  if (!ours.is_ok() && ours.message().find("matches the empty string") != std::string::npos) {
    pcre2_code_free(code);
    return ours;
  }
  // The bound is computed by the start-of-match study, which the enumeration turns off: ask a
  // plain compilation of the expression.
  uint32_t min_len = 0;
  if (!ours.is_ok()) {
    const std::string plain = regex_of(p);
    pcre2_code* probe = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(plain.data()), plain.size(),
                                      options & ~(PCRE2_NO_AUTO_POSSESS | PCRE2_NO_START_OPTIMIZE |
                                                  PCRE2_NO_DOTSTAR_ANCHOR),
                                      &err, &offset, nullptr);
    if (probe) {
      pcre2_pattern_info(probe, PCRE2_INFO_MINLENGTH, &min_len);
      pcre2_code_free(probe);
    }
  }
  if (min_len == 0 && !ours.is_ok()) {
    pcre2_code_free(code);
    return Status(Errc::kNotSupported, name_of(p) + ": may match the empty string");
  }
  return Compiled{p.id, (p.flags & kSingleMatch) != 0, code};
}

class Pcre2Matcher final : public Matcher {
 public:
  explicit Pcre2Matcher(std::vector<Compiled> c) : compiled_(std::move(c)) {
    context_ = pcre2_match_context_create(nullptr);
    pcre2_set_match_limit(context_, kMatchLimit);
    pcre2_set_callout(context_, on_callout, &recorder_);
  }
  ~Pcre2Matcher() override {
    for (const Compiled& c : compiled_) pcre2_code_free(c.code);
    pcre2_match_context_free(context_);
  }
  std::string_view id() const noexcept override { return "cpu.pcre2"; }
  size_t patterns() const override { return compiled_.size(); }
  size_t database_bytes() const override {
    size_t b = 0;
    for (const Compiled& c : compiled_) {
      size_t s = 0;
      pcre2_pattern_info(c.code, PCRE2_INFO_SIZE, &s);
      b += s;
    }
    return b;
  }
  Status scan(const uint8_t* data, size_t len, std::vector<Match>& out) override {
    const size_t from = out.size();
    std::vector<uint8_t> ends(len + 1);
    recorder_.ends = &ends;
    for (const Compiled& c : compiled_) {
      std::fill(ends.begin(), ends.end(), 0);
      pcre2_match_data* md = pcre2_match_data_create_from_pattern(c.code, nullptr);
      const int rc = pcre2_match(c.code, data, len, 0, 0, md, context_);
      pcre2_match_data_free(md);
      if (rc == PCRE2_ERROR_MATCHLIMIT)
        return Status(Errc::kCapacity, "cpu.pcre2: pattern " + std::to_string(c.id) +
                                           " reached the match limit enumerating its matches");
      if (rc < 0 && rc != PCRE2_ERROR_NOMATCH)
        return Status(Errc::kInvalidArgument, "cpu.pcre2: pattern " + std::to_string(c.id) +
                                                  ": match error " + std::to_string(rc));
      for (size_t e = 0; e <= len; ++e)
        if (ends[e]) {
          out.push_back({c.id, e});
          if (c.single) break;
        }
    }
    sort_unique(out, from);
    return Status::ok();
  }
  Result<std::unique_ptr<Stream>> open_stream() override { return open_whole_stream(*this); }

 private:
  std::vector<Compiled> compiled_;
  pcre2_match_context* context_ = nullptr;
  Recorder recorder_{nullptr};
};

}  // namespace

Result<std::unique_ptr<Matcher>> make_pcre2_matcher(const std::vector<Pattern>& patterns) {
  std::vector<Compiled> compiled;
  for (const Pattern& p : patterns) {
    auto c = compile(p);
    if (!c.is_ok()) {
      for (const Compiled& done : compiled) pcre2_code_free(done.code);
      return c.status();
    }
    compiled.push_back(*c);
  }
  return std::unique_ptr<Matcher>(std::make_unique<Pcre2Matcher>(std::move(compiled)));
}

}  // namespace warpath::pattern::detail
