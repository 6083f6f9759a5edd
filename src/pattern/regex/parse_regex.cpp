// The PCRE subset (include/warpath/pattern/pattern.hpp) parsed into a syntax tree, then the
// tree into a position automaton (automaton.hpp), Glushkov's construction: first, last and
// follow sets computed bottom-up, bounded repetitions expanded into copies.
#include <algorithm>
#include <cstring>
#include <memory>

#include "pattern/regex/automaton.hpp"

namespace warpath::pattern::detail {
namespace {

struct Node {
  enum Kind { kEmpty, kSet, kAssert, kConcat, kAlt, kRepeat } kind = kEmpty;
  ByteSet bytes;
  Assertion assertion = Assertion::kNone;
  std::vector<std::unique_ptr<Node>> kids;
  uint32_t min = 0, max = 0;  ///< kRepeat; max == kUnbounded for no limit
};
using NodePtr = std::unique_ptr<Node>;
constexpr uint32_t kUnbounded = UINT32_MAX;
constexpr uint32_t kMaxRepeat = 65535;

struct Options {
  bool caseless, dotall, multiline;
};

bool is_word(unsigned c) { return (c | 0x20) - 'a' < 26 || c - '0' < 10 || c == '_'; }

void close_case(ByteSet& s) {
  for (unsigned c = 'a'; c <= 'z'; ++c)
    if (s.test(c) || s.test(c - 32)) {
      s.set(c);
      s.set(c - 32);
    }
}

class Parser {
 public:
  Parser(std::string_view re, Options o) : re_(re), opt_(o) {}

  Result<NodePtr> parse() {
    auto n = alternation();
    if (!error_.is_ok()) return error_;
    if (pos_ < re_.size()) {
      fail(Errc::kParseError, "unmatched )");
      return error_;
    }
    return n;
  }

 private:
  void fail(Errc code, const std::string& why) {
    if (error_.is_ok())
      error_ = Status(code, why + " at offset " + std::to_string(std::min(pos_, re_.size())));
  }
  bool more() const { return error_.is_ok() && pos_ < re_.size(); }
  unsigned peek() const { return static_cast<unsigned char>(re_[pos_]); }

  static NodePtr make(Node::Kind k) {
    auto n  = std::make_unique<Node>();
    n->kind = k;
    return n;
  }
  NodePtr set_node(ByteSet s) {
    if (opt_.caseless) close_case(s);
    auto n   = make(Node::kSet);
    n->bytes = s;
    return n;
  }
  NodePtr assert_node(Assertion a) {
    auto n       = make(Node::kAssert);
    n->assertion = a;
    return n;
  }

  NodePtr alternation() {
    auto first = concatenation();
    if (!more() || peek() != '|') return first;
    auto alt = make(Node::kAlt);
    alt->kids.push_back(std::move(first));
    while (more() && peek() == '|') {
      ++pos_;
      alt->kids.push_back(concatenation());
    }
    return alt;
  }

  NodePtr concatenation() {
    auto cat = make(Node::kConcat);
    while (more() && peek() != '|' && peek() != ')') {
      auto atom = this->atom();
      if (!error_.is_ok()) break;
      if (!atom) continue;  // a comment or an option setting
      atom = quantified(std::move(atom));
      cat->kids.push_back(std::move(atom));
    }
    return cat;
  }

  NodePtr quantified(NodePtr atom) {
    while (more()) {
      uint32_t lo = 0, hi = 0;
      const unsigned c = peek();
      if (c == '*') {
        lo = 0, hi = kUnbounded, ++pos_;
      } else if (c == '+') {
        lo = 1, hi = kUnbounded, ++pos_;
      } else if (c == '?') {
        lo = 0, hi = 1, ++pos_;
      } else if (c == '{' && counted(lo, hi)) {
      } else {
        break;
      }
      if (atom->kind == Node::kAssert) {
        fail(Errc::kNotSupported, "a quantified assertion");
        return atom;
      }
      if (more() && peek() == '+') {
        fail(Errc::kNotSupported, "a possessive quantifier");
        return atom;
      }
      if (more() && peek() == '?') ++pos_;  // lazy: the same end offsets
      auto rep = make(Node::kRepeat);
      rep->min = lo;
      rep->max = hi;
      rep->kids.push_back(std::move(atom));
      atom = std::move(rep);
    }
    return atom;
  }

  // {n}, {n,}, {n,m} at pos_; anything else is a literal '{' (as PCRE reads it).
  bool counted(uint32_t& lo, uint32_t& hi) {
    size_t p = pos_ + 1;
    auto number = [&](uint32_t& v) {
      const size_t s = p;
      uint64_t x     = 0;
      while (p < re_.size() && re_[p] >= '0' && re_[p] <= '9') {  // every digit, the value capped
        x = std::min<uint64_t>(x * 10 + unsigned(re_[p] - '0'), uint64_t(kMaxRepeat) + 1);
        ++p;
      }
      v = uint32_t(std::min<uint64_t>(x, kMaxRepeat + 1));
      return p > s;
    };
    if (!number(lo)) return false;
    hi = lo;
    if (p < re_.size() && re_[p] == ',') {
      ++p;
      if (!number(hi)) hi = kUnbounded;
    }
    if (p >= re_.size() || re_[p] != '}') return false;
    pos_ = p + 1;
    if (lo > kMaxRepeat || (hi != kUnbounded && hi > kMaxRepeat)) {
      fail(Errc::kParseError, "a repetition count above 65535");
    } else if (hi < lo) {
      fail(Errc::kParseError, "a repetition {n,m} with m < n");
    }
    return true;
  }

  NodePtr atom() {
    const unsigned c = peek();
    ++pos_;
    switch (c) {
      case '(':
        return group();
      case '[':
        return klass();
      case '.': {
        ByteSet s;
        s.invert();
        if (!opt_.dotall) s.w[0] &= ~(uint64_t(1) << '\n');
        auto n   = make(Node::kSet);
        n->bytes = s;
        return n;
      }
      case '^':
        return assert_node(opt_.multiline ? Assertion::kLineBegin : Assertion::kBegin);
      case '$':
        return assert_node(opt_.multiline ? Assertion::kLineEnd : Assertion::kEndOrNl);
      case '\\':
        return escape_atom();
      case '*':
      case '+':
      case '?':
        fail(Errc::kParseError, "nothing to repeat");
        return nullptr;
      default: {
        ByteSet s;
        s.set(c);
        return set_node(s);
      }
    }
  }

  NodePtr group() {
    const Options outer = opt_;
    if (more() && peek() == '?') {
      ++pos_;
      if (!more()) {
        fail(Errc::kParseError, "an unterminated group");
        return nullptr;
      }
      const unsigned c = peek();
      if (c == '#') {
        while (more() && peek() != ')') ++pos_;
        if (!more()) fail(Errc::kParseError, "an unterminated comment");
        ++pos_;
        return nullptr;
      }
      if (c == '=' || c == '!') {
        fail(Errc::kNotSupported, "look-ahead");
        return nullptr;
      }
      if (c == '<' && pos_ + 1 < re_.size() && (re_[pos_ + 1] == '=' || re_[pos_ + 1] == '!')) {
        fail(Errc::kNotSupported, "look-behind");
        return nullptr;
      }
      if (c == '>') {
        fail(Errc::kNotSupported, "an atomic group");
        return nullptr;
      }
      if (c == '(') {
        fail(Errc::kNotSupported, "a conditional group");
        return nullptr;
      }
      if (c == 'R' || (c >= '0' && c <= '9') || c == '&' || c == '+') {
        fail(Errc::kNotSupported, "recursion or a subroutine call");
        return nullptr;
      }
      if (c == 'P' && pos_ + 1 < re_.size() && (re_[pos_ + 1] == '=' || re_[pos_ + 1] == '>')) {
        fail(Errc::kNotSupported, "a named back-reference or subroutine call");
        return nullptr;
      }
      if (c == '<' || c == '\'' || c == 'P') {  // a named capture: (?<n>, (?'n', (?P<n>
        if (c == 'P') ++pos_;
        if (!more()) {
          fail(Errc::kParseError, "an unterminated group");
          return nullptr;
        }
        const char close = re_[pos_] == '\'' ? '\'' : '>';
        ++pos_;  // past the opening < or '
        while (more() && re_[pos_] != close) ++pos_;
        if (!more()) {
          fail(Errc::kParseError, "an unterminated group name");
          return nullptr;
        }
        ++pos_;
      } else if (c == ':' || c == '|') {  // (?| branch reset: same matches as (?:
        ++pos_;
      } else {
        // Option letters: (?i) for the rest of the group, (?i:...) for the group.
        bool on = true;
        Options o = opt_;
        while (more() && peek() != ')' && peek() != ':') {
          const unsigned f = peek();
          ++pos_;
          if (f == '-') on = false;
          else if (f == 'i') o.caseless = on;
          else if (f == 's') o.dotall = on;
          else if (f == 'm') o.multiline = on;
          else {
            // PCRE's other options (x extended, U ungreedy, J duplicate names, n no auto
            // capture, X extra, ^ reset) are valid but outside the subset.
            const bool pcre = std::strchr("xUJnX^", int(f)) != nullptr;
            fail(pcre ? Errc::kNotSupported : Errc::kParseError,
                 std::string("the inline option '") + char(f) + "'");
            return nullptr;
          }
        }
        if (!more()) {
          fail(Errc::kParseError, "an unterminated group");
          return nullptr;
        }
        if (peek() == ')') {
          ++pos_;
          opt_ = o;  // until the end of the enclosing group
          return nullptr;
        }
        ++pos_;  // ':'
        opt_ = o;
      }
    }
    auto inner = alternation();
    opt_       = outer;
    if (!more() || peek() != ')') {
      fail(Errc::kParseError, "a missing )");
      return inner;
    }
    ++pos_;
    return inner;
  }

  // A backslash sequence outside a class, at pos_ (after the backslash).
  NodePtr escape_atom() {
    if (!more()) {
      fail(Errc::kParseError, "a trailing backslash");
      return nullptr;
    }
    const unsigned c = peek();
    switch (c) {
      case 'A': ++pos_; return assert_node(Assertion::kBegin);
      case 'Z': ++pos_; return assert_node(Assertion::kEndOrNl);
      case 'z': ++pos_; return assert_node(Assertion::kEnd);
      case 'b': ++pos_; return assert_node(Assertion::kWord);
      case 'B': ++pos_; return assert_node(Assertion::kNotWord);
      case 'G': fail(Errc::kNotSupported, "\\G"); return nullptr;
      case 'K': fail(Errc::kNotSupported, "\\K"); return nullptr;
      case 'Q': fail(Errc::kNotSupported, "\\Q...\\E"); return nullptr;
      case 'E': ++pos_; return nullptr;  // a lone \E is ignored, as PCRE does
      case 'g': case 'k': fail(Errc::kNotSupported, "a back-reference"); return nullptr;
      default: break;
    }
    if (c >= '1' && c <= '9') {
      fail(Errc::kNotSupported, "a back-reference");
      return nullptr;
    }
    ByteSet s;
    if (!escape_set(s, false)) return nullptr;
    return set_node(s);
  }

  // A backslash sequence that stands for bytes (a byte or a class), at pos_; in_class: inside
  // [...], where \b is a backspace.
  bool escape_set(ByteSet& s, bool in_class) {
    const unsigned c = peek();
    ++pos_;
    auto hexval = [](unsigned h) -> int {
      if (h - '0' < 10) return int(h - '0');
      if ((h | 0x20) - 'a' < 6) return int((h | 0x20) - 'a' + 10);
      return -1;
    };
    switch (c) {
      case 'n': s.set('\n'); return true;
      case 'r': s.set('\r'); return true;
      case 't': s.set('\t'); return true;
      case 'f': s.set('\f'); return true;
      case 'a': s.set(7); return true;
      case 'e': s.set(0x1b); return true;
      case 'd': s.set_range('0', '9'); return true;
      case 'D': s.set_range('0', '9'); s.invert(); return true;
      case 'w':
      case 'W':
        for (unsigned b = 0; b < 256; ++b)
          if (is_word(b)) s.set(b);
        if (c == 'W') s.invert();
        return true;
      case 's':
      case 'S':
        for (unsigned b : {' ', '\t', '\n', '\v', '\f', '\r'}) s.set(b);
        if (c == 'S') s.invert();
        return true;
      case 'h':
      case 'H':
        for (unsigned b : {0x20u, 0x09u, 0xa0u}) s.set(b);
        if (c == 'H') s.invert();
        return true;
      case 'v':
      case 'V':
        for (unsigned b : {0x0au, 0x0bu, 0x0cu, 0x0du, 0x85u}) s.set(b);
        if (c == 'V') s.invert();
        return true;
      case 'x': {
        unsigned v = 0;
        if (more() && peek() == '{') {
          size_t p = pos_ + 1;
          int digits = 0;
          while (p < re_.size() && hexval(static_cast<unsigned char>(re_[p])) >= 0) {
            v = v * 16 + unsigned(hexval(static_cast<unsigned char>(re_[p++])));
            if (++digits > 6) break;
          }
          if (p >= re_.size() || re_[p] != '}' || digits == 0) {
            fail(Errc::kParseError, "a malformed \\x{...}");
            return false;
          }
          if (v > 255) {
            fail(Errc::kNotSupported, "a code point above \\xff (no UTF-8 mode)");
            return false;
          }
          pos_ = p + 1;
        } else {
          for (int k = 0; k < 2 && more() && hexval(peek()) >= 0; ++k, ++pos_)
            v = v * 16 + unsigned(hexval(peek()));
        }
        s.set(v);
        return true;
      }
      case 'c': {
        if (!more()) {
          fail(Errc::kParseError, "\\c at the end");
          return false;
        }
        unsigned x = peek();
        ++pos_;
        if (x - 'a' < 26) x -= 32;
        s.set(x ^ 0x40);
        return true;
      }
      case '0': {
        unsigned v = 0;
        for (int k = 0; k < 2 && more() && peek() - '0' < 8; ++k, ++pos_) v = v * 8 + (peek() - '0');
        s.set(v);
        return true;
      }
      case 'o':
        fail(Errc::kNotSupported, "\\o{...}");
        return false;
      case 'p':
      case 'P':
      case 'X':
      case 'C':
        fail(Errc::kNotSupported, std::string("\\") + char(c) + " (Unicode)");
        return false;
      case 'R':
      case 'N':
        fail(Errc::kNotSupported, std::string("\\") + char(c));
        return false;
      case 'b':
        if (in_class) {
          s.set(8);
          return true;
        }
        break;
      default:
        break;
    }
    if (in_class && c >= '1' && c <= '7') {  // octal inside a class
      unsigned v = c - '0';
      for (int k = 0; k < 2 && more() && peek() - '0' < 8; ++k, ++pos_) v = v * 8 + (peek() - '0');
      if (v > 255) {
        fail(Errc::kParseError, "an octal escape above \\377");
        return false;
      }
      s.set(v);
      return true;
    }
    if (c - '0' < 10) {
      fail(Errc::kParseError, std::string("an unknown escape \\") + char(c));
      return false;
    }
    // Escaped punctuation stands for itself; so does an escaped letter with no meaning (\i is
    // i), as in PCRE 8 and Hyperscan.
    s.set(c);
    return true;
  }

  // [...] at pos_ (after '[').
  NodePtr klass() {
    ByteSet s;
    bool negate = false;
    if (more() && peek() == '^') {
      negate = true;
      ++pos_;
    }
    bool first = true;
    while (true) {
      if (!more()) {
        fail(Errc::kParseError, "a missing ]");
        return nullptr;
      }
      unsigned c = peek();
      if (c == ']' && !first) {
        ++pos_;
        break;
      }
      first = false;
      if (c == '[' && pos_ + 1 < re_.size() && re_[pos_ + 1] == ':') {
        if (!posix_class(s)) return nullptr;
        continue;
      }
      // One element: a byte, a class escape, or the start of a range.
      ByteSet elem;
      int lo = -1;
      if (c == '\\') {
        ++pos_;
        if (!more()) {
          fail(Errc::kParseError, "a trailing backslash");
          return nullptr;
        }
        if (!escape_set(elem, true)) return nullptr;
        if (elem.count() == 1)
          for (unsigned b = 0; b < 256; ++b)
            if (elem.test(b)) lo = int(b);
      } else {
        ++pos_;
        elem.set(c);
        lo = int(c);
      }
      // A range a-z (a '-' before ']' is literal).
      if (lo >= 0 && pos_ + 1 < re_.size() && re_[pos_] == '-' && re_[pos_ + 1] != ']') {
        ++pos_;
        unsigned hc = peek();
        int hi      = -1;
        if (hc == '\\') {
          ++pos_;
          if (!more()) {
            fail(Errc::kParseError, "a trailing backslash");
            return nullptr;
          }
          ByteSet h;
          if (!escape_set(h, true)) return nullptr;
          if (h.count() == 1)
            for (unsigned b = 0; b < 256; ++b)
              if (h.test(b)) hi = int(b);
          if (hi < 0) {
            fail(Errc::kParseError, "a class as the end of a range");
            return nullptr;
          }
        } else if (hc == '[' && pos_ + 1 < re_.size() && re_[pos_ + 1] == ':') {
          fail(Errc::kParseError, "a POSIX class as the end of a range");
          return nullptr;
        } else {
          ++pos_;
          hi = int(hc);
        }
        if (hi < lo) {
          fail(Errc::kParseError, "a range out of order");
          return nullptr;
        }
        elem.set_range(unsigned(lo), unsigned(hi));
      }
      s.merge(elem);
    }
    if (opt_.caseless) close_case(s);
    if (negate) s.invert();
    auto n   = make(Node::kSet);
    n->bytes = s;
    return n;
  }

  bool posix_class(ByteSet& s) {
    const size_t end = re_.find(":]", pos_ + 2);
    if (end == std::string_view::npos) {
      fail(Errc::kParseError, "an unterminated POSIX class");
      return false;
    }
    std::string_view name = re_.substr(pos_ + 2, end - pos_ - 2);
    bool negate = !name.empty() && name[0] == '^';
    if (negate) name.remove_prefix(1);
    ByteSet e;
    for (unsigned b = 0; b < 256; ++b) {
      const bool alpha = (b | 0x20) - 'a' < 26, digit = b - '0' < 10;
      bool in = false;
      if (name == "alpha") in = alpha;
      else if (name == "digit") in = digit;
      else if (name == "alnum") in = alpha || digit;
      else if (name == "upper") in = b - 'A' < 26;
      else if (name == "lower") in = b - 'a' < 26;
      else if (name == "space") in = b == ' ' || (b >= 9 && b <= 13);
      else if (name == "blank") in = b == ' ' || b == '\t';
      else if (name == "punct") in = b > 32 && b < 127 && !alpha && !digit;
      else if (name == "print") in = b >= 32 && b < 127;
      else if (name == "graph") in = b > 32 && b < 127;
      else if (name == "cntrl") in = b < 32 || b == 127;
      else if (name == "xdigit") in = digit || (b | 0x20) - 'a' < 6;
      else if (name == "word") in = is_word(b);
      else if (name == "ascii") in = b < 128;
      else {
        fail(Errc::kParseError, "an unknown POSIX class [:" + std::string(name) + ":]");
        return false;
      }
      if (in) e.set(b);
    }
    if (negate) e.invert();
    s.merge(e);
    pos_ = end + 2;
    return true;
  }

  std::string_view re_;
  Options opt_;
  size_t pos_ = 0;
  Status error_;
};

// Glushkov's construction over the tree.
struct Sets {
  std::vector<uint32_t> first, last;
  bool nullable   = true;  ///< can match without consuming a position
  bool zero_width = true;  ///< can match no byte at an offset above 0 (assertions are zero width)
};

class Builder {
 public:
  explicit Builder(Automaton& a) : a_(a) {}
  Status status;

  Sets build(const Node& n) {
    Sets s;
    if (!status.is_ok()) return s;
    switch (n.kind) {
      case Node::kEmpty:
        return s;
      case Node::kSet:
      case Node::kAssert: {
        if (a_.positions.size() >= kMaxPositions) {
          status = Status(Errc::kNotSupported, "more than " + std::to_string(kMaxPositions) +
                                                   " positions after expanding repetitions");
          return s;
        }
        const auto p = uint32_t(a_.positions.size());
        a_.positions.push_back({n.bytes, n.kind == Node::kAssert ? n.assertion : Assertion::kNone});
        a_.follow.emplace_back();
        s.first = s.last = {p};
        s.nullable       = false;
        // ^ and \A hold at offset 0 only: an empty match through them can happen there only
        // (reported with end 0, as Hyperscan does), which is allowed.
        s.zero_width = n.kind == Node::kAssert && n.assertion != Assertion::kBegin;
        return s;
      }
      case Node::kConcat: {
        for (const auto& k : n.kids) s = concat(std::move(s), build(*k));
        return s;
      }
      case Node::kAlt: {
        s.nullable = s.zero_width = false;
        for (const auto& k : n.kids) {
          Sets b = build(*k);
          s.first.insert(s.first.end(), b.first.begin(), b.first.end());
          s.last.insert(s.last.end(), b.last.begin(), b.last.end());
          s.nullable   = s.nullable || b.nullable;
          s.zero_width = s.zero_width || b.zero_width;
        }
        return s;
      }
      case Node::kRepeat: {
        const Node& kid = *n.kids[0];
        // An operand without positions (an empty group) repeats to nothing: build it once, so
        // nested counts cannot multiply into work that adds no position.
        {
          const size_t before = a_.positions.size();
          Sets probe          = build(kid);
          if (a_.positions.size() == before) return probe;
          // Positions were made: drop them (only their own follow sets point at them) and build
          // the copies below.
          a_.positions.resize(before);
          a_.follow.resize(before);
        }
        // x{lo,hi} = x x ... x (lo copies) then (x (x (x)?)?)? or x* for no limit.
        for (uint32_t i = 0; i < n.min && status.is_ok(); ++i) s = concat(std::move(s), build(kid));
        if (n.max == kUnbounded) {
          Sets star = build(kid);
          link(star.last, star.first);
          star.nullable = star.zero_width = true;
          s = concat(std::move(s), std::move(star));
        } else if (n.max > n.min) {
          // The optional tail (x(x(x)?)?)?: a copy may begin only after the one before it,
          // and each copy may end the repetition.
          Sets tail;
          std::vector<uint32_t> reach;  // positions after which the next copy may begin
          bool prefix_nullable = true;  // the copies so far can all match nothing
          for (uint32_t i = n.min; i < n.max && status.is_ok(); ++i) {
            Sets c = build(kid);
            link(reach, c.first);
            if (prefix_nullable) tail.first.insert(tail.first.end(), c.first.begin(), c.first.end());
            if (!c.nullable) reach.clear();
            reach.insert(reach.end(), c.last.begin(), c.last.end());
            tail.last.insert(tail.last.end(), c.last.begin(), c.last.end());
            prefix_nullable = prefix_nullable && c.nullable;
          }
          tail.nullable = tail.zero_width = true;
          s = concat(std::move(s), std::move(tail));
        }
        return s;
      }
    }
    return s;
  }

 private:
  void link(const std::vector<uint32_t>& from, const std::vector<uint32_t>& to) {
    for (uint32_t f : from) {
      auto& fl = a_.follow[f];
      fl.insert(fl.end(), to.begin(), to.end());
    }
  }
  Sets concat(Sets a, Sets b) {
    link(a.last, b.first);
    Sets s;
    s.first = a.first;
    if (a.nullable) s.first.insert(s.first.end(), b.first.begin(), b.first.end());
    s.last = b.last;
    if (b.nullable) s.last.insert(s.last.end(), a.last.begin(), a.last.end());
    s.nullable   = a.nullable && b.nullable;
    s.zero_width = a.zero_width && b.zero_width;
    return s;
  }

  Automaton& a_;
};

void dedup(std::vector<uint32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

std::string name_of(const Pattern& p) {
  return "pattern " + std::to_string(p.id) + (p.where.empty() ? "" : " (" + p.where + ")");
}

}  // namespace

Result<Automaton> build_automaton(const Pattern& p) {
  Automaton a;
  a.single_match = (p.flags & kSingleMatch) != 0;
  if (!p.unsupported.empty()) return Status(Errc::kNotSupported, name_of(p) + ": " + p.unsupported);
  NodePtr root;
  if (p.literal) {
    if (p.expression.empty())
      return Status(Errc::kNotSupported, name_of(p) + ": an empty literal matches the empty string");
    root = std::make_unique<Node>();
    root->kind = Node::kConcat;
    for (unsigned char c : p.expression) {
      auto n  = std::make_unique<Node>();
      n->kind = Node::kSet;
      n->bytes.set(c);
      if (p.flags & kCaseless) close_case(n->bytes);
      root->kids.push_back(std::move(n));
    }
  } else {
    Parser parser(p.expression, Options{(p.flags & kCaseless) != 0, (p.flags & kDotAll) != 0,
                                        (p.flags & kMultiLine) != 0});
    auto parsed = parser.parse();
    if (!parsed.is_ok())
      return Status(parsed.status().code(), name_of(p) + ": " + parsed.status().message());
    root = std::move(*parsed);
  }
  Builder b(a);
  Sets s = b.build(*root);
  if (!b.status.is_ok()) return Status(b.status.code(), name_of(p) + ": " + b.status.message());
  if (s.zero_width)
    return Status(Errc::kNotSupported, name_of(p) + ": matches the empty string");
  a.first = s.first;
  dedup(a.first);
  a.last.assign(a.positions.size(), 0);
  for (uint32_t l : s.last) a.last[l] = 1;
  for (auto& f : a.follow) dedup(f);
  return a;
}

bool as_literal(const Automaton& a, std::string& bytes, bool& caseless) {
  const size_t n = a.positions.size();
  if (n == 0 || a.first.size() != 1 || a.first[0] != 0) return false;
  bytes.clear();
  int mode = -1;  // 0: case-sensitive letters, 1: caseless letters, -1: no letter yet
  for (size_t i = 0; i < n; ++i) {
    const Position& p = a.positions[i];
    if (p.assertion != Assertion::kNone) return false;
    if (i + 1 < n ? (a.follow[i].size() != 1 || a.follow[i][0] != i + 1 || a.last[i])
                  : (!a.follow[i].empty() || !a.last[i]))
      return false;
    const unsigned count = p.bytes.count();
    unsigned lo = 256;
    for (unsigned b = 0; b < 256 && lo == 256; ++b)
      if (p.bytes.test(b)) lo = b;
    const bool letter = (lo | 0x20) - 'a' < 26;
    if (count == 1) {
      if (letter) {
        if (mode == 1) return false;
        mode = 0;
      }
      bytes.push_back(char(lo));
    } else if (count == 2 && lo - 'A' < 26 && p.bytes.test(lo + 32)) {
      if (mode == 0) return false;
      mode = 1;
      bytes.push_back(char(lo + 32));
    } else {
      return false;
    }
  }
  caseless = mode == 1;
  return true;
}

bool assertion_holds(Assertion a, const uint8_t* d, size_t n, size_t i) {
  switch (a) {
    case Assertion::kNone: return true;
    case Assertion::kBegin: return i == 0;
    case Assertion::kLineBegin: return i == 0 || d[i - 1] == '\n';
    case Assertion::kEndOrNl: return i == n || (i + 1 == n && d[i] == '\n');
    case Assertion::kLineEnd: return i == n || d[i] == '\n';
    case Assertion::kEnd: return i == n;
    case Assertion::kWord:
    case Assertion::kNotWord: {
      const bool before = i > 0 && is_word(d[i - 1]);
      const bool after  = i < n && is_word(d[i]);
      return (before != after) == (a == Assertion::kWord);
    }
  }
  return false;
}

}  // namespace warpath::pattern::detail
