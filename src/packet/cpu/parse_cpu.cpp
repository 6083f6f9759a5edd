// cpu.parse: core::parse_packet over a batch, with a prefetch stage and optional threads.
#include "core/parallel.hpp"
#include "packet/core/parse_core.hpp"
#include "packet/engines.hpp"

namespace warpath::packet::detail {
namespace {

// Packets are prefetched this far ahead: the headers of a packet are in its first cache line,
// and a batch of 2 KiB cells defeats the hardware stride prefetcher for small packets.
constexpr uint32_t kAhead = 8;
// Below this many packets per thread, starting threads costs more than it saves.
constexpr uint32_t kMinPerThread = 16384;

void parse_range(const BatchView& b, PacketInfo* out, uint32_t begin, uint32_t end) {
  for (uint32_t i = begin; i < end; ++i) {
    if (i + kAhead < end) WARPATH_PREFETCH(b.data(i + kAhead));
    core::parse_packet_into(b.data(i), b.metas[i].caplen, b.metas[i].len, out[i]);
  }
}

class CpuParser final : public Parser {
 public:
  std::string_view id() const noexcept override { return "cpu.parse"; }
  Status do_parse(const BatchView& batch, Span<PacketInfo> out, ExecContext& ctx) const override {
    parallel_ranges(batch.count, ctx.threads, kMinPerThread, [&](uint32_t begin, uint32_t end) {
      parse_range(batch, out.data, begin, end);
    });
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Parser> make_cpu_parser() { return std::make_unique<CpuParser>(); }

}  // namespace warpath::packet::detail
