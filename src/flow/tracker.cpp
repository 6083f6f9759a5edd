// FlowTracker's non-virtual entry (include/warpath/flow/flow.hpp): the spans checked once, here,
// for every engine (its own file: the stateful fuzzer links the trackers without the registry).
#include <string>

#include "warpath/flow/flow.hpp"

namespace warpath::flow {

Status FlowTracker::track(Span<const packet::PacketInfo> infos,
                          Span<const packet::PacketMeta> metas, Span<PacketFlow> out,
                          std::vector<FlowRecord>& ended) {
  if (metas.size != infos.size || out.size != infos.size)
    return Status(Errc::kInvalidArgument, std::string(id()) + ": " +
                                              std::to_string(infos.size) + " packets, " +
                                              std::to_string(metas.size) + " metas, " +
                                              std::to_string(out.size) + " answers");
  return do_track(infos, metas, out, ended);
}

}  // namespace warpath::flow
