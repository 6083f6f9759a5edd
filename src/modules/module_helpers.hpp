// src/modules/module_helpers.hpp: what several built-in modules share: finding the
// nearest earlier module of a kind (the flow module whose state a later module reads), and the
// matcher compiled at build that the first worker takes (the others compile their own).
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

/// The position (in env.earlier) of the nearest module of `kind` before this one, or
/// env.earlier.size() when there is none.
inline size_t nearest_earlier(const BuildEnv& env, std::string_view kind) {
  for (size_t k = env.earlier.size(); k-- > 0;)
    if (env.earlier[k]->kind() == kind) return k;
  return env.earlier.size();
}

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
