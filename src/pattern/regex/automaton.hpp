// src/pattern/regex/automaton.hpp: a pattern's position automaton (Glushkov): one position per
// byte class or assertion of the expression (repetitions expanded), the positions a match can
// start with, the ones it can end with, and which position can follow which. ref.pattern
// simulates it; the literal engines use as_literal() on it. Parsed by parse_regex.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/pattern/pattern.hpp"

namespace warpath::pattern::detail {

struct ByteSet {
  uint64_t w[4] = {0, 0, 0, 0};
  void set(unsigned b) { w[b >> 6] |= uint64_t(1) << (b & 63); }
  bool test(unsigned b) const { return (w[b >> 6] >> (b & 63)) & 1; }
  void set_range(unsigned lo, unsigned hi) {
    for (unsigned b = lo; b <= hi; ++b) set(b);
  }
  void merge(const ByteSet& o) {
    for (int i = 0; i < 4; ++i) w[i] |= o.w[i];
  }
  void invert() {
    for (auto& x : w) x = ~x;
  }
  unsigned count() const {
    unsigned n = 0;
    for (auto x : w) n += unsigned(__builtin_popcountll(x));
    return n;
  }
  bool operator==(const ByteSet&) const = default;
};

/// Zero-width conditions on the bytes around an offset.
enum class Assertion : uint8_t {
  kNone,       ///< a byte position
  kBegin,      ///< ^ (single-line), \A: offset 0
  kLineBegin,  ///< ^ (multi-line): offset 0 or after \n
  kEndOrNl,    ///< $ (single-line), \Z: the end, or before a final \n
  kLineEnd,    ///< $ (multi-line): the end or before \n
  kEnd,        ///< \z: the end
  kWord,       ///< \b
  kNotWord,    ///< \B
};

struct Position {
  ByteSet bytes;  ///< kNone: the bytes it consumes
  Assertion assertion = Assertion::kNone;
};

struct Automaton {
  std::vector<Position> positions;
  std::vector<uint32_t> first;                ///< positions a match can begin with
  std::vector<std::vector<uint32_t>> follow;  ///< per position: the positions that may come next
  std::vector<uint8_t> last;                  ///< per position: a match can end with it
  bool single_match = false;
};

/// Most positions one pattern may expand to (bounded repetition copies its operand).
inline constexpr size_t kMaxPositions = 20000;

/// The automaton of `p`: kParseError (malformed: the offset and why), kNotSupported (outside
/// the subset: the construct; or the pattern matches the empty string), both naming the pattern.
Result<Automaton> build_automaton(const Pattern& p);

/// When `a` is a plain string (one byte set per position, in sequence, no assertion, each set
/// one byte or one letter in both cases, the same way throughout): its bytes (lower case where
/// caseless) and whether it is caseless. A literal pattern always is.
bool as_literal(const Automaton& a, std::string& bytes, bool& caseless);

/// Whether assertion `a` holds at offset `i` of data[0, n).
bool assertion_holds(Assertion a, const uint8_t* data, size_t n, size_t i);

}  // namespace warpath::pattern::detail
