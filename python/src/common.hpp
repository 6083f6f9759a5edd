// python/src/common.hpp: what every binding file of warpath._warpath shares.
//
// Errors: a Status that is not ok becomes a Python exception of warpath.Error's family (the
// subclass of its code, errors.cpp) with the message the CLI would print (file, line, reason).
// Arrays: answers are numpy arrays that own the engine's output buffer (no copy on the way
// out); inputs are taken as views where their layout is the engine's.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "warpath/core/registry.hpp"
#include "warpath/core/status.hpp"

namespace warpath::py {
namespace nb = nanobind;

/// A failed Status on its way to Python (translated by errors.cpp's translator).
struct StatusError : std::exception {
  explicit StatusError(Status s) : status(std::move(s)) {}
  const char* what() const noexcept override { return status.message().c_str(); }
  Status status;
};

inline void check(const Status& s) {
  if (!s.is_ok()) throw StatusError(s);
}
template <class T>
T take(Result<T>&& r) {
  if (!r.is_ok()) throw StatusError(r.status());
  return std::move(r).value();
}
/// A Python-side misuse (a wrong dtype or shape) as warpath.InvalidArgumentError.
[[noreturn]] inline void invalid(std::string message) {
  throw StatusError(Status(Errc::kInvalidArgument, std::move(message)));
}

template <class T>
using Array = nb::ndarray<nb::numpy, T>;

/// A numpy array over `*owner`'s memory, freed with the array: `data` points into it.
template <class T, class Owner>
Array<T> owned(std::unique_ptr<Owner> owner, T* data, std::initializer_list<size_t> shape,
               std::initializer_list<int64_t> strides = {}) {
  Owner* raw = owner.release();
  nb::capsule cap(raw, [](void* p) noexcept { delete static_cast<Owner*>(p); });
  return Array<T>(data, shape, cap, strides);
}

/// A vector's elements as a 1-D numpy array that owns the vector.
template <class T, class Vec>
Array<T> owned_vector(Vec&& v) {
  auto p       = std::make_unique<std::decay_t<Vec>>(std::forward<Vec>(v));
  const size_t n = p->size();
  T* data      = reinterpret_cast<T*>(p->data());
  return owned<T>(std::move(p), data, {n});
}

/// Where a call's `n` uint32 answers go: the caller's `out` (a writable, contiguous 1-D uint32
/// array of at least n elements; refused, never converted, otherwise) or a new array that owns
/// its buffer (page-locked where a GPU is, for the CUDA engines' copies). `object` is what the
/// call returns: `out` itself, or the new array.
struct Answers {
  uint32_t* data = nullptr;
  nb::object object;
};
Answers answers_for(nb::object out, size_t n, const char* items);

/// An engine table as a list of dicts: id, description, priority, available (here).
nb::list engine_list(const std::vector<EngineInfo>& engines);

/// "validate:<id>" when asked to validate (and not already).
inline std::string with_validate(std::string id, bool validate) {
  if (validate && id.rfind("validate:", 0) != 0) id = "validate:" + id;
  return id;
}

void bind_errors(nb::module_& m);
void bind_lookup(nb::module_& m);
void bind_classify(nb::module_& m);
void bind_pattern(nb::module_& m);
void bind_capture(nb::module_& m);
void bind_flow(nb::module_& m);
void bind_stream(nb::module_& m);
void bind_nids(nb::module_& m);
void bind_chain(nb::module_& m);

}  // namespace warpath::py
