// open_port(): every kind of port. pcap, afxdp and dpdk need libraries warpath_runtime does
// without, so they are opened here; the rest by open_builtin_port().
#include "runtime/ports/port_impl.hpp"
#include "warpath/runtime/pipeline.hpp"

namespace warpath::runtime {

namespace detail {
// dpdk_port.cpp (declared here: port_impl.hpp lists the kinds warpath_runtime knows of).
Result<std::unique_ptr<Port>> open_dpdk_port(std::string_view name, const PortSpec& spec,
                                             const PortOptions& options);
}  // namespace detail

Result<std::unique_ptr<Port>> open_port(std::string_view name, std::string_view spec,
                                        const PortOptions& options) {
  WARPATH_ASSIGN_OR_RETURN(PortSpec parsed, parse_port_spec(name, spec));
  if (parsed.kind == "pcap") return detail::open_pcap_port(name, parsed, options);
  if (parsed.kind == "afxdp") return detail::open_afxdp_port(name, parsed, options);
  if (parsed.kind == "dpdk") return detail::open_dpdk_port(name, parsed, options);
  return open_builtin_port(name, parsed, options);
}

Status open_run_ports(const RunConfig& c, RunInputs& in) {
  PortOptions po;
  po.rx_queues   = c.workers;
  po.workers     = c.workers;
  po.seed        = c.seed;
  po.gen_profile = c.gen_profile;
  po.rx_wait_us  = c.delay_us;
  po.zero_copy   = c.zero_copy;
  po.held_packets = packets_held(c);
  for (size_t i = 0; i < c.ports.size(); ++i) {
    po.index = uint16_t(i);
    WARPATH_ASSIGN_OR_RETURN(auto port,
                             open_port(c.ports[i].first, c.ports[i].second, po));
    in.ports.push_back(std::move(port));
  }
  if (!c.slow_path.empty()) {
    po.index     = uint16_t(c.ports.size());
    po.rx_queues = 0;
    // tap:IFACE hands the slow path to the host's stack; anything else is a capture file.
    const bool tap = c.slow_path.rfind("tap:", 0) == 0;
    WARPATH_ASSIGN_OR_RETURN(
        in.slow_path, open_port("slow_path", tap ? c.slow_path : "pcap::" + c.slow_path, po));
  }
  return Status::ok();
}

}  // namespace warpath::runtime
