// src/stream/recorded_chunk.hpp: chunks recorded by the validate: wrappers (a reassembler's and
// a flow-and-stream engine's), and their first difference.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "warpath/stream/stream.hpp"

namespace warpath::stream::detail {

struct Recorded {
  uint64_t flow;
  uint8_t dir;
  bool gap;
  uint64_t offset;
  std::string bytes;
  uint32_t len;
  bool operator==(const Recorded&) const = default;
};

inline std::string describe(const Recorded& r) {
  return "flow " + std::to_string(r.flow) + " dir " + std::to_string(r.dir) + " " +
         (r.gap ? "gap" : "data") + " at " + std::to_string(r.offset) + " len " +
         std::to_string(r.len);
}

/// A sink that records each chunk into `into`, then passes it on to `*then` when that is a
/// sink (the caller's own, not a copy: one that keeps state by value sees every chunk).
inline ChunkSink recording(std::vector<Recorded>& into, const ChunkSink* then = nullptr) {
  return [&into, then](const Chunk& c) {
    into.push_back({c.flow, c.dir, c.gap, c.offset,
                    c.gap ? std::string() : std::string(reinterpret_cast<const char*>(c.data), c.len),
                    c.len});
    if (then && *then) (*then)(c);
  };
}

/// Empty when `got` and `want` are the same chunks in the same order; else the first difference
/// (" delivered 3 chunks, ref.stream 4", " chunk 2: flow ... , ref.stream flow ...").
inline std::string chunk_difference(const std::vector<Recorded>& got,
                                    const std::vector<Recorded>& want, std::string_view ref) {
  if (got.size() != want.size())
    return " delivered " + std::to_string(got.size()) + " chunks, " + std::string(ref) + " " +
           std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i]))
      return " chunk " + std::to_string(i) + ": " + describe(got[i]) + ", " + std::string(ref) +
             " " + describe(want[i]) + (got[i].bytes != want[i].bytes ? " (bytes differ)" : "");
  return {};
}

}  // namespace warpath::stream::detail
