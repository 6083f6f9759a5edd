// python/src/batches.hpp: a capture held in memory, handed out batch by batch as the CLI reads
// a file (tools/warpath/capture_input.cpp): up to 1024 records a batch, parsed, and with a
// defragmentation engine its IP fragments put back together (a held fragment leaves the batch,
// the one that completes a datagram is replaced by the whole datagram). The same batch
// boundaries give the same order of events as the CLI's (the CLI's reader also ends a batch
// early when its 2 MiB buffer fills: captures of packets over 2 KiB may be cut elsewhere).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "capture.hpp"
#include "common.hpp"
#include "warpath/defrag/defrag.hpp"

namespace warpath::py {

using BatchFn = std::function<void(const packet::BatchView&, const PacketInfo*, uint32_t)>;

/// Calls `fn` for each batch of `all`; `defrag` names the engine ("": none). Throws StatusError.
inline void for_each_batch(const packet::PacketBatch& all, const std::string& defrag,
                           const BatchFn& fn, uint32_t batch = 1024) {
  auto parser = take(packet::make_parser("auto"));
  ExecContext ctx;
  std::vector<PacketInfo> in_infos, infos;
  const packet::BatchView v = all.view();
  std::unique_ptr<defrag::Defragmenter> dfr;
  packet::PacketBatch out;
  std::vector<uint8_t> whole;
  if (!defrag.empty()) {
    dfr = take(defrag::make_defragmenter(defrag, {}));
    // As the CLI's: whole datagrams may be up to 64 KiB.
    out = take(packet::PacketBatch::create(
        batch, 2048, size_t(batch) * 2048 + (size_t(1) << 17) + (size_t(64) << 20)));
  }
  for (uint32_t off = 0; off < all.size(); off += batch) {
    const uint32_t n = std::min(batch, all.size() - off);
    const packet::BatchView part{v.buffer, v.metas + off, n};
    in_infos.resize(n);
    check(parser->parse(part, {in_infos.data(), n}, ctx));
    if (!dfr) {
      fn(part, in_infos.data(), n);
      continue;
    }
    check(defrag::defragment_batch(*dfr, part, in_infos.data(), out, whole));
    const uint32_t k = out.size();
    infos.resize(k);
    check(parser->parse(out.view(), {infos.data(), k}, ctx));
    if (k) fn(out.view(), infos.data(), k);
  }
  if (dfr) check(dfr->status());
}

}  // namespace warpath::py
