// src/modules/module_helpers.hpp: what several built-in modules share: the matcher compiled
// at build that the first worker takes (the others compile their own). A side queue's producer
// is found by its state type (module.hpp: producer<T>, side_queue<T>).
#pragma once
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/pattern/pattern.hpp"
#include "warpath/runtime/module.hpp"

namespace warpath::runtime {

/// A matcher compiled when the module is built (so pattern errors show then), handed to the
/// first worker's state; later workers compile their own from the same patterns (an engine's
/// scratch belongs to one thread).
class SpareMatcher {
 public:
  explicit SpareMatcher(std::unique_ptr<pattern::Matcher> first) : spare_(std::move(first)) {}
  Result<std::unique_ptr<pattern::Matcher>> take(
      const std::string& engine, const std::vector<pattern::Pattern>& patterns) const {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (spare_) return std::move(spare_);
    }
    return pattern::make_matcher(engine, patterns);
  }

 private:
  mutable std::mutex mutex_;
  mutable std::unique_ptr<pattern::Matcher> spare_;
};

}  // namespace warpath::runtime
