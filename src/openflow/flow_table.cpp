// src/openflow/flow_table.cpp: the control side of the flow table (flow_table.hpp): flow_mod
// semantics, timeouts, counters, statistics and the reference lookup.
#include <algorithm>

#include "warpath/openflow/flow_table.hpp"

namespace warpath::openflow {

const char* flow_mod_error_name(FlowModError e) noexcept {
  switch (e) {
    case FlowModError::kAllTablesFull: return "all_tables_full";
    case FlowModError::kOverlap: return "overlap";
    case FlowModError::kEperm: return "eperm";
    case FlowModError::kBadEmergTimeout: return "bad_emerg_timeout";
    case FlowModError::kBadCommand: return "bad_command";
    case FlowModError::kUnsupported: return "unsupported";
    case FlowModError::kNone: return "none";
  }
  return "?";
}

bool precedes(const FlowEntry& a, const FlowEntry& b) noexcept {
  const bool ea = a.spec.match.exact(), eb = b.spec.match.exact();
  if (ea != eb) return ea;
  if (a.spec.priority != b.spec.priority) return a.spec.priority > b.spec.priority;
  return a.order < b.order;
}

namespace {

uint16_t stored_priority(const FlowSpec& s) { return s.match.exact() ? 0xffff : s.priority; }

constexpr uint64_t kNsPerSec = 1'000'000'000ull;

}  // namespace

size_t FlowTable::StrictHash::operator()(const StrictKey& k) const noexcept {
  uint64_t h = k.wildcards ^ uint64_t(k.priority) << 32;
  for (uint32_t w : k.value.w) h = (h ^ w) * 0x9E37'79B9'7F4A'7C15ull;
  return size_t(h ^ h >> 31);
}

bool FlowTable::StrictKey::operator==(const StrictKey& o) const noexcept {
  if (wildcards != o.wildcards || priority != o.priority) return false;
  for (int i = 0; i < packet::kOfWords; ++i)
    if (value.w[i] != o.value.w[i]) return false;
  return true;
}

FlowTable::StrictKey FlowTable::strict_key(const Match& m, uint16_t priority) {
  return {m.value(), m.wildcards, priority};
}

FlowEntry* FlowTable::find_strict(const Match& m, uint16_t priority) {
  const auto it = index_.find(strict_key(m, priority));
  return it == index_.end() ? nullptr : &slots_[it->second];
}

void FlowTable::insert(const FlowSpec& spec, uint16_t priority, uint64_t now_ns) {
  uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else if (slots_.size() >= capacity_ && !retired_.empty()) {
    // Every id up to the capacity is used or retired: give a retired one out again, and only a
    // full image (which maps no key to it) may follow.
    id = retired_.back();
    retired_.pop_back();
    needs_full_ = true;
  } else {
    id = uint32_t(slots_.size());
    slots_.emplace_back();
    live_.push_back(0);
  }
  FlowEntry& e   = slots_[id];
  e              = FlowEntry{};
  e.spec         = spec;
  e.spec.priority = priority;
  e.spec.out_port = kPortNone;
  e.spec.flags &= kSendFlowRem;  // check_overlap is a request, not a property
  e.id         = id;
  e.order      = next_order_++;
  e.created_ns = e.used_ns = now_ns;
  live_[id]                = 1;
  log({id, Change::kAdded, e.spec.match.exact()});
  index_.emplace(strict_key(e.spec.match, priority), id);
  if (!e.spec.match.exact()) by_match_[strict_key(e.spec.match, 0)].push_back(id);
  ++count_;
  timed_ += e.spec.idle_timeout || e.spec.hard_timeout;
}

void FlowTable::remove(uint32_t id) {
  const Match& m = slots_[id].spec.match;
  index_.erase(strict_key(m, slots_[id].spec.priority));
  if (!m.exact()) {
    const auto it = by_match_.find(strict_key(m, 0));
    std::vector<uint32_t>& ids = it->second;
    ids.erase(std::find(ids.begin(), ids.end(), id));
    if (ids.empty()) by_match_.erase(it);
  }
  timed_ -= slots_[id].spec.idle_timeout || slots_[id].spec.hard_timeout;
  live_[id] = 0;
  retired_.push_back(id);
  log({id, Change::kRemoved, slots_[id].spec.match.exact()});
  --count_;
}

FlowModResult FlowTable::apply(FlowModCommand cmd, const FlowSpec& spec, uint64_t now_ns) {
  FlowModResult r;
  const uint16_t priority = stored_priority(spec);
  const bool add_like     = cmd == FlowModCommand::kAdd || cmd == FlowModCommand::kModify ||
                        cmd == FlowModCommand::kModifyStrict;
  if (add_like && (spec.flags & kEmergency)) {
    r.error = spec.idle_timeout || spec.hard_timeout ? FlowModError::kBadEmergTimeout
                                                     : FlowModError::kAllTablesFull;
    return r;
  }
  auto add = [&]() {
    if (FlowEntry* same = find_strict(spec.match, priority)) {
      // Replaced: a new flow in the same slot (counters and age reset).
      remove(same->id);  // a new flow with a new id (the old one is retired)
      insert(spec, priority, now_ns);
      ++r.added;
      ++version_;
      return;
    }
    if (spec.flags & kCheckOverlap) {
      for (uint32_t id = 0; id < slots_.size(); ++id)
        if (live_[id] && slots_[id].spec.priority == priority &&
            overlaps(slots_[id].spec.match, spec.match)) {
          r.error = FlowModError::kOverlap;
          return;
        }
    }
    if (count_ >= capacity_) {
      r.error = FlowModError::kAllTablesFull;
      return;
    }
    insert(spec, priority, now_ns);
    ++r.added;
    ++version_;
  };
  switch (cmd) {
    case FlowModCommand::kAdd: add(); break;
    case FlowModCommand::kModify:
    case FlowModCommand::kModifyStrict: {
      auto modify = [&](FlowEntry& e) {
        log({e.id, Change::kModified, e.spec.match.exact()});
        e.spec.actions = spec.actions;
        if (spec.cookie) e.spec.cookie = spec.cookie;
        ++r.modified;
      };
      if (cmd == FlowModCommand::kModifyStrict) {
        if (FlowEntry* e = find_strict(spec.match, priority)) modify(*e);
      } else {
        for (uint32_t id = 0; id < slots_.size(); ++id)
          if (live_[id] && covers(spec.match, slots_[id].spec.match)) modify(slots_[id]);
      }
      if (r.modified)
        ++version_;
      else
        add();
      break;
    }
    case FlowModCommand::kDelete:
    case FlowModCommand::kDeleteStrict: {
      auto del = [&](uint32_t id) {
        const FlowEntry& e = slots_[id];
        if (spec.out_port != kPortNone && !outputs_to(e.spec.actions, spec.out_port)) return;
        r.removed.push_back({e, RemovedReason::kDelete});
        remove(id);
      };
      if (cmd == FlowModCommand::kDeleteStrict) {
        if (FlowEntry* e = find_strict(spec.match, priority)) del(e->id);
      } else {
        for (uint32_t id = 0; id < slots_.size(); ++id)
          if (live_[id] && covers(spec.match, slots_[id].spec.match)) del(id);
      }
      if (!r.removed.empty()) ++version_;
      break;
    }
    default: r.error = FlowModError::kBadCommand;
  }
  return r;
}

std::vector<RemovedFlow> FlowTable::expire(uint64_t now_ns) {
  std::vector<RemovedFlow> out;
  if (timed_ == 0) return out;
  for (uint32_t id = 0; id < slots_.size(); ++id) {
    if (!live_[id]) continue;
    const FlowEntry& e = slots_[id];
    const uint64_t hard = e.spec.hard_timeout, idle = e.spec.idle_timeout;
    if (hard && now_ns >= e.created_ns + hard * kNsPerSec) {
      out.push_back({e, RemovedReason::kHardTimeout});
    } else if (idle && now_ns >= e.used_ns + idle * kNsPerSec) {
      out.push_back({e, RemovedReason::kIdleTimeout});
    } else {
      continue;
    }
    remove(id);
  }
  if (!out.empty()) ++version_;
  return out;
}

void FlowTable::account(uint32_t id, uint64_t order, uint64_t packets, uint64_t bytes,
                        uint64_t used_ns) {
  if (id >= slots_.size() || !live_[id] || slots_[id].order != order) return;
  FlowEntry& e = slots_[id];
  e.packets += packets;
  e.bytes += bytes;
  if (used_ns > e.used_ns) e.used_ns = used_ns;
}

const FlowEntry* FlowTable::lookup(const packet::OfTuple& key) const {
  const FlowEntry* best = nullptr;
  for (uint32_t id = 0; id < slots_.size(); ++id)
    if (live_[id] && matches(slots_[id].spec.match, key) && (!best || precedes(slots_[id], *best)))
      best = &slots_[id];
  return best;
}

std::vector<const FlowEntry*> FlowTable::select(const Match& filter, uint16_t out_port) const {
  std::vector<const FlowEntry*> out;
  for (uint32_t id = 0; id < slots_.size(); ++id) {
    if (!live_[id]) continue;
    const FlowEntry& e = slots_[id];
    if (!covers(filter, e.spec.match)) continue;
    if (out_port != kPortNone && !outputs_to(e.spec.actions, out_port)) continue;
    out.push_back(&e);
  }
  std::sort(out.begin(), out.end(),
            [](const FlowEntry* a, const FlowEntry* b) { return precedes(*a, *b); });
  return out;
}

std::vector<const FlowEntry*> FlowTable::entries() const { return select(Match{}, kPortNone); }

std::vector<uint32_t> FlowTable::same_match(const Match& m) const {
  if (m.exact()) {
    const auto it = index_.find(strict_key(m, 0xffff));
    return it == index_.end() ? std::vector<uint32_t>{} : std::vector<uint32_t>{it->second};
  }
  const auto it = by_match_.find(strict_key(m, 0));
  return it == by_match_.end() ? std::vector<uint32_t>{} : it->second;
}

const FlowEntry* FlowTable::entry(uint32_t id) const {
  return id < slots_.size() && live_[id] ? &slots_[id] : nullptr;
}

}  // namespace warpath::openflow
