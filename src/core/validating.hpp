// src/core/validating.hpp
//
// What every validate:<engine> wrapper shares (core/registry.hpp): an engine and its module's
// reference run side by side, the wrapper's id, one lock that makes an update atomic across the
// pair (a batch answered between the engine's update and the reference's would see them
// disagree), and the first difference reported as an error naming the item and both answers.
//
// A module's wrapper derives from ValidatingPair<Iface> and writes only its interface's calls:
//
//   Status do_lookup(Span<const Key> keys, Span<uint32_t> out) const override {
//     std::shared_lock lock(mutex_);
//     WARPATH_TRY(engine_->lookup(keys, out));
//     std::vector<uint32_t> want(keys.size);
//     WARPATH_TRY(ref_->lookup(keys, {want.data(), keys.size}));
//     return first_difference(keys.size, "key", [&](uint32_t i) { return out[i] == want[i]; },
//                             [&](uint32_t i) { return ": got " + ... ; });
//   }
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/status.hpp"

namespace warpath {

template <class Iface>
class ValidatingPair : public Iface {
 public:
  std::string_view id() const noexcept override { return id_; }

 protected:
  /// `ref_name`: the reference's id as messages name it ("ref.lpm"); a literal.
  ValidatingPair(std::unique_ptr<Iface> engine, std::unique_ptr<Iface> ref,
                 std::string_view ref_name)
      : engine_(std::move(engine)),
        ref_(std::move(ref)),
        id_("validate:" + std::string(engine_->id())),
        ref_name_(ref_name) {}

  /// kInvalidArgument "<engine id><text>".
  Status differs(const std::string& text) const {
    return Status(Errc::kInvalidArgument, std::string(engine_->id()) + text);
  }

  /// The first item i < n where !same(i), as "<engine> differs from <ref> at <noun> i<detail(i)>";
  /// ok when every item is the same.
  template <class Same, class Detail>
  Status first_difference(uint32_t n, std::string_view noun, const Same& same,
                          const Detail& detail) const {
    for (uint32_t i = 0; i < n; ++i)
      if (!same(i))
        return differs(" differs from " + std::string(ref_name_) + " at " + std::string(noun) +
                       " " + std::to_string(i) + detail(i));
    return Status::ok();
  }

  /// Two lists of records (flows ended, chunks delivered): the same length, then the same
  /// records in order. `got` are the records from index `from` on; `describe(record)` names one.
  template <class T, class Describe>
  Status same_records(const std::vector<T>& got, size_t from, const std::vector<T>& want,
                      std::string_view noun, const Describe& describe) const {
    const size_t n = got.size() - from;
    if (n != want.size())
      return differs(" gave " + std::to_string(n) + " " + std::string(noun) + ", " +
                     std::string(ref_name_) + " " + std::to_string(want.size()));
    for (size_t i = 0; i < n; ++i)
      if (!(got[from + i] == want[i]))
        return differs(" " + std::string(noun) + " #" + std::to_string(i) + ": " +
                       describe(got[from + i]) + ", " + std::string(ref_name_) + " " +
                       describe(want[i]));
    return Status::ok();
  }

  /// The engine's and the reference's counters are equal.
  template <class Counters>
  Status same_counters(const Counters& got, const Counters& want) const {
    if (got == want) return Status::ok();
    return differs(": counters differ from " + std::string(ref_name_));
  }

  /// An update applied to both under the pair's write lock. An engine that cannot take
  /// updates (kNotSupported) answers alone and the reference is left as it was; otherwise both
  /// apply it and the engine's status is returned when both answered alike (both applied it,
  /// or both refused it with the same code), else an error naming both answers.
  template <class Op>
  Status update_both(const Op& op) {
    std::unique_lock lock(mutex_);
    Status a = op(*engine_);
    if (a.code() == Errc::kNotSupported) return a;
    const Status b = op(*ref_);
    if (a.code() != b.code())
      return differs(" answered '" + a.to_string() + "' to an update, " + std::string(ref_name_) +
                     " '" + b.to_string() + "'");
    return a;
  }

  std::unique_ptr<Iface> engine_, ref_;
  std::string id_;
  std::string_view ref_name_;
  mutable std::shared_mutex mutex_;  ///< shared: batches; exclusive: update_both
};

}  // namespace warpath
