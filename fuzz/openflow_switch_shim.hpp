// fuzz/openflow_switch_shim.hpp: the switch an OpenFlow session drives, for the readers fuzz
// target's `ofmsg` reader: the real flow table (openflow::FlowTable: flow_mods, selection for
// statistics, expiry) and nothing of the data path (packet_outs and port_mods are checked and
// dropped). Single-threaded, as the fuzzer is.
#pragma once
#include <vector>

#include "warpath/openflow/flow_table.hpp"
#include "warpath/openflow/session.hpp"

namespace warpath::fuzz {

class SwitchShim final : public openflow::SwitchControl {
 public:
  openflow::FlowModResult flow_mod(openflow::FlowModCommand cmd,
                                   const openflow::FlowSpec& spec) const override {
    return table_.apply(cmd, spec, now_ns());
  }
  Status publish() const override { return Status::ok(); }
  std::vector<openflow::FlowEntry> flows(const openflow::Match& filter,
                                         uint16_t out_port) const override {
    std::vector<openflow::FlowEntry> out;
    for (const openflow::FlowEntry* e : table_.select(filter, out_port)) out.push_back(*e);
    return out;
  }
  openflow::TableStats table_stats() const override {
    return {uint32_t(table_.size()), table_.capacity(), 0, 0};
  }
  std::vector<openflow::RemovedFlow> expire() const override { return table_.expire(now_ns()); }
  void listen_packet_in(bool) const override {}
  void take_packet_ins(std::vector<openflow::PacketIn>&) const override {}
  uint64_t now_ns() const override { return clock_ += 1'000'000; }
  Status packet_out(uint16_t, const std::vector<openflow::Action>&,
                    const std::vector<uint8_t>&) const override {
    return Status::ok();
  }
  Status port_mod(uint16_t port_no, uint32_t, uint32_t) const override {
    return port_no >= 1 && port_no <= 3 ? Status::ok() : Status(Errc::kNotFound, "no such port");
  }
  uint32_t port_config(uint16_t) const override { return 0; }

 private:
  mutable openflow::FlowTable table_{1024};
  mutable uint64_t clock_ = 0;
};

}  // namespace warpath::fuzz
