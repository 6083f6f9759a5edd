// src/classify/core/rfc_core.hpp
//
// Recursive Flow Classification (Gupta and McKeown 1999; tic-ppopp08.md section 4.1, Figure 2):
// the one lookup body of cpu.rfc and cuda.rfc, and the address stage of cpu.tic and cuda.tic.
// No STL, no CUDA includes.
//
// Reduction tree (built by src/classify/rfc_image.cpp)
//   phase 0  seven chunks of the 5-tuple key, each a table from the chunk's value to an
//            equivalence class id (eqID):
//              c0 = src >> 16, c1 = src & 0xFFFF, c2 = dst >> 16, c3 = dst & 0xFFFF,
//              c4 = sport (word 2 >> 16), c5 = dport (word 2 & 0xFFFF),
//              c6 = word 3 & proto_mask (0xFF, or 0xFFFF when some rule masks bits 8..15)
//   phase 1  three cross-product tables (CPTs): X = (c0, c1) the source address,
//            Y = (c2, c3) the destination address, Z = (c4, c5, c6) ports and protocol
//   phase 2  P = (X, Y), the address pair (TIC's first stage ends here); Z passes through,
//            since a CPT of one input would be an identity table
//   phase 3  F = (P, Z): the answer id of the best rule, answers[id] the rule index or kNoMatch
//   A CPT entry for classes (a, b[, c]) is at (a * nb + b) * nc + c. That is 12 dependent-ish
//   memory accesses per key (Figure 2 has 13: one more CPT in phase 2).
//   Shape 1 (RfcView::shape, chosen by the builder when shape 0's P or F would not fit, as on
//   firewall sets where nearly every address pair is its own class): the phase-1 slots x, y, z
//   hold Y (destination), Z (ports, protocol) and X (source), so P = (Y, Z) and F = (P, X).
//   The steps and their count are the same; only the chunks behind each slot change.
//
// Tables
//   Each table is 8-bit (class counts up to 256), 16-bit (up to 65,536) or 32-bit; RfcTable
//   says which. A table with one class (a chunk no rule looks at) is one entry. An eqID
//   stands for the set of rules that match the key's bits seen so far, pruned: a rule that
//   matches every value of the fields not yet seen ends the set, since nothing after it in
//   priority order can win (this keeps class counts, so the tables, small).
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"

namespace warpath::classify::core {

/// One table of class ids (or answer ids): entries of 1, 2 or 4 bytes; a table whose entries
/// are all equal is stored as that one entry (single: every index reads entry 0).
struct RfcTable {
  const void* data = nullptr;
  uint32_t shift   = 1;  ///< log2 of the entry size: 0 uint8_t, 1 uint16_t, 2 uint32_t
  uint32_t single  = 0;
  WARPATH_HD uint32_t at(uint64_t i) const {
    if (single) i = 0;
    if (shift == 2) return static_cast<const uint32_t*>(data)[i];
    if (shift == 1) return static_cast<const uint16_t*>(data)[i];
    return static_cast<const uint8_t*>(data)[i];
  }
  WARPATH_HD const void* addr(uint64_t i) const {
    return static_cast<const char*>(data) + (single ? 0 : i << shift);
  }
};

enum RfcChunk : unsigned { kSrcHi, kSrcLo, kDstHi, kDstLo, kSport, kDport, kProto, kChunks };

/// Class counts of the tables that are indexed by a product of classes.
struct RfcView {
  RfcTable chunk[kChunks];  ///< phase 0
  RfcTable x, y, z;         ///< phase 1
  RfcTable p;               ///< phase 2
  RfcTable f;               ///< phase 3 (answer ids)
  const uint32_t* answers = nullptr;
  uint32_t n[kChunks]     = {};  ///< classes of each chunk
  uint32_t nx = 0, ny = 0, nz = 0, np = 0;
  uint32_t proto_mask = 0xFF;
  uint32_t shape      = 0;  ///< 0: slots x, y, z = X, Y, Z; 1: slots x, y, z = Y, Z, X
};

/// The seven chunks of a key given as its four words (cv[c] for RfcChunk c).
WARPATH_HD void rfc_chunk_values(uint32_t src, uint32_t dst, uint32_t ports, uint32_t proto,
                                 uint32_t proto_mask, uint32_t* cv) {
  cv[kSrcHi] = src >> 16;
  cv[kSrcLo] = src & 0xFFFFu;
  cv[kDstHi] = dst >> 16;
  cv[kDstLo] = dst & 0xFFFFu;
  cv[kSport] = ports >> 16;
  cv[kDport] = ports & 0xFFFFu;
  cv[kProto] = proto & proto_mask;
}

/// Phase-1 indices (of the source, destination and ports-protocol tables) from the seven
/// phase-0 class ids.
WARPATH_HD uint64_t rfc_src_index(const RfcView& v, const uint32_t* e) {
  return uint64_t(e[kSrcHi]) * v.n[kSrcLo] + e[kSrcLo];
}
WARPATH_HD uint64_t rfc_dst_index(const RfcView& v, const uint32_t* e) {
  return uint64_t(e[kDstHi]) * v.n[kDstLo] + e[kDstLo];
}
WARPATH_HD uint64_t rfc_ports_index(const RfcView& v, const uint32_t* e) {
  return (uint64_t(e[kSport]) * v.n[kDport] + e[kDport]) * v.n[kProto] + e[kProto];
}
/// Indices into the phase-1 slots x, y, z (see RfcView::shape).
WARPATH_HD uint64_t rfc_x_index(const RfcView& v, const uint32_t* e) {
  return v.shape ? rfc_dst_index(v, e) : rfc_src_index(v, e);
}
WARPATH_HD uint64_t rfc_y_index(const RfcView& v, const uint32_t* e) {
  return v.shape ? rfc_ports_index(v, e) : rfc_dst_index(v, e);
}
WARPATH_HD uint64_t rfc_z_index(const RfcView& v, const uint32_t* e) {
  return v.shape ? rfc_src_index(v, e) : rfc_ports_index(v, e);
}
WARPATH_HD uint64_t rfc_p_index(const RfcView& v, uint32_t x, uint32_t y) {
  return uint64_t(x) * v.ny + y;
}
WARPATH_HD uint64_t rfc_f_index(const RfcView& v, uint32_t p, uint32_t z) {
  return uint64_t(p) * v.nz + z;
}

/// The address stage alone (phases 0-2 over c0..c3): the P class of (src, dst).
WARPATH_HD uint32_t rfc_address_class(const RfcView& v, uint32_t src, uint32_t dst) {
  uint32_t e[kChunks];
  rfc_chunk_values(src, dst, 0, 0, 0, e);
  for (unsigned c = kSrcHi; c <= kDstLo; ++c) e[c] = v.chunk[c].at(e[c]);
  return v.p.at(rfc_p_index(v, v.x.at(rfc_x_index(v, e)), v.y.at(rfc_y_index(v, e))));
}

/// The whole lookup: the index of the best rule matching the key, or kNoMatch.
WARPATH_HD uint32_t rfc_lookup(const RfcView& v, uint32_t src, uint32_t dst, uint32_t ports,
                               uint32_t proto) {
  uint32_t e[kChunks];
  rfc_chunk_values(src, dst, ports, proto, v.proto_mask, e);
  for (unsigned c = 0; c < kChunks; ++c) e[c] = v.chunk[c].at(e[c]);
  const uint32_t x = v.x.at(rfc_x_index(v, e));
  const uint32_t y = v.y.at(rfc_y_index(v, e));
  const uint32_t z = v.z.at(rfc_z_index(v, e));
  const uint32_t p = v.p.at(rfc_p_index(v, x, y));
  return v.answers[v.f.at(rfc_f_index(v, p, z))];
}

}  // namespace warpath::classify::core
