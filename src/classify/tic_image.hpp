// src/classify/tic_image.hpp: the builder of TIC images (core/tic_core.hpp), used by cpu.tic
// and cuda.tic.
//
// Building (tic-ppopp08.md sections 4.2-4.3)
//   Stage 1 is RFC's address tree (rfc_image.hpp: phases 0-2 over the four address chunks).
//   Each class of the address pair table P is a list of candidate rules in priority order,
//   pruned after the first rule with wildcard ports and protocol (it always matches there).
//   Each list becomes a program of the range interpreter: one instruction per rule, packed
//   into 64-byte blocks (an instruction that does not fit starts the next block behind a
//   NOP). P's entries become 0 (no candidate) or 1 + the list's first block.
//
// Memory
//   Reported as the paper's Table 6: the reduction tree (RT) and the code blocks. The same
//   max_bytes limit as RFC applies (kCapacity, naming the table).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "classify/core/tic_core.hpp"
#include "classify/rfc_image.hpp"

namespace warpath::classify::detail {

class TicImage {
 public:
  /// kCapacity past max_bytes or for more than core::kTicMaxRules rules.
  static Result<std::unique_ptr<TicImage>> build(const RuleSet& rules,
                                                 uint64_t max_bytes = kRfcMaxImageBytes);
  core::TicView view() const { return view(tables_.data()); }
  /// The same view over a copy of data() at `base` (a device copy).
  core::TicView view(const uint8_t* base) const;
  const uint8_t* data() const { return tables_.data(); }
  uint64_t bytes() const { return tables_.bytes(); }
  uint64_t tree_bytes() const { return tree_bytes_; }
  uint64_t code_bytes() const { return code_bytes_; }
  const std::string& detail() const { return detail_; }

 private:
  PackedTables tables_;
  RfcAddressLayout addr_;
  PackedTables::Slot code_;
  uint64_t tree_bytes_ = 0, code_bytes_ = 0;
  std::string detail_;
};

}  // namespace warpath::classify::detail
