// include/warpath/core/status.hpp
//
// Status and Result<T>: errors without exceptions.
//
// What
//   Every control-plane call (load, parse a file, build an image, launch on a GPU) returns a
//   Status or a Result<T>. No exception crosses the public API, so the CLI, the Python
//   binding and the CPU and GPU paths handle errors the same way. The data plane has no
//   per-item error path: per-packet outcomes are encoded in results (a parse status, kNoMatch).
//
// Messages
//   A message carries its context: "rules.txt:17: port range 80 : 70 has lo > hi". Functions
//   that read files put file and line first, so the CLI prints the message as it is.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace warpath {

enum class Errc : int32_t {
  kOk = 0,
  kInvalidArgument,
  kOutOfMemory,
  kCapacity,
  kNotSupported,
  kNotBuilt,
  kCudaError,
  kIoError,
  kParseError,
  kNotFound,
};

/// Short stable name of an error code ("parse_error").
std::string_view errc_name(Errc code) noexcept;

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Errc code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return {}; }

  bool is_ok() const noexcept { return code_ == Errc::kOk; }
  explicit operator bool() const noexcept { return is_ok(); }
  Errc code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  /// "parse_error: rules.txt:3: ..." for logs; the CLI prints message() alone.
  std::string to_string() const;

 private:
  Errc code_ = Errc::kOk;
  std::string message_;
};

/// A value or an error. Accessing value() of an error is a programming error (it aborts in
/// debug builds); check is_ok() first or use WARPATH_ASSIGN_OR_RETURN.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {}  // NOLINT(google-explicit-constructor)
  Result(Errc code, std::string message) : status_(code, std::move(message)) {}

  bool is_ok() const noexcept { return value_.has_value(); }
  explicit operator bool() const noexcept { return is_ok(); }
  const Status& status() const noexcept { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

#define WARPATH_TRY(expr)                                      \
  do {                                                         \
    if (::warpath::Status s_ = (expr); !s_.is_ok()) return s_; \
  } while (0)

#define WARPATH_CONCAT_INNER(a, b) a##b
#define WARPATH_CONCAT(a, b) WARPATH_CONCAT_INNER(a, b)
// `lhs` is a declaration ("auto x"), so it cannot be parenthesised.
#define WARPATH_ASSIGN_OR_RETURN(lhs, expr)                                                \
  auto WARPATH_CONCAT(r_, __LINE__) = (expr);                                              \
  if (!WARPATH_CONCAT(r_, __LINE__).is_ok()) return WARPATH_CONCAT(r_, __LINE__).status(); \
  lhs = std::move(WARPATH_CONCAT(r_, __LINE__)).value() /* NOLINT(bugprone-macro-parentheses) */

}  // namespace warpath
