// include/warpath/pattern/pattern.hpp
//
// Pattern matching: many literals and regular expressions over payloads and TCP streams
// (GASPP's string-matching modules; Hyperscan's shape: compile once, then scan blocks or
// streams).
//
// Patterns
//   A pattern is an id, an expression and flags. Expressions are a PCRE subset: literal bytes
//   and escapes (\xHH, \n \r \t \f \v \e \a, \0 and octal, escaped punctuation), `.`, classes
//   ([a-z], [^...], \d \D \w \W \s \S \h \H \v \V, POSIX [:alpha:] ...), groups ((...), (?:...),
//   named groups, inline flags (?i) (?s) (?m) and (?i:...)), alternation, repetition (* + ?
//   {n} {n,} {n,m}, lazy forms too), anchors ^ $ \A \Z \z and word boundaries \b \B. Outside
//   the subset (back-references, look-around, atomic groups, possessive quantifiers,
//   recursion, \Q..\E, Unicode properties) a pattern is rejected with an error naming the
//   pattern and the construct; so is a pattern that can match the empty string anywhere but
//   at offset 0 (as Hyperscan does; /^a?/ is taken, and reports its empty match at offset 0). An escaped letter with no meaning is the letter
//   (\i is i), as in PCRE 8 and Hyperscan. Flags: i (caseless), s (dot matches \n), m (multi-line ^ and $), H (report only
//   the first match).
//
// Matches
//   Hyperscan's semantics without start of match: for each pattern, every offset `end` such
//   that some match of the pattern ends there (the offset just past its last byte, counted
//   from the start of the block or the stream), overlapping matches included; with H only the
//   first. A match is (id, end): patterns that share an id report one match per offset. A scan
//   returns its matches sorted by (end, id). ^ and \A match at offset 0 only
//   (multi-line ^ also after \n); $ and \Z at the end or before a final \n, \z at the end only
//   (multi-line $ also before every \n); in stream mode "the end" is the end of the stream.
//
// Files (read_pattern_file)
//   - Hyperscan's tools' format: `ID:/REGEX/FLAGS` per line (# comments).
//   - One regular expression per line, ids counted from 0 (ANMLZoo's .regex files).
//   - The shared data's derived tables, recognised by their "# columns:" line: literal tables
//     (`sid enabled nocase len hex` and `nocase len hex`: literals, ids the sid or the row),
//     pcre tables (`sid enabled pcre`, Snort/Suricata modifiers after the closing / dropped) and
//     l7-filter's (`dir name attributes regex`, caseless as l7-filter matches). Rows of
//     disabled rules are skipped, as Suricata skips them.
//
// Engines ("<device>.<algorithm>", pattern_engines()):
//   ref.pattern   the oracle: each pattern's position automaton (Glushkov), simulated one
//                 pattern at a time, one byte at a time; streams are kept whole and scanned at
//                 close. Deliberately naive.
//   cpu.hs        Vectorscan (Hyperscan's portable fork): block and streaming databases. The
//                 field's best CPU matcher and the anchor.
//   cpu.ac        Aho-Corasick over byte classes, literals only (caseless ones folded,
//                 case-sensitive ones confirmed), the same body as cuda.ac.
//   cuda.ac       the same automaton on the GPU: each thread scans a slice of a block with the
//                 overlap a literal needs.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/registry.hpp"
#include "warpath/core/status.hpp"

namespace warpath::pattern {

enum Flag : uint32_t {
  kCaseless    = 1u << 0,  ///< i
  kDotAll      = 1u << 1,  ///< s
  kMultiLine   = 1u << 2,  ///< m
  kSingleMatch = 1u << 3,  ///< H
};

struct Pattern {
  uint32_t id = 0;
  std::string expression;  ///< the regular expression; for a literal, its bytes
  uint32_t flags = 0;      ///< Flag bits
  bool literal   = false;  ///< expression is raw bytes, not a regular expression
  std::string where;       ///< "file:line" for messages
  /// Set when reading met something outside the subset (a flag): the pattern is kept, so
  /// `patterns check` can count it, and every engine rejects it with this reason.
  std::string unsupported;
};

/// "ID:/REGEX/FLAGS" into a pattern; kParseError naming what is wrong.
Result<Pattern> parse_pattern_line(std::string_view line, std::string_view where = {});
/// The text of a pattern file in any of the formats above (`name` for messages); kParseError
/// with file, line and reason.
Result<std::vector<Pattern>> parse_pattern_text(std::string_view text, std::string_view name);
/// A pattern file from disk (.gz, .xz too; in warpath_io).
Result<std::vector<Pattern>> read_pattern_file(const std::string& path);
/// The pattern's regular expression: a literal's bytes with all but letters and digits as \xHH
/// (what Vectorscan, PCRE2 and the pattern file form read), a regex as it is.
std::string regex_of(const Pattern& p);
/// "4:/ab\x00c/i" (the Hyperscan tools' form: regex_of, then the flags).
std::string to_pattern_line(const Pattern& p);

/// Checks that a pattern is inside the supported subset: kNotSupported naming the pattern and
/// the construct, kParseError for a malformed expression.
Status check_pattern(const Pattern& p);

struct Match {
  uint32_t id  = 0;
  uint64_t end = 0;
  bool operator==(const Match&) const = default;
  bool operator<(const Match& o) const { return end != o.end ? end < o.end : id < o.id; }
};

/// One input block (a payload) of a batch.
struct Block {
  const uint8_t* data = nullptr;
  uint32_t len        = 0;
};

/// The state of one stream (one direction of one TCP flow) for one matcher.
class Stream {
 public:
  virtual ~Stream() = default;
  /// The next `len` bytes; matches that end in them (or are decided by them) are appended,
  /// sorted by (end, id), offsets counted from the stream's start.
  virtual Status write(const uint8_t* data, size_t len, std::vector<Match>& out) = 0;
  /// write() for callers that need only which patterns matched (the NIDS's prefilter): the
  /// same matches in the engine's own order, a repeat possible where patterns share an id.
  /// Engines whose order costs (cpu.hs: 2-15% where a match comes every byte or two) skip it.
  virtual Status write_any_order(const uint8_t* data, size_t len, std::vector<Match>& out) {
    return write(data, len, out);
  }
  /// The end of the stream: matches decided by it ($, \z) are appended.
  virtual Status close(std::vector<Match>& out) = 0;
  /// Bytes of state this stream holds now.
  virtual size_t state_bytes() const = 0;
};

/// A compiled pattern database on one engine. Engines keep scratch (Vectorscan's, the GPU's
/// buffers): one thread uses a Matcher at a time, and threads build their own (the match module
/// makes one per worker). Streams belong to the thread of their Matcher.
class Matcher {
 public:
  virtual ~Matcher() = default;
  virtual std::string_view id() const noexcept = 0;
  /// Patterns compiled.
  virtual size_t patterns() const = 0;
  /// Bytes of the compiled database.
  virtual size_t database_bytes() const = 0;
  /// Block mode: every match in data[0, len), sorted by (end, id), appended to `out`.
  virtual Status scan(const uint8_t* data, size_t len, std::vector<Match>& out) = 0;
  /// scan() in the engine's own order (Stream::write_any_order says for whom).
  virtual Status scan_any_order(const uint8_t* data, size_t len, std::vector<Match>& out) {
    return scan(data, len, out);
  }
  /// A batch of blocks: out[i] gets block i's matches (cleared first). Engines that gain from
  /// batches (cuda.ac) override it; the default scans each block.
  virtual Status scan_blocks(const Block* blocks, uint32_t n, std::vector<Match>* out);
  /// A new stream.
  virtual Result<std::unique_ptr<Stream>> open_stream() = 0;
  /// Another matcher over this one's compiled database, for another thread: its own scratch,
  /// the database shared and not compiled again (cpu.hs). kNotSupported where an engine cannot
  /// share its database: compile the patterns again then. Safe beside other clone() calls on
  /// the same matcher, not beside its scans.
  virtual Result<std::unique_ptr<Matcher>> clone() const;
};

/// ref.pattern, cpu.hs, cpu.ac, cuda.ac (those built here).
std::vector<EngineInfo> pattern_engines();

/// Vectorscan as cpu.hs uses it (`warpath info`): the library's version, and which of its entry
/// points cpu.hs calls: "dispatched" (hs_scan and the rest, which pick a variant per CPU),
/// "avx2" (the AVX2 variants, where the dispatched ones miss matches: Debian's 5.4.9 on an
/// AVX-512 machine, docs/adr/0010-pattern-matching.md) or "none" (neither finds them all:
/// cpu.hs is not available). Both empty in a build without Vectorscan.
struct VectorscanInfo {
  std::string version, entry_points;
};
VectorscanInfo vectorscan_info();

/// Compiles `patterns` for engine `id` (auto, cpu, gpu, ref, validate:<id>, or an engine id).
/// kNotSupported when the engine cannot take one of the patterns (naming it and why);
/// validate:<id> compiles ref.pattern beside it and fails a scan, write or close on the first
/// match that differs.
Result<std::unique_ptr<Matcher>> make_matcher(std::string_view id,
                                              const std::vector<Pattern>& patterns);

/// make_matcher for a caller that opens streams and seldom scans blocks: where an engine
/// compiles a database per mode (cpu.hs), the streaming one is compiled now and the block one
/// at the first block scan (the other way round from make_matcher). Other engines: make_matcher.
Result<std::unique_ptr<Matcher>> make_stream_matcher(std::string_view id,
                                                     const std::vector<Pattern>& patterns);

/// Whether engine `id` takes pattern `p` alone (ok), or why not. For `patterns check`.
Status engine_supports(std::string_view id, const Pattern& p);

/// Differential check against ref.pattern on generated patterns and data with planted
/// matches (the self-test's entry).
CheckReport check_pattern_engine(std::string_view id, uint64_t seed, uint64_t items);

}  // namespace warpath::pattern
