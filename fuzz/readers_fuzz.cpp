// libFuzzer target for warpath's file readers: every text format a user hands warpath, and
// captures through the project's reader. One binary, one reader per run, chosen by the
// environment variable WARPATH_FUZZ_READER (each reader has its own seed corpus and test):
//
//   classbench   io::parse_classbench_rules      ClassBench filter sets
//   trace        io::parse_trace                 ClassBench traces
//   routes       lookup::parse_routes            route files (prefix/len [nexthop])
//   updates      lookup::parse_route_updates     LINX update streams (on an empty table)
//   neighbors    forward::parse_neighbors        neighbour files (on a small table)
//   openflow     classify::parse_openflow_rules  ovs-ofctl flows
//   chain        runtime::parse_chain            --chain text
//   toml         runtime::parse_run_config       run configurations (validated as the CLI does)
//   pcap         io::PcapReader                  pcap / pcapng through libpcap and our checks
//   nidsrules    nids::add_rules_text            Suricata rule files (addresses, ports, options)
//   sa           io::parse_sa_text               IPsec SA files (TOML, ip xfrm's fields)
//   http         runtime::parse_http_head        requests to the metrics endpoint
//   ofmsg        openflow::Session::receive      OpenFlow 1.0 messages from a peer, over the
//                                                real flow table (openflow_switch_shim.hpp)
//
// What is checked: no crash, no leak of memory errors (AddressSanitizer, UBSan), bounded work;
// every failure is a Status, never an exception. Inputs above 1 MiB are skipped.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "warpath/classify/rule.hpp"
#include "warpath/forward/router.hpp"
#include "warpath/io/classbench.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/lookup/route.hpp"
#include "warpath/nids/rule.hpp"
#include "warpath/runtime/chain.hpp"
#include "warpath/runtime/run_config.hpp"
#include "warpath/io/sa_file.hpp"
#include "openflow_switch_shim.hpp"
#include "runtime/http_head.hpp"

namespace {

enum class Reader {
  kClassBench, kTrace, kRoutes, kUpdates, kNeighbors, kOpenFlow, kChain, kToml, kPcap, kNidsRules,
  kSa, kHttp, kOfMsg
};

Reader reader() {
  static const Reader r = [] {
    const char* e = std::getenv("WARPATH_FUZZ_READER");
    const std::string_view v = e ? e : "";
    if (v == "classbench") return Reader::kClassBench;
    if (v == "trace") return Reader::kTrace;
    if (v == "routes") return Reader::kRoutes;
    if (v == "updates") return Reader::kUpdates;
    if (v == "neighbors") return Reader::kNeighbors;
    if (v == "openflow") return Reader::kOpenFlow;
    if (v == "chain") return Reader::kChain;
    if (v == "toml") return Reader::kToml;
    if (v == "pcap") return Reader::kPcap;
    if (v == "nidsrules") return Reader::kNidsRules;
    if (v == "sa") return Reader::kSa;
    if (v == "http") return Reader::kHttp;
    if (v == "ofmsg") return Reader::kOfMsg;
    std::fprintf(stderr,
                 "WARPATH_FUZZ_READER must be one of classbench, trace, routes, updates, "
                 "neighbors, openflow, chain, toml, pcap, nidsrules, sa, http, ofmsg\n");
    std::exit(2);
  }();
  return r;
}

const warpath::lookup::RouteTable& small_table() {
  static const warpath::lookup::RouteTable t =
      warpath::lookup::parse_routes("fuzz.fib", "10.0.0.0/8 1\n10.1.0.0/16 2\n2001:db8::/32 3\n")
          .value();
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warpath;
  if (size > (1u << 20)) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  switch (reader()) {
    case Reader::kClassBench:
      (void)io::parse_classbench_rules(text, "fuzz.rules");
      break;
    case Reader::kTrace:
      (void)io::parse_trace(text, "fuzz.trace");
      break;
    case Reader::kRoutes:
      (void)lookup::parse_routes("fuzz.fib", text);
      break;
    case Reader::kUpdates: {
      lookup::RouteTable t;  // empty: the updates' first next hop decides named or numeric
      (void)lookup::parse_route_updates("fuzz.updates", text, t);
      break;
    }
    case Reader::kNeighbors:
      (void)forward::parse_neighbors("fuzz.neighbors", text, small_table());
      break;
    case Reader::kOpenFlow:
      (void)classify::parse_openflow_rules(text, "fuzz.flows");
      break;
    case Reader::kChain:
      (void)runtime::parse_chain(text);
      break;
    case Reader::kToml: {
      runtime::RunConfig c;
      (void)runtime::parse_run_config(text, "fuzz.toml", c);
      break;
    }
    case Reader::kNidsRules: {
      nids::RuleSet set;
      nids::add_rules_text(set, text, "fuzz.rules", nids::Vars{});
      break;
    }
    case Reader::kSa:
      (void)io::parse_sa_text("fuzz.sa", text);
      break;
    case Reader::kHttp: {
      // As the server reads: the head at the start, then what follows it (pipelining).
      std::string_view rest = text;
      for (int round = 0; round < 64 && !rest.empty(); ++round) {
        runtime::HttpHead head;
        size_t used = 0;
        std::string why;
        const runtime::HeadParse p = runtime::parse_http_head(rest, head, used, why);
        if (p != runtime::HeadParse::kComplete) {
          if (p == runtime::HeadParse::kBad && why.empty()) std::abort();  // a 400 says why
          break;
        }
        if (used == 0 || used > rest.size() || used > runtime::kMaxHttpHead || head.method.empty())
          std::abort();
        rest.remove_prefix(used);
      }
      break;
    }
    case Reader::kOfMsg: {
      // A peer's byte stream, cut where the input says (its first byte: the chunk size), as the
      // agent's reads would cut it; the session must answer or close, never misbehave.
      static const fuzz::SwitchShim sw;
      static const openflow::SwitchInfo info = [] {
        openflow::SwitchInfo i;
        for (uint16_t p = 1; p <= 3; ++p) i.ports.push_back({p, "p" + std::to_string(p), {2, 0, 0, 0, 0, uint8_t(p)}});
        return i;
      }();
      if (size == 0) break;
      openflow::Session s(sw, info, data[0] & 1);
      const size_t chunk = 1 + data[0] / 2;
      std::vector<uint8_t> out;
      for (size_t at = 1; at < size; at += chunk) {
        out.clear();
        if (!s.receive(data + at, std::min(chunk, size - at), out)) {
          if (s.why().empty()) std::abort();  // a closed session says why
          break;
        }
        (void)s.take_removed();
        (void)s.take_port_status();
      }
      (void)sw.expire();
      break;
    }
    case Reader::kPcap: {
      // Through a memory file, as a capture on disk would be read.
      static const int fd = memfd_create("fuzz.pcap", 0);
      if (fd < 0) std::abort();
      if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != ssize_t(size)) std::abort();
      auto r = io::PcapReader::open("/proc/self/fd/" + std::to_string(fd));
      if (!r.is_ok()) break;
      auto batch = packet::PacketBatch::create(64, 2048, 64 * 2048 + 262144);
      if (!batch.is_ok()) std::abort();
      for (int round = 0; round < 1000 && !r->at_end(); ++round) {
        batch->clear();
        if (!r->read(*batch).is_ok()) break;
      }
      break;
    }
  }
  return 0;
}
