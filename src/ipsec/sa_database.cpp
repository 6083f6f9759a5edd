// src/ipsec/sa_database.cpp: addresses and prefixes, and the SA database built from an
// SaConfig (include/warpath/ipsec/ipsec.hpp).
#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

#include "ipsec/spd_index.hpp"
#include "warpath/ipsec/ipsec.hpp"

namespace warpath::ipsec {

Result<Addr> parse_addr(std::string_view text) {
  const std::string s(text);
  Addr a;
  if (inet_pton(AF_INET, s.c_str(), a.bytes.data()) == 1) {
    a.family = 4;
    return a;
  }
  if (inet_pton(AF_INET6, s.c_str(), a.bytes.data()) == 1) {
    a.family = 6;
    return a;
  }
  return Status(Errc::kParseError, "'" + s + "' is not an IPv4 or IPv6 address");
}

Result<Prefix> parse_prefix(std::string_view text) {
  Prefix p;
  const size_t slash = text.find('/');
  WARPATH_ASSIGN_OR_RETURN(p.addr, parse_addr(text.substr(0, slash)));
  const unsigned max = p.addr.family == 4 ? 32 : 128;
  p.len              = uint8_t(max);
  if (slash != std::string_view::npos) {
    const std::string_view n = text.substr(slash + 1);
    unsigned v = 0;
    if (n.empty() || n.size() > 3) return Status(Errc::kParseError, "'" + std::string(text) + "': bad prefix length");
    for (char c : n) {
      if (c < '0' || c > '9') return Status(Errc::kParseError, "'" + std::string(text) + "': bad prefix length");
      v = v * 10 + unsigned(c - '0');
    }
    if (v > max)
      return Status(Errc::kParseError, "'" + std::string(text) + "': prefix length over " + std::to_string(max));
    p.len = uint8_t(v);
  }
  // Host bits must be zero, as `ip xfrm policy` prints them: a typo is not silently widened.
  for (unsigned b = p.len; b < max; ++b)
    if (p.addr.bytes[b / 8] >> (7 - b % 8) & 1)
      return Status(Errc::kParseError, "'" + std::string(text) + "': host bits set beyond /" + std::to_string(p.len));
  return p;
}

Result<std::vector<uint8_t>> parse_hex_bytes(std::string_view text) {
  if (text.rfind("0x", 0) != 0 && text.rfind("0X", 0) != 0)
    return Status(Errc::kParseError, "needs 0x followed by hex digits, as `ip xfrm state` takes it");
  text.remove_prefix(2);
  if (text.empty() || text.size() % 2) return Status(Errc::kParseError, "needs an even number of hex digits");
  auto digit = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
  };
  std::vector<uint8_t> out;
  for (size_t i = 0; i < text.size(); i += 2) {
    const int hi = digit(text[i]), lo = digit(text[i + 1]);
    if (hi < 0 || lo < 0) return Status(Errc::kParseError, "'" + std::string(text.substr(i, 2)) + "' is not hex");
    out.push_back(uint8_t(hi << 4 | lo));
  }
  return out;
}

std::string addr_text(const Addr& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(a.family == 4 ? AF_INET : AF_INET6, a.bytes.data(), buf, sizeof buf);
  return buf;
}
std::string prefix_text(const Prefix& p) { return addr_text(p.addr) + "/" + std::to_string(p.len); }

namespace {

// Does the policy's template name the SA? With an spi, that one; without, every SA between
// the template's endpoints (as the kernel matches a template without spi by its addresses).
bool names(const PolicySpec& p, const SaSpec& sa) {
  if (!(sa.dst == p.tmpl_dst) || !(sa.src == p.tmpl_src)) return false;
  return p.spi == 0 || p.spi == sa.spi;
}

bool ports_apply(uint8_t proto) { return proto == 6 || proto == 17 || proto == 132; }

// Keys of the build's lookups (SAs by identity, by endpoints), so that a configuration of
// tens of thousands of tunnels builds in time linear in its size (a pairwise search took
// 1.1 s for 10,000 tunnels, and each reload as long).
std::string addr_key(const Addr& a) {
  return std::string(1, char(a.family)) +
         std::string(reinterpret_cast<const char*>(a.bytes.data()), 16);
}
std::string sa_id(Dir dir, uint32_t spi, const Addr& dst) {  // unique among configured SAs
  return std::string(1, char(dir)) + std::string(reinterpret_cast<const char*>(&spi), 4) +
         addr_key(dst);
}
std::string endpoints(Dir dir, const Addr& src, const Addr& dst) {
  return std::string(1, char(dir)) + addr_key(src) + addr_key(dst);
}

}  // namespace

bool SaDatabase::same_sa(const SaSpec& a, const SaSpec& b) {
  const SaKeys &x = a.keys, &y = b.keys;
  return a.dir == b.dir && a.spi == b.spi && a.dst == b.dst && x.cipher == y.cipher &&
         x.integrity == y.integrity && x.key_bytes == y.key_bytes && x.key == y.key && x.nonce == y.nonce &&
         x.auth_key_bytes == y.auth_key_bytes && x.auth_key == y.auth_key && x.icv_bytes == y.icv_bytes &&
         x.esn == y.esn;
}

namespace {

// Each SA's checks in file order, the first error reported (a duplicate is found by its
// identity, not by comparing every pair).
Status check_sas(const SaConfig& config) {
  std::unordered_map<std::string, size_t> seen;
  for (size_t i = 0; i < config.sas.size(); ++i) {
    const SaSpec& s = config.sas[i];
    if (s.src.family != s.dst.family)
      return Status(Errc::kInvalidArgument, s.where + ": src and dst are of different families");
    if (s.spi < 256)
      return Status(Errc::kInvalidArgument, s.where + ": spi " + std::to_string(s.spi) +
                                                " is reserved (RFC 4303 2.1: 1-255 reserved, 0 never sent)");
    if (s.keys.esn && s.dir == Dir::kIn && s.replay_window == 0)
      return Status(Errc::kInvalidArgument,
                    s.where +
                        ": esn needs replay_window >= 1 (it infers the high sequence bits "
                        "from the window), as the kernel requires");
    const auto [at, fresh] = seen.emplace(sa_id(s.dir, s.spi, s.dst), i);
    if (!fresh)
      return Status(
          Errc::kInvalidArgument, s.where + ": SA with spi 0x" +
                                      [&] {
                                        char b[16];
                                        std::snprintf(b, sizeof b, "%08x", s.spi);
                                        return std::string(b);
                                      }() +
                                      " and dst " + addr_text(s.dst) + " already defined at " +
                                      config.sas[at->second].where);
  }
  return Status::ok();
}

}  // namespace

Result<SaDatabase> SaDatabase::build(SaConfig config, const SaDatabase* previous) {
  WARPATH_TRY(check_sas(config));
  // Indices are stable across builds: an SA of `previous` keeps its index (and its keys),
  // one no longer in the file stays as a retired entry, a new one is appended.
  SaDatabase db;
  std::unordered_map<std::string, std::vector<size_t>> earlier;  // previous SAs by identity
  if (previous) {
    db.sas_ = previous->sas_;
    db.active_.assign(db.sas_.size(), 0);
    for (size_t o = 0; o < db.sas_.size(); ++o)
      earlier[sa_id(db.sas_[o].dir, db.sas_[o].spi, db.sas_[o].dst)].push_back(o);
  }
  for (SaSpec& s : config.sas) {
    size_t at = db.sas_.size();
    if (const auto it = earlier.find(sa_id(s.dir, s.spi, s.dst)); it != earlier.end())
      for (const size_t o : it->second)  // the first retired one equal to it, as a scan would
        if (!db.active_[o] && same_sa(db.sas_[o], s)) {
          at = o;
          break;
        }
    if (at == db.sas_.size()) {
      db.sas_.push_back(std::move(s));
      db.active_.push_back(1);
    } else {
      db.sas_[at]   = std::move(s);
      db.active_[at] = 1;
    }
  }
  for (size_t i = 0; i < db.sas_.size(); ++i) {
    if (!db.active_[i]) continue;
    if (db.sas_[i].dir == Dir::kIn) {
      db.in_list_.push_back(uint32_t(i));
      db.in_index_.push_back(uint64_t(db.sas_[i].spi) << 32 | i);
    } else {
      ++db.out_count_;
    }
  }
  std::sort(db.in_index_.begin(), db.in_index_.end());
  for (uint32_t s : db.in_list_)
    db.locals_.push_back(
        {db.sas_[s].dst.family, addr_words(db.sas_[s].dst.family, db.sas_[s].dst.bytes.data())});
  std::sort(db.locals_.begin(), db.locals_.end());
  db.locals_.erase(std::unique(db.locals_.begin(), db.locals_.end()), db.locals_.end());

  // Policies: out ones by priority (stable: file order breaks ties), then in ones.
  std::stable_sort(config.policies.begin(), config.policies.end(),
                   [](const PolicySpec& a, const PolicySpec& b) {
                     if (a.dir != b.dir) return a.dir == Dir::kOut;
                     return a.priority < b.priority;
                   });
  db.policies_ = std::move(config.policies);
  db.selectors_.reserve(db.policies_.size());
  for (const PolicySpec& pol : db.policies_) {
    Selector x;
    x.family = pol.src.addr.family;  // the dst's too (checked below)
    x.src    = addr_words(x.family, pol.src.addr.bytes.data());
    x.dst    = addr_words(x.family, pol.dst.addr.bytes.data());
    x.smask  = prefix_mask(pol.src.len);
    x.dmask  = prefix_mask(pol.dst.len);
    x.proto  = pol.proto;
    x.sport  = pol.sport;
    x.dport  = pol.dport;
    db.selectors_.push_back(x);
  }
  // Configured SAs by identity and by endpoints (the first in index order), and every inbound
  // SA, retired ones too, by endpoints.
  std::unordered_map<std::string, uint32_t> by_id, by_ends;
  std::unordered_map<std::string, std::vector<uint32_t>> in_by_ends;
  for (uint32_t s = 0; s < db.sas_.size(); ++s) {
    const SaSpec& sa = db.sas_[s];
    if (sa.dir == Dir::kIn) in_by_ends[endpoints(sa.dir, sa.src, sa.dst)].push_back(s);
    if (!db.active_[s]) continue;
    by_id.emplace(sa_id(sa.dir, sa.spi, sa.dst), s);
    by_ends.emplace(endpoints(sa.dir, sa.src, sa.dst), s);
  }
  for (size_t p = 0; p < db.policies_.size(); ++p) {
    const PolicySpec& pol = db.policies_[p];
    if (pol.src.addr.family != pol.dst.addr.family)
      return Status(Errc::kInvalidArgument, pol.where + ": src and dst are of different families");
    if ((pol.sport || pol.dport) && !ports_apply(pol.proto))
      return Status(Errc::kInvalidArgument, pol.where + ": sport/dport need proto tcp, udp or sctp");
    // With an spi, the SA of (direction, spi, dst); without, the first between the endpoints.
    int32_t found = -1;
    const auto& map = pol.spi ? by_id : by_ends;
    const auto it   = map.find(pol.spi ? sa_id(pol.dir, pol.spi, pol.tmpl_dst)
                                       : endpoints(pol.dir, pol.tmpl_src, pol.tmpl_dst));
    if (it != map.end()) found = int32_t(it->second);
    if (found < 0)
      return Status(Errc::kInvalidArgument,
                    pol.where + ": no " + (pol.dir == Dir::kOut ? "outbound" : "inbound") +
                        " SA with dst " + addr_text(pol.tmpl_dst) +
                        (pol.spi ? " and spi " + std::to_string(pol.spi) : " and src " + addr_text(pol.tmpl_src)));
    if (!(db.sas_[size_t(found)].src == pol.tmpl_src))
      return Status(Errc::kInvalidArgument, pol.where + ": tmpl_src " + addr_text(pol.tmpl_src) +
                                                " is not the SA's src " + addr_text(db.sas_[size_t(found)].src));
    // IPv6 never goes below a 1280-byte MTU (RFC 8200 5): a tunnel that cannot carry 1280-byte
    // inner packets whole (warpath does not fragment after encapsulation) cannot carry IPv6.
    if (pol.dir == Dir::kOut && pol.src.addr.family == 6) {
      const SaSpec& sa        = db.sas_[size_t(found)];
      const uint32_t overhead = (sa.dst.family == 4 ? 20u : 40u) + 16u + sa.keys.icv_bytes + 2u + 3u;
      if (sa.mtu < overhead + 1280)
        return Status(Errc::kInvalidArgument,
                      pol.where + ": IPv6 through " + sa.where + ", whose mtu " + std::to_string(sa.mtu) +
                          " leaves " + std::to_string(int(sa.mtu) - int(overhead)) +
                          " bytes for the inner packet, under IPv6's 1280");
    }
    db.policy_sa_.push_back(found);
    (pol.dir == Dir::kOut ? db.out_policies_ : db.in_policies_).push_back(uint32_t(p));
  }
  // Per inbound SA (retired ones too: packets already on their way with one's index are
  // checked as before), the in policies naming it, in match order.
  db.in_naming_.resize(db.sas_.size());
  db.in_naming_index_.resize(db.sas_.size());
  for (uint32_t p : db.in_policies_) {
    const PolicySpec& pol = db.policies_[p];
    const auto it         = in_by_ends.find(endpoints(Dir::kIn, pol.tmpl_src, pol.tmpl_dst));
    if (it == in_by_ends.end()) continue;
    for (uint32_t s : it->second)
      if (names(pol, db.sas_[s])) db.in_naming_[s].push_back(p);
  }
  for (uint32_t s : db.in_list_)
    if (db.in_naming_[s].empty())
      return Status(Errc::kInvalidArgument,
                    db.sas_[s].where +
                        ": no `in` policy names this inbound SA, so nothing it "
                        "carries could be accepted (add a [[policy]] with dir = \"in\")");
  auto index = [&db](const std::vector<uint32_t>& list) -> std::shared_ptr<const detail::SpdIndex> {
    if (list.size() <= detail::SpdIndex::kLinearMax) return nullptr;
    return std::make_shared<const detail::SpdIndex>(db.policies_, list);
  };
  db.out_index_    = index(db.out_policies_);
  db.in_index_all_ = index(db.in_policies_);
  for (size_t s = 0; s < db.sas_.size(); ++s) db.in_naming_index_[s] = index(db.in_naming_[s]);
  return db;
}

std::vector<SaKeys> SaDatabase::keys() const {
  std::vector<SaKeys> k;
  k.reserve(sas_.size());
  for (const SaSpec& s : sas_) k.push_back(s.keys);
  return k;
}

int32_t SaDatabase::find_inbound(uint32_t spi, uint8_t family, const uint8_t* dst) const {
  auto it = std::lower_bound(in_index_.begin(), in_index_.end(), uint64_t(spi) << 32);
  for (; it != in_index_.end() && uint32_t(*it >> 32) == spi; ++it) {
    const SaSpec& s = sas_[uint32_t(*it)];
    if (s.dst.family == family && (family == 4 ? std::memcmp(s.dst.bytes.data(), dst, 4)
                                               : std::memcmp(s.dst.bytes.data(), dst, 16)) == 0)
      return int32_t(uint32_t(*it));
  }
  return -1;
}

// A binary search: hostile traffic to many addresses costs log(endpoints) per packet.
bool SaDatabase::is_local(uint8_t family, const uint8_t* dst) const {
  return std::binary_search(locals_.begin(), locals_.end(),
                            AddrKey{family, addr_words(family, dst)});
}

int32_t SaDatabase::indexed_first(const detail::SpdIndex* index, uint8_t family, const uint8_t* src,
                                  const uint8_t* dst, uint8_t proto, uint16_t sport, uint16_t dport,
                                  bool ports_known, bool proto_known) {
  return index->first(family, src, dst, proto, sport, dport, ports_known, proto_known);
}

bool SaDatabase::admits_in(int32_t sa, uint8_t family, const uint8_t* src, const uint8_t* dst,
                           uint8_t proto, uint16_t sport, uint16_t dport, bool ports_known,
                           bool proto_known) const {
  if (sa >= int32_t(in_naming_.size())) return false;
  const bool any = sa < 0;
  return first_of(any ? in_policies_ : in_naming_[size_t(sa)],
                  any ? in_index_all_.get() : in_naming_index_[size_t(sa)].get(), family, src, dst,
                  proto, sport, dport, ports_known, proto_known) >= 0;
}

}  // namespace warpath::ipsec
