// DNS messages through ldns (src/nids/app/dns_parse.hpp).
#include "nids/app/dns_parse.hpp"

#include <ldns/ldns.h>

#include <memory>
#include <string>

namespace warpath::nids::detail {
namespace {

// A wire-format name (uncompressed: ldns decompresses) as its labels joined by '.'.
std::string name_of(const ldns_rdf* rdf) {
  std::string out;
  if (!rdf) return out;
  const uint8_t* p = ldns_rdf_data(rdf);
  const size_t n   = ldns_rdf_size(rdf);
  for (size_t i = 0; i < n && p[i] != 0;) {
    const size_t len = p[i];
    if (i + 1 + len > n) break;
    if (!out.empty()) out.push_back('.');
    out.append(reinterpret_cast<const char*>(p + i + 1), len);
    i += 1 + len;
  }
  return out;
}

std::string type_of(ldns_rr_type t) {
  char* s = ldns_rr_type2str(t);
  std::string out = s ? s : std::to_string(unsigned(t));
  free(s);
  return out;
}

struct PktFree {
  void operator()(ldns_pkt* p) const { ldns_pkt_free(p); }
};

}  // namespace

bool parse_dns(const uint8_t* data, size_t len, AppTx& tx) {
  if (len < 12) return false;
  ldns_pkt* raw = nullptr;
  if (ldns_wire2pkt(&raw, data, len) != LDNS_STATUS_OK || !raw) return false;
  std::unique_ptr<ldns_pkt, PktFree> pkt(raw);
  const ldns_rr_list* q = ldns_pkt_question(pkt.get());
  const size_t nq       = q ? ldns_rr_list_rr_count(q) : 0;
  if (nq == 0) return false;
  auto dns      = std::make_shared<AppTx::Dns>();
  dns->id       = ldns_pkt_id(pkt.get());
  dns->response = ldns_pkt_qr(pkt.get());
  dns->rcode    = uint16_t(ldns_pkt_get_rcode(pkt.get()));
  dns->flags    = uint16_t(data[2] << 8 | data[3]);
  tx.layer      = AppLayer::kDns;
  tx.response   = dns->response;
  tx.last       = true;  // each message is logged on its own
  for (size_t i = 0; i < nq; ++i) {
    const ldns_rr* rr = ldns_rr_list_rr(q, i);
    const std::string name = name_of(ldns_rr_owner(rr));
    dns->questions.push_back({name, type_of(ldns_rr_get_type(rr)), ""});
    if (!dns->response) tx.add(AppBuffer::kDnsQuery, name);
  }
  if (const ldns_rr_list* a = ldns_pkt_answer(pkt.get()))
    for (size_t i = 0; i < ldns_rr_list_rr_count(a) && i < 64; ++i) {
      const ldns_rr* rr = ldns_rr_list_rr(a, i);
      std::string rdata;
      if (ldns_rr_rd_count(rr) > 0) {
        if (char* s = ldns_rdf2str(ldns_rr_rdf(rr, 0))) {
          rdata = s;
          free(s);
        }
        if (!rdata.empty() && rdata.back() == '.') rdata.pop_back();
      }
      dns->answers.push_back({name_of(ldns_rr_owner(rr)), type_of(ldns_rr_get_type(rr)), rdata});
    }
  tx.dns = std::move(dns);
  return true;
}

bool probe_dns(const uint8_t* data, size_t len) {
  if (len < 12 || len > 65535) return false;
  const uint16_t qd = uint16_t(data[4] << 8 | data[5]);
  const uint32_t records = qd + uint32_t(data[6] << 8 | data[7]) + uint32_t(data[8] << 8 | data[9]) +
                           uint32_t(data[10] << 8 | data[11]);
  if (qd == 0 || qd > 16 || 12 + 2 * size_t(records) > len) return false;
  if ((data[2] >> 3 & 0xf) > 6) return false;  // opcode: query .. DSO
  AppTx t;
  return parse_dns(data, len, t);
}

bool DnsTcpStream::feed(const uint8_t* data, size_t len, std::vector<AppTx>& ready, uint64_t& next_id) {
  if (stopped_) return true;
  held_.append(reinterpret_cast<const char*>(data), len);
  size_t at = 0;
  while (held_.size() - at >= 2) {
    const size_t n = size_t(uint8_t(held_[at]) << 8 | uint8_t(held_[at + 1]));
    if (held_.size() - at - 2 < n) break;  // the rest of the message is still to come
    AppTx tx;
    if (!parse_dns(reinterpret_cast<const uint8_t*>(held_.data() + at + 2), n, tx)) {
      stopped_ = true;
      held_.clear();
      return false;
    }
    tx.id = next_id++;
    ready.push_back(std::move(tx));
    at += 2 + n;
  }
  held_.erase(0, at);
  return true;
}

}  // namespace warpath::nids::detail
