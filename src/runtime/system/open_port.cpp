// open_port(): every kind of port. pcap, afxdp and dpdk need libraries warpath_runtime does
// without, so they are opened here; the rest by open_builtin_port().
#include "runtime/ports/port_impl.hpp"

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

}  // namespace warpath::runtime
