// src/nids/core/rule_eval.hpp: the evaluation of one rule on one inspection unit, the one body
// every detection engine calls (semantics in include/warpath/nids/detect.hpp).
#pragma once
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "nids/detect_image.hpp"

namespace warpath::nids::detail {

/// Work bounds of one rule evaluation: content positions and pcre matches tried while
/// backtracking, and PCRE2's own match limit per run.
inline constexpr uint32_t kEvalSteps     = 4096;
inline constexpr uint32_t kPcreMatchLimit = 100'000;
inline constexpr uint32_t kPcreRuns       = 64;  ///< pcre2_match calls per evaluation

/// Whether the packet side of rule `r` holds: proto, addresses and ports, flow options,
/// dsize, TCP flags, ICMP type and code.
inline bool header_matches(const Rule& r, const PacketView& p) {
  switch (r.proto) {
    case Proto::kTcp: case Proto::kTcpPkt: case Proto::kTcpStream:
      if (p.proto != 6) return false;
      break;
    case Proto::kUdp:
      if (p.proto != 17) return false;
      break;
    case Proto::kIcmp:
      if (p.proto != 1 && p.proto != 58) return false;
      break;
    case Proto::kIp: break;
  }
  const bool ports = p.proto == 6 || p.proto == 17;
  auto way = [&](const uint8_t* s, const uint8_t* d, uint16_t sp, uint16_t dp) {
    if (!ports ? !(r.sport.unrestricted() && r.dport.unrestricted()) : !(r.sport.contains(sp) && r.dport.contains(dp)))
      return false;  // ports first: the cheaper test, and the one most rules narrow by
    return r.src.contains(p.ip_version, s) && r.dst.contains(p.ip_version, d);
  };
  if (!way(p.src, p.dst, p.sport, p.dport) &&
      !(r.bidirectional && way(p.dst, p.src, p.dport, p.sport)))
    return false;
  const FlowOpt& f = r.flow;
  if (f.established && !(p.has_flow && p.established)) return false;
  if (f.not_established && p.has_flow && p.established) return false;
  if (f.to_server && !(p.has_flow && p.to_server)) return false;
  if (f.to_client && !(p.has_flow && !p.to_server)) return false;
  if (!r.dsize.matches(p.dsize)) return false;
  if (!r.ip_proto.matches(p.proto)) return false;
  if (r.tls_version) {
    const uint16_t v = p.tls_version[p.to_server ? 0 : 1];
    if (v != r.tls_version && (r.tls_version_raw || r.tls_version != 0x0304 || v >> 8 != 0x7f)) return false;
  }
  if (r.stream_size.side != StreamSize::kNone) {
    if (p.proto != 6 || !p.has_session) return false;
    const bool client = r.stream_size.test.matches(p.stream_size[0]);
    const bool server = r.stream_size.test.matches(p.stream_size[1]);
    switch (r.stream_size.side) {
      case StreamSize::kClient: if (!client) return false; break;
      case StreamSize::kServer: if (!server) return false; break;
      case StreamSize::kBoth: if (!(client && server)) return false; break;
      case StreamSize::kEither: if (!(client || server)) return false; break;
      case StreamSize::kNone: break;
    }
  }
  if (r.flags.set && (p.proto != 6 || !r.flags.matches(p.tcp_flags))) return false;
  if (r.app != AppLayer::kNone && p.app_layer != r.app) return false;
  if (!r.app_proto.empty()) {
    // The flow's protocol as app-layer detection found it (http) or its L7 label says.
    const bool detected = p.app_layer != AppLayer::kNone && r.app_proto == app_layer_name(p.app_layer);
    if (p.app_pending && !detected) return false;  // neither it nor its negation is known yet
    const bool is = detected || (p.app_proto ? *p.app_proto == r.app_proto
                                             : r.app_proto == "unknown" && p.app_layer == AppLayer::kNone);
    if (is == r.app_proto_negated) return false;
  }
  if (r.itype.op != NumTest::kNone || r.icode.op != NumTest::kNone) {
    if (p.proto != 1 && p.proto != 58) return false;
    if (!r.itype.matches(p.icmp_type) || !r.icode.matches(p.icmp_code)) return false;
  }
  return true;
}

/// Whether rule `c` looks at this kind of unit (`stream_flow`: the packet's payload is
/// inspected through its stream instead).
inline bool applies_to(const CompiledRule& c, Buffer b, bool stream_flow) {
  if (c.kind == RuleKind::kAppTx || b == Buffer::kApp) return c.kind == RuleKind::kAppTx && b == Buffer::kApp;
  if (b == Buffer::kStream) return !c.packet_only;
  if (c.stream_only) return false;
  return c.packet_only || !stream_flow;
}

inline bool fold_equal(const uint8_t* a, const char* needle, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (uint8_t(std::tolower(a[i])) != uint8_t(needle[i])) return false;
  return true;
}

/// The first occurrence of `it`'s needle starting in [from, to - len] of buf, or -1.
inline int64_t find_content(const CompiledItem& it, const uint8_t* buf, int64_t from, int64_t to) {
  const size_t n = it.needle.size();
  if (from < 0) from = 0;
  if (to - from < int64_t(n)) return -1;
  if (!it.content->nocase) {
    const void* p = memmem(buf + from, size_t(to - from), it.needle.data(), n);
    return p ? static_cast<const uint8_t*>(p) - buf : -1;
  }
  const uint8_t first = uint8_t(it.needle[0]);
  const uint8_t upper = uint8_t(std::toupper(first));
  for (int64_t i = from; i + int64_t(n) <= to; ++i) {
    const uint8_t c = buf[i];
    if ((c == first || c == upper) && fold_equal(buf + i, it.needle.data(), n)) return i;
  }
  return -1;
}

/// Decodes base64 as Suricata 7's base64_decode does (util-base64.c, BASE64_MODE_RFC4648, not
/// strict): groups of 4 characters, '=' a padding character that counts as 0 and takes one byte
/// off its group's 3; the first character outside the alphabet ends the data; a last group cut
/// short (by that or by the end) gives 1 byte for 1 or 2 characters, 2 for 3. Writes to `out`
/// (cleared); returns the characters read.
inline size_t base64_decode_rfc4648(const uint8_t* in, size_t n, std::string& out) {
  auto value = [](uint8_t c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  out.clear();
  uint8_t b[4] = {};
  uint32_t have = 0, padding = 0;
  auto block = [&](uint32_t bytes) {
    const char three[3] = {char(b[0] << 2 | b[1] >> 4), char(b[1] << 4 | b[2] >> 2), char(b[2] << 6 | b[3])};
    out.append(three, bytes);
    have = padding = 0;
    b[0] = b[1] = b[2] = b[3] = 0;
  };
  size_t i = 0;
  for (; i < n; ++i) {
    int v = value(in[i]);
    if (v < 0) {
      if (in[i] != '=') break;
      ++padding;
      v = 0;
    }
    b[have++] = uint8_t(v);
    if (have == 4) block(3 - std::min<uint32_t>(padding, 3));
  }
  if (have > 0) block(have > 1 ? have - 1 : 1);
  return i;
}

/// Evaluates payload items against one buffer, with bounded backtracking.
class PayloadEval {
 public:
  explicit PayloadEval(pcre2_match_data* md, pcre2_match_context* mc) : md_(md), mc_(mc) {}

  /// Whether the items of `c` match buf[0, len) with some positive item ending after `min_end`
  /// (`min_end` < 0: anywhere). `limited` is set when a bound stopped the search.
  /// Absolute positions (offset, depth, startswith, absolute isdataat, anchored pcre) count
  /// from `anchor` (a stream chunk's start; 0 for a packet).
  bool run(const ItemList& c, const uint8_t* buf, uint32_t len, int64_t min_end, uint32_t anchor,
           bool& limited, bool& pcre_limited) {
    c_ = &c, buf_ = buf, len_ = len, min_end_ = min_end, anchor_ = anchor;
    steps_ = 0, pcre_runs_ = 0, limited_ = false, pcre_limited_ = false;
    b64_from_ = -1, b64_n_ = 0;
    const bool ok = step(0, 0, -1);
    limited = limited_, pcre_limited = pcre_limited_;
    return ok;
  }

 private:
  bool spend() {
    if (++steps_ <= budget_) return true;
    limited_ = true;
    return false;
  }

  bool step(size_t k, int64_t prev_end, int64_t max_end) {
    if (k == c_->items.size()) return min_end_ < 0 || max_end > min_end_;
    const CompiledItem& it = c_->items[k];
    const int64_t len = len_;
    if (it.kind == Item::kIsDataAt) {
      const IsDataAt& d = *it.isdataat;
      const int64_t n = value(d.offset_var, d.offset);
      // Absolute: a byte at offset N; relative: N more bytes after the previous match.
      const bool has = d.relative ? prev_end + n <= len : anchor_ + n < len;
      return has != d.negated && step(k + 1, prev_end, max_end);
    }
    if (it.kind == Item::kPcre) return pcre_step(k, it, prev_end, max_end);
    if (it.kind == Item::kBsize) return it.size->matches(len_) && step(k + 1, prev_end, max_end);
    if (it.kind == Item::kBase64Decode) return base64_step(it, prev_end, max_end);
    if (it.kind == Item::kByteTest || it.kind == Item::kByteJump || it.kind == Item::kByteExtract) {
      const ByteOp& b = *it.byte;
      const int64_t at = (b.relative ? prev_end : int64_t(anchor_)) + value(b.offset_var, b.offset);
      const int64_t bytes = value(b.bytes_var, b.bytes);
      // A size from a variable: 0 reads nothing (the value 0), as Suricata's extraction does.
      if (b.bytes_var >= 0 && bytes > (b.string ? 23 : 8)) return false;
      uint64_t v = 0;
      if (!read_number(b, at, uint32_t(bytes), v)) return false;
      if (it.kind == Item::kByteExtract) {
        // The variable for the items after it, the cursor after the bytes read.
        v *= b.multiplier;
        if (b.align_to) v = (v + b.align_to - 1) / b.align_to * b.align_to;
        vars_[size_t(b.var)] = v;
        return step(k + 1, at + bytes, max_end);
      }
      if (it.kind == Item::kByteTest) {
        const uint64_t want = b.value_var >= 0 ? vars_[size_t(b.value_var)] : b.value;
        bool r = false;
        switch (b.op) {
          case '<': r = v < want; break;
          case '>': r = v > want; break;
          case '=': r = v == want; break;
          case '&': r = (v & want) != 0; break;
          case '^': r = (v ^ want) != 0; break;
          case 'l': r = v <= want; break;
          case 'g': r = v >= want; break;
          default: break;
        }
        return r != b.negated && step(k + 1, prev_end, max_end);
      }
      if (v > uint64_t(len)) return false;  // past the buffer whatever the multiplier (no wrap)
      uint64_t jump = v * b.multiplier;
      if (b.align) jump = (jump + 3) & ~uint64_t(3);
      if (jump > uint64_t(len)) return false;
      const int64_t from = b.from_beginning ? int64_t(anchor_) : b.from_end ? len : at + bytes;
      const int64_t to   = from + int64_t(jump) + b.post_offset;
      if (to < 0 || to > len) return false;
      return step(k + 1, to, max_end);
    }
    const Content& ct = *it.content;
    const int64_t n = int64_t(it.needle.size());
    int64_t lo = 0, hi = len;  // the match lies in [lo, hi)
    if (ct.relative()) {
      const int64_t base = prev_end + (ct.has_distance ? value(ct.distance_var, ct.distance) : 0);
      lo = base;
      if (ct.has_within) hi = std::min<int64_t>(hi, base + value(ct.within_var, ct.within));
    } else {
      // Offset and depth count from the chunk; an unanchored content may start in the lookback.
      if (ct.has_offset || ct.has_depth || ct.startswith)
        lo = anchor_ + (ct.has_offset ? value(ct.offset_var, ct.offset) : 0);
      if (ct.has_depth) hi = std::min<int64_t>(hi, lo + value(ct.depth_var, ct.depth));
    }
    if (ct.startswith) hi = std::min<int64_t>(hi, lo + n);
    if (ct.endswith) lo = std::max<int64_t>(lo, len - n);
    // The last positive item must end in the new bytes when none before it did: occurrences
    // wholly in the lookback cannot complete a match, and skipping them keeps a lookback full
    // of the needle (padding) from spending the step bound before the new bytes are reached.
    if (!ct.negated && min_end_ >= 0 && max_end <= min_end_ && int64_t(k) == c_->last_positive)
      lo = std::max<int64_t>(lo, min_end_ - n + 1);
    lo = std::max<int64_t>(lo, 0);
    if (ct.negated) {
      if (find_content(it, buf_, lo, hi) >= 0) return false;
      return step(k + 1, prev_end, max_end);
    }
    for (int64_t at = find_content(it, buf_, lo, hi); at >= 0; at = find_content(it, buf_, at + 1, hi)) {
      if (ct.endswith && at + n != len) break;
      if (!spend()) return false;
      if (step(k + 1, at + n, std::max(max_end, at + n))) return true;
      // A later relative item or the new-bytes bound may still hold at a later occurrence.
      if (!c_->needs_relative_retry && min_end_ < 0) return false;
    }
    return false;
  }

  // A modifier's number: byte_extract variable `var`'s value (capped: a huge one places nothing
  // in the buffer, and cannot wrap), or `fixed` when var < 0.
  int64_t value(int8_t var, int32_t fixed) const {
    return var < 0 ? fixed : int64_t(std::min<uint64_t>(vars_[size_t(var)], uint64_t(1) << 32));
  }

  // The number byte_test / byte_jump / byte_extract read at `at` (`bytes` of it): false when it
  // is not all in the buffer or (string) not all digits of its base.
  bool read_number(const ByteOp& b, int64_t at, uint32_t bytes, uint64_t& v) const {
    if (at < 0 || at + bytes > int64_t(len_)) return false;
    const uint8_t* p = buf_ + at;
    v = 0;
    if (b.string) {
      // 0 digits: as many as there are, to the buffer's end (at most 23).
      const int64_t n = bytes ? bytes : std::min<int64_t>(23, int64_t(len_) - at);
      if (n <= 0) return false;
      for (int64_t i = 0; i < n; ++i) {
        const int c = std::tolower(p[i]);
        int d = -1;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        if (d < 0 || d >= b.base) {
          if (i == 0) return false;  // no digit at all
          break;                     // digits then something else: the number ends there
        }
        if (v > (UINT64_MAX - uint64_t(d)) / b.base) return false;  // past 64 bits: no number
        v = v * b.base + uint64_t(d);
      }
    } else {
      for (uint32_t i = 0; i < bytes; ++i)
        v |= uint64_t(p[i]) << (8 * (b.little ? i : bytes - 1 - i));
    }
    if (b.bitmask) {
      v &= b.bitmask;
      v >>= __builtin_ctzll(b.bitmask);
    }
    return true;
  }

  // base64_decode: what it decodes, and base64_data's items on it, whose match is the rule's
  // (Suricata's decoded list ends the inspection: nothing after it in the buffer is looked at,
  // and without base64_data items the rule does not match). In a stream chunk the match counts
  // when the encoded bytes reach the new ones. Decoding and the items' steps come out of this
  // evaluation's bound; a decode is reused while the same bytes are tried again.
  bool base64_step(const CompiledItem& it, int64_t prev_end, int64_t max_end) {
    const Base64Decode& d = *it.b64;
    const int64_t from = (d.relative ? prev_end : int64_t(anchor_)) + d.offset;
    if (!it.decoded_items || from < 0 || from >= int64_t(len_)) return false;
    const size_t n = std::min<size_t>(size_t(int64_t(len_) - from), d.bytes);
    thread_local std::string decoded;
    if (from != b64_from_ || n != b64_n_) {
      steps_ += uint32_t(n / 256);  // decoding is work too
      if (!spend()) return false;
      b64_used_ = base64_decode_rfc4648(buf_ + from, n, decoded);
      b64_from_ = from, b64_n_ = n;
    }
    if (decoded.empty() || !spend() || !decoded_match(*it.decoded_items, decoded)) return false;
    if (min_end_ < 0 || max_end > min_end_ || from >= min_end_) return true;
    // A stream chunk: the match counts when it needs the new bytes, that is when the text as it
    // stood before them (what an earlier chunk decoded) does not match (an encoded text that
    // grows alerts once).
    if (from + int64_t(b64_used_) <= min_end_) return false;
    std::string before;
    base64_decode_rfc4648(buf_ + from, size_t(min_end_ - from), before);
    return before.empty() || !decoded_match(*it.decoded_items, before);
  }

  // base64_data's items on decoded bytes, in what is left of this evaluation's bound.
  bool decoded_match(const ItemList& items, const std::string& bytes) {
    PayloadEval sub(md_, mc_);
    sub.budget_ = kEvalSteps - std::min(steps_, kEvalSteps);
    bool lim = false, plim = false;
    const bool ok = sub.run(items, reinterpret_cast<const uint8_t*>(bytes.data()), uint32_t(bytes.size()),
                            -1, 0, lim, plim);
    steps_ += sub.steps_;
    limited_ = limited_ || lim, pcre_limited_ = pcre_limited_ || plim;
    return ok;
  }

  bool pcre_step(size_t k, const CompiledItem& it, int64_t prev_end, int64_t max_end) {
    const Pcre& p = *it.pcre;
    // An anchored pcre (A, or ^ first) starts at the chunk; others may start in the lookback.
    const bool anchored = p.anchored || (!p.regex.empty() && p.regex[0] == '^');
    const int64_t base = p.relative ? prev_end : anchored ? anchor_ : 0;
    if (base > int64_t(len_)) return p.negated && step(k + 1, prev_end, max_end);
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(buf_ + base);
    const PCRE2_SIZE slen = PCRE2_SIZE(int64_t(len_) - base);
    PCRE2_SIZE start = 0;
    for (;;) {
      if (!spend()) return false;
      const int rc = pcre2_match(it.code, subject, slen, start, 0, md_, mc_);
      if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT) {
        pcre_limited_ = true;
        return false;
      }
      if (rc == PCRE2_ERROR_NOMATCH) return p.negated && step(k + 1, prev_end, max_end);
      if (rc < 0) {  // any other error (JIT stack, ...): no answer, counted, no match either way
        pcre_limited_ = true;
        return false;
      }
      if (++pcre_runs_ > kPcreRuns) {  // bounded retries of one pcre within an evaluation
        limited_ = true;
        return false;
      }
      if (p.negated) return false;
      // The match's bounds copied out: a later pcre of the rule reuses the match data.
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md_);
      const PCRE2_SIZE first = ov[0];
      const int64_t end = base + int64_t(ov[1]);
      if (step(k + 1, end, std::max(max_end, end))) return true;
      if (!c_->needs_relative_retry && min_end_ < 0) return false;
      start = first + 1;  // the next match starting later
      if (start > slen) return false;
    }
  }

  pcre2_match_data* md_;
  pcre2_match_context* mc_;
  const ItemList* c_ = nullptr;
  const uint8_t* buf_    = nullptr;
  uint32_t len_          = 0;
  int64_t min_end_       = -1;
  uint32_t anchor_       = 0;
  uint32_t steps_        = 0;
  uint32_t pcre_runs_    = 0;
  bool limited_ = false, pcre_limited_ = false;
  // byte_extract's variables on the path being tried (the parser refuses a read before the
  // byte_extract that sets it; cleared anyway, so nothing of another rule can leak in).
  uint64_t vars_[kMaxByteVars] = {};
  uint32_t budget_ = kEvalSteps;  ///< steps this evaluation may take (less in a decoded list)
  int64_t b64_from_ = -1;          ///< the last base64 decode's input: where, how long, how
  size_t b64_n_ = 0, b64_used_ = 0;  ///< much of it was read
};

/// Whether transaction rule `c` holds on `tx`: it is the rule's phase, and each of its buffer
/// lists matches its buffer (a buffer the transaction does not carry matches nothing).
inline bool app_matches(const CompiledRule& c, const AppTx& tx, PayloadEval& eval, bool& limited,
                        bool& pcre_limited) {
  if (c.app_response != tx.response) return false;
  if (!c.items.empty()) {  // payload items: the raw stream of the transaction's direction
    const std::string& raw = tx.buf[size_t(AppBuffer::kPayload)];
    bool lim = false, plim = false;
    const bool ok = eval.run(c, reinterpret_cast<const uint8_t*>(raw.data()), uint32_t(raw.size()), -1, 0, lim, plim);
    limited |= lim, pcre_limited |= plim;
    if (!ok) return false;
  }
  thread_local std::string dotted;  // dotprefix's "." + the buffer
  auto one = [&](const AppList& l, const std::string& v) {
    const std::string* in = &v;
    if (l.dotprefix) {
      dotted.assign(1, '.');
      dotted += v;
      in = &dotted;
    }
    bool lim = false, plim = false;
    const bool ok = eval.run(l, reinterpret_cast<const uint8_t*>(in->data()), uint32_t(in->size()), -1, 0, lim, plim);
    limited |= lim, pcre_limited |= plim;
    return ok;
  };
  for (const AppList& l : c.app) {
    const size_t b = size_t(l.buffer);
    if (!tx.has[b]) return false;
    bool ok = one(l, tx.buf[b]);
    // A multi-instance buffer (dns.query, tls.certs): any of its instances.
    for (size_t k = 0; !ok && k < tx.more.size(); ++k)
      if (tx.more[k].first == l.buffer) ok = one(l, tx.more[k].second);
    if (!ok) return false;
  }
  return true;
}

}  // namespace warpath::nids::detail
