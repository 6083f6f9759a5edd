// src/classify/rfc_image.hpp: the builder of RFC reduction trees (core/rfc_core.hpp), used
// by cpu.rfc and cuda.rfc (RfcImage) and by TIC's address stage (tic_image.cpp).
//
// Building (tic-ppopp08.md section 4.1)
//   Rules are ranked by (priority desc, index asc); a class is a sorted set of ranks, so the
//   best rule of a set is its first element. Phase 0: each chunk's 2^16 (protocol: 2^8)
//   values are swept once over the rules' intervals on that chunk (a prefix is one interval,
//   a port range another, any other mask a union of intervals), and each elementary interval
//   gets the class of the rules active there. A cross product of classes (a, b) is the
//   intersection of their sets, interned in a hash table of lists to get its class id. Sets
//   are pruned: a rule that matches every value of the chunks not yet combined ends the set
//   (rules after it can never be the answer), which is exact and keeps classes few.
//   A class is stored as its explicit ranks followed by its end (the pruning rank, or
//   rules() when none): the rules that match every value of the phase's chunks are in every
//   class, so they are left implicit (up to the end; RfcBuilder::expand writes a set out).
//   Firewall sets, where most rules leave a whole address wild, would otherwise carry those
//   rules in every list. cross() splits each side's explicit ranks into those matching all of
//   the other side's chunks and the rest, and visits rule by rule only the pairs that share a
//   rule of the rest (see there).
//   Tree shape: P = (X, Y), F = (P, Z), or where that does not fit under max_bytes,
//   P = (Y, Z), F = (P, X) (RfcView::shape 1; firewall sets, where nearly every address pair
//   is a class of its own).
//
// Memory
//   Table sizes are products of class counts and can explode on large rule sets. Before each
//   table is allocated its size is checked against max_bytes (default 1 GiB, counting the
//   tables built so far and the class lists kept for building): kCapacity names the table
//   and its size. Nothing is allocated past the limit. Building time is bounded the same way
//   (kRfcMaxBuildSteps class-list elements scanned per table).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "classify/core/rfc_core.hpp"
#include "warpath/classify/rule.hpp"

namespace warpath::classify::detail {

inline constexpr uint64_t kRfcMaxImageBytes = uint64_t(1) << 30;
/// Building a cross-product table scans class lists; past this many list elements (minutes of
/// work) the build fails with kCapacity instead.
inline constexpr double kRfcMaxBuildSteps = 4e9;

/// Distinct sorted lists of ranks, each with a dense id (equivalence classes of one phase).
class SetPool {
 public:
  SetPool();
  /// The id of list s[0..n), added when new.
  uint32_t intern(const uint32_t* s, uint32_t n);
  uint32_t size() const { return uint32_t(offsets_.size() - 1); }
  const uint32_t* data(uint32_t id) const { return pool_.data() + offsets_[id]; }
  uint32_t length(uint32_t id) const { return uint32_t(offsets_[id + 1] - offsets_[id]); }
  uint64_t total_length() const { return pool_.size(); }
  uint64_t bytes() const { return pool_.size() * 4 + offsets_.size() * 8 + slots_.size() * 4; }

 private:
  void grow();
  std::vector<uint32_t> pool_;
  std::vector<uint64_t> offsets_;
  std::vector<uint64_t> hashes_;
  std::vector<uint32_t> slots_;  ///< open addressing: id + 1, 0 empty
};

/// One phase under construction: the table of class ids and the classes.
struct RfcPhase {
  std::vector<uint32_t> table;
  SetPool sets;       ///< per class: explicit ranks, then the end (see Building above)
  unsigned seen = 0;  ///< bit set of the chunks this phase's classes cover
  uint32_t classes() const { return sets.size(); }
};

/// The steps of building a tree. Chunks and tables are named as in core/rfc_core.hpp.
class RfcBuilder {
 public:
  /// kNotSupported for OpenFlow sets or a protocol mask beyond 16 bits.
  static Result<std::unique_ptr<RfcBuilder>> create(const RuleSet& rules, uint64_t max_bytes);

  /// Phase 0: the classes of chunk c.
  Status chunk(unsigned c, RfcPhase& out);
  /// out[a * nb + b] = class of (a, b); `seen` is the bit set of the chunks a and b cover.
  /// next_entries: each class of out takes this many entries (2 bytes or more) of the next
  /// table, so the build stops (kCapacity) as soon as that table could no longer fit.
  Status cross(const RfcPhase& a, const RfcPhase& b, unsigned seen, const char* name, RfcPhase& out,
               uint64_t next_entries = 0);
  /// Z = (c4, c5, c6) in rfc_core's index order.
  Status cross3(const RfcPhase& a, const RfcPhase& b, const RfcPhase& c, unsigned seen_ab,
                unsigned seen, const char* name, RfcPhase& out);
  /// out[p * nz + z] = 1 + rank of the best rule in both classes, 0 when none.
  Status final_table(const RfcPhase& p, const RfcPhase& z, std::vector<uint32_t>& out);

  /// The ranks of the rules matching every value of the chunks in `s`, ascending.
  std::vector<uint32_t> covering(unsigned s) const;
  /// The whole rule list of class `cls` of `p` (its explicit ranks merged with the rules of
  /// cover = covering(p.seen) up to its end).
  static void expand(const RfcPhase& p, uint32_t cls, const std::vector<uint32_t>& cover,
                     std::vector<uint32_t>& out);

  uint64_t charged() const { return charged_; }
  /// Forgets charges past `bytes` (what a failed attempt built has been freed).
  void release_to(uint64_t bytes) { charged_ = std::min(charged_, bytes); }
  /// Charges `bytes` of image or working memory; kCapacity past the limit.
  Status charge(uint64_t bytes, const char* what, uint64_t entries);
  /// kCapacity when the class lists being built would pass the limit.
  Status check_pool(const SetPool& pool, const char* what) const;

  uint32_t rules() const { return uint32_t(rank_index_.size()); }
  uint32_t rule_of_rank(uint32_t rank) const { return rank_index_[rank]; }
  const Rule& rule_at_rank(uint32_t rank) const { return (*rules_)[rank_index_[rank]]; }
  uint32_t proto_mask() const { return proto_mask_; }
  /// Bit c set when the rule of `rank` matches every value of chunk c.
  unsigned wild(uint32_t rank) const { return wild_[rank]; }

 private:
  struct Cross;  // cross()'s work (rfc_image.cpp)
  RfcBuilder()                    = default;
  const std::vector<Rule>* rules_ = nullptr;
  std::vector<uint32_t> rank_index_;
  std::vector<uint8_t> wild_;
  uint32_t proto_mask_ = 0xFF;
  uint64_t max_bytes_ = 0, charged_ = 0;
};

/// Tables packed into one 64-byte aligned buffer (8- or 16-bit entries where values fit).
class PackedTables {
 public:
  struct Slot {
    uint64_t offset = 0, entries = 0;  ///< entries stored
    uint32_t shift = 2, single = 0;    ///< as core::RfcTable
    uint64_t bytes() const { return entries << shift; }
  };
  /// Appends a table read through core::RfcTable (entries of the fewest bytes that hold
  /// max_value; all-equal values stored once).
  Slot add(const std::vector<uint32_t>& values, uint32_t max_value);
  /// Appends raw 32-bit words.
  Slot add_words(const std::vector<uint32_t>& words);
  /// Appends `bytes` bytes (a multiple of 4) copied from `data`, 64-byte aligned.
  Slot add_bytes(const void* data, uint64_t bytes);
  /// Copies everything into one aligned buffer; call once, after the last add.
  void finish();
  /// Frees the finished buffer (the slots stay valid for views over a copy of it).
  void release();
  const uint8_t* data() const { return buffer_.get(); }
  uint64_t bytes() const { return size_; }
  static core::RfcTable table(const uint8_t* base, const Slot& s) {
    return {base + s.offset, s.shift, s.single};
  }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::vector<std::vector<uint8_t>> parts_;
  std::vector<uint64_t> part_offsets_;
  std::unique_ptr<uint8_t[], Free> buffer_;
  uint64_t size_ = 0;
};

/// Slots of the address stage (phases 0-2 over the four address chunks) in a PackedTables.
struct RfcAddressLayout {
  PackedTables::Slot chunk[4], x, y, p;
  uint32_t n[4] = {}, nx = 0, ny = 0, np = 0;
  core::RfcView view(const uint8_t* base) const;  ///< chunk 0-3, x, y, p filled
};

/// Builds phases 0-2 over the addresses, leaving the P classes in `p` for the next stage
/// (each class of which takes p_next_entries 2-byte entries there: see RfcBuilder::cross).
Status build_address_stage(RfcBuilder& b, RfcPhase chunks[4], RfcPhase& x, RfcPhase& y, RfcPhase& p,
                           uint64_t p_next_entries = 0);
/// "1.25 MiB".
std::string mib(uint64_t bytes);
/// Rule indices in rank order (priority desc, index asc): element r is the rule of rank r.
std::vector<uint32_t> rank_order(const RuleSet& rules);
/// "X 1000x2B/40cl" sizes text of one table.
std::string table_text(const char* name, const PackedTables::Slot& s, uint32_t classes);

/// A whole RFC tree, built once, immutable.
class RfcImage {
 public:
  static Result<std::unique_ptr<RfcImage>> build(const RuleSet& rules,
                                                 uint64_t max_bytes = kRfcMaxImageBytes);
  core::RfcView view() const { return view(tables_.data()); }
  /// The same view over a copy of data() at `base` (a device copy).
  core::RfcView view(const uint8_t* base) const;
  const uint8_t* data() const { return tables_.data(); }
  uint64_t bytes() const { return tables_.bytes(); }
  const std::string& detail() const { return detail_; }
  uint32_t rules() const { return rules_; }
  /// Frees the tables once a copy of data() holds them (view(base) still works).
  void release_tables() { tables_.release(); }

 private:
  PackedTables tables_;
  RfcAddressLayout addr_;
  PackedTables::Slot ports_[3], z_, f_, answers_;
  uint32_t n_ports_[3] = {}, nz_ = 0, proto_mask_ = 0xFF, rules_ = 0, shape_ = 0;
  std::string detail_;
};

}  // namespace warpath::classify::detail
