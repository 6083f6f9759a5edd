#include "forward_print.hpp"

#include <fmt/core.h>

namespace warpath::cli {

nlohmann::ordered_json counters_json(const forward::ForwardCounters& c) {
  nlohmann::ordered_json j;
  j["rx"]                      = c.rx;
  j["tx"]                      = c.tx;
  j["dropped"]                 = c.dropped;
  j["slow_path"]               = c.slow_path;
  nlohmann::ordered_json ports = nlohmann::ordered_json::object();
  for (const auto& [port, n] : c.tx_by_port) ports[std::to_string(port)] = n;
  j["tx_by_port"]             = ports;
  nlohmann::ordered_json slow = nlohmann::ordered_json::object(),
                         drop = nlohmann::ordered_json::object();
  for (unsigned i = 0; i < forward::kReasonCount; ++i) {
    const auto r = forward::Reason(i);
    if (forward::reason_verdict(r) == forward::Verdict::kSlowPath)
      slow[forward::reason_name(r)] = c.by_reason[i];
    if (forward::reason_verdict(r) == forward::Verdict::kDrop)
      drop[forward::reason_name(r)] = c.by_reason[i];
  }
  j["slow_path_reasons"] = slow;
  j["drop_reasons"]      = drop;
  j["icmp_sent"]         = c.icmp_sent;
  j["icmp_suppressed"]   = c.icmp_suppressed;
  return j;
}

void print_counters(const forward::ForwardCounters& c) {
  auto line    = [](const std::string& name, uint64_t n) { fmt::print("{:<22}{:>12}\n", name, n); };
  auto reasons = [&](forward::Verdict v) {
    for (unsigned i = 0; i < forward::kReasonCount; ++i)
      if (forward::reason_verdict(forward::Reason(i)) == v && c.by_reason[i])
        line(std::string("  ") + forward::reason_name(forward::Reason(i)), c.by_reason[i]);
  };
  line("rx", c.rx);
  line("tx", c.tx);
  for (const auto& [port, n] : c.tx_by_port) line(fmt::format("  port{}", port), n);
  line("dropped", c.dropped);
  reasons(forward::Verdict::kDrop);
  line("slow_path", c.slow_path);
  reasons(forward::Verdict::kSlowPath);
  line("icmp_sent", c.icmp_sent);
  line("icmp_suppressed", c.icmp_suppressed);
}

}  // namespace warpath::cli
