// src/runtime/chain_run.cpp: a chain over a batch, frame by frame (chain_run.hpp).
#include "warpath/runtime/chain_run.hpp"

#include <algorithm>
#include <memory>
#include <thread>

#include "runtime/master.hpp"

namespace warpath::runtime {

Result<std::vector<ChainOutcome>> run_chain_frames(const Chain& chain,
                                                   const packet::PacketBatch& in, uint32_t batch,
                                                   Place place, ModuleCounters* counters,
                                                   uint32_t launch_frames) {
  std::vector<ChainOutcome> out;
  out.reserve(in.size());
  const uint32_t frame = std::max<uint32_t>(batch, 1);
  const uint32_t count = std::max<uint32_t>(launch_frames, 1);
  WARPATH_ASSIGN_OR_RETURN(Chain::States states, chain.make_states());
  std::vector<std::unique_ptr<Frame>> frames;
  for (uint32_t k = 0; k < count; ++k) {
    WARPATH_ASSIGN_OR_RETURN(
        packet::PacketBatch b,
        packet::PacketBatch::create(frame, 2048, size_t(frame) * 2048 + chain.tail_room(frame)));
    b.set_tail_reserve(chain.tail_room(frame));
    frames.push_back(std::make_unique<Frame>(std::move(b)));
    chain.make_slots(*frames.back(), &states);
  }
  // Through the offload master: one lane, so a round's frames are one launch.
  std::unique_ptr<OffloadMaster> master;
  if (launch_frames) {
    master = std::make_unique<OffloadMaster>(chain, frame * count, std::vector<int>{}, 1);
    master->start();
  }
  Chain::Scratch scratch;
  ExecContext ctx;
  uint32_t next = 0;
  std::vector<Frame*> round;
  do {
    round.clear();
    for (uint32_t r = 0; r < count && (round.empty() || next < in.size()); ++r) {
      Frame& f = *frames[r];
      f.reset();
      for (uint32_t k = 0; k < batch && next < in.size(); ++k, ++next)
        if (!f.batch.append(in.data(next), in.meta(next).caplen, in.meta(next).len,
                            in.meta(next).timestamp_ns, in.meta(next).port))
          return Status(Errc::kCapacity, "packet " + std::to_string(next) + " (" +
                                             std::to_string(in.meta(next).caplen) +
                                             " bytes) does not fit a frame of " +
                                             std::to_string(batch));
      WARPATH_TRY(chain.pre(f));
      round.push_back(&f);
    }
    if (master) {
      master->submit(round);
      for (Frame* f : round) {
        while (!f->done.load(std::memory_order_acquire)) std::this_thread::yield();
        WARPATH_TRY(f->error);
      }
    } else {
      WARPATH_TRY(chain.shade(*round[0], place, ctx));
    }
    for (Frame* fp : round) {
      Frame& f = *fp;
      WARPATH_TRY(chain.post(f, scratch, counters));
      for (uint32_t i = 0; i < f.size(); ++i) {
        ChainOutcome o;
        o.reason   = chain.reasons()[f.reason[i]].name;
        o.out      = f.reason[i] == kReasonForwarded ? f.out[i] : 0;
        o.out_mask = o.out == kOutMany ? f.out_mask[i] : 0;
        o.context  = chain.contexts().name(f.context[i]);
        o.bytes.assign(f.batch.data(i), f.batch.data(i) + f.batch.meta(i).caplen);
        out.push_back(std::move(o));
      }
    }
  } while (batch && next < in.size());
  if (master) master->stop();
  WARPATH_TRY(chain.finish_states(states));
  return out;
}

}  // namespace warpath::runtime
