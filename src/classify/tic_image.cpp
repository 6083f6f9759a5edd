// TIC image building: see tic_image.hpp.
#include "classify/tic_image.hpp"

#include <cstdio>
#include <vector>

namespace warpath::classify::detail {
namespace {

uint32_t port_kind(uint16_t lo, uint16_t hi) {
  if (lo == 0 && hi == 0xFFFF) return core::kTicWild;
  if (lo == hi) return core::kTicExact;
  if (lo == 1024 && hi == 0xFFFF) return core::kTicHigh;
  return core::kTicRange;
}

// One rule's instruction (tic_core.hpp); returns its size histogram slot.
void encode(const Rule& r, uint32_t index, bool last, std::vector<uint32_t>& ins) {
  ins.clear();
  const uint32_t tail = (last ? core::kTicLast : 0) | index << core::kTicRuleShift;
  if (r.mask[2] != 0 || (r.mask[3] != 0 && r.mask[3] != 0xFF)) {
    ins = {core::kTicGeneric << 6 | tail,
           r.value[2],
           r.mask[2],
           uint32_t(r.sport_lo) | uint32_t(r.sport_hi) << 16,
           uint32_t(r.dport_lo) | uint32_t(r.dport_hi) << 16,
           r.value[3],
           r.mask[3]};
    return;
  }
  const uint32_t sk = port_kind(r.sport_lo, r.sport_hi), dk = port_kind(r.dport_lo, r.dport_hi);
  uint32_t h = sk | dk << 2 | tail;
  if (r.mask[3] == 0xFF) h |= core::kTicProtoExact | (r.value[3] & 0xFF) << 6;
  std::vector<uint32_t> halves;
  auto operands = [&](uint32_t kind, uint16_t lo, uint16_t hi) {
    if (kind == core::kTicExact) halves.push_back(lo);
    if (kind == core::kTicRange) halves.insert(halves.end(), {lo, hi});
  };
  operands(sk, r.sport_lo, r.sport_hi);
  operands(dk, r.dport_lo, r.dport_hi);
  ins.push_back(h);
  for (size_t k = 0; k < halves.size(); ++k) {
    if (k % 2 == 0) ins.push_back(0);
    ins.back() |= halves[k] << (16 * (k % 2));
  }
}

}  // namespace

Result<std::unique_ptr<TicImage>> TicImage::build(const RuleSet& rules, uint64_t max_bytes) {
  if (rules.rules.size() > core::kTicMaxRules)
    return Status(Errc::kCapacity, "TIC instructions hold rule indices below " +
                                       std::to_string(core::kTicMaxRules) + ", the set has " +
                                       std::to_string(rules.rules.size()) + " rules");
  WARPATH_ASSIGN_OR_RETURN(auto b, RfcBuilder::create(rules, max_bytes));
  RfcPhase chunks[4], x, y, p;
  // Every class but the empty one takes at least one 64-byte code block.
  WARPATH_TRY(build_address_stage(*b, chunks, x, y, p, core::kTicBlockWords * 2));

  // One program per P class.
  std::vector<uint32_t> code, first_block(p.classes(), 0), ins;
  uint64_t sizes[4] = {}, candidates = 0, lists = 0;
  const std::vector<uint32_t> cover = b->covering(p.seen);
  std::vector<uint32_t> list;
  for (uint32_t cls = 0; cls < p.classes(); ++cls) {
    RfcBuilder::expand(p, cls, cover, list);
    const uint32_t len = uint32_t(list.size());
    if (len == 0) continue;
    const uint32_t* s = list.data();
    first_block[cls]  = uint32_t(code.size() / core::kTicBlockWords) + 1;
    uint32_t used     = 0;
    for (uint32_t k = 0; k < len; ++k) {
      encode(b->rule_at_rank(s[k]), b->rule_of_rank(s[k]), k + 1 == len, ins);
      ++sizes[ins.size() == 7 ? 3 : ins.size() - 1];
      if (used + ins.size() > core::kTicBlockWords) {
        code.push_back(core::kTicNop << 6);
        code.resize((code.size() + core::kTicBlockWords - 1) / core::kTicBlockWords *
                    core::kTicBlockWords);
        used = 0;
      }
      code.insert(code.end(), ins.begin(), ins.end());
      used += uint32_t(ins.size());
    }
    code.resize((code.size() + core::kTicBlockWords - 1) / core::kTicBlockWords *
                core::kTicBlockWords);
    candidates += len;
    ++lists;
  }
  WARPATH_TRY(b->charge(code.size() * 4, "code blocks", code.size() / core::kTicBlockWords));
  const uint32_t blocks = uint32_t(code.size() / core::kTicBlockWords);
  std::vector<uint32_t> entries(p.table.size());
  for (size_t i = 0; i < entries.size(); ++i) entries[i] = first_block[p.table[i]];

  std::unique_ptr<TicImage> img(new TicImage());
  PackedTables& t     = img->tables_;
  RfcAddressLayout& a = img->addr_;
  for (unsigned c = 0; c < 4; ++c) {
    a.chunk[c] = t.add(chunks[c].table, chunks[c].classes() - 1);
    a.n[c]     = chunks[c].classes();
  }
  a.x              = t.add(x.table, x.classes() - 1);
  a.nx             = x.classes();
  a.y              = t.add(y.table, y.classes() - 1);
  a.ny             = y.classes();
  a.p              = t.add(entries, blocks);
  a.np             = p.classes();
  img->code_       = t.add_words(code);
  img->code_bytes_ = code.size() * 4;
  t.finish();
  img->tree_bytes_      = t.bytes() - img->code_bytes_;
  const uint64_t ninstr = sizes[0] + sizes[1] + sizes[2] + sizes[3];
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "; code %u blocks, %llu lists, %.2f candidates/list, instructions 4/8/12/28 B "
                "%llu/%llu/%llu/%llu",
                blocks, (unsigned long long)lists, lists ? double(candidates) / double(lists) : 0.0,
                (unsigned long long)sizes[0], (unsigned long long)sizes[1],
                (unsigned long long)sizes[2], (unsigned long long)sizes[3]);
  (void)ninstr;
  img->detail_ = "RT " + mib(img->tree_bytes_) + ": phase0 " + std::to_string(a.n[0]) + "/" +
                 std::to_string(a.n[1]) + "/" + std::to_string(a.n[2]) + "/" +
                 std::to_string(a.n[3]) + "cl, phase1 " + table_text("X", a.x, a.nx) + ", " +
                 table_text("Y", a.y, a.ny) + ", phase2 " + table_text("P", a.p, a.np) + "; code " +
                 mib(img->code_bytes_) + buf + "; total " + mib(t.bytes());
  return img;
}

core::TicView TicImage::view(const uint8_t* base) const {
  core::TicView v;
  v.addr = addr_.view(base);
  v.code = reinterpret_cast<const uint32_t*>(base + code_.offset);
  return v;
}

}  // namespace warpath::classify::detail
