// Port SPEC parsing (the grammar is in include/warpath/runtime/port.hpp).
#include <charconv>
#include <cmath>
#include <string>
#include <string_view>

#include "warpath/io/same_file.hpp"
#include "runtime/ports/port_impl.hpp"

namespace warpath::runtime {

namespace {

using detail::port_error;

bool consume_suffix(std::string_view& text, std::string_view suffix) {
  if (text.size() < suffix.size() || text.substr(text.size() - suffix.size()) != suffix)
    return false;
  text.remove_suffix(suffix.size());
  return true;
}

// "2.5M" -> 2.5e6; k/K, M, G multipliers. False when not a finite non-negative number.
bool parse_scaled(std::string_view text, double& out) {
  double scale = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'k':
      case 'K':
        scale = 1e3;
        break;
      case 'M':
        scale = 1e6;
        break;
      case 'G':
        scale = 1e9;
        break;
      default:
        break;
    }
    if (scale != 1) text.remove_suffix(1);
  }
  if (text.empty()) return false;
  double v       = 0;
  const auto end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v, std::chars_format::general);
  if (ec != std::errc() || ptr != end || !std::isfinite(v) || v < 0) return false;
  out = v * scale;
  return std::isfinite(out);
}

Status parse_rate(std::string_view name, std::string_view text, double& rate) {
  if (text == "max") {
    rate = 0;
    return Status::ok();
  }
  std::string_view t = text;
  consume_suffix(t, "pps");
  if (!parse_scaled(t, rate))
    return port_error(Errc::kInvalidArgument, name,
                      "gen: bad rate '" + std::string(text) +
                          "' (packets per second: 1000, 10k, 2.5M, 1Mpps, or max / 0 for as "
                          "fast as possible)");
  return Status::ok();
}

Status parse_count(std::string_view name, std::string_view text, uint64_t& count) {
  double v = 0;
  if (!parse_scaled(text, v) || v != std::floor(v) || v > 1.8e19)
    return port_error(
        Errc::kInvalidArgument, name,
        "gen: bad count '" + std::string(text) + "' (a whole number of packets: 1000, 10k, 2M)");
  if (v == 0)
    return port_error(Errc::kInvalidArgument, name,
                      "gen: count must be positive (leave it out for no limit)");
  count = static_cast<uint64_t>(v);
  return Status::ok();
}

// Linux's dev_valid_name(): 1..15 bytes, not "." or "..", no '/', ':' or white space.
Status check_iface(std::string_view name, std::string_view kind, std::string_view iface) {
  auto bad = [&](std::string_view why) {
    return port_error(Errc::kInvalidArgument, name,
                      std::string(kind) + ": bad interface name '" + std::string(iface) +
                          "': " + std::string(why));
  };
  if (iface.empty())
    return port_error(Errc::kInvalidArgument, name,
                      std::string(kind) + ": missing interface (" + std::string(kind) +
                          ":IFACE, e.g. " + std::string(kind) + ":eth0)");
  if (iface.size() > 15) return bad("longer than 15 characters");
  if (iface == "." || iface == "..") return bad("not an interface name");
  for (char c : iface)
    if (c == '/' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
        c == '\f')
      return bad("contains '/', ':' or white space");
  return Status::ok();
}

// dpdk:VDEV[,KEY=VALUE...]: the text goes to rte_vdev_init() as it is; the device name (up to
// the first ',') is a DPDK driver name and an instance ("net_pcap0"): it starts with a letter
// and holds letters, digits and '_'. The arguments are the driver's to judge (a value cannot
// hold a ',': DPDK's devargs have no quoting).
Status check_vdev(std::string_view name, std::string_view args) {
  constexpr std::string_view kExamples =
      " (dpdk:VDEV[,KEY=VALUE...], e.g. dpdk:net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap, "
      "dpdk:net_ring0, dpdk:net_af_packet0,iface=eth0)";
  const std::string_view vdev = args.substr(0, args.find(','));
  if (vdev.empty())
    return port_error(Errc::kInvalidArgument, name,
                      "dpdk: missing virtual device" + std::string(kExamples));
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  bool ok           = letter(vdev[0]);
  for (char c : vdev) ok = ok && (letter(c) || (c >= '0' && c <= '9') || c == '_');
  if (!ok)
    return port_error(Errc::kInvalidArgument, name,
                      "dpdk: bad virtual device name '" + std::string(vdev) +
                          "' (a driver name and an instance number, like net_pcap0)");
  return Status::ok();
}

}  // namespace

Result<PortSpec> parse_port_spec(std::string_view name, std::string_view spec) {
  if (spec.empty())
    return port_error(Errc::kInvalidArgument, name,
                      "empty spec (pcap:IN:OUT, afpacket:IFACE, afxdp:IFACE, gen:RATE[:COUNT], "
                      "null or dpdk:VDEV[,ARGS])");
  const size_t colon          = spec.find(':');
  const std::string_view kind = spec.substr(0, colon);
  const bool has_args         = colon != std::string_view::npos;
  const std::string_view args = has_args ? spec.substr(colon + 1) : std::string_view();
  PortSpec out;
  out.kind = std::string(kind);

  if (kind == "null") {
    if (has_args)
      return port_error(Errc::kInvalidArgument, name,
                        "null takes no arguments (got '" + std::string(spec) + "')");
    return out;
  }
  if (kind == "gen") {
    // "gen" alone is "gen:max".
    if (!has_args) return out;
    const size_t c2 = args.find(':');
    WARPATH_TRY(parse_rate(name, args.substr(0, c2), out.rate_pps));
    if (c2 != std::string_view::npos) {
      const std::string_view count = args.substr(c2 + 1);
      if (count.find(':') != std::string_view::npos)
        return port_error(Errc::kInvalidArgument, name,
                          "gen: too many fields in '" + std::string(spec) + "' (gen:RATE[:COUNT])");
      WARPATH_TRY(parse_count(name, count, out.count));
    }
    return out;
  }
  if (kind == "pcap") {
    // pcap:IN:OUT. A file name may itself hold a colon, so OUT starts after the last one;
    // "pcap:IN" alone receives only.
    const size_t c2 = args.rfind(':');
    out.in          = std::string(args.substr(0, c2));
    if (c2 != std::string_view::npos) out.out = std::string(args.substr(c2 + 1));
    if (out.in.empty() && out.out.empty())
      return port_error(Errc::kInvalidArgument, name,
                        "pcap: needs an input or an output file (pcap:IN:OUT, pcap:IN: to "
                        "receive only, pcap::OUT to send only)");
    if (!out.in.empty() && (out.in == out.out || io::same_file(out.in, out.out)))
      return port_error(Errc::kInvalidArgument, name,
                        "pcap: input '" + out.in + "' and output '" + out.out +
                            "' are the same file; writing would destroy the input");
    return out;
  }
  if (kind == "afpacket" || kind == "afxdp" || kind == "tap") {
    WARPATH_TRY(check_iface(name, kind, args));
    out.iface = std::string(args);
    return out;
  }
  if (kind == "dpdk") {
    WARPATH_TRY(check_vdev(name, args));
    out.args = std::string(args);
    return out;
  }
  return port_error(Errc::kInvalidArgument, name,
                    "unknown port kind '" + std::string(kind) + "' in '" + std::string(spec) +
                        "' (pcap:IN:OUT, afpacket:IFACE, afxdp:IFACE, gen:RATE[:COUNT], null, "
                        "tap:IFACE, dpdk:VDEV[,ARGS])");
}

}  // namespace warpath::runtime
