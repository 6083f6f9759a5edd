// Alerts and flows as Suricata writes them: EVE JSON lines and fast.log lines.
#include <cstdio>
#include <ctime>
#include <string>

#include "warpath/core/json_text.hpp"
#include "warpath/nids/inspector.hpp"
#include "warpath/packet/format.hpp"

namespace warpath::nids {
namespace {

std::string quote(std::string_view s) { return "\"" + json_escape(s) + "\""; }

// "2009-11-24T21:27:09.534255+0000" (UTC).
std::string eve_time(uint64_t ns) {
  const std::time_t secs = std::time_t(ns / 1000000000u);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char t[64];
  std::snprintf(t, sizeof t, "%04d-%02d-%02dT%02d:%02d:%02d.%06u+0000", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                unsigned(ns % 1000000000u / 1000u));
  return t;
}

// "11/24/2009-21:27:09.534255" (fast.log).
std::string fast_time(uint64_t ns) {
  const std::time_t secs = std::time_t(ns / 1000000000u);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char t[64];
  std::snprintf(t, sizeof t, "%02d/%02d/%04d-%02d:%02d:%02d.%06u", tm.tm_mon + 1, tm.tm_mday,
                tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec, unsigned(ns % 1000000000u / 1000u));
  return t;
}

std::string proto_text(uint8_t p) {
  switch (p) {
    case 6: return "TCP";
    case 17: return "UDP";
    case 1: return "ICMP";
    case 58: return "IPv6-ICMP";
    case 132: return "SCTP";
    case 47: return "GRE";
    default: return std::to_string(p);
  }
}

bool has_ports(uint8_t p) { return p == 6 || p == 17 || p == 132; }

// Addresses as Suricata's EVE writes them: IPv6 as eight groups of four hex digits.
std::string addr_text(uint8_t version, const uint8_t* a) {
  if (version != 6) return packet::ip_to_string(version, a);
  char t[40];
  std::snprintf(t, sizeof t, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
                a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13],
                a[14], a[15]);
  return t;
}

// A JSON object written field by field, a field left out when its value is missing.
struct Object {
  std::string j = "{";
  void raw(const char* name, const std::string& text) {
    if (j.size() > 1) j += ",";
    j += "\"" + std::string(name) + "\":" + text;
  }
  void str(const char* name, const std::string* v) {
    if (v) raw(name, quote(*v));
  }
  std::string done() { return j + "}"; }
};

// The http object of an EVE http event or an alert (Suricata's EveHttpLogJSONBasic and
// Extended fields, those the transaction has).
std::string http_object(const AppTx& tx) {
  Object o;
  o.str("hostname", tx.find(AppBuffer::kHttpHost));
  o.str("url", tx.find(AppBuffer::kHttpUriRaw));
  o.str("http_user_agent", tx.find(AppBuffer::kHttpUserAgent));
  if (const std::string* ct = tx.find(AppBuffer::kHttpResponseContentType)) {
    const std::string type = ct->substr(0, ct->find(';'));  // parameters left out, as Suricata
    o.str("http_content_type", &type);
  }
  o.str("http_refer", tx.find(AppBuffer::kHttpReferer));
  o.str("http_method", tx.find(AppBuffer::kHttpMethod));
  o.str("protocol", tx.find(AppBuffer::kHttpRequestProtocol));
  if (const std::string* st = tx.find(AppBuffer::kHttpStatCode))
    if (!st->empty() && st->find_first_not_of("0123456789") == std::string::npos && st->size() < 6)
      o.raw("status", *st);
  o.str("redirect", tx.find(AppBuffer::kHttpLocation));
  if (tx.response) o.raw("length", std::to_string(tx.response_len));
  return o.done();
}

const char* rcode_name(uint16_t r) {
  static const char* names[] = {"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"};
  return r < 6 ? names[r] : "UNKNOWN";
}

// EVE's dns object (Suricata's version 2 records): a query, or an answer with its records.
std::string dns_object(const AppTx& tx) {
  if (!tx.dns) return "{}";
  const AppTx::Dns& d = *tx.dns;
  std::string j = "{\"version\":2,\"type\":\"" + std::string(d.response ? "answer" : "query") + "\"";
  j += ",\"id\":" + std::to_string(d.id);
  if (d.response) {
    char flags[8];
    std::snprintf(flags, sizeof flags, "%x", d.flags);
    j += std::string(",\"flags\":\"") + flags + "\",\"qr\":true";
    if (d.flags & 0x0100) j += ",\"rd\":true";
    if (d.flags & 0x0080) j += ",\"ra\":true";
    j += std::string(",\"rcode\":\"") + rcode_name(d.rcode) + "\"";
  }
  if (!d.questions.empty())
    j += ",\"rrname\":" + quote(d.questions[0].name) + ",\"rrtype\":" + quote(d.questions[0].type);
  if (d.response && !d.answers.empty()) {
    j += ",\"answers\":[";
    for (size_t i = 0; i < d.answers.size(); ++i)
      j += std::string(i ? "," : "") + "{\"rrname\":" + quote(d.answers[i].name) + ",\"rrtype\":" +
           quote(d.answers[i].type) + ",\"rdata\":" + quote(d.answers[i].data) + "}";
    j += "]";
  }
  return j + "}";
}

// EVE's tls object (Suricata's field names), the fields the handshake showed.
std::string tls_object(const AppTx& tx) {
  Object o;
  o.str("subject", tx.find(AppBuffer::kTlsCertSubject));
  o.str("issuerdn", tx.find(AppBuffer::kTlsCertIssuer));
  o.str("serial", tx.find(AppBuffer::kTlsCertSerial));
  o.str("fingerprint", tx.find(AppBuffer::kTlsCertFingerprint));
  o.str("sni", tx.find(AppBuffer::kTlsSni));
  if (!tx.tls_version.empty()) o.str("version", &tx.tls_version);
  if (const std::string* h = tx.find(AppBuffer::kJa3Hash))
    o.raw("ja3", "{\"hash\":" + quote(*h) + ",\"string\":" + quote(tx.buf[size_t(AppBuffer::kJa3String)]) + "}");
  if (const std::string* h = tx.find(AppBuffer::kJa3sHash))
    o.raw("ja3s", "{\"hash\":" + quote(*h) + ",\"string\":" + quote(tx.buf[size_t(AppBuffer::kJa3sString)]) + "}");
  return o.done();
}

// The transaction's object under its protocol's name.
std::string app_object(const AppTx& tx) {
  switch (tx.layer) {
    case AppLayer::kHttp: return http_object(tx);
    case AppLayer::kDns: return dns_object(tx);
    case AppLayer::kTls: return tls_object(tx);
    default: break;  // detected only: no transactions
  }
  return "{}";
}

}  // namespace

std::string app_eve(const AppEvent& e) {
  std::string j = "{\"timestamp\":\"" + eve_time(e.ts_ns) + "\"";
  if (e.flow) j += ",\"flow_id\":" + std::to_string(e.flow);
  if (e.packet) j += ",\"pcap_cnt\":" + std::to_string(e.packet);
  j += ",\"event_type\":\"" + std::string(app_layer_name(e.tx->layer)) + "\"";
  j += ",\"src_ip\":\"" + addr_text(e.ip_version, e.src) + "\",\"src_port\":" + std::to_string(e.sport);
  j += ",\"dest_ip\":\"" + addr_text(e.ip_version, e.dst) + "\",\"dest_port\":" + std::to_string(e.dport);
  j += ",\"proto\":\"" + proto_text(e.proto) + "\",\"pkt_src\":\"wire/pcap\"";
  j += ",\"tx_id\":" + std::to_string(e.tx->id);
  j += ",\"" + std::string(app_layer_name(e.tx->layer)) + "\":" + app_object(*e.tx) + "}";
  return j;
}

std::string alert_eve(const Alert& a, const DetectImage& image, bool ips) {
  const Rule& r     = image.rules()[a.rule];
  const ClassType c = image.class_of(r);
  std::string j = "{\"timestamp\":\"" + eve_time(a.ts_ns) + "\"";
  if (a.flow) j += ",\"flow_id\":" + std::to_string(a.flow);
  if (a.packet) j += ",\"pcap_cnt\":" + std::to_string(a.packet);  // none at a flow's end
  j += ",\"event_type\":\"alert\",\"src_ip\":\"" + addr_text(a.ip_version, a.src) + "\"";
  if (has_ports(a.proto)) j += ",\"src_port\":" + std::to_string(a.sport);
  j += ",\"dest_ip\":\"" + addr_text(a.ip_version, a.dst) + "\"";
  if (has_ports(a.proto)) j += ",\"dest_port\":" + std::to_string(a.dport);
  j += ",\"proto\":\"" + proto_text(a.proto) + "\"";
  j += std::string(",\"direction\":\"") + (a.to_server ? "to_server" : "to_client") + "\"";
  j += ",\"pkt_src\":\"wire/pcap\"";
  j += std::string(",\"alert\":{\"action\":\"") + (ips && r.action == Action::kDrop ? "blocked" : "allowed") + "\"";
  j += ",\"gid\":" + std::to_string(r.gid) + ",\"signature_id\":" + std::to_string(r.sid) +
       ",\"rev\":" + std::to_string(r.rev) + ",\"signature\":" + quote(r.msg) +
       ",\"category\":" + quote(c.description) + ",\"severity\":" + std::to_string(c.priority) + "}";
  if (a.tx && a.tx->layer != AppLayer::kNone)
    j += ",\"" + std::string(app_layer_name(a.tx->layer)) + "\":" + app_object(*a.tx);
  if (a.app != AppLayer::kNone) j += ",\"app_proto\":\"" + std::string(app_layer_name(a.app)) + "\"";
  if (a.tx_id >= 0) j += ",\"tx_id\":" + std::to_string(a.tx_id);
  j += std::string(",\"stream\":") + (a.stream ? "1" : "0") + "}";
  return j;
}

std::string flow_eve(const FlowEvent& f) {
  const flow::FlowRecord& r = f.record;
  std::string j = "{\"timestamp\":\"" + eve_time(r.last_ns) + "\",\"flow_id\":" + std::to_string(r.serial);
  j += ",\"event_type\":\"flow\",\"src_ip\":\"" + addr_text(r.ip_version, r.src) + "\"";
  if (has_ports(r.proto)) j += ",\"src_port\":" + std::to_string(r.sport);
  j += ",\"dest_ip\":\"" + addr_text(r.ip_version, r.dst) + "\"";
  if (has_ports(r.proto)) j += ",\"dest_port\":" + std::to_string(r.dport);
  j += ",\"proto\":\"" + proto_text(r.proto) + "\"";
  if (!f.app_proto.empty()) j += ",\"app_proto\":" + quote(f.app_proto);
  const char* reason = r.end == flow::FlowEnd::kTimeout ? "timeout"
                       : r.end == flow::FlowEnd::kShutdown ? "shutdown" : "forced";
  const uint64_t age = (r.last_ns - r.first_ns) / 1000000000u;
  j += ",\"flow\":{\"pkts_toserver\":" + std::to_string(r.packets[0]) +
       ",\"pkts_toclient\":" + std::to_string(r.packets[1]) +
       ",\"bytes_toserver\":" + std::to_string(r.bytes[0]) +
       ",\"bytes_toclient\":" + std::to_string(r.bytes[1]) + ",\"start\":\"" + eve_time(r.first_ns) +
       "\",\"end\":\"" + eve_time(r.last_ns) + "\",\"age\":" + std::to_string(age) +
       ",\"state\":\"" + flow::flow_state_name(r.state) + "\",\"reason\":\"" + reason +
       "\",\"alerted\":" + (f.alerts ? "true" : "false") + (f.dropped ? ",\"action\":\"drop\"" : "") + "}";
  if (r.proto == 6) {
    char flags[3][8];
    std::snprintf(flags[0], 8, "%02x", r.tcp_flags[0] | r.tcp_flags[1]);
    std::snprintf(flags[1], 8, "%02x", r.tcp_flags[0]);
    std::snprintf(flags[2], 8, "%02x", r.tcp_flags[1]);
    j += std::string(",\"tcp\":{\"tcp_flags\":\"") + flags[0] + "\",\"tcp_flags_ts\":\"" + flags[1] +
         "\",\"tcp_flags_tc\":\"" + flags[2] + "\",\"state\":\"" + flow::tcp_state_name(r.tcp) + "\"}";
  }
  return j + "}";
}

std::string alert_fast(const Alert& a, const DetectImage& image, bool ips) {
  const Rule& r     = image.rules()[a.rule];
  const ClassType c = image.class_of(r);
  auto ep = [&](const uint8_t* addr, uint16_t port) {
    std::string s = packet::ip_to_string(a.ip_version, addr);
    if (a.ip_version == 6) s = "[" + s + "]";
    return has_ports(a.proto) ? s + ":" + std::to_string(port) : s;
  };
  std::string line = fast_time(a.ts_ns) + "  ";
  if (ips && r.action == Action::kDrop) line += "[Drop] ";
  line += "[**] [" + std::to_string(r.gid) + ":" + std::to_string(r.sid) + ":" + std::to_string(r.rev) +
          "] " + r.msg + " [**] ";
  if (!c.description.empty()) line += "[Classification: " + c.description + "] ";
  line += "[Priority: " + std::to_string(c.priority) + "] {" + proto_text(a.proto) + "} " +
          ep(a.src, a.sport) + " -> " + ep(a.dst, a.dport);
  return line;
}

}  // namespace warpath::nids
