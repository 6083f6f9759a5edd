// The null port: no RX queues; every packet sent to it is discarded and counted.
#include "runtime/ports/port_impl.hpp"

namespace warpath::runtime::detail {

namespace {

class NullPort final : public Port {
 public:
  NullPort(std::string_view name, const PortOptions& options)
      : name_(name), counters_(0, options.workers) {}

  const std::string& name() const noexcept override { return name_; }
  std::string describe() const override { return "null (discards)"; }
  uint32_t rx_queue_count() const noexcept override { return 0; }
  Result<uint32_t> rx_burst(uint32_t, packet::PacketBatch&, uint32_t) override { return 0u; }
  bool rx_done(uint32_t) const noexcept override { return true; }
  uint32_t tx_burst(uint32_t worker, packet::PacketBatch& batch,
                    Span<const uint32_t> which) override {
    return counters_.discard(worker, batch, which);
  }
  PortStats stats() const override { return counters_.sum(); }

 private:
  std::string name_;
  PortCounters counters_;
};

}  // namespace

Result<std::unique_ptr<Port>> open_null_port(std::string_view name, const PortOptions& options) {
  return std::unique_ptr<Port>(std::make_unique<NullPort>(name, options));
}

}  // namespace warpath::runtime::detail
