// RFC tree building: see rfc_image.hpp.
#include "classify/rfc_image.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <utility>

namespace warpath::classify::detail {
namespace {

constexpr unsigned kAllChunks = (1u << core::kChunks) - 1;
constexpr unsigned kAddrChunks =
    1u << core::kSrcHi | 1u << core::kSrcLo | 1u << core::kDstHi | 1u << core::kDstLo;

uint64_t hash_list(const uint32_t* s, uint32_t n) {
  uint64_t h = 0x9E37'79B9'7F4A'7C15ull ^ n;
  for (uint32_t i = 0; i < n; ++i) {
    h ^= s[i];
    h *= 0xFF51'AFD7'ED55'8CCDull;
    h ^= h >> 29;
  }
  return h ^ (h >> 32);
}

// The 16-bit (or proto_mask-wide) values x with (x & m) == v and lo <= x <= hi, as sorted
// intervals [first, second].
void masked_intervals(uint32_t v, uint32_t m, uint32_t domain_mask, uint32_t lo, uint32_t hi,
                      std::vector<std::pair<uint32_t, uint32_t>>& out) {
  out.clear();
  if (lo > hi) return;
  m &= domain_mask;
  v &= m;
  const uint32_t free = ~m & domain_mask;
  const uint32_t low  = ((free + 1) & ~free) - 1;  // free bits contiguous from bit 0
  const uint32_t high = free & ~low;
  for (uint32_t s = 0;;) {
    const uint32_t a = std::max(v | s, lo), b = std::min(v | s | low, hi);
    if (a <= b) out.emplace_back(a, b);
    if (s == high) break;
    s = (s - high) & high;
  }
}

// Rule r's condition on chunk c as (value, mask, domain mask, lo, hi).
struct ChunkCond {
  uint32_t v, m, dm, lo, hi;
};
ChunkCond chunk_cond(const Rule& r, unsigned c, uint32_t proto_mask) {
  switch (c) {
    case core::kSrcHi:
      return {r.value[0] >> 16, r.mask[0] >> 16, 0xFFFF, 0, 0xFFFF};
    case core::kSrcLo:
      return {r.value[0] & 0xFFFF, r.mask[0] & 0xFFFF, 0xFFFF, 0, 0xFFFF};
    case core::kDstHi:
      return {r.value[1] >> 16, r.mask[1] >> 16, 0xFFFF, 0, 0xFFFF};
    case core::kDstLo:
      return {r.value[1] & 0xFFFF, r.mask[1] & 0xFFFF, 0xFFFF, 0, 0xFFFF};
    case core::kSport:
      return {r.value[2] >> 16, r.mask[2] >> 16, 0xFFFF, r.sport_lo, r.sport_hi};
    case core::kDport:
      return {r.value[2] & 0xFFFF, r.mask[2] & 0xFFFF, 0xFFFF, r.dport_lo, r.dport_hi};
    default:
      return {r.value[3] & proto_mask, r.mask[3] & proto_mask, proto_mask, 0, proto_mask};
  }
}

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", double(bytes) / (1 << 20));
  return buf;
}

}  // namespace

// ---- SetPool ----

SetPool::SetPool() : offsets_{0}, slots_(1024, 0) {}

void SetPool::grow() {
  std::vector<uint32_t> slots(slots_.size() * 2, 0);
  const uint64_t mask = slots.size() - 1;
  for (uint32_t id = 0; id < size(); ++id) {
    uint64_t i = hashes_[id] & mask;
    while (slots[i]) i = (i + 1) & mask;
    slots[i] = id + 1;
  }
  slots_.swap(slots);
}

uint32_t SetPool::intern(const uint32_t* s, uint32_t n) {
  const uint64_t h    = hash_list(s, n);
  const uint64_t mask = slots_.size() - 1;
  uint64_t i          = h & mask;
  for (; slots_[i]; i = (i + 1) & mask) {
    const uint32_t id = slots_[i] - 1;
    if (hashes_[id] == h && length(id) == n &&
        (n == 0 || std::memcmp(data(id), s, n * sizeof(uint32_t)) == 0))
      return id;
  }
  const uint32_t id = size();
  slots_[i]         = id + 1;
  hashes_.push_back(h);
  pool_.insert(pool_.end(), s, s + n);
  offsets_.push_back(pool_.size());
  if (uint64_t(size()) * 2 > slots_.size()) grow();
  return id;
}

// ---- RfcBuilder ----

Result<std::unique_ptr<RfcBuilder>> RfcBuilder::create(const RuleSet& rules, uint64_t max_bytes) {
  if (rules.layout != KeyLayout::kFiveTuple)
    return Status(Errc::kNotSupported, "RFC classifies 5-tuple rules only");
  std::unique_ptr<RfcBuilder> b(new RfcBuilder());
  b->rules_        = &rules.rules;
  b->max_bytes_    = max_bytes;
  const uint32_t n = uint32_t(rules.rules.size());
  uint32_t proto   = 0;
  for (const Rule& r : rules.rules) proto |= r.mask[3];
  if (proto & 0xFFFF'0000u)
    return Status(Errc::kNotSupported,
                  "RFC takes protocol masks of at most 16 bits (a rule masks 0x" +
                      std::to_string(proto) + ")");
  b->proto_mask_ = proto & 0xFF00u ? 0xFFFFu : 0xFFu;
  b->rank_index_.resize(n);
  std::iota(b->rank_index_.begin(), b->rank_index_.end(), 0u);
  std::stable_sort(b->rank_index_.begin(), b->rank_index_.end(), [&](uint32_t x, uint32_t y) {
    return rules.rules[x].priority > rules.rules[y].priority;
  });
  b->wild_.resize(n);
  for (uint32_t rank = 0; rank < n; ++rank) {
    const Rule& r = rules.rules[b->rank_index_[rank]];
    unsigned w    = 0;
    for (unsigned c = 0; c < core::kChunks; ++c) {
      const ChunkCond k = chunk_cond(r, c, b->proto_mask_);
      if ((k.m & k.dm) == 0 && k.lo == 0 && k.hi == k.dm) w |= 1u << c;
    }
    b->wild_[rank] = uint8_t(w);
  }
  WARPATH_TRY(b->charge(uint64_t(n) * 16, "rule ranks", n));
  return b;
}

Status RfcBuilder::charge(uint64_t bytes, const char* what, uint64_t entries) {
  if (charged_ + bytes > max_bytes_)
    return Status(Errc::kCapacity, std::string("RFC ") + what + " needs " +
                                       std::to_string(entries) + " entries (" + mib(bytes) +
                                       ") on top of " + mib(charged_) + " built so far: over the " +
                                       mib(max_bytes_) + " image limit");
  charged_ += bytes;
  return Status::ok();
}

Status RfcBuilder::check_pool(const SetPool& pool, const char* what) const {
  // Twice the bytes: a growing vector may hold its old and new storage at once.
  if (charged_ + 2 * pool.bytes() <= max_bytes_) return Status::ok();
  return Status(Errc::kCapacity, std::string("RFC ") + what + ": the class lists reach " +
                                     mib(pool.bytes()) + " (" + std::to_string(pool.size()) +
                                     " classes) on top of " + mib(charged_) +
                                     " built so far: over the " + mib(max_bytes_) + " limit");
}

Status RfcBuilder::chunk(unsigned c, RfcPhase& out) {
  const uint32_t dm = c == core::kProto ? proto_mask_ : 0xFFFFu;
  const uint32_t n  = rules();
  std::vector<uint64_t> events;  // pos << 32 | rank << 1 | add
  std::vector<std::pair<uint32_t, uint32_t>> iv;
  for (uint32_t rank = 0; rank < n; ++rank) {
    const ChunkCond k = chunk_cond(rule_at_rank(rank), c, proto_mask_);
    masked_intervals(k.v, k.m, k.dm, k.lo, std::min(k.hi, k.dm), iv);
    for (const auto& [a, b] : iv) {
      events.push_back(uint64_t(a) << 32 | uint64_t(rank) << 1 | 1);
      events.push_back(uint64_t(b + 1) << 32 | uint64_t(rank) << 1);
    }
  }
  std::sort(events.begin(), events.end());
  WARPATH_TRY(charge(uint64_t(dm + 1) * 4, "phase-0 chunk", dm + 1));
  out.table.assign(size_t(dm) + 1, 0);
  std::vector<uint64_t> active((n + 63) / 64, 0);
  std::vector<uint32_t> list;
  const unsigned seen = 1u << c;
  size_t e            = 0;
  for (uint32_t pos = 0; pos <= dm;) {
    for (; e < events.size() && uint32_t(events[e] >> 32) == pos; ++e) {
      const uint32_t rank = uint32_t(events[e] >> 1) & 0x7FFF'FFFFu;
      if (events[e] & 1) {
        active[rank / 64] |= uint64_t(1) << (rank % 64);
      } else {
        active[rank / 64] &= ~(uint64_t(1) << (rank % 64));
      }
    }
    const uint32_t next = e < events.size() ? std::min(uint32_t(events[e] >> 32), dm + 1) : dm + 1;
    list.clear();
    bool done = false;
    for (size_t w = 0; w < active.size() && !done; ++w)
      for (uint64_t bits = active[w]; bits && !done; bits &= bits - 1) {
        const uint32_t rank = uint32_t(w * 64 + __builtin_ctzll(bits));
        list.push_back(rank);
        done = (wild_[rank] | seen) == kAllChunks;
      }
    const uint32_t id = out.sets.intern(list.data(), uint32_t(list.size()));
    if (id + 1 == out.sets.size()) WARPATH_TRY(check_pool(out.sets, "phase-0 classes"));
    std::fill(out.table.begin() + pos, out.table.begin() + next, id);
    pos = next;
  }
  return charge(out.sets.bytes(), "phase-0 classes", out.sets.total_length());
}

Status RfcBuilder::cross(const RfcPhase& a, const RfcPhase& b, unsigned seen, const char* name,
                         RfcPhase& out) {
  const uint64_t na = a.classes(), nb = b.classes(), entries = na * nb;
  WARPATH_TRY(charge(entries * 4, name, entries));
  out.table.assign(entries, 0);
  // Mark the lists of one side, filter the other side's lists: choose the cheaper way round.
  const double cost_a = double(na) * double(b.sets.total_length());
  const double cost_b = double(nb) * double(a.sets.total_length());
  const bool a_outer  = cost_a <= cost_b;
  const double steps  = std::min(cost_a, cost_b);
  if (steps > kRfcMaxBuildSteps)
    return Status(Errc::kCapacity, std::string("RFC ") + name + " (" + std::to_string(entries) +
                                       " entries) would scan " + std::to_string(uint64_t(steps)) +
                                       " class-list elements to build, over the limit of " +
                                       std::to_string(uint64_t(kRfcMaxBuildSteps)));
  const RfcPhase& outer = a_outer ? a : b;
  const RfcPhase& inner = a_outer ? b : a;
  std::vector<uint32_t> stamp(rules(), 0), list;
  for (uint32_t o = 0; o < outer.classes(); ++o) {
    const uint32_t mark = o + 1;
    const uint32_t* os  = outer.sets.data(o);
    for (uint32_t k = 0, len = outer.sets.length(o); k < len; ++k) stamp[os[k]] = mark;
    for (uint32_t i = 0; i < inner.classes(); ++i) {
      list.clear();
      const uint32_t* s = inner.sets.data(i);
      for (uint32_t k = 0, len = inner.sets.length(i); k < len; ++k) {
        const uint32_t rank = s[k];
        if (stamp[rank] != mark) continue;
        list.push_back(rank);
        if ((wild_[rank] | seen) == kAllChunks) break;
      }
      const uint32_t id = out.sets.intern(list.data(), uint32_t(list.size()));
      if (id + 1 == out.sets.size()) WARPATH_TRY(check_pool(out.sets, name));
      out.table[a_outer ? uint64_t(o) * nb + i : uint64_t(i) * nb + o] = id;
    }
  }
  return charge(out.sets.bytes(), name, out.sets.total_length());
}

Status RfcBuilder::cross3(const RfcPhase& a, const RfcPhase& b, const RfcPhase& c, unsigned seen_ab,
                          unsigned seen, const char* name, RfcPhase& out) {
  RfcPhase ab, abc;
  WARPATH_TRY(cross(a, b, seen_ab, name, ab));
  WARPATH_TRY(cross(ab, c, seen, name, abc));
  const uint64_t nab = ab.table.size(), nc = c.classes();
  WARPATH_TRY(charge(nab * nc * 4, name, nab * nc));
  out.table.resize(nab * nc);
  for (uint64_t i = 0; i < nab; ++i)
    for (uint64_t k = 0; k < nc; ++k) out.table[i * nc + k] = abc.table[ab.table[i] * nc + k];
  out.sets = std::move(abc.sets);
  return Status::ok();
}

Status RfcBuilder::final_table(const RfcPhase& p, const RfcPhase& z, std::vector<uint32_t>& out) {
  const uint64_t np = p.classes(), nz = z.classes(), entries = np * nz;
  WARPATH_TRY(charge(entries * 4, "phase-3 table F", entries));
  out.assign(entries, 0);
  std::vector<uint32_t> stamp(rules(), 0);
  for (uint32_t zi = 0; zi < nz; ++zi) {
    const uint32_t* zs = z.sets.data(zi);
    for (uint32_t k = 0, len = z.sets.length(zi); k < len; ++k) stamp[zs[k]] = zi + 1;
    for (uint32_t pi = 0; pi < np; ++pi) {
      const uint32_t* s = p.sets.data(pi);
      for (uint32_t k = 0, len = p.sets.length(pi); k < len; ++k)
        if (stamp[s[k]] == zi + 1) {
          out[uint64_t(pi) * nz + zi] = s[k] + 1;
          break;
        }
    }
  }
  return Status::ok();
}

// ---- PackedTables ----

void PackedTables::Free::operator()(uint8_t* p) const { std::free(p); }

PackedTables::Slot PackedTables::add(const std::vector<uint32_t>& values, uint32_t max_value) {
  Slot s;
  s.wide    = max_value > 0xFFFFu;
  s.entries = values.size();
  s.offset  = (size_ + 63) & ~uint64_t(63);
  std::vector<uint8_t> part(values.size() << (1 + s.wide));
  if (s.wide) {
    std::memcpy(part.data(), values.data(), part.size());
  } else {
    for (size_t i = 0; i < values.size(); ++i) {
      const uint16_t v = uint16_t(values[i]);
      std::memcpy(part.data() + 2 * i, &v, 2);
    }
  }
  size_ = s.offset + part.size();
  part_offsets_.push_back(s.offset);
  parts_.push_back(std::move(part));
  return s;
}

PackedTables::Slot PackedTables::add_words(const std::vector<uint32_t>& words) {
  return add(words, 0xFFFF'FFFFu);
}

void PackedTables::finish() {
  const uint64_t bytes = std::max<uint64_t>(64, (size_ + 63) & ~uint64_t(63));
  buffer_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, bytes)));
  std::memset(buffer_.get(), 0, bytes);
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (!parts_[i].empty())
      std::memcpy(buffer_.get() + part_offsets_[i], parts_[i].data(), parts_[i].size());
    std::vector<uint8_t>().swap(parts_[i]);
  }
  size_ = bytes;
}

// ---- address stage, RfcImage ----

core::RfcView RfcAddressLayout::view(const uint8_t* base) const {
  core::RfcView v;
  for (unsigned c = 0; c < 4; ++c) {
    v.chunk[c] = PackedTables::table(base, chunk[c]);
    v.n[c]     = n[c];
  }
  v.x  = PackedTables::table(base, x);
  v.y  = PackedTables::table(base, y);
  v.p  = PackedTables::table(base, p);
  v.nx = nx;
  v.ny = ny;
  v.np = np;
  return v;
}

Status build_address_stage(RfcBuilder& b, RfcPhase chunks[4], RfcPhase& x, RfcPhase& y,
                           RfcPhase& p) {
  for (unsigned c = 0; c < 4; ++c) WARPATH_TRY(b.chunk(c, chunks[c]));
  WARPATH_TRY(b.cross(chunks[core::kSrcHi], chunks[core::kSrcLo],
                      1u << core::kSrcHi | 1u << core::kSrcLo, "phase-1 table X (source)", x));
  WARPATH_TRY(b.cross(chunks[core::kDstHi], chunks[core::kDstLo],
                      1u << core::kDstHi | 1u << core::kDstLo, "phase-1 table Y (destination)", y));
  return b.cross(x, y, kAddrChunks, "phase-2 table P (address pair)", p);
}

std::string table_text(const char* name, uint64_t entries, uint32_t wide, uint32_t classes) {
  return std::string(name) + " " + std::to_string(entries) + "x" + (wide ? "4" : "2") + "B/" +
         std::to_string(classes) + "cl";
}

Result<std::unique_ptr<RfcImage>> RfcImage::build(const RuleSet& rules, uint64_t max_bytes) {
  WARPATH_ASSIGN_OR_RETURN(auto b, RfcBuilder::create(rules, max_bytes));
  std::unique_ptr<RfcImage> img(new RfcImage());
  img->rules_      = b->rules();
  img->proto_mask_ = b->proto_mask();
  RfcPhase chunks[core::kChunks], x, y, p, z;
  WARPATH_TRY(build_address_stage(*b, chunks, x, y, p));
  for (unsigned c = core::kSport; c <= core::kProto; ++c) WARPATH_TRY(b->chunk(c, chunks[c]));
  WARPATH_TRY(b->cross3(chunks[core::kSport], chunks[core::kDport], chunks[core::kProto],
                        1u << core::kSport | 1u << core::kDport,
                        1u << core::kSport | 1u << core::kDport | 1u << core::kProto,
                        "phase-1 table Z (ports, protocol)", z));
  std::vector<uint32_t> f;
  WARPATH_TRY(b->final_table(p, z, f));

  PackedTables& t     = img->tables_;
  RfcAddressLayout& a = img->addr_;
  std::string d       = "phase0";
  uint64_t p0 = 0, p1 = 0;
  const char* names[core::kChunks] = {"src_hi", "src_lo", "dst_hi", "dst_lo",
                                      "sport",  "dport",  "proto"};
  for (unsigned c = 0; c < core::kChunks; ++c) {
    const uint32_t n = chunks[c].classes();
    const auto slot  = t.add(chunks[c].table, n - 1);
    if (c < 4) {
      a.chunk[c] = slot;
      a.n[c]     = n;
    } else {
      img->ports_[c - 4]   = slot;
      img->n_ports_[c - 4] = n;
    }
    p0 += slot.entries << (1 + slot.wide);
    d += std::string(c ? ", " : " ") + names[c] + " " + std::to_string(n) + "cl";
    std::vector<uint32_t>().swap(chunks[c].table);
  }
  a.x      = t.add(x.table, x.classes() - 1);
  a.nx     = x.classes();
  a.y      = t.add(y.table, y.classes() - 1);
  a.ny     = y.classes();
  img->z_  = t.add(z.table, z.classes() - 1);
  img->nz_ = z.classes();
  a.p      = t.add(p.table, p.classes() - 1);
  a.np     = p.classes();
  img->f_  = t.add(f, b->rules());
  std::vector<uint32_t> answers(b->rules() + 1, kNoMatch);
  for (uint32_t r = 0; r < b->rules(); ++r) answers[r + 1] = b->rule_of_rank(r);
  img->answers_ = t.add_words(answers);
  for (const auto* s : {&a.x, &a.y, &img->z_}) p1 += s->entries << (1 + s->wide);
  d += " (" + mib(p0) + "); phase1 " + table_text("X", a.x.entries, a.x.wide, a.nx) + ", " +
       table_text("Y", a.y.entries, a.y.wide, a.ny) + ", " +
       table_text("Z", img->z_.entries, img->z_.wide, img->nz_) + " (" + mib(p1) + "); phase2 " +
       table_text("P", a.p.entries, a.p.wide, a.np) + " (" + mib(a.p.entries << (1 + a.p.wide)) +
       "); phase3 F " + std::to_string(img->f_.entries) + "x" + (img->f_.wide ? "4" : "2") + "B (" +
       mib(img->f_.entries << (1 + img->f_.wide)) + ")";
  t.finish();
  d += "; total " + mib(t.bytes());
  img->detail_ = std::move(d);
  return img;
}

core::RfcView RfcImage::view(const uint8_t* base) const {
  core::RfcView v = addr_.view(base);
  for (unsigned c = 0; c < 3; ++c) {
    v.chunk[4 + c] = PackedTables::table(base, ports_[c]);
    v.n[4 + c]     = n_ports_[c];
  }
  v.z          = PackedTables::table(base, z_);
  v.nz         = nz_;
  v.f          = PackedTables::table(base, f_);
  v.answers    = reinterpret_cast<const uint32_t*>(base + answers_.offset);
  v.proto_mask = proto_mask_;
  return v;
}

}  // namespace warpath::classify::detail
