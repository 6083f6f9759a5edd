// ref.parse as a Parser engine: the oracle, one packet at a time.
#include "packet/engines.hpp"
#include "packet/reference/parse_reference.hpp"

namespace warpath::packet::detail {
namespace {

class RefParser final : public Parser {
 public:
  std::string_view id() const noexcept override { return "ref.parse"; }
  Status do_parse(const BatchView& batch, Span<PacketInfo> out, ExecContext&) const override {
    for (uint32_t i = 0; i < batch.count; ++i)
      out[i] = reference::parse_packet(batch.data(i), batch.metas[i].caplen, batch.metas[i].len);
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<Parser> make_ref_parser() { return std::make_unique<RefParser>(); }

}  // namespace warpath::packet::detail
