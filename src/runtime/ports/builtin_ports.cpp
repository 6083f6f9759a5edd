// open_builtin_port(): the kinds warpath_runtime can open by itself (gen, null, afpacket).
#include "runtime/ports/port_impl.hpp"

namespace warpath::runtime {

Result<std::unique_ptr<Port>> open_builtin_port(std::string_view name, const PortSpec& spec,
                                                const PortOptions& options) {
  if (spec.kind == "gen") return detail::open_gen_port(name, spec, options);
  if (spec.kind == "null") return detail::open_null_port(name, options);
  if (spec.kind == "tap") return detail::open_tap_port(name, spec, options);
  if (spec.kind == "afpacket") return detail::open_afpacket_port(name, spec, options);
  if (spec.kind == "pcap" || spec.kind == "afxdp")
    return detail::port_error(Errc::kNotSupported, name,
                              spec.kind +
                                  " ports are opened by open_port() (warpath_runtime_sys), not "
                                  "by open_builtin_port()");
  return detail::port_error(Errc::kNotSupported, name, "unknown port kind '" + spec.kind + "'");
}

}  // namespace warpath::runtime
