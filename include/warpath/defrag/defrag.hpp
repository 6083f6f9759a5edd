// include/warpath/defrag/defrag.hpp
//
// IP defragmentation: IPv4 and IPv6 fragments back into datagrams, the way the receiving host
// will see them, bounded against fragment attacks (Suricata's defrag engine and
// ../shared/notes/stream-reassembly.md are the models).
//
// Datagrams are keyed by (VLAN, source, destination, identification, and for IPv4 the
// protocol). A datagram is complete when its last fragment (MF clear) fixed its length and
// every byte below it arrived; it is then handed back as a whole frame: the first fragment's
// link-layer and IP headers (IPv4: MF and offset cleared, total length and checksum set; IPv6:
// the fragment header removed and the header before it pointed at the next one), then the
// payload.
//
// Rules
//   - Overlaps are resolved per byte by the target's policy (Novak and Sturges), comparing the
//     new fragment's extent [ns, ne) with that of the fragment that stored the byte [os, oe):
//       first    the stored byte stays             last     the new byte wins
//       bsd      new wins when ns < os             linux    new wins when ns <= os
//       windows  new wins when ns < os, ne > oe    solaris  new wins when ns < os, ne >= oe
//     (Suricata's DefragSturgesNovak vectors, tests/defrag). Overlaps are counted.
//   - IPv6: overlapping fragments drop the whole datagram (RFC 5722) unless ipv6_overlap_drop
//     is off, when the IPv4 policy applies.
//   - RFC 1858 / 3128: a TCP fragment at offset 8 (it could rewrite the flags) and a first TCP
//     fragment too short to hold the ports and flags are dropped (tiny fragments).
//   - Bounds: a datagram may not grow past 65,535 bytes of payload, nor take more than
//     max_fragments fragments (nor, with the first fragment's headers, pass 65,535 bytes);
//     bytes buffered over all datagrams, first fragments' headers included, are capped
//     (memcap) and so is their number (max_datagrams); a datagram not completed within `timeout_s` of its first
//     fragment is dropped. The clock is the largest timestamp seen. Every drop is counted.
//
// Engines (registry below): ref.defrag (one map entry per buffered byte: the oracle) and
// cpu.defrag (fragment ranges). The rules are one body (src/defrag/core).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/registry.hpp"
#include "warpath/core/status.hpp"
#include "warpath/packet/batch.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::defrag {

enum class FragPolicy : uint8_t { kFirst, kLast, kBsd, kLinux, kWindows, kSolaris, kCount };
const char* frag_policy_name(FragPolicy p) noexcept;  ///< "first", "last", "bsd", ...
Result<FragPolicy> parse_frag_policy(std::string_view text);

struct DefragConfig {
  FragPolicy policy      = FragPolicy::kBsd;
  bool ipv6_overlap_drop = true;   ///< RFC 5722
  uint32_t timeout_s     = 60;
  uint32_t max_datagrams = 65536;
  uint32_t max_fragments = 256;    ///< per datagram
  uint64_t memcap        = 32ull << 20;
  /// kInvalidArgument naming the field.
  Status validate() const;
};

/// What happened to one packet.
enum class FragResult : uint8_t {
  kNotFragment,  ///< passes as it is
  kHeld,         ///< a fragment, kept until its datagram completes
  kCompleted,    ///< this fragment completed a datagram (in `out`)
  kDropped,      ///< a fragment refused (reason counted)
};

struct DefragCounters {
  uint64_t fragments = 0;   ///< fragments seen
  uint64_t completed = 0;   ///< datagrams reassembled
  uint64_t overlaps  = 0;   ///< fragments that overlapped stored bytes
  uint64_t overlap_diff = 0;
  uint64_t ipv6_overlap = 0;     ///< IPv6 datagrams dropped for an overlap (RFC 5722)
  uint64_t tiny = 0;             ///< RFC 1858 / 3128 fragments dropped
  uint64_t too_large = 0;        ///< fragments past 65,535 bytes or past the known end
  uint64_t too_many = 0;         ///< fragments past max_fragments
  uint64_t timeout = 0;          ///< datagrams dropped unfinished
  uint64_t memcap = 0, max_datagrams = 0;  ///< fragments refused by each cap
  uint64_t malformed = 0;        ///< fragments whose headers could not be read
  uint64_t datagrams = 0;        ///< held now
  uint64_t buffered_bytes = 0;   ///< held now (payloads and first fragments' headers)
  bool operator==(const DefragCounters&) const = default;
};

class Defragmenter {
 public:
  virtual ~Defragmenter() = default;
  virtual std::string_view id() const noexcept = 0;
  virtual const DefragConfig& config() const noexcept = 0;
  virtual DefragCounters counters() const = 0;
  /// One packet (its parse result and bytes). kCompleted appends the reassembled frame to
  /// `out` (wire length = captured length = its size).
  virtual FragResult add(const packet::PacketInfo& info, const uint8_t* frame, uint32_t caplen,
                         uint64_t timestamp_ns, std::vector<uint8_t>& out) = 0;
  /// The clock moves to `now_ns` (never back) with no packet: datagrams older than the timeout
  /// are dropped unfinished (counted as timeout), as add() drops them on its way.
  virtual void advance(uint64_t now_ns) = 0;
  /// The first difference a validate: wrapper found (its engine's answers still flow); ok for
  /// every other engine.
  virtual Status status() const { return Status::ok(); }
};

/// A parsed batch through `d` into `out` (cleared first), as a capture reader feeds the commands:
/// a packet that is no fragment is copied as it is, a held fragment leaves the batch, the one
/// that completes a datagram is replaced by the whole datagram (`whole` is scratch). kCapacity
/// "record N of a batch does not fit the defragmented batch" when `out` has no room (give it
/// room for datagrams of up to 64 KiB).
Status defragment_batch(Defragmenter& d, const packet::BatchView& in,
                        const packet::PacketInfo* infos, packet::PacketBatch& out,
                        std::vector<uint8_t>& whole);

/// ref.defrag, cpu.defrag.
std::vector<EngineInfo> defrag_engines();
Result<std::unique_ptr<Defragmenter>> make_defragmenter(std::string_view id,
                                                        const DefragConfig& config = {});
/// Differential check against ref.defrag on generated fragment streams (the self-test's entry).
CheckReport check_defrag_engine(std::string_view id, uint64_t seed, uint64_t items);

}  // namespace warpath::defrag
