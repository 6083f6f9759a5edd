// python/src/bind_pattern.cpp: warpath.Patterns, multi-pattern matching of byte buffers
// (include/warpath/pattern/pattern.hpp).
//
// A Matcher keeps scratch and is used by one thread at a time: a Patterns object serialises
// its own scans (a lock), and `clone()` gives another thread its own scratch over the same
// compiled database (cpu.hs), so threads scan at once without the GIL.
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <mutex>

#include "common.hpp"
#include "warpath/pattern/pattern.hpp"

namespace warpath::py {
namespace {

using Bytes = nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

/// Matches as an (n,) structured array: the Match structs themselves (id uint32 at 0, end
/// uint64 at 8, 16 bytes), viewed by the Python side's dtype; here raw bytes (n, 16).
Array<uint8_t> match_bytes(std::vector<pattern::Match> matches) {
  static_assert(sizeof(pattern::Match) == 16 && offsetof(pattern::Match, end) == 8);
  auto v         = std::make_unique<std::vector<pattern::Match>>(std::move(matches));
  const size_t n = v->size();
  auto* data     = reinterpret_cast<uint8_t*>(v->data());
  return owned<uint8_t>(std::move(v), data, {n, sizeof(pattern::Match)});
}

class PyPatterns {
 public:
  PyPatterns(std::vector<pattern::Pattern> patterns, const std::string& engine, bool validate)
      : patterns_(std::move(patterns)) {
    matcher_ = take(pattern::make_matcher(with_validate(engine, validate), patterns_));
  }
  PyPatterns(std::unique_ptr<pattern::Matcher> m, std::vector<pattern::Pattern> patterns)
      : patterns_(std::move(patterns)), matcher_(std::move(m)) {}

  static std::unique_ptr<PyPatterns> from_file(const std::string& path, const std::string& engine,
                                               bool validate) {
    return std::make_unique<PyPatterns>(take(pattern::read_pattern_file(path)), engine, validate);
  }
  static std::unique_ptr<PyPatterns> from_lines(const std::vector<std::string>& lines, const std::string& engine,
                               bool validate) {
    std::string text;
    for (const std::string& l : lines) {
      if (l.find('\n') != std::string::npos)
        invalid("pattern '" + l + "': one pattern a line, without a newline");
      text += l;
      text += '\n';
    }
    return std::make_unique<PyPatterns>(take(pattern::parse_pattern_text(text, "<patterns>")),
                                        engine, validate);
  }

  Array<uint8_t> scan_buffer(const uint8_t* data, size_t len) {
    std::vector<pattern::Match> out;
    {
      nb::gil_scoped_release unlocked;
      std::lock_guard lock(mutex_);
      check(matcher_->scan(data, len, out));
    }
    return match_bytes(std::move(out));
  }
  Array<uint8_t> scan_array(const Bytes& b) { return scan_buffer(b.data(), b.shape(0)); }
  Array<uint8_t> scan_bytes(const nb::bytes& b) {
    return scan_buffer(reinterpret_cast<const uint8_t*>(b.c_str()), b.size());
  }

  /// Every packet of a batch (buffer + (offset, length) pairs): one match array, with the
  /// index of the block each match is in.
  nb::tuple scan_blocks(const Bytes& buffer, const nb::ndarray<const uint64_t, nb::shape<-1, 2>,
                                                               nb::c_contig, nb::device::cpu>& spans) {
    const size_t n = spans.shape(0);
    if (n > 0xFFFF'FFFFu) invalid("too many blocks");
    std::vector<pattern::Block> blocks(n);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t off = spans.data()[2 * i], len = spans.data()[2 * i + 1];
      if (off > buffer.shape(0) || len > buffer.shape(0) - off || len > 0xFFFF'FFFFu)
        invalid("span " + std::to_string(i) + " (" + std::to_string(off) + ", " +
                std::to_string(len) + ") is outside the buffer of " +
                std::to_string(buffer.shape(0)) + " bytes");
      blocks[i] = {buffer.data() + off, uint32_t(len)};
    }
    std::vector<std::vector<pattern::Match>> per(n);
    std::vector<pattern::Match> all;
    std::vector<uint32_t> which;
    {
      nb::gil_scoped_release unlocked;
      std::lock_guard lock(mutex_);
      check(matcher_->scan_blocks(blocks.data(), uint32_t(n), per.data()));
      for (size_t i = 0; i < n; ++i)
        for (const auto& x : per[i]) {
          all.push_back(x);
          which.push_back(uint32_t(i));
        }
    }
    return nb::make_tuple(match_bytes(std::move(all)), owned_vector<uint32_t>(std::move(which)));
  }

  std::unique_ptr<PyPatterns> clone() const {
    nb::gil_scoped_release unlocked;  // before the lock: a scan holding it waits for the GIL
    std::lock_guard lock(mutex_);
    auto c = matcher_->clone();
    if (c.is_ok()) return std::make_unique<PyPatterns>(std::move(c).value(), patterns_);
    // An engine that cannot share its database compiles the patterns again.
    return std::make_unique<PyPatterns>(take(pattern::make_matcher(matcher_->id(), patterns_)),
                                        patterns_);
  }

  std::string engine() const { return std::string(matcher_->id()); }
  size_t size() const { return matcher_->patterns(); }
  size_t database_bytes() const { return matcher_->database_bytes(); }

 private:
  std::vector<pattern::Pattern> patterns_;
  std::unique_ptr<pattern::Matcher> matcher_;
  mutable std::mutex mutex_;
};

}  // namespace

void bind_pattern(nb::module_& m) {
  nb::class_<PyPatterns>(
      m, "_Patterns",
      "A compiled pattern database on one engine (see ``warpath.Patterns``).")
      .def_static("from_file", &PyPatterns::from_file, nb::arg("path"), nb::arg("engine") = "auto",
                  nb::arg("validate") = false,
                  "Compiles a pattern file (``ID:/REGEX/FLAGS`` lines, Hyperscan's form, or "
                  "the other forms of ``warpath patterns``; .gz/.xz read directly).")
      .def_static("from_lines", &PyPatterns::from_lines, nb::arg("lines"),
                  nb::arg("engine") = "auto", nb::arg("validate") = false,
                  "Compiles patterns given as lines of a pattern file.")
      .def("scan", &PyPatterns::scan_bytes, nb::arg("data"),
           "Every match in ``data`` as raw (n, 16) bytes of (id, end) records.")
      .def("scan", &PyPatterns::scan_array, nb::arg("data"),
           "Every match in a contiguous uint8 array (read in place).")
      .def("scan_blocks", &PyPatterns::scan_blocks, nb::arg("buffer"), nb::arg("spans"),
           "Matches of many blocks of one buffer: ``spans`` an (n, 2) uint64 array of (offset, "
           "length); returns (raw matches, block index of each).")
      .def("clone", &PyPatterns::clone,
           "Another matcher over the same database, for another thread (its own scratch).")
      .def_prop_ro("engine", &PyPatterns::engine, "The engine id that scans (``cpu.hs``).")
      .def_prop_ro("database_bytes", &PyPatterns::database_bytes, "Bytes of the compiled database.")
      .def("__len__", &PyPatterns::size, "Patterns compiled.");
}

}  // namespace warpath::py
