// The parser engine registry: the only list of parser engines (see
// include/warpath/packet/parser.hpp).
#include <cstdio>

#include "core/engine_table.hpp"
#include "core/validating.hpp"
#include "packet/engines.hpp"

namespace warpath::packet {
namespace {

// Runs an engine and the reference on the same batch; fails on the first difference.
class ValidatingParser final : public ValidatingPair<Parser> {
 public:
  explicit ValidatingParser(std::unique_ptr<Parser> engine)
      : ValidatingPair(std::move(engine), detail::make_ref_parser(), "ref.parse") {}
  Status do_parse(const BatchView& batch, Span<PacketInfo> out, ExecContext& ctx) const override {
    WARPATH_TRY(engine_->parse(batch, out, ctx));
    std::vector<PacketInfo> want(batch.count);
    WARPATH_TRY(ref_->parse(batch, {want.data(), batch.count}, ctx));
    for (uint32_t i = 0; i < batch.count; ++i)
      if (!(out[i] == want[i]))
        return differs(" differs from ref.parse at " +
                       detail::describe_difference(i, out[i], want[i]));
    return Status::ok();
  }
};

using ParserTable = EngineTable<Parser()>;

const ParserTable& parser_table() {
  static const ParserTable table(
      "parser",
      {
          {{"ref.parse", "naive byte-by-byte parser (the oracle)", 0, engine_always},
           []() -> ParserTable::Made { return detail::make_ref_parser(); }},
          {{"cpu.parse", "shared core parser, prefetching batch loop, threads", 10, engine_always},
           []() -> ParserTable::Made { return detail::make_cpu_parser(); }},
#if defined(WARPATH_HAVE_CUDA)
          {{"cuda.parse", "shared core parser, one CUDA thread per packet", 5,
            cuda_engine_available},
           []() { return detail::make_cuda_parser(); }},
#endif
      },
      [](std::unique_ptr<Parser> engine) -> ParserTable::Made {
        return std::unique_ptr<Parser>(std::make_unique<ValidatingParser>(std::move(engine)));
      });
  return table;
}

}  // namespace

std::vector<EngineInfo> parser_engines() { return parser_table().infos(); }

Result<std::unique_ptr<Parser>> make_parser(std::string_view requested) {
  return parser_table().make(requested);
}

Result<std::vector<PacketInfo>> parse_batch(const PacketBatch& batch, std::string_view id) {
  WARPATH_ASSIGN_OR_RETURN(auto parser, make_parser(id));
  std::vector<PacketInfo> out(batch.size());
  ExecContext ctx;
  WARPATH_TRY(parser->parse(batch.view(), {out.data(), batch.size()}, ctx));
  return out;
}

namespace detail {

std::string describe_difference(uint32_t index, const PacketInfo& got, const PacketInfo& want) {
  // The first differing byte of the 64-byte records locates any field, named or not.
  const auto* a  = reinterpret_cast<const uint8_t*>(&got);
  const auto* b  = reinterpret_cast<const uint8_t*>(&want);
  unsigned first = 0;
  while (first < sizeof(PacketInfo) && a[first] == b[first]) ++first;
  char text[640];
  std::snprintf(text, sizeof text,
                "packet %u (first difference at PacketInfo byte %u): got status=%s proto=%u "
                "ports=%u/%u flags=0x%02x fields=0x%02x l4=%u, reference status=%s proto=%u "
                "ports=%u/%u flags=0x%02x fields=0x%02x l4=%u",
                index, first, parse_status_name(got.status), got.proto, got.sport, got.dport,
                got.flags, got.fields, got.l4_offset, parse_status_name(want.status), want.proto,
                want.sport, want.dport, want.flags, want.fields, want.l4_offset);
  return text;
}

}  // namespace detail
}  // namespace warpath::packet
