// warpath-esp-bench: the ESP gateway's CPU path beside intel-ipsec-mb's raw cipher + hash in
// the same run, on the same core, on the same buffers: Gbit/s and Mpps per suite at inner
// packet sizes of 64, 512 and 1420 bytes. Markdown on stdout, JSON with --json FILE.
//
//   warpath-esp-bench [--repeat N] [--seconds S] [--sizes 64,512,1420] [--suites gcm,...]
//                     [--policies N] [--breakdown] [--cold] [--json FILE]
//
// --cold: the packets' source bytes (what the copying paths copy from, what the zero-copy
// paths' frames hold) are flushed from the caches before each pass, untimed: a device's write
// without DDIO. Without it they are in cache in both kinds of path.
// --breakdown: per path, the time per packet of each step of a pass on stderr (cycle-clock
// ticks around each stage, the chain's per-module ticks; seven clock reads a frame of 128,
// taken with or without the option): the frame fill, the parse (with the chain's per-packet
// resets before the modules), the module's pre (policy, checks, encapsulation or SA lookup),
// the shade (the crypto job) and the post.
//
// --policies N: the security policy database holds N outbound and N inbound policies, the
// packets' own last: N - 1 host-pair policies (172.16.x.y -> 172.17.x.y) first, in file
// order, naming the same two SAs, so that esp-in's check of its SA's own policies sees all N
// as well. The worst case for a scan; for the index (src/ipsec/spd_index.hpp), two selector
// shapes, two probes per lookup, whatever N.
//
// Rows, per suite and size (128 packets per batch). The timed rows run in --repeat rounds, each
// round running every row for --seconds in turn, so that the anchor and the modules are timed in
// the same minutes; a row reports its best round. (Timed one row after another, the module's
// ratio moved by several per cent between runs as the machine's speed drifted.)
//   imb.burst          intel-ipsec-mb's burst API (IMB_SUBMIT_BURST, the checked form)
//                      sealing the 128 packets' ESP text in place, each tag written in place
//   imb.burst.nocheck  the same without the library's argument checks (its fastest form, the
//                      one cpu.esp uses for well-formed bursts)
//   cpu.esp.seal       warpath's engine over the same buffers (SPI, seq, IV written as an ESP
//                      packet has them)
//   cpu.esp.open       opening them (ICV check, then decryption): open + seal pairs less the
//                      seal (derived; an opened packet must be sealed again to be opened)
//   esp-out            the whole outbound path as `warpath run` does it: the frame filled
//                      (the copy every received packet gets), the parser, esp-out's policy
//                      match, encapsulation (TTL, outer header, trailer, sequence numbers),
//                      sealing, and the parse of the result
//   esp-in             the whole inbound path: frame filled with sealed packets, parser, SA
//                      lookup, anti-replay, open, padding, decapsulation, policy check
//   ... module         the path less "rx copy + parse" (the frame fill and the parser every
//                      packet of any chain pays): the module's own cost, derived from the best
//                      rounds
//   ... module, median of rounds
//                      the same derived within each round, against that round's anchor: the
//                      median round's rate and, under "vs best imb", the median of the rounds'
//                      ratios (the steadier figure)
//   esp-out, zero copy / esp-in, zero copy
//                      the whole paths with the rx a zero-copy port does (ADR 0017): the
//                      packets written into mbuf-like buffers of the packet arena (untimed: the
//                      device's write) and held in place by the frame; their bases
//                      ("rx attach + parse (zero copy)", "esp-in base, zero copy") beside
//   esp-out yardstick, zero copy
//                      the floor of the outbound path outside the crypto (esp_yardstick.hpp):
//                      the least a gateway does for a packet a zero-copy port hands it, for one
//                      SA and one policy, without the framework, then the anchor's seal
//   in-place seal, zero copy
//                      the anchor's seal alone over packets where a zero-copy frame holds
//                      them (the text at an mbuf's byte 142): the crypto's own cost in place
//   esp-in yardstick, zero copy / in-place open, zero copy
//                      the same for the inbound path: its floor (the checks, the anchor's
//                      open, the ICV compared, the trailer, the decapsulation, the policy's
//                      selectors), and the anchor's open alone in place
//   imb.open.burst.nocheck
//                      the anchor opening its own packed packets (decrypt jobs, tags into
//                      scratch, compared by nobody): the inbound rows' crypto
//   ref.esp.seal       OpenSSL EVP, one packet at a time (the reference; for scale)
// Gbit/s counts the inner packets' bytes; "vs best imb" divides by the faster of the two
// imb.burst rows (the anchor at its best).
#include <intel-ipsec-mb.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "esp_chain_run.hpp"
#include "esp_yardstick.hpp"
#include "harness/report.hpp"
#include "imb_anchor.hpp"
#include "ipsec/core/esp_core.hpp"
#include "warpath/io/sa_file.hpp"
#include "warpath/ipsec/ipsec.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/runtime/chain.hpp"

using namespace warpath;
using namespace warpath::ipsec;
using bench::esp::best_rate;
using bench::esp::ChainRun;

namespace {

using bench::esp::full_burst;
using bench::esp::ImbAnchor;
using bench::esp::kBatch;

struct Suite {
  const char* name;
  const char* sa_fields;  // the [[sa]] keys after src/dst/spi/dir
};
const Suite kSuites[] = {
    {"aes128-ctr+hmac-sha1-96",
     "enc = \"rfc3686(ctr(aes))\"\nenc_key = \"0x00112233445566778899aabbccddeeffdeadbeef\"\n"
     "auth = \"hmac(sha1)\"\nauth_key = \"0x0102030405060708090a0b0c0d0e0f1011121314\"\n"},
    {"aes128-gcm-16",
     "aead = \"rfc4106(gcm(aes))\"\naead_key = \"0x000102030405060708090a0b0c0d0e0fcafebabe\"\n"},
};

std::string sa_text(const Suite& s, uint32_t policies) {
  std::string decoys;
  for (uint32_t k = 1; k < policies; ++k) {
    const std::string a = std::to_string(k >> 8 & 255) + "." + std::to_string(k & 255);
    for (const char* dir : {"out", "in"})
      decoys += std::string("[[policy]]\nsrc = \"172.16.") + a + "/32\"\ndst = \"172.17." + a +
                "/32\"\ndir = \"" + dir + "\"\n" +
                (dir[0] == 'o' ? "tmpl_src = \"192.0.2.1\"\ntmpl_dst = \"192.0.2.2\"\n"
                               : "tmpl_src = \"192.0.2.2\"\ntmpl_dst = \"192.0.2.1\"\n");
  }
  return std::string(
             "[[sa]]\nsrc = \"192.0.2.1\"\ndst = \"192.0.2.2\"\nspi = 0x2001\ndir = \"out\"\nmtu = "
             "9000\n") +
         s.sa_fields +
         "[[sa]]\nsrc = \"192.0.2.2\"\ndst = \"192.0.2.1\"\nspi = 0x2001\ndir = \"in\"\n" +
         s.sa_fields + decoys +
         "[[policy]]\nsrc = \"10.1.0.0/16\"\ndst = \"10.2.0.0/16\"\ndir = \"out\"\n"
         "tmpl_src = \"192.0.2.1\"\ntmpl_dst = \"192.0.2.2\"\n"
         "[[policy]]\nsrc = \"10.0.0.0/8\"\ndst = \"10.0.0.0/8\"\ndir = \"in\"\n"
         "tmpl_src = \"192.0.2.2\"\ntmpl_dst = \"192.0.2.1\"\n";
}

// An Ethernet frame with an IPv4/UDP packet of `ip_len` bytes from 10.1.0.5 to 10.2.0.1
// (or the reverse).
std::vector<uint8_t> frame(uint32_t ip_len, bool reverse) {
  std::vector<uint8_t> f(14 + ip_len, 0x5a);
  f[12] = 0x08, f[13] = 0x00;
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x45, ip[1] = 0;
  ipsec::core::store_be16(ip + 2, ip_len);
  ipsec::core::store_be16(ip + 4, 1);
  ipsec::core::store_be16(ip + 6, 0);
  ip[8] = 64, ip[9] = 17, ip[10] = ip[11] = 0;
  const uint8_t a[4] = {10, 1, 0, 5}, b[4] = {10, 2, 0, 1};
  std::memcpy(ip + 12, reverse ? b : a, 4);
  std::memcpy(ip + 16, reverse ? a : b, 4);
  const uint16_t sum = packet::core::fold_checksum(packet::core::ones_sum(ip, 20));
  ipsec::core::store_be16(ip + 10, sum);
  ipsec::core::store_be16(ip + 20, 4000);
  ipsec::core::store_be16(ip + 22, 53);
  ipsec::core::store_be16(ip + 24, ip_len - 20);
  ipsec::core::store_be16(ip + 26, 0);
  return f;
}

using bench::Row;

std::string workload_of(const std::string& suite, uint32_t size) {
  return suite + " " + std::to_string(size) + " B";
}

/// A row of `suite` at `size` inner bytes: `what` ran at `pps` packets per second.
Row esp_row(const std::string& suite, const std::string& what, uint32_t size, double pps) {
  Row r;
  r.workload = workload_of(suite, size);
  r.engine   = what;
  r.anchor   = what.rfind("imb.", 0) == 0;
  r.unit     = "packets";
  r.rate     = pps;
  r.with("suite", suite).with("size", int64_t(size)).with("gbps", pps * size * 8 / 1e9);
  return r;
}

/// Every row of `suite` at `size` against the anchor's rate.
void ratios_to(std::vector<Row>& rows, const std::string& suite, uint32_t size, double anchor) {
  for (Row& r : rows)
    if (r.workload == workload_of(suite, size)) r.ratio = anchor > 0 ? r.rate / anchor : 0;
}

// --suites: a comma-separated list of words; a suite runs when its name contains one (all
// run without the option).
bool wanted(const std::string& only, std::string_view name) {
  if (only.empty()) return true;
  for (size_t b = 0; b <= only.size();) {
    const size_t e = std::min(only.find(',', b), only.size());
    if (e > b && name.find(std::string_view(only).substr(b, e - b)) != std::string_view::npos)
      return true;
    b = e + 1;
  }
  return false;
}

// The timed rows of the whole paths: the path, or its base (the rx and the parse alone;
// the inbound base also has its packets sealed again), copied into the frame or held in place.
const char* path_row(bool in, bool zero_copy, bool base) {
  if (base)
    return in ? (zero_copy ? "esp-in base, zero copy" : "esp-in base")
              : (zero_copy ? "rx attach + parse (zero copy)" : "rx copy + parse");
  return in ? (zero_copy ? "esp-in, zero copy" : "esp-in") : (zero_copy ? "esp-out, zero copy" : "esp-out");
}

// The command line.
struct Options {
  int repeat                  = 3;
  std::vector<uint32_t> sizes = {64, 512, 1420};
  double seconds              = 0.3;
  std::string json, only;
  bool breakdown    = false;
  bool cold         = false;
  uint32_t policies = 1;
};

// 0, or 2 after the usage line.
int parse_options(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) o.repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--seconds" && i + 1 < argc) o.seconds = std::atof(argv[++i]);
    else if (a == "--json" && i + 1 < argc) o.json = argv[++i];
    else if (a == "--cold")
      o.cold = true;
    else if (a == "--breakdown")
      o.breakdown = true;
    else if (a == "--policies" && i + 1 < argc)
      o.policies = uint32_t(std::clamp(std::atoi(argv[++i]), 1, 65535));
    else if (a == "--suites" && i + 1 < argc)
      o.only = argv[++i];
    else if (a == "--sizes" && i + 1 < argc) {
      o.sizes.clear();
      for (const char* p = argv[++i]; *p;) {
        o.sizes.push_back(uint32_t(std::strtoul(p, const_cast<char**>(&p), 10)));
        if (*p == ',') ++p;
        else if (*p) break;
      }
    }
    else {
      std::fprintf(stderr,
                   "usage: warpath-esp-bench [--repeat N] [--seconds S] [--sizes 64,512,1420] "
                   "[--suites gcm,sha1,...] [--policies N] [--breakdown] [--cold] [--json FILE]\n");
      return 2;
    }
  }
  return 0;
}

// A whole path: a chain of the module alone on its frame, with its input (kBatch packets of
// `size` bytes; the inbound path's are the outbound path's output), copying or zero copy.
struct Path {
  const char* kind;
  std::unique_ptr<runtime::TableSource> tables;  // what the chain was built from
  std::unique_ptr<runtime::Chain> chain;
  std::unique_ptr<runtime::Frame> frame;
  std::vector<std::vector<uint8_t>> input;
  std::unique_ptr<ChainRun> run;
  std::unique_ptr<packet::Parser> parser;
  bool zero_copy = false;
  ArenaSlice buffers;  // zero copy: the packets' buffers (ChainRun)
};

// Appends the path of `kind` to `paths` (made in place: its ChainRun holds references into
// it, so `paths` must not reallocate), checked: every packet goes through.
Status make_path(std::vector<Path>& paths, const char* kind, bool zero_copy, const SaConfig& cfg,
                 uint32_t size, bool cold) {
  const bool in    = kind[4] == 'i';
  auto tables      = std::make_unique<runtime::TableSource>();
  tables->load_sas = [&cfg](const std::string&) { return Result<SaConfig>(cfg); };
  runtime::BuildEnv env;
  env.port_count = 2;
  env.tables     = tables.get();
  WARPATH_ASSIGN_OR_RETURN(auto chain,
                           runtime::Chain::build({runtime::ModuleSpec{kind, {{"sa", "bench"}}, ""}}, env));
  auto batch = zero_copy ? packet::PacketBatch::create_in_arena(kBatch, 2048, 0, MemSpace::kHost,
                                                                chain->headroom())
                         : packet::PacketBatch::create(kBatch, 2048, 0, MemSpace::kHost,
                                                       chain->headroom());
  WARPATH_TRY(batch.status());
  Path& pa = paths.emplace_back(Path{kind, std::move(tables), std::move(chain),
                                     std::make_unique<runtime::Frame>(std::move(batch).value()),
                                     {}, nullptr, nullptr, zero_copy, {}});
  pa.chain->make_slots(*pa.frame);
  if (zero_copy) {
    WARPATH_ASSIGN_OR_RETURN(pa.buffers,
                             PacketArena::get().allocate(size_t(kBatch) * ChainRun::kBufBytes));
  }
  // The inbound path's input: the outbound path's output (sealed by warpath, the window off so
  // that the same packets may be opened again and again).
  pa.input.assign(kBatch, frame(size, false));
  if (in) {
    WARPATH_ASSIGN_OR_RETURN(
        auto out, runtime::Chain::build({runtime::ModuleSpec{"esp-out", {{"sa", "bench"}}, ""}}, env));
    runtime::Frame g(std::move(packet::PacketBatch::create(kBatch)).value());
    out->make_slots(g);
    ChainRun{*out, g, pa.input}.pass();
    for (uint32_t p = 0; p < kBatch; ++p) {
      pa.input[p].assign(g.batch.data(p), g.batch.data(p) + g.batch.meta(p).caplen);
      // Swap the endpoints: the packet now arrives at the inbound SA's destination.
      std::swap_ranges(pa.input[p].begin() + 26, pa.input[p].begin() + 30, pa.input[p].begin() + 30);
      uint8_t* ip = pa.input[p].data() + 14;
      ip[10] = ip[11] = 0;
      ipsec::core::store_be16(ip + 10, packet::core::fold_checksum(packet::core::ones_sum(ip, 20)));
    }
  }
  pa.run = std::make_unique<ChainRun>(ChainRun{*pa.chain, *pa.frame, pa.input});
  if (zero_copy) pa.run->buffers = &pa.buffers;
  pa.run->cold = cold;
  WARPATH_ASSIGN_OR_RETURN(pa.parser, packet::make_parser("cpu.parse"));
  // Every packet must go through (here, and in every timed pass: `stopped`).
  (void)pa.run->checked_pass();
  WARPATH_TRY(pa.run->went_through());
  pa.run->t_fill = pa.run->t_pre = pa.run->t_module_pre = pa.run->t_shade = pa.run->t_post =
      pa.run->passed                                                      = 0;
  return Status::ok();
}

// GASPP's AES application: the flow-aes module over 128 UDP flows (a packet of each per
// frame), beside intel-ipsec-mb's raw CTR burst over the same payloads under the same keys.
Status bench_flow_aes(IMB_MGR* mgr, const Options& opt, std::vector<Row>& rows) {
  const int repeat     = opt.repeat;
  const double seconds = opt.seconds;
  for (uint32_t size : wanted(opt.only, "flow-aes") ? opt.sizes : std::vector<uint32_t>{}) {
    if (size < 29) continue;  // a UDP payload of at least a byte
    const char* suite = "flow-aes aes128-ctr";
    auto add          = [&](const char* what, double pps) {
      rows.push_back(esp_row(suite, what, size, pps));
    };
    std::vector<std::vector<uint8_t>> input(kBatch);
    for (uint32_t p = 0; p < kBatch; ++p) {
      input[p] = frame(size, false);
      ipsec::core::store_be16(input[p].data() + 14 + 20, uint16_t(4000 + p));  // a flow each
    }
    const uint32_t payload = size - 28;
    // The anchor: a CTR job per packet over its payload, in place, a key per flow.
    alignas(64) static uint8_t keys[kBatch][16 * 15], dec[16 * 15], ivs[kBatch][16];
    for (uint32_t p = 0; p < kBatch; ++p) {
      uint8_t key[16];
      for (int b = 0; b < 16; ++b) key[b] = uint8_t(p * 31 + b);
      IMB_AES_KEYEXP_128(mgr, key, keys[p], dec);
      for (int b = 0; b < 16; ++b) ivs[p][b] = uint8_t(p + b);
    }
    std::vector<uint8_t> bufs(size_t(kBatch) * payload, 0x5a);
    double anchor = 0;
    for (const bool nocheck : {false, true}) {
      const double r = best_rate(
          [&] {
            IMB_JOB* jobs[kBatch];
            const uint32_t n = full_burst(mgr, kBatch, jobs);
            for (uint32_t p = 0; p < n; ++p) {
              IMB_JOB* j = jobs[p];
              uint8_t* d = bufs.data() + size_t(p) * payload;
              j->src = j->dst                     = d;
              j->cipher_start_src_offset_in_bytes = 0;
              j->msg_len_to_cipher_in_bytes       = payload;
              j->iv = ivs[p], j->iv_len_in_bytes = 16;
              j->enc_keys = j->dec_keys = keys[p];
              j->key_len_in_bytes       = 16;
              j->cipher_mode            = IMB_CIPHER_CNTR;
              j->cipher_direction       = IMB_DIR_ENCRYPT;
              j->chain_order            = IMB_ORDER_CIPHER_HASH;
              j->hash_alg               = IMB_AUTH_NULL;
            }
            uint32_t done =
                nocheck ? IMB_SUBMIT_BURST_NOCHECK(mgr, n, jobs) : IMB_SUBMIT_BURST(mgr, n, jobs);
            while (done < n) done += IMB_FLUSH_BURST(mgr, n - done, jobs + done);
            return uint64_t(n);
          },
          repeat, seconds);
      add(nocheck ? "imb.ctr.burst.nocheck" : "imb.ctr.burst", r);
      anchor = std::max(anchor, r);
    }
    // cpu.ctr alone over the same ranges (its own cost around the library's).
    {
      auto c = make_ctr_cipher("cpu.ctr");
      WARPATH_TRY(c.status());
      std::vector<CtrOp> ops(kBatch);
      for (uint32_t p = 0; p < kBatch; ++p) {
        uint8_t key[16];
        for (int b = 0; b < 16; ++b) key[b] = uint8_t(p * 31 + b);
        ops[p].key = c.value()->add_key(key, 16).value();
        std::memcpy(ops[p].counter, ivs[p], 16);
        ops[p].data = bufs.data() + size_t(p) * payload;
        ops[p].len  = payload;
      }
      add("cpu.ctr", best_rate(
                         [&] {
                           (void)c.value()->apply({ops.data(), kBatch});
                           return uint64_t(kBatch);
                         },
                         repeat, seconds));
    }
    // The module in a chain, as `warpath run` runs it (frame filled, parsed, flow-aes).
    double base = 0;
    for (const char* engine : {"cpu.ctr", "ref.ctr"}) {
      runtime::TableSource tables;
      runtime::BuildEnv env;
      env.port_count = 2;
      env.tables     = &tables;
      auto chain     = runtime::Chain::build(
              {runtime::ModuleSpec{
              "flow-aes", {{"key", "0x000102030405060708090a0b0c0d0e0f"}, {"engine", engine}}, ""}},
              env);
      WARPATH_TRY(chain.status());
      runtime::Frame f(std::move(packet::PacketBatch::create(kBatch, 2048, 0, MemSpace::kHost,
                                                             chain.value()->headroom()))
                           .value());
      auto states = chain.value()->make_states();  // the worker's flow table and cipher
      WARPATH_TRY(states.status());
      chain.value()->make_slots(f, &states.value());
      ChainRun run{*chain.value(), f, input};
      if (base == 0) {
        auto r = run.rx_parse_rate(repeat, seconds);
        WARPATH_TRY(r.status());
        base = r.value();
      }
      auto path = run.path_rate(repeat, seconds);
      if (!path.is_ok())
        return Status(path.status().code(), std::string("flow-aes (") + engine + ") " +
                                                std::to_string(size) + ": " +
                                                path.status().message());
      const double pps       = path.value();
      const std::string what = std::string("flow-aes (") + engine + ")";
      rows.push_back(esp_row(suite, what, size, pps));
      if (engine[0] == 'c') {
        const double module_ns = 1e9 / pps - 1e9 / base;
        add("flow-aes (cpu.ctr) module (derived)", module_ns > 0 ? 1e9 / module_ns : 0);
      }
    }
    ratios_to(rows, suite, size, anchor);
  }
  return Status::ok();
}

// The table on stdout, and the JSON file when asked.
bool write_rows(const std::vector<Row>& rows, const Options& opt, int argc, char** argv) {
  bench::print_table(stdout,
                     {bench::field_column("suite", "suite"), bench::field_column("inner bytes", "size"),
                      {"row", [](const Row& r) { return r.engine; }, true},
                      bench::rate_column("Mpps", 1e-6, 2), bench::field_column("Gbit/s", "gbps", 1),
                      bench::ratio_column("vs best imb")},
                     rows);
  return opt.json.empty() ||
         bench::write_results(opt.json, bench::provenance("warpath-esp-bench", argc, argv),
                              {{"batch", int64_t(kBatch)},
                               {"repeat", int64_t(opt.repeat)},
                               {"seconds", opt.seconds},
                               {"policies", int64_t(opt.policies)},
                               {"cold", opt.cold}},
                              {}, rows);
}

// A row's pass, timed in each round (best_rate over `seconds`).
struct Timed {
  const char* name;
  std::function<uint64_t()> pass;
  std::vector<double> rates;
  const uint64_t* untimed = nullptr;  // ChainRun::untimed_ns of a path
};

// The best round of row `name`, or its round r.
double best_of(const std::vector<Timed>& timed, const char* name) {
  for (const Timed& t : timed)
    if (std::string_view(t.name) == name) return *std::max_element(t.rates.begin(), t.rates.end());
  return 0.0;
}
double round_of(const std::vector<Timed>& timed, const char* name, int r) {
  for (const Timed& t : timed)
    if (std::string_view(t.name) == name) return t.rates[size_t(r)];
  return 0.0;
}

void add_row(std::vector<Row>& rows, const char* suite, const char* what, uint32_t size, double pps) {
  rows.push_back(esp_row(suite, what, size, pps));
}

// The paths' rows: each path and its base; for a copying path also the module alone (the path
// less its base, derived) and the same within each round against that round's anchor, whose
// median ratio goes to `fixed`.
void add_path_rows(const std::vector<Path>& paths, const std::vector<Timed>& timed,
                   const Options& opt, const char* suite, uint32_t size, std::vector<Row>& rows,
                   std::vector<std::pair<size_t, double>>& fixed) {
  auto add        = [&](const char* what, double pps) { add_row(rows, suite, what, size, pps); };
  auto best       = [&](const char* name) { return best_of(timed, name); };
  auto round_rate = [&](const char* name, int r) { return round_of(timed, name, r); };
      for (const Path& pa : paths) {
    const bool in         = pa.kind[4] == 'i';
    const char* base_name = path_row(in, pa.zero_copy, true);
    const char* path_name = path_row(in, pa.zero_copy, false);
    const double pps = best(path_name), base = best(base_name);
    if (pa.zero_copy) {  // the whole path with a zero-copy rx, and its attach + parse
      add(path_name, pps);
      add(base_name, base);
      continue;
    }
    if (opt.breakdown)
      pa.run->print_breakdown(
          (std::string(suite) + " " + std::to_string(size) + " B " + pa.kind).c_str());
    add(path_name, pps);
    // The module alone: the path's time less the copy and the parse (derived).
    const double module_ns = 1e9 / pps - 1e9 / base;
    add(in ? "esp-in module (derived)" : "esp-out module (derived)", module_ns > 0 ? 1e9 / module_ns : 0);
    // The same within each round: the module against that round's anchor.
    std::vector<double> per_round, module_rates;
    for (int r = 0; r < opt.repeat; ++r) {
      const double m_ns = 1e9 / round_rate(path_name, r) - 1e9 / round_rate(base_name, r);
      const double a = std::max(round_rate("imb.burst", r), round_rate("imb.burst.nocheck", r));
      if (m_ns <= 0) continue;
      module_rates.push_back(1e9 / m_ns);
      per_round.push_back(1e9 / m_ns / a);
    }
    if (!per_round.empty()) {
      std::sort(per_round.begin(), per_round.end());
      std::sort(module_rates.begin(), module_rates.end());
      add(in ? "esp-in module, median of rounds" : "esp-out module, median of rounds",
          module_rates[module_rates.size() / 2]);
      fixed.emplace_back(rows.size() - 1, per_round[per_round.size() / 2]);
    }
    if (!in) add("rx copy + parse", base);
  }
}

// The yardsticks (esp_yardstick.hpp) and the crypto they are measured against: each direction's
// floor, the anchor's seal or open alone over packets where a zero-copy frame holds them, and
// the anchor's open over its own packed buffers (imb.burst.nocheck's seal, opening). Timed in
// the same rounds as every other row.
struct Yardsticks {
  static constexpr const char* kRows[] = {"esp-out yardstick, zero copy",
                                          "in-place seal, zero copy", "esp-in yardstick, zero copy",
                                          "in-place open, zero copy", "imb.open.burst.nocheck"};
  static constexpr uint8_t kTunSrc[4] = {192, 0, 2, 1}, kTunDst[4] = {192, 0, 2, 2};
  bench::esp::OutYardstick out, seal_only;
  bench::esp::InYardstick in, open_only;
  std::vector<uint8_t> packed;  // a copy of the anchor's packed packets, opened by packed_open
  std::vector<CryptoOp> packed_ops;
  std::unique_ptr<ImbAnchor> out_seal, place_seal, in_open, place_open, packed_open;

  // `keys`: the outbound SA's, then the inbound one's; `out_in` / `in_in`: the paths' inputs;
  // `buf`: the anchor's packed packets, `span` bytes apart.
  Yardsticks(IMB_MGR* mgr, const std::vector<SaKeys>& keys,
             const std::vector<std::vector<uint8_t>>& out_in,
             const std::vector<std::vector<uint8_t>>& in_in, const std::vector<uint8_t>& buf,
             uint32_t span, uint32_t text, bool cold)
      // the outbound policy's 10.2.0.0/16; the inbound one's 10.0.0.0/8 both ways
      : out(out_in, 0x2001, kTunSrc, kTunDst, keys[0].icv_bytes, 0x0a020000u, 16),
        seal_only(out_in, 0x2001, kTunSrc, kTunDst, keys[0].icv_bytes, 0x0a020000u, 16),
        in(in_in, 0x2001, kTunSrc, keys[1].icv_bytes, 0x0a000000u, 8),
        open_only(in_in, 0x2001, kTunSrc, keys[1].icv_bytes, 0x0a000000u, 8),
        packed(buf),
        packed_ops(kBatch) {
    for (uint32_t p = 0; p < kBatch; ++p)
      packed_ops[p] = {packed.data() + size_t(p) * span, text, 0, 0};
    seal_only.encap = open_only.decap = false;
    out.cold = seal_only.cold = in.cold = open_only.cold = cold;
    out_seal               = std::make_unique<ImbAnchor>(mgr, keys[0], out.ops, text);
    place_seal             = std::make_unique<ImbAnchor>(mgr, keys[0], seal_only.ops, text);
    const uint32_t in_text = in.ops[0].text_len;
    in_open                = std::make_unique<ImbAnchor>(mgr, keys[1], in.ops, in_text);
    place_open             = std::make_unique<ImbAnchor>(mgr, keys[1], open_only.ops, in_text);
    packed_open            = std::make_unique<ImbAnchor>(mgr, keys[1], packed_ops, text);
    in_open->open = place_open->open = packed_open->open = true;

    out.seal       = [this] { return out_seal->pass(true); };
    seal_only.seal = [this] { return place_seal->pass(true); };
    in.open        = [this] { return in_open->pass(true); };
    open_only.open = [this] { return place_open->pass(true); };
    in.tags        = in_open->tags;
    open_only.tags = place_open->tags;
  }

  void time(std::vector<Timed>& timed) {
    timed.push_back({kRows[0], [this] { return out.pass(); }, {}, &out.untimed_ns});
    timed.push_back({kRows[1], [this] { return seal_only.pass(); }, {}, &seal_only.untimed_ns});
    timed.push_back({kRows[2], [this] { return in.pass(); }, {}, &in.untimed_ns});
    timed.push_back({kRows[3], [this] { return open_only.pass(); }, {}, &open_only.untimed_ns});
    timed.push_back({kRows[4], [this] { return packed_open->pass(true); }, {}});
  }

  // What the outbound yardstick sends is ESP that opens (ICV, trailer, inner TTL, outer
  // checksum); what the inbound one passes on is the inner packet esp-out sealed (`plain`: the
  // packets before it), behind the tunnel packet's Ethernet addresses.
  Status check(const EspCrypto& engine, const std::vector<std::vector<uint8_t>>& plain,
               uint32_t size) {
    out.pass();
    std::vector<uint8_t> opened(kBatch);
    (void)engine.open({out.ops.data(), kBatch}, opened.data());
    for (uint32_t p = 0; p < kBatch; ++p) {
      uint32_t inner   = 0;
      uint8_t next     = 0;
      const uint8_t* t = out.ops[p].esp + core::kEspHead;
      if (!opened[p] || !core::read_trailer(t, out.ops[p].text_len, inner, next) || next != 4 ||
          inner != size || t[8] != 63 ||
          packet::core::fold_checksum(packet::core::ones_sum(t, 20)) != 0 ||
          packet::core::fold_checksum(packet::core::ones_sum(out.ops[p].esp - 20, 20)) != 0)
        return Status(Errc::kInvalidArgument,
                      "the outbound yardstick's packet " + std::to_string(p) + " is not right");
    }
    in.pass();
    for (uint32_t p = 0; p < kBatch; ++p) {
      const uint8_t* f = in.inner(p);
      const uint8_t* o = plain[p].data();
      bool same        = std::memcmp(f, in.input[p].data(), 12) == 0 && f[12] == 8 && f[13] == 0 &&
                  f[14 + 8] == 63 &&
                  packet::core::fold_checksum(packet::core::ones_sum(f + 14, 20)) == 0;
      for (uint32_t b = 14; b < 14 + size && same; ++b)
        same = b == 14 + 8 || b == 14 + 10 || b == 14 + 11 || f[b] == o[b];
      if (!same)
        return Status(Errc::kInvalidArgument,
                      "the inbound yardstick's packet " + std::to_string(p) + " is not right");
    }
    if (out.dropped || in.dropped)
      return Status(Errc::kInvalidArgument, "a yardstick dropped packets");
    return Status::ok();
  }
};
}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (const int rc = parse_options(argc, argv, opt)) return rc;
  if (!bench::writable_or_say("warpath-esp-bench", opt.json))
    return 1;  // at once, not after the passes
  const int repeat     = opt.repeat;
  const double seconds = opt.seconds;
  const std::vector<uint32_t>& sizes = opt.sizes;
  IMB_MGR* mgr = alloc_mb_mgr(0);
  init_mb_mgr_auto(mgr, nullptr);
  std::vector<Row> rows;
  for (const Suite& suite : kSuites) {
    if (!wanted(opt.only, suite.name)) continue;
    auto cfg = io::parse_sa_text("bench", sa_text(suite, opt.policies));
    if (!cfg.is_ok()) return std::fprintf(stderr, "%s\n", cfg.status().message().c_str()), 1;
    auto db = SaDatabase::build(cfg.value());
    if (!db.is_ok()) return std::fprintf(stderr, "%s\n", db.status().message().c_str()), 1;
    const std::vector<SaKeys> keys = db->keys();
    const SaKeys& k                = keys[0];  // the outbound SA (the file's first)
    auto engine = make_esp_crypto("cpu.esp", {keys.data(), uint32_t(keys.size())});
    auto ref    = make_esp_crypto("ref.esp", {keys.data(), uint32_t(keys.size())});
    if (!engine.is_ok() || !ref.is_ok()) return std::fprintf(stderr, "no ESP engines\n"), 1;

    for (uint32_t size : sizes) {
      const uint32_t text = core::text_bytes(size);
      const uint32_t span = core::kEspHead + text + 16;
      std::vector<uint8_t> buf(size_t(span) * kBatch, 0x5a);
      std::vector<CryptoOp> ops(kBatch);
      for (uint32_t p = 0; p < kBatch; ++p) {
        uint8_t* e = buf.data() + size_t(p) * span;
        core::write_esp_header(e, 0x2001, p + 1);
        core::write_trailer(e + core::kEspHead, size, core::kNextIpv4);
        ops[p] = {e, text, 0, 0};
      }
      auto add = [&](const char* what, double pps) { add_row(rows, suite.name, what, size, pps); };

      // The anchor: one job per packet, the same fields cpu.esp fills, in the same API form.
      auto anchor_jobs = std::make_unique<ImbAnchor>(mgr, k, ops, text);
      auto imb_pass    = [&](bool nocheck) { return anchor_jobs->pass(nocheck); };
      // The whole paths, through a chain of the module alone (built first: every row below is
      // timed in the same rounds).
      std::vector<Path> paths;
      paths.reserve(4);  // never reallocated: the ChainRuns and the timed passes hold references
      for (const auto [kind, zero_copy] : {std::pair{"esp-out", false}, std::pair{"esp-in", false},
                                           std::pair{"esp-out", true}, std::pair{"esp-in", true}})
        if (const Status st = make_path(paths, kind, zero_copy, cfg.value(), size, opt.cold); !st.is_ok())
          return std::fprintf(stderr, "%s %s %u: %s\n", suite.name, kind, size, st.message().c_str()), 1;

      // Every row's pass, timed in rounds: each round runs each row for `seconds`, one after
      // the other, so that the anchor and the module are measured in the same minutes (rows
      // timed one after another moved the ratios by several per cent from run to run). A row
      // keeps its best round; the module's ratio is also taken within each round (median).
      std::vector<uint8_t> ok(kBatch);
      std::vector<Timed> timed;
      timed.push_back({"imb.burst", [&] { return imb_pass(false); }, {}});
      timed.push_back({"imb.burst.nocheck", [&] { return imb_pass(true); }, {}});
      timed.push_back({"cpu.esp.seal",
                       [&] {
                         (void)engine.value()->seal({ops.data(), kBatch});
                         return uint64_t(kBatch);
                       },
                       {}});
      // Opening needs sealed packets each pass (an opened packet no longer verifies, and a
      // failed open costs a restore): each pass opens then seals again; the open alone is the
      // pair less the seal (derived).
      timed.push_back({"open+seal",
                       [&] {
                         (void)engine.value()->open({ops.data(), kBatch}, ok.data());
                         (void)engine.value()->seal({ops.data(), kBatch});
                         return uint64_t(kBatch);
                       },
                       {}});
      for (Path& pa : paths) {
        const bool in = pa.kind[4] == 'i';
        timed.push_back({path_row(in, pa.zero_copy, true),
                         [&pa] { return pa.run->parse_pass(*pa.parser); },
                         {},
                         &pa.run->untimed_ns});
        timed.push_back({path_row(in, pa.zero_copy, false),
                         [&pa] { return pa.run->checked_pass(); },
                         {},
                         &pa.run->untimed_ns});
      }
      Yardsticks yard(mgr, keys, paths[0].input, paths[1].input, buf, span, text, opt.cold);
      yard.time(timed);
      if (const Status st = yard.check(*engine.value(), paths[0].input, size); !st.is_ok())
        return std::fprintf(stderr, "%s %u: %s\n", suite.name, size, st.message().c_str()), 1;
      for (int r = 0; r < repeat; ++r)
        for (Timed& t : timed) t.rates.push_back(best_rate(t.pass, 1, seconds, t.untimed));
      if (yard.out.dropped || yard.in.dropped)
        return std::fprintf(stderr, "a yardstick dropped packets\n"), 1;
      for (const Path& pa : paths)
        if (const Status st = pa.run->went_through(); !st.is_ok())
          return std::fprintf(stderr, "%s %s %u: %s\n", suite.name, pa.kind, size,
                              st.message().c_str()),
                 1;
      auto best = [&](const char* name) { return best_of(timed, name); };
      if (std::count(ok.begin(), ok.end(), 1) != kBatch)
        return std::fprintf(stderr, "open failed\n"), 1;
      const double checked = best("imb.burst"), nocheck = best("imb.burst.nocheck");
      add("imb.burst", checked);
      add("imb.burst.nocheck", nocheck);
      const double anchor    = std::max(checked, nocheck);
      const double seal_rate = best("cpu.esp.seal");
      add("cpu.esp.seal", seal_rate);
      const double open_ns = 1e9 / best("open+seal") - 1e9 / seal_rate;
      add("cpu.esp.open (derived)", open_ns > 0 ? 1e9 / open_ns : 0);
      std::vector<std::pair<size_t, double>> fixed;  // rows whose ratio is a median of rounds
      add_path_rows(paths, timed, opt, suite.name, size, rows, fixed);
      for (const char* row : Yardsticks::kRows) add(row, best(row));
      add("ref.esp.seal", best_rate([&] {
            (void)ref.value()->seal({ops.data(), kBatch});
            return uint64_t(kBatch);
          }, 1, seconds));
      ratios_to(rows, suite.name, size, anchor);
      for (const auto& [row, ratio] : fixed) rows[row].ratio = ratio;
    }
  }
  if (const Status st = bench_flow_aes(mgr, opt, rows); !st.is_ok())
    return std::fprintf(stderr, "%s\n", st.message().c_str()), 1;
  free_mb_mgr(mgr);

  return write_rows(rows, opt, argc, argv) ? 0 : 1;
}
