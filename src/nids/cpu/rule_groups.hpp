// src/nids/cpu/rule_groups.hpp: the rule groups of the prefiltering engines (cpu.nids,
// cuda.nids). Rules are grouped by the unit kind they look at and the transport protocol; a
// group's multi-literal prefilter holds its rules' fast patterns (Suricata's multi-pattern
// matcher stage), and rules without one are always candidates.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nids/core/rule_eval.hpp"
#include "nids/cpu/port_filter.hpp"
#include "nids/detect_image.hpp"
#include "warpath/pattern/pattern.hpp"

namespace warpath::nids::detail {

// Unit kinds: packets of flows without a stream, packets whose payload goes to the stream,
// stream buffers.
inline constexpr int kKinds = 3;
// Transport classes: TCP, UDP, ICMP, other.
inline constexpr int kProtos = 4;

inline int proto_class(uint8_t proto) {
  return proto == 6 ? 0 : proto == 17 ? 1 : (proto == 1 || proto == 58) ? 2 : 3;
}

inline int kind_of(const Unit& u) {
  return u.buffer == Buffer::kStream ? 2 : u.stream_flow ? 1 : 0;
}

struct Group {
  std::vector<uint32_t> always;      // rules without a fast pattern
  std::vector<uint32_t> by_pattern;  // pattern id -> rule
  std::unique_ptr<pattern::Matcher> prefilter;
  /// The same patterns on a CPU engine, for batches too small to pay for an offload (cuda.nids's
  /// opportunistic offload); null unless build_groups was given a fallback engine.
  std::unique_ptr<pattern::Matcher> fallback;
  std::vector<uint64_t> members;  // the rules of by_pattern, a bitset (PortFilter's words)
  /// Does any rule of the prefilter pass `allowed` (a PortFilter set)?
  bool any_allowed(const uint64_t* allowed) const {
    for (size_t w = 0; w < members.size(); ++w)
      if (members[w] & allowed[w]) return true;
    return false;
  }
};

using Groups = Group[kKinds][kProtos];

/// A rule's fast pattern as a prefilter pattern with id `id` (literal, caseless with nocase).
pattern::Pattern prefilter_pattern(const Content& fp, uint32_t id);

/// A rule a stream scan found, and the direction offset where its fast pattern's occurrence
/// ended (a direction's offsets count every byte delivered to it, across gaps).
struct Found {
  uint32_t rule = 0;
  uint64_t end  = 0;
};

/// The rules a stream direction's scans have armed: their fast pattern was seen and their other
/// conditions may complete in later chunks, for as long as that occurrence is in the buffer. A
/// rule can match a buffer only if its fast pattern occurs in it, so a rule whose last
/// occurrence ended at or before the buffer's first byte is forgotten (those bytes have left the
/// lookback: no later buffer holds them either). Bounded: past kMax armed, or when a scan could
/// not answer, every rule of the group is a candidate until the buffer starts past that unit's
/// last byte; the rules found meanwhile are still remembered, so the set is exact again then.
struct ArmedRules {
  static constexpr size_t kMax = 64;
  std::vector<Found> rules;  // ascending by rule, each with its latest end
  uint64_t all_until = 0;    // every rule of the group is armed for buffers starting before this
  /// A stream unit over direction offsets [start, end): forgets what left the buffer, arms
  /// `found` (ends in direction offsets; `failed`: the scan could not answer) and appends the
  /// candidates, the armed rules or the whole group, to `out`.
  void arm(const Group& g, const std::vector<Found>& found, bool failed, uint64_t start,
           uint64_t end, std::vector<uint32_t>& out);
};

/// The transaction rules' prefilter (Suricata's per-buffer multi-pattern matchers): per phase
/// (request, response) and buffer, a multi-literal database over the fast patterns that look
/// at that buffer; rules without a fast pattern are always candidates of their phase.
struct AppGroups {
  struct Buffer {
    std::vector<uint32_t> by_pattern;  // pattern id -> rule
    std::unique_ptr<pattern::Matcher> prefilter;
  };
  std::vector<uint32_t> always[2];
  Buffer buffers[2][kAppBuffers][2];  // phase, buffer, dotprefix
};
Status build_app_groups(const Image& img, const std::string& engine, AppGroups& groups);
/// The candidates of transaction `tx` (ascending, each once): each buffer it carries scanned
/// once; a scan that cannot answer makes every rule of its buffer a candidate.
void app_group_candidates(AppGroups& groups, const AppTx& tx, std::vector<pattern::Match>& matches,
                          std::vector<uint32_t>& at, std::vector<Found>& found,
                          std::vector<uint32_t>& out);

/// Builds every group's prefilter with the pattern engine `engine` (a stream group's streaming
/// database first when `streams`, so the first stream does not compile it mid-traffic), and its
/// fallback with `fallback_engine` when one is named.
Status build_groups(const Image& img, size_t port_words, const std::string& engine, bool streams,
                    Groups& groups, const std::string& fallback_engine = "");

/// The fastest CPU multi-literal engine built in: cpu.hs (Vectorscan) where it is, else cpu.ac.
std::string best_cpu_pattern_engine();

/// Appends the rules of the patterns in `matches` to `out`, each once, with the latest end of
/// its pattern's matches plus `shift` (the direction offset of the scan's first byte: stream
/// scans arm rules by where they matched). `at`: scratch, one slot per pattern id, left all zero.
void take_matches(const std::vector<uint32_t>& by_pattern,
                  const std::vector<pattern::Match>& matches, uint64_t shift,
                  std::vector<uint32_t>& at, std::vector<Found>& out);
inline void take_matches(const Group& g, const std::vector<pattern::Match>& matches, uint64_t shift,
                         std::vector<uint32_t>& at, std::vector<Found>& out) {
  take_matches(g.by_pattern, matches, shift, at, out);
}

/// Keeps the candidates `allowed` (null: all) takes, ascending and each once.
void finish_candidates(const uint64_t* allowed, std::vector<uint32_t>& out);

}  // namespace warpath::nids::detail
