// src/runtime/chunk.hpp
//
// A chunk: the unit the pipeline moves between its stages (PacketShader's chunk, section 5.3).
// Allocated once per worker (a small pool), reused for the whole run; nothing here allocates
// per packet.
//
//   batch          the packets, in the order they were received
//   rx_ns          monotonic receive time of each packet (latency is measured from it)
//   infos          parse results (pre-shade)
//   acl_*          the ACL keys of the packets that have one, compacted, SoA with stride =
//                  capacity (classify::KeyBatch), acl_index[k] = their packet; acl_match[k]
//                  the answer (shade)
//   route_keys     destinations gathered for the FIB; next hops per packet after scatter
//   reason / out   the outcome of each packet (post-shade): reason id (actions.hpp) and, for
//                  forwarded packets, the output port
//   done           set (release) by whoever finished the shade stage; the owner reads it
//                  (acquire) before post-shade. Chunks of one worker finish in order.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "warpath/classify/rule.hpp"
#include "warpath/core/status.hpp"
#include "warpath/forward/router.hpp"
#include "warpath/packet/batch.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::runtime {

struct Chunk {
  Chunk(packet::PacketBatch b, classify::KeyLayout layout)
      : batch(std::move(b)),
        capacity(batch.max_packets()),
        rx_ns(capacity),
        infos(capacity),
        acl_layout(layout),
        acl_words(size_t(classify::key_words(layout)) * capacity),
        acl_index(capacity),
        acl_match(capacity),
        route_keys(capacity),
        nexthops(capacity),
        reason(capacity),
        out(capacity) {}

  packet::PacketBatch batch;
  uint32_t capacity;
  std::vector<uint64_t> rx_ns;
  std::vector<packet::PacketInfo> infos;

  classify::KeyLayout acl_layout;
  std::vector<uint32_t> acl_words;
  std::vector<uint32_t> acl_index;
  std::vector<uint32_t> acl_match;
  uint32_t acl_count = 0;
  classify::KeyBatch acl_keys() const {
    return {acl_words.data(), acl_count, capacity, acl_layout};
  }

  forward::RouteKeys route_keys;
  std::vector<lookup::NextHop> nexthops;

  std::vector<uint16_t> reason;
  std::vector<uint16_t> out;

  bool offloaded    = false;
  uint64_t shade_ns = 0;  ///< time the shade stage took where it ran
  std::atomic<bool> done{false};
  Status error;  ///< set by the shade stage on failure (read after done)

  void reset() {
    batch.clear();
    acl_count = 0;
    offloaded = false;
    done.store(false, std::memory_order_relaxed);
    error = Status::ok();
  }
};

}  // namespace warpath::runtime
