// The parser engine registry: the only list of parser engines (see
// include/warpath/packet/parser.hpp).
#include <cstdio>

#include "core/validating.hpp"
#include "packet/engines.hpp"
#include "warpath/core/cuda_device.hpp"

namespace warpath::packet {
namespace {

bool always() { return true; }
bool have_gpu() { return cuda_device_count() > 0; }

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

}  // namespace

std::vector<EngineInfo> parser_engines() {
  std::vector<EngineInfo> engines = {
      {"ref.parse", "naive byte-by-byte parser (the oracle)", 0, &always},
      {"cpu.parse", "shared core parser, prefetching batch loop, threads", 10, &always},
  };
#if defined(WARPATH_HAVE_CUDA)
  engines.push_back({"cuda.parse", "shared core parser, one CUDA thread per packet", 5, &have_gpu});
#else
  (void)&have_gpu;
#endif
  return engines;
}

Result<std::unique_ptr<Parser>> make_parser(std::string_view requested) {
  bool validating = false;
  WARPATH_ASSIGN_OR_RETURN(const std::string id,
                           resolve_engine(parser_engines(), "parser", requested, validating));
  std::unique_ptr<Parser> engine;
  if (id == "ref.parse") engine = detail::make_ref_parser();
  if (id == "cpu.parse") engine = detail::make_cpu_parser();
#if defined(WARPATH_HAVE_CUDA)
  if (id == "cuda.parse") {
    WARPATH_ASSIGN_OR_RETURN(engine, detail::make_cuda_parser());
  }
#endif
  if (!engine) return Status(Errc::kNotFound, "no factory for parser engine " + id);
  if (validating)
    return std::unique_ptr<Parser>(std::make_unique<ValidatingParser>(std::move(engine)));
  return engine;
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
