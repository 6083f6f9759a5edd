// src/pattern/matches.hpp: what engines share around a scan: the last step (a match is (id,
// end), so matches are sorted by (end, id) and a repeat, two patterns with one id ending at one
// offset, is dropped, as Hyperscan reports them; an H pattern's first match kept), a stream kept whole for engines without a
// streaming form, and block mode through a batch of one.
#pragma once
#include <algorithm>
#include <memory>
#include <vector>

#include "warpath/pattern/pattern.hpp"

namespace warpath::pattern::detail {

inline void sort_unique(std::vector<Match>& out, size_t from) {
  // Most engines report in offset order already (Vectorscan does, ids at one offset in any
  // order): an insertion sort is linear there; when it has moved too much (interleaved lanes or
  // DFA groups report several sorted runs), a full sort takes over.
  const auto first = out.begin() + long(from);
  size_t moves = 0;
  const size_t budget = 4 * (out.size() - from) + 64;
  bool sorted = true;
  for (auto it = first + (first != out.end()); it < out.end() && sorted; ++it) {
    const Match m = *it;
    auto hole     = it;
    while (hole != first && m < *(hole - 1)) {
      *hole = *(hole - 1);
      --hole;
      if (++moves > budget) {
        sorted = false;
        break;
      }
    }
    *hole = m;
  }
  if (!sorted) std::sort(first, out.end());
  out.erase(std::unique(first, out.end()), out.end());
}

/// Keeps only the first match of each id in `single` (sorted: the H patterns' ids) in
/// out[from, end) (sorted); `reported` holds the ids reported already (per block or stream).
inline void keep_first_of(const std::vector<uint32_t>& single, std::vector<Match>& out, size_t from,
                          std::vector<uint32_t>& reported) {
  if (single.empty()) return;
  size_t w = from;
  for (size_t r = from; r < out.size(); ++r) {
    const Match x = out[r];
    if (std::binary_search(single.begin(), single.end(), x.id)) {
      if (std::find(reported.begin(), reported.end(), x.id) != reported.end()) continue;
      reported.push_back(x.id);
    }
    out[w++] = x;
  }
  out.resize(w);
}

/// The stream of an engine without a streaming form (ref.pattern, cpu.pcre2): its bytes kept
/// whole and scanned as one block at close, where every match is reported.
class WholeStream final : public Stream {
 public:
  explicit WholeStream(Matcher& m) : m_(m) {}
  Status write(const uint8_t* data, size_t len, std::vector<Match>&) override {
    bytes_.insert(bytes_.end(), data, data + len);
    return Status::ok();
  }
  Status close(std::vector<Match>& out) override {
    Status s = m_.scan(bytes_.data(), bytes_.size(), out);
    bytes_.clear();
    return s;
  }
  size_t state_bytes() const override { return bytes_.size(); }

 private:
  Matcher& m_;
  std::vector<uint8_t> bytes_;
};

/// open_stream() of such an engine.
inline Result<std::unique_ptr<Stream>> open_whole_stream(Matcher& m) {
  return std::unique_ptr<Stream>(std::make_unique<WholeStream>(m));
}

/// Block mode through a batch of one: for engines whose work is the batch (cuda.ac, cuda.dfa).
inline Status scan_as_batch(Matcher& m, const uint8_t* data, size_t len, std::vector<Match>& out) {
  if (len > UINT32_MAX) return Status(Errc::kInvalidArgument, std::string(m.id()) + ": a block above 4 GiB");
  const Block b{data, uint32_t(len)};
  std::vector<Match> one;
  WARPATH_TRY(m.scan_blocks(&b, 1, &one));
  out.insert(out.end(), one.begin(), one.end());
  return Status::ok();
}

}  // namespace warpath::pattern::detail
