// The chained engines of include/warpath/stream/flowstream.hpp: a FlowTracker and a Reassembler
// called one after the other, as the commands chain them (ref.flowstream, the oracle, and
// cpu.chained).
#include <memory>
#include <string>
#include <utility>

#include "stream/flowstream_engines.hpp"

namespace warpath::stream::detail {
namespace {

class ChainedFlowStream final : public FlowStream {
 public:
  ChainedFlowStream(std::string id, std::unique_ptr<flow::FlowTracker> tracker,
                    std::unique_ptr<Reassembler> reassembler)
      : id_(std::move(id)), tracker_(std::move(tracker)), reassembler_(std::move(reassembler)) {}

  std::string_view id() const noexcept override { return id_; }
  const flow::FlowConfig& flow_config() const noexcept override { return tracker_->config(); }
  const StreamConfig& stream_config() const noexcept override { return reassembler_->config(); }
  flow::FlowCounters flow_counters() const override { return tracker_->counters(); }
  StreamCounters stream_counters() const override { return reassembler_->counters(); }
  size_t streams() const override { return reassembler_->flows(); }

  Status process(const packet::BatchView& batch, const packet::PacketInfo* infos,
                 Span<flow::PacketFlow> out, std::vector<flow::FlowRecord>& ended,
                 const ChunkSink& sink, const uint8_t* mask) override {
    WARPATH_TRY(check_sizes(batch, out));
    const size_t from = ended.size();
    WARPATH_TRY(tracker_->track({infos, out.size}, {batch.metas, out.size}, out, ended));
    WARPATH_TRY(reassemble_batch(*reassembler_, batch, infos, out.data, out.size, sink,
                                 tracker_->config().ignore_ipv4_checksum, mask));
    return close_from(ended, from, sink);
  }
  Status advance(uint64_t now_ns, std::vector<flow::FlowRecord>& ended,
                 const ChunkSink& sink) override {
    const size_t from = ended.size();
    WARPATH_TRY(tracker_->advance(now_ns, ended));
    return close_from(ended, from, sink);
  }
  Status flush(std::vector<flow::FlowRecord>& ended, const ChunkSink& sink) override {
    const size_t from = ended.size();
    WARPATH_TRY(tracker_->flush(ended));
    return close_from(ended, from, sink);
  }

 private:
  Status close_from(const std::vector<flow::FlowRecord>& ended, size_t from,
                    const ChunkSink& sink) {
    for (size_t i = from; i < ended.size(); ++i)
      WARPATH_TRY(reassembler_->close(ended[i].serial, sink));
    return Status::ok();
  }

  std::string id_;
  std::unique_ptr<flow::FlowTracker> tracker_;
  std::unique_ptr<Reassembler> reassembler_;
};

}  // namespace

Result<std::unique_ptr<FlowStream>> make_chained_flowstream(std::string id,
                                                            std::string_view flow_engine,
                                                            std::string_view stream_engine,
                                                            const flow::FlowConfig& fc,
                                                            const StreamConfig& sc) {
  WARPATH_ASSIGN_OR_RETURN(auto tracker, flow::make_flow_tracker(flow_engine, fc));
  WARPATH_ASSIGN_OR_RETURN(auto reassembler, make_reassembler(stream_engine, sc));
  return std::unique_ptr<FlowStream>(std::make_unique<ChainedFlowStream>(
      std::move(id), std::move(tracker), std::move(reassembler)));
}

}  // namespace warpath::stream::detail
