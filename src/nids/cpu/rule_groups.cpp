// The rule groups of the prefiltering engines (src/nids/cpu/rule_groups.hpp).
#include "nids/cpu/rule_groups.hpp"

#include "nids/cpu/port_groups.hpp"

#include <algorithm>

namespace warpath::nids::detail {
namespace {

bool rule_takes_proto(Proto p, int cls) {
  switch (p) {
    case Proto::kIp:
      return true;
    case Proto::kTcp:
    case Proto::kTcpPkt:
    case Proto::kTcpStream:
      return cls == 0;
    case Proto::kUdp:
      return cls == 1;
    case Proto::kIcmp:
      return cls == 2;
  }
  return false;
}

}  // namespace

pattern::Pattern prefilter_pattern(const Content& fp, uint32_t id) {
  pattern::Pattern p;
  p.id         = id;
  p.literal    = true;
  p.expression = fp.bytes;
  // Every match, not HS_FLAG_SINGLEMATCH: Vectorscan 5.4.9 misses literals in a database whose
  // other patterns are single-match (found by the self-test: B/H, xc/i, ba/H over 65 bytes
  // ending in "xc" reports no xc).
  p.flags = fp.nocase ? uint32_t(pattern::kCaseless) : 0u;
  return p;
}

std::string best_cpu_pattern_engine() {
  for (const EngineInfo& e : pattern::pattern_engines())
    if (e.id == "cpu.hs" && e.available && e.available()) return "cpu.hs";
  return "cpu.ac";
}

Status build_groups(const Image& img, size_t port_words, const std::string& engine, bool streams,
                    Groups& groups, const std::string& fallback_engine) {
  const auto& compiled = img.compiled();
  const auto& rules    = img.rules();
  for (int kind = 0; kind < kKinds; ++kind) {
    const Buffer b = kind == 2 ? Buffer::kStream : Buffer::kPacket;
    for (int cls = 0; cls < kProtos; ++cls) {
      Group& g = groups[kind][cls];
      std::vector<pattern::Pattern> patterns;
      for (uint32_t i = 0; i < rules.size(); ++i) {
        const CompiledRule& c = compiled[i];
        if (!applies_to(c, b, kind == 1) || !rule_takes_proto(rules[i].proto, cls)) continue;
        const Content* fp = img.fast_pattern(i);
        if (!fp) {
          g.always.push_back(i);
          continue;
        }
        patterns.push_back(prefilter_pattern(*fp, uint32_t(g.by_pattern.size())));
        g.by_pattern.push_back(i);
      }
      g.members.assign(port_words, 0);
      if (!g.members.empty())
        for (uint32_t i : g.by_pattern) g.members[i / 64] |= uint64_t(1) << (i % 64);
      if (patterns.empty()) continue;
      // A stream group of streaming engines: its streaming database now, the block one (for
      // stream units without a flow) at its first use.
      const std::string key = "group:" + engine + ":" + std::to_string(kind) + ":" +
                              std::to_string(cls) + (streams ? ":streams" : "");
      auto m = shared_matcher(img.group_cache(), key, engine, patterns, streams && kind == 2);
      if (!m.is_ok()) return m.status();
      g.prefilter = std::move(*m);
      if (!fallback_engine.empty()) {
        auto f = pattern::make_matcher(fallback_engine, patterns);
        if (!f.is_ok()) return f.status();
        g.fallback = std::move(*f);
      }
    }
  }
  return Status::ok();
}

Status build_app_groups(const Image& img, const std::string& engine, AppGroups& groups) {
  const auto& compiled = img.compiled();
  std::vector<pattern::Pattern> patterns[2][kAppBuffers][2];
  for (uint32_t i = 0; i < compiled.size(); ++i) {
    const CompiledRule& c = compiled[i];
    if (c.kind != RuleKind::kAppTx) continue;
    const int phase    = c.app_response ? 1 : 0;
    const Content* fp  = img.fast_pattern(i);
    if (!fp) {
      groups.always[phase].push_back(i);
      continue;
    }
    const AppList* l = img.fast_pattern_list(i);
    const size_t b = size_t(l->buffer), dot = l->dotprefix ? 1 : 0;
    AppGroups::Buffer& g = groups.buffers[phase][b][dot];
    patterns[phase][b][dot].push_back(prefilter_pattern(*fp, uint32_t(g.by_pattern.size())));
    g.by_pattern.push_back(i);
  }
  for (int phase = 0; phase < 2; ++phase)
    for (size_t b = 0; b < kAppBuffers; ++b)
      for (int dot = 0; dot < 2; ++dot) {
        if (patterns[phase][b][dot].empty()) continue;
        const std::string key = "app:" + engine + ":" + std::to_string(phase) + ":" +
                                std::to_string(b) + ":" + std::to_string(dot);
        auto m = shared_matcher(img.group_cache(), key, engine, patterns[phase][b][dot], false);
        if (!m.is_ok()) return m.status();
        groups.buffers[phase][b][dot].prefilter = std::move(*m);
      }
  return Status::ok();
}

void app_group_candidates(AppGroups& groups, const AppTx& tx, std::vector<pattern::Match>& matches,
                          std::vector<uint32_t>& at, std::vector<Found>& found,
                          std::vector<uint32_t>& out) {
  const int phase = tx.response ? 1 : 0;
  out.insert(out.end(), groups.always[phase].begin(), groups.always[phase].end());
  std::string dotted;
  // One instance of buffer b scanned with its dotprefix database `dot`.
  auto scan = [&](AppGroups::Buffer& g, const std::string& v, bool dot) {
    const std::string* in = &v;
    if (dot) {
      dotted.assign(1, '.');
      dotted += v;
      in = &dotted;
    }
    if (in->empty()) return;
    matches.clear();
    if (!g.prefilter->scan_any_order(reinterpret_cast<const uint8_t*>(in->data()), in->size(), matches).is_ok()) {
      out.insert(out.end(), g.by_pattern.begin(), g.by_pattern.end());
      return;
    }
    found.clear();
    take_matches(g.by_pattern, matches, 0, at, found);
    for (const Found& f : found) out.push_back(f.rule);
  };
  for (size_t b = 0; b < kAppBuffers; ++b)
    for (int dot = 0; dot < 2; ++dot) {
      AppGroups::Buffer& g = groups.buffers[phase][b][dot];
      if (!g.prefilter || !tx.has[b]) continue;
      scan(g, tx.buf[b], dot);
      for (const auto& [mb, v] : tx.more)
        if (size_t(mb) == b) scan(g, v, dot);
    }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

void take_matches(const std::vector<uint32_t>& by_pattern,
                  const std::vector<pattern::Match>& matches, uint64_t shift,
                  std::vector<uint32_t>& at, std::vector<Found>& out) {
  if (at.size() < by_pattern.size()) at.resize(by_pattern.size(), 0);
  const size_t from = out.size();
  for (const pattern::Match& m : matches) {
    uint32_t& k = at[m.id];
    if (!k) {
      out.push_back({m.id, shift + m.end});
      k = uint32_t(out.size() - from);
    } else {
      Found& f = out[from + k - 1];
      f.end    = std::max(f.end, shift + m.end);
    }
  }
  for (size_t k = from; k < out.size(); ++k) {
    at[out[k].rule] = 0;
    out[k].rule     = by_pattern[out[k].rule];
  }
}

void ArmedRules::arm(const Group& g, const std::vector<Found>& found, bool failed, uint64_t start,
                     uint64_t end, std::vector<uint32_t>& out) {
  rules.erase(
      std::remove_if(rules.begin(), rules.end(), [&](const Found& f) { return f.end <= start; }),
      rules.end());
  if (failed) all_until = std::max(all_until, end);
  if (!found.empty()) {
    rules.insert(rules.end(), found.begin(), found.end());
    std::sort(rules.begin(), rules.end(), [](const Found& a, const Found& b) {
      return a.rule != b.rule ? a.rule < b.rule : a.end > b.end;
    });
    rules.erase(std::unique(rules.begin(), rules.end(),
                            [](const Found& a, const Found& b) { return a.rule == b.rule; }),
                rules.end());  // each rule once, with its latest end (sorted first)
  }
  if (rules.size() > kMax) {  // every rule until this unit's bytes leave the buffer
    all_until = std::max(all_until, end);
    rules.clear();
  }
  if (start < all_until) {
    out.insert(out.end(), g.by_pattern.begin(), g.by_pattern.end());
  } else {
    for (const Found& f : rules) out.push_back(f.rule);
  }
}

void finish_candidates(const uint64_t* allowed, std::vector<uint32_t>& out) {
  if (allowed)
    out.erase(std::remove_if(out.begin(), out.end(),
                             [&](uint32_t i) { return !PortFilter::test(allowed, i); }),
              out.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

}  // namespace warpath::nids::detail
