// src/core/engine_table.hpp
//
// One table per module of its engines, each entry carrying how it is built: the only place an
// engine id is written in its module's registry (core/registry.hpp says what the ids mean).
// Resolution (auto, the cpu/gpu/ref aliases, validate:<id>), the "unknown engine" and "not
// available" errors and the validating wrapper are written once here and in registry.cpp; a
// module's make_* function is one call:
//
//   using FibTable = EngineTable<Fib(const RouteTable&, const FibParams&)>;
//   const FibTable& fib_table() {
//     static const FibTable table("lookup", {
//         {{"ref.lpm", "binary trie (the oracle)", 0, engine_always},
//          [](const RouteTable& t, const FibParams&) -> FibTable::Made { return make_ref(t); }},
//         ...
//       }, &validated);  // wraps an engine beside the reference for validate:<id>
//     return table;
//   }
//   Result<std::unique_ptr<Fib>> make_fib(std::string_view id, const RouteTable& t,
//                                         const FibParams& p) { return fib_table().make(id, t, p); }
//
// Traits: what a module needs to know of an engine besides building it (classification: the
// key layouts it takes and whether it takes updates), one struct per module, looked up by id
// instead of being inferred from the id's spelling.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "warpath/core/registry.hpp"
#include "warpath/core/status.hpp"

namespace warpath {

/// An engine table's entries carry no traits.
struct NoTraits {};

template <class Signature, class Traits = NoTraits>
class EngineTable;

template <class Engine, class... Args, class Traits>
class EngineTable<Engine(Args...), Traits> {
 public:
  using Made = Result<std::unique_ptr<Engine>>;
  using Make = Made (*)(Args...);
  /// The engine beside the module's reference (validate:<id>); the same arguments as `make`.
  using Validate = Made (*)(std::unique_ptr<Engine>, Args...);

  struct Entry {
    EngineInfo info;
    Make make = nullptr;
    Traits traits{};
  };

  /// `noun` names the module in errors ("unknown lookup engine 'x'"). Entries whose build is
  /// left out (a library not built in) are simply not listed.
  EngineTable(std::string_view noun, std::vector<Entry> entries, Validate validate)
      : noun_(noun), entries_(std::move(entries)), validate_(validate) {
    for (const Entry& e : entries_) infos_.push_back(e.info);
  }

  /// A Validate for wrappers constructed from the engine and the table's arguments.
  template <class Wrapper>
  static Made wrap(std::unique_ptr<Engine> engine, Args... args) {
    return std::unique_ptr<Engine>(std::make_unique<Wrapper>(std::move(engine), args...));
  }

  const std::vector<EngineInfo>& infos() const { return infos_; }
  const std::vector<Entry>& entries() const { return entries_; }

  /// The entry of a plain id ("cpu.x"; "validate:cpu.x" finds cpu.x), or null.
  const Entry* find(std::string_view id) const {
    bool validating = false;
    id              = strip_validate(id, validating);
    for (const Entry& e : entries_)
      if (e.info.id == id) return &e;
    return nullptr;
  }

  /// Resolves `requested` (resolve_engine: auto, cpu, gpu, ref, validate:<id>) and builds it.
  Made make(std::string_view requested, Args... args) const {
    bool validating = false;
    WARPATH_ASSIGN_OR_RETURN(const std::string id,
                             resolve_engine(infos_, noun_, requested, validating));
    return make_resolved(id, validating, args...);
  }

  /// Builds an id resolve_engine returned, beside the reference when `validating`.
  Made make_resolved(std::string_view id, bool validating, Args... args) const {
    const Entry* e = find(id);
    if (!e || !e->make)
      return Status(Errc::kNotFound,
                    "no factory for " + std::string(noun_) + " engine " + std::string(id));
    Made made = e->make(args...);
    if (made.is_ok() && !made.value())
      return Status(Errc::kNotSupported, std::string(id) + " could not start");
    if (!made.is_ok() || !validating) return made;
    return validate_(std::move(made).value(), args...);
  }

 private:
  std::string_view noun_;
  std::vector<Entry> entries_;
  std::vector<EngineInfo> infos_;
  Validate validate_;
};

}  // namespace warpath
