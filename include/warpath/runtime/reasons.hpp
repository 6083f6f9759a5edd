// include/warpath/runtime/reasons.hpp
//
// The reasons of a chain: why each packet got its verdict (VPP's error/counter tables). The
// pipeline registers its own reasons first, then each module of the chain registers the ones
// it may give, when the chain is built; each gets a dense id (a packet's Frame::reason), so one
// counter array per worker covers every packet and every packet has exactly one reason.
//
//   id  name        verdict   owner
//   0   forwarded   forward   pipeline (every module that forwards gives this reason)
//   1   no_port     drop      pipeline: the output port is not configured
//   2   tx_error    drop      pipeline: the port could not send it
//   3   no_verdict  drop      pipeline: the packet left the chain with no module deciding
//   4.. a module's, in chain order ("acl_deny", the router's "no_route", ...)
//
// Names are what the report, the CLI, JSON and the metrics print. Two modules may register the
// same name (two ACLs both deny): the totals by name add them, the per-module counters keep
// them apart.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/forward/verdict.hpp"

namespace warpath::runtime {

using forward::Verdict;

inline constexpr uint16_t kReasonForwarded = 0;
inline constexpr uint16_t kReasonNoPort    = 1;
inline constexpr uint16_t kReasonTxError   = 2;
inline constexpr uint16_t kReasonNoVerdict = 3;
/// Pipeline owner index in ReasonTable::Entry::module.
inline constexpr int kPipelineOwner = -1;

class ReasonTable {
 public:
  struct Entry {
    std::string name;
    Verdict verdict;
    int module;  ///< chain position of the module that registered it, or kPipelineOwner
  };

  ReasonTable();  ///< with the pipeline's four reasons
  /// A new reason of module `module`; its dense id. kCapacity past 0xFFFE reasons in all;
  /// kInvalidArgument for Verdict::kForward, which has the one pipeline reason `forwarded`.
  Result<uint16_t> add(std::string_view name, Verdict verdict, int module);

  size_t size() const noexcept { return entries_.size(); }
  const Entry& operator[](uint16_t id) const { return entries_[id]; }
  const std::vector<Entry>& entries() const noexcept { return entries_; }

 private:
  std::vector<Entry> entries_;
};

}  // namespace warpath::runtime
