// The shared part of the detection engines: candidates evaluated in order, flowbits.
#include "nids/detector_base.hpp"

#include "nids/cpu/rule_groups.hpp"

#include <algorithm>

namespace warpath::nids::detail {

DetectorBase::DetectorBase(std::shared_ptr<const DetectImage> image, std::string id)
    : holder_(std::move(image)), img_(static_cast<const Image&>(*holder_)), id_(std::move(id)) {
  md_ = pcre2_match_data_create(32, nullptr);
  mc_ = pcre2_match_context_create(nullptr);
  pcre2_set_match_limit(mc_, kPcreMatchLimit);
  pcre2_set_depth_limit(mc_, kPcreMatchLimit);
}

DetectorBase::~DetectorBase() {
  pcre2_match_data_free(md_);
  pcre2_match_context_free(mc_);
}

namespace {

using Ints = std::vector<std::pair<uint32_t, uint32_t>>;

const uint32_t* find_int(const Ints* ints, uint32_t var) {
  if (ints)
    for (const auto& [v, value] : *ints)
      if (v == var) return &value;
  return nullptr;
}

// The value an op compares with or applies: its number, or another integer (0 while unset).
uint32_t int_value(const FlowintOp& op, const Ints* ints) {
  if (op.value_var < 0) return op.value;
  const uint32_t* other = find_int(ints, uint32_t(op.value_var));
  return other ? *other : 0;
}

// A flowint condition on a flow's integers.
bool int_holds(const FlowintOp& op, const Ints* ints) {
  const uint32_t* have = find_int(ints, op.var);
  if (op.op == Flowint::kIsSet || op.op == Flowint::kNotSet) return (have != nullptr) == (op.op == Flowint::kIsSet);
  if (!have) return false;
  const uint32_t want = int_value(op, ints);
  switch (op.op) {
    case Flowint::kEq: return *have == want;
    case Flowint::kNe: return *have != want;
    case Flowint::kLt: return *have < want;
    case Flowint::kLe: return *have <= want;
    case Flowint::kGt: return *have > want;
    case Flowint::kGe: return *have >= want;
    default: return false;
  }
}

// A flowint change, after its rule matched.
void int_change(const FlowintOp& op, Ints& ints) {
  const uint32_t value = int_value(op, &ints);
  for (auto& [v, have] : ints) {
    if (v != op.var) continue;
    have = op.op == Flowint::kSet ? value : op.op == Flowint::kAdd ? have + value : have - value;
    return;
  }
  if (op.op != Flowint::kSub) ints.emplace_back(op.var, value);  // - leaves an unset one unset
}

}  // namespace

bool DetectorBase::conditions_hold(const CompiledRule& c, const Unit& u) const {
  for (const XbitOp& x : c.xbit_conditions)
    if (xbits_.is_set(x, u.pkt) != (x.op == Flowbit::kIsSet)) return false;
  if (!c.int_conditions.empty()) {
    if (!u.flow) return false;
    auto it = ints_.find(u.flow);
    const Ints* ints = it == ints_.end() ? nullptr : &it->second;
    for (const FlowintOp& op : c.int_conditions)
      if (!int_holds(op, ints)) return false;
  }
  if (c.conditions.empty()) return true;
  const uint64_t flow = u.flow;
  const std::vector<uint64_t>* words = nullptr;
  if (flow)
    if (auto it = bits_.find(flow); it != bits_.end()) words = &it->second;
  auto is_set = [&](uint32_t b) { return words && ((*words)[b / 64] >> (b % 64) & 1); };
  for (const BitCondition& cond : c.conditions) {
    bool hold = !cond.any;
    for (uint32_t b : cond.bits) {
      const bool v = is_set(b) != cond.negate;
      if (cond.any && v) { hold = true; break; }
      if (!cond.any && !v) { hold = false; break; }
    }
    if (!hold) return false;
  }
  return true;
}

void DetectorBase::apply_bits(const CompiledRule& c, const Unit& u) {
  for (const XbitOp& x : c.xbit_changes) xbits_.apply(x, u.pkt);
  const uint64_t flow = u.flow;
  if (flow && !c.int_changes.empty()) {
    Ints& ints = ints_[flow];
    for (const FlowintOp& op : c.int_changes) int_change(op, ints);
    if (ints.empty()) ints_.erase(flow);
  }
  if (!flow || (c.set.empty() && c.unset.empty() && c.toggle.empty())) return;
  std::vector<uint64_t>& w = bits_[flow];
  if (w.empty()) w.assign((img_.bit_count() + 63) / 64, 0);
  for (uint32_t b : c.set) w[b / 64] |= uint64_t(1) << (b % 64);
  for (uint32_t b : c.unset) w[b / 64] &= ~(uint64_t(1) << (b % 64));
  for (uint32_t b : c.toggle) w[b / 64] ^= uint64_t(1) << (b % 64);
}

void DetectorBase::count(const Unit& u) {
  ++counters_.units;
  if (u.buffer == Buffer::kApp) {
    ++counters_.app_units;
  } else if (u.buffer == Buffer::kStream) {
    ++counters_.stream_units;
    counters_.bytes += u.len - std::min(u.len, u.new_from);
  } else {
    ++counters_.packet_units;
    counters_.bytes += u.len;
  }
}

Status DetectorBase::inspect(const Unit& u, std::vector<Hit>& hits) {
  count(u);
  cands_.clear();
  if (u.buffer == Buffer::kApp)
    app_candidates(u, cands_);
  else
    candidates(u, cands_);
  evaluate(u, cands_, hits);
  return Status::ok();
}

void DetectorBase::candidates_batch(const Unit* units, uint32_t n, std::vector<uint32_t>* out) {
  for (uint32_t i = 0; i < n; ++i) {
    out[i].clear();
    if (units[i].buffer == Buffer::kApp)
      app_candidates(units[i], out[i]);
    else
      candidates(units[i], out[i]);
  }
}

void DetectorBase::all_app_rules(const Unit& u, std::vector<uint32_t>& out) {
  if (!app_rules_built_) {
    for (uint32_t i = 0; i < img_.compiled().size(); ++i)
      if (img_.compiled()[i].kind == RuleKind::kAppTx) app_rules_.push_back(i);
    app_rules_built_ = true;
  }
  if (!u.tx) return;
  for (uint32_t i : app_rules_)
    if (img_.compiled()[i].app_response == u.tx->response) out.push_back(i);
}

void DetectorBase::app_candidates(const Unit& u, std::vector<uint32_t>& out) {
  if (!u.tx) return;
  if (!app_groups_) {  // compiled at the first transaction
    app_groups_ = std::make_unique<AppGroups>();
    if (!build_app_groups(img_, best_cpu_pattern_engine(), *app_groups_).is_ok()) app_failed_ = true;
  }
  if (app_failed_) return all_app_rules(u, out);  // no prefilter: every rule of the phase
  app_group_candidates(*app_groups_, *u.tx, app_matches_, app_at_, app_found_, out);
}

Status DetectorBase::inspect_batch(const Unit* units, uint32_t n, std::vector<Hit>* hits) {
  if (batch_cands_.size() < n) batch_cands_.resize(n);
  candidates_batch(units, n, batch_cands_.data());
  for (uint32_t i = 0; i < n; ++i) {
    count(units[i]);
    evaluate(units[i], batch_cands_[i], hits[i]);
  }
  return Status::ok();
}

void DetectorBase::evaluate(const Unit& u, const std::vector<uint32_t>& cands,
                            std::vector<Hit>& hits) {
  if (u.packet == 0 || u.packet != packet_) applied_.clear();
  packet_ = u.packet;
  if (cands.empty()) return;
  const auto& compiled = img_.compiled();
  const auto& rules    = img_.rules();
  PayloadEval eval(md_, mc_);
  const int64_t min_end = u.buffer == Buffer::kStream ? int64_t(u.new_from) : -1;
  for (uint32_t i : cands) {
    const CompiledRule& c = compiled[i];
    const Rule& r         = rules[i];
    if (!applies_to(c, u.buffer, u.stream_flow) || !header_matches(r, u.pkt)) continue;
    if (c.kind == RuleKind::kIpOnly && !u.first_in_dir) continue;  // once per direction
    if (!conditions_hold(c, u)) continue;
    ++counters_.candidates;
    bool limited = false, pcre_limited = false;
    const bool stream = u.buffer == Buffer::kStream;
    bool ok = false;
    if (u.buffer == Buffer::kApp) {
      ok = u.tx && app_matches(c, *u.tx, eval, limited, pcre_limited);
    } else {
      ok = eval.run(c, u.data, u.len, min_end, stream ? u.new_from : 0, limited, pcre_limited);
      if (!ok && stream && u.at_stream_start && u.new_from > 0)  // anchored at the stream's start
        ok = eval.run(c, u.data, u.len, min_end, 0, limited, pcre_limited);
    }
    counters_.backtrack_limit += limited && !ok;
    counters_.pcre_limit += pcre_limited && !ok;
    if (!ok) continue;
    ++counters_.matches;
    if (std::find(applied_.begin(), applied_.end(), i) == applied_.end()) {  // once per packet
      applied_.push_back(i);
      apply_bits(c, u);
    }
    hits.push_back({i});
    if (r.action == Action::kPass) break;
  }
}

void DetectorBase::end_flow(uint64_t flow) {
  bits_.erase(flow);
  ints_.erase(flow);
  forget_flow(flow);
}

DetectCounters DetectorBase::counters() const {
  DetectCounters c     = counters_;
  c.flows_with_bits = bits_.size();
  c.flows_with_ints = ints_.size();
  c.xbits           = xbits_.size();
  c.xbits_full      = xbits_.full();
  return c;
}

namespace {

// ref.nids: every rule is a candidate.
class RefDetector final : public DetectorBase {
 public:
  explicit RefDetector(std::shared_ptr<const DetectImage> image)
      : DetectorBase(std::move(image), "ref.nids") {}

 protected:
  void app_candidates(const Unit& u, std::vector<uint32_t>& out) override { all_app_rules(u, out); }
  void candidates(const Unit&, std::vector<uint32_t>& out) override {
    out.resize(img().rules().size());
    for (uint32_t i = 0; i < out.size(); ++i) out[i] = i;
  }
};

}  // namespace

Result<std::unique_ptr<Detector>> make_ref_detector(std::shared_ptr<const DetectImage> image) {
  return std::unique_ptr<Detector>(std::make_unique<RefDetector>(std::move(image)));
}

}  // namespace warpath::nids::detail
