// src/classify/core/tic_core.hpp
//
// TIC, Two-stage Interpreting based Classification (tic-ppopp08.md sections 4.2-4.4): the one
// lookup body of cpu.tic and cuda.tic. No STL, no CUDA includes.
//
// Stage 1  the RFC address tree of rfc_core.hpp (phases 0-2 over the four 16-bit address
//          chunks, 7 memory accesses); the P table's entry is 0 when no rule matches the
//          address pair, else 1 + the index of the first 64-byte code block of the pair's
//          candidate rules.
// Stage 2  the range interpreter (Figure 4): it runs the candidate rules' instructions in
//          priority order and returns the first that matches. A list's instructions are
//          contiguous; an instruction never straddles a 64-byte block (a NOP pads the rest of
//          the block instead), so each block is one cache line, fetched once.
//
// Instructions (32-bit words; built by src/classify/tic_image.cpp)
//   header  bits 0-1   source port kind: 0 wildcard, 1 exact (EM), 2 HI [1024, 65535],
//                      3 arbitrary range (AR)
//           bits 2-3   destination port kind, the same
//           bit  4     protocol exact: (word 3 & 0xFF) == bits 6-13
//           bit  5     last instruction of the list: no match when it fails
//           bits 6-13  protocol value when bit 4 is set; otherwise an opcode:
//                      0 the port/protocol test above, 1 GEN, 2 NOP
//           bits 14-31 rule index (so at most 2^18 - 1 rules)
//   operands  16-bit, packed low half first into the words after the header: source port
//             (EM: the port; AR: lo, hi) then destination port. 0-4 operands, so 4-, 8- and
//             12-byte instructions, as Figure 3.
//   GEN     header + 6 words: v2, m2, sport lo | hi << 16, dport lo | hi << 16, v3, m3: the
//           full rule test, for rules whose port word has a mask or whose protocol mask is
//           neither 0 nor 0xFF (not in ClassBench sets; 28 bytes).
//   NOP     the rest of this block is padding: go on at the next block.
#pragma once
#include <cstdint>

#include "classify/core/rfc_core.hpp"

namespace warpath::classify::core {

inline constexpr uint32_t kTicBlockWords = 16;  ///< 64 bytes
inline constexpr uint32_t kTicNoMatch    = 0xFFFF'FFFFu;

enum TicPortKind : uint32_t { kTicWild = 0, kTicExact = 1, kTicHigh = 2, kTicRange = 3 };
enum TicOp : uint32_t { kTicTest = 0, kTicGeneric = 1, kTicNop = 2 };
inline constexpr uint32_t kTicProtoExact = 1u << 4, kTicLast = 1u << 5;
inline constexpr unsigned kTicRuleShift = 14;
inline constexpr uint32_t kTicMaxRules  = (1u << 18) - 1;

struct TicView {
  RfcView addr;                    ///< chunk[0..3], x, y, p (p entries: 0 or 1 + block)
  const uint32_t* code = nullptr;  ///< blocks of kTicBlockWords words, 64-byte aligned
};

/// Halfword k of the operands after header `p`.
WARPATH_HD uint32_t tic_operand(const uint32_t* p, unsigned k) {
  return (p[1 + (k >> 1)] >> ((k & 1u) * 16)) & 0xFFFFu;
}

/// Tests one port against its kind; advances the operand counter.
WARPATH_HD bool tic_port_ok(uint32_t kind, uint32_t port, const uint32_t* p, unsigned& k) {
  switch (kind) {
    case kTicWild:
      return true;
    case kTicExact:
      return port == tic_operand(p, k++);
    case kTicHigh:
      return port >= 1024;
    default: {
      const uint32_t lo = tic_operand(p, k), hi = tic_operand(p, k + 1);
      k += 2;
      return port >= lo && port <= hi;
    }
  }
}

/// The range interpreter: the first rule of the list at `code` matching (ports, proto), or
/// kTicNoMatch. `ports` is key word 2, `proto` key word 3.
WARPATH_HD uint32_t tic_interpret(const uint32_t* code, uint32_t ports, uint32_t proto) {
  const uint32_t sport = ports >> 16, dport = ports & 0xFFFFu;
  const uint32_t* p = code;
  for (;;) {
    const uint32_t h  = p[0];
    const uint32_t op = (h >> 6) & 0xFFu;
    bool ok;
    uint32_t len;
    if (!(h & kTicProtoExact) && op != kTicTest) {
      if (op == kTicNop) {  // padding: the list goes on at the next block
        p = code + ((uint32_t(p - code) / kTicBlockWords) + 1) * kTicBlockWords;
        continue;
      }
      const uint32_t sl = p[3] & 0xFFFFu, sh = p[3] >> 16, dl = p[4] & 0xFFFFu, dh = p[4] >> 16;
      ok = (ports & p[2]) == p[1] && (proto & p[6]) == p[5] && sport >= sl && sport <= sh &&
           dport >= dl && dport <= dh;
      len = 7;
    } else {
      unsigned k = 0;
      ok         = !(h & kTicProtoExact) || (proto & 0xFFu) == op;
      ok &= tic_port_ok(h & 3u, sport, p, k);
      ok &= tic_port_ok((h >> 2) & 3u, dport, p, k);
      len = 1 + ((k + 1) >> 1);
    }
    if (ok) return h >> kTicRuleShift;
    if (h & kTicLast) return kTicNoMatch;
    p += len;
  }
}

/// Stage 1 entry -> first code word (nullptr: no candidate rule).
WARPATH_HD const uint32_t* tic_code(const TicView& v, uint32_t entry) {
  return entry ? v.code + uint64_t(entry - 1) * kTicBlockWords : nullptr;
}

/// The whole lookup: the index of the best rule matching the key, or kNoMatch.
WARPATH_HD uint32_t tic_lookup(const TicView& v, uint32_t src, uint32_t dst, uint32_t ports,
                               uint32_t proto) {
  const uint32_t* code = tic_code(v, rfc_address_class(v.addr, src, dst));
  return code ? tic_interpret(code, ports, proto) : kTicNoMatch;
}

}  // namespace warpath::classify::core
