// One flow's HTTP parser over libhtp (src/nids/app/http_flow.hpp).
#include "nids/app/http_flow.hpp"

#include <htp/htp.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string_view>

namespace warpath::nids::detail {

struct HttpFlow::Tx {
  htp_tx_t* tx = nullptr;
  uint64_t id  = 0;
  std::string req_raw_headers, res_raw_headers;
  std::string req_body, res_body;
  bool req_truncated = false, res_truncated = false;
  bool request_done = false;  // the request phase was inspected
  AppTx built;                // the request's buffers (the response phase adds its own)
};

namespace {

htp_time_t time_of(uint64_t ts_ns) {
  htp_time_t tv;
  tv.tv_sec  = time_t(ts_ns / 1'000'000'000);
  tv.tv_usec = suseconds_t(ts_ns / 1000 % 1'000'000);
  return tv;
}

std::string_view view(const bstr* b) {
  return b ? std::string_view(reinterpret_cast<const char*>(bstr_ptr(b)), bstr_len(b)) : std::string_view{};
}

// Suricata's HTTP detection patterns (app-layer-htp.c): a method and a space or tab, caseless.
constexpr std::string_view kMethods[] = {
    "GET",      "PUT",        "POST",        "HEAD",        "TRACE",     "OPTIONS",
    "CONNECT",  "DELETE",     "PATCH",       "PROPFIND",    "PROPPATCH", "MKCOL",
    "COPY",     "MOVE",       "LOCK",        "UNLOCK",      "CHECKOUT",  "UNCHECKOUT",
    "CHECKIN",  "UPDATE",     "LABEL",       "REPORT",      "MKWORKSPACE", "MKACTIVITY",
    "MERGE",    "INVALID",    "VERSION-CONTROL", "BASELINE-CONTROL",
};

bool starts_caseless(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

HttpFlow* flow_of(const htp_tx_t* tx) {
  return static_cast<HttpFlow*>(htp_connp_get_user_data(tx->connp));
}
HttpFlow::Tx* state_of(const htp_tx_t* tx) { return static_cast<HttpFlow::Tx*>(htp_tx_get_user_data(tx)); }

// A header's value by name (libhtp's tables compare names caselessly), or none.
bool header(const htp_table_t* t, const char* name, std::string_view& out) {
  if (!t) return false;
  const auto* h = static_cast<const htp_header_t*>(htp_table_get_c(t, name));
  if (!h) return false;
  out = view(h->value);
  return true;
}

// http.header and http.header_names of a header table: "Name: value\r\n" each (without the
// cookie header of that side), and "\r\nName\r\n...\r\n\r\n".
void header_buffers(const htp_table_t* t, const char* cookie, std::string& headers, std::string& names) {
  headers.clear();
  names = "\r\n";
  const size_t n = t ? htp_table_size(t) : 0;
  for (size_t i = 0; i < n; ++i) {
    const auto* h = static_cast<const htp_header_t*>(htp_table_get_index(t, i, nullptr));
    if (!h) continue;
    const std::string_view name = view(h->name), value = view(h->value);
    names.append(name).append("\r\n");
    if (name.size() == std::strlen(cookie) &&
        std::equal(name.begin(), name.end(), cookie,
                   [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; }))
      continue;
    headers.append(name).append(": ").append(value).append("\r\n");
  }
  names.append("\r\n");
}

// http.request_header / http.response_header: each header as "Name: value", an instance each.
void each_header(const htp_table_t* t, AppBuffer b, AppTx& a) {
  const size_t n = t ? htp_table_size(t) : 0;
  for (size_t i = 0; i < n; ++i)
    if (const auto* h = static_cast<const htp_header_t*>(htp_table_get_index(t, i, nullptr)))
      a.add(b, std::string(view(h->name)).append(": ").append(view(h->value)));
}

// http.start: the first line, then every header as "Name: value\r\n" (cookies too), then an
// empty line when there was a header.
std::string start_buffer(std::string_view line, const htp_table_t* t) {
  std::string out(line);
  out.append("\r\n");
  const size_t n = t ? htp_table_size(t) : 0;
  for (size_t i = 0; i < n; ++i)
    if (const auto* h = static_cast<const htp_header_t*>(htp_table_get_index(t, i, nullptr)))
      out.append(view(h->name)).append(": ").append(view(h->value)).append("\r\n");
  if (n) out.append("\r\n");
  return out;
}

// One side's header-derived buffers: single headers by name, http.header (without the side's
// cookie header), header_names, header.raw, start, and each header an instance.
struct NamedHeader {
  const char* name;
  AppBuffer buffer;
};
struct HeaderSide {
  std::vector<NamedHeader> single;
  const char* cookie;
  AppBuffer header, names, raw, start, each;
};
const HeaderSide kRequestSide = {
    {{"host", AppBuffer::kHttpHostRaw},           {"cookie", AppBuffer::kHttpCookie},
     {"user-agent", AppBuffer::kHttpUserAgent},   {"accept", AppBuffer::kHttpAccept},
     {"accept-encoding", AppBuffer::kHttpAcceptEnc}, {"accept-language", AppBuffer::kHttpAcceptLang},
     {"referer", AppBuffer::kHttpReferer},        {"connection", AppBuffer::kHttpConnection},
     {"content-type", AppBuffer::kHttpRequestContentType},
     {"content-length", AppBuffer::kHttpRequestContentLen}},
    "cookie", AppBuffer::kHttpRequestHeader, AppBuffer::kHttpRequestHeaderNames,
    AppBuffer::kHttpRequestHeaderRaw, AppBuffer::kHttpRequestStart, AppBuffer::kHttpRequestHeaderEach};
const HeaderSide kResponseSide = {
    {{"server", AppBuffer::kHttpServer},          {"location", AppBuffer::kHttpLocation},
     {"set-cookie", AppBuffer::kHttpResponseCookie},
     {"content-type", AppBuffer::kHttpResponseContentType},
     {"content-length", AppBuffer::kHttpResponseContentLen}},
    "set-cookie", AppBuffer::kHttpResponseHeader, AppBuffer::kHttpResponseHeaderNames,
    AppBuffer::kHttpResponseHeaderRaw, AppBuffer::kHttpResponseStart, AppBuffer::kHttpResponseHeaderEach};

void header_side(const htp_table_t* h, const HeaderSide& side, std::string_view line,
                 const std::string& raw, AppTx& a) {
  std::string_view v;
  for (const NamedHeader& n : side.single)
    if (header(h, n.name, v)) a.set(n.buffer, v);
  if (h && htp_table_size(h)) {
    std::string headers, names;
    header_buffers(h, side.cookie, headers, names);
    a.set(side.header, headers);
    a.set(side.names, names);
    each_header(h, side.each, a);
  }
  if (!raw.empty()) a.set(side.raw, raw);
  if (!line.empty()) a.set(side.start, start_buffer(line, h));
}

void append_capped(std::string& to, const unsigned char* data, size_t len, uint32_t limit, bool& cut,
                   uint64_t& counter) {
  if (!data || !len) return;
  const size_t room = limit > to.size() ? limit - to.size() : 0;
  if (len > room && !cut) {
    cut = true;
    ++counter;
  }
  to.append(reinterpret_cast<const char*>(data), std::min(len, room));
}

}  // namespace

// libhtp's callbacks: they find the flow through the connection parser's user data.
struct HttpCallbacks {
  // A transaction's state, made when libhtp starts it: at its request, or at a response libhtp
  // could not match to a request (it makes a transaction of its own then, without a request).
  static int adopt(htp_tx_t* tx) {
    HttpFlow* f = flow_of(tx);
    if (state_of(tx)) return HTP_OK;
    if (f->over_ || f->txs_.size() >= f->cfg_.limits().max_txs) {
      // A pipelined flood: this request is not kept, and the flow's parser stops once libhtp
      // returns (an error returned here would make libhtp retry the request without end).
      if (!f->over_) ++f->counters_.tx_limit;
      f->over_ = true;
      return HTP_OK;
    }
    auto t = std::make_unique<HttpFlow::Tx>();
    t->tx  = tx;
    t->id  = f->next_id_++;
    htp_tx_set_user_data(tx, t.get());
    f->txs_.push_back(std::move(t));
    return HTP_OK;
  }
  static int request_start(htp_tx_t* tx) { return adopt(tx); }
  static int response_start(htp_tx_t* tx) { return adopt(tx); }
  static int request_header_data(htp_tx_data_t* d) {
    if (HttpFlow::Tx* t = state_of(d->tx))
      t->req_raw_headers.append(reinterpret_cast<const char*>(d->data), d->data ? d->len : 0);
    return HTP_OK;
  }
  static int response_header_data(htp_tx_data_t* d) {
    if (HttpFlow::Tx* t = state_of(d->tx))
      t->res_raw_headers.append(reinterpret_cast<const char*>(d->data), d->data ? d->len : 0);
    return HTP_OK;
  }
  static int request_body_data(htp_tx_data_t* d) {
    HttpFlow* f = flow_of(d->tx);
    if (HttpFlow::Tx* t = state_of(d->tx))
      append_capped(t->req_body, d->data, d->len, f->cfg_.limits().request_body_limit, t->req_truncated,
                    f->counters_.body_truncated);
    return HTP_OK;
  }
  static int response_body_data(htp_tx_data_t* d) {
    HttpFlow* f = flow_of(d->tx);
    if (HttpFlow::Tx* t = state_of(d->tx))
      append_capped(t->res_body, d->data, d->len, f->cfg_.limits().response_body_limit, t->res_truncated,
                    f->counters_.body_truncated);
    return HTP_OK;
  }
  static int request_complete(htp_tx_t* tx) {
    if (HttpFlow::Tx* t = state_of(tx)) flow_of(tx)->finish_request(*t, tx);
    return HTP_OK;
  }
  static int response_complete(htp_tx_t* tx) {
    HttpFlow* f = flow_of(tx);
    HttpFlow::Tx* t = state_of(tx);
    if (!t) return HTP_OK;
    if (!t->request_done) f->finish_request(*t, tx);
    f->finish_response(*t, tx);
    htp_tx_set_user_data(tx, nullptr);
    f->txs_.erase(std::find_if(f->txs_.begin(), f->txs_.end(),
                               [&](const std::unique_ptr<HttpFlow::Tx>& p) { return p.get() == t; }));
    return HTP_OK;
  }
};

Probe probe_http(uint8_t dir, const uint8_t* data, size_t len) noexcept {
  const std::string_view s(reinterpret_cast<const char*>(data), len);
  // Whether s is a caseless prefix of `upper` (upper case).
  auto prefix_of = [&](std::string_view upper) {
    if (s.size() > upper.size()) return false;
    for (size_t i = 0; i < s.size(); ++i)
      if (std::toupper(static_cast<unsigned char>(s[i])) != upper[i]) return false;
    return true;
  };
  if (s.empty()) return Probe::kMore;
  bool more = false;
  if (dir == 1) {  // "HTTP/0.9", "HTTP/1.0", "HTTP/1.1"
    for (std::string_view v : {"HTTP/0.9", "HTTP/1.0", "HTTP/1.1"}) {
      if (starts_caseless(s, v)) return Probe::kYes;
      more = more || prefix_of(v);
    }
    return more ? Probe::kMore : Probe::kNo;
  }
  for (std::string_view m : kMethods) {
    if (s.size() > m.size() && starts_caseless(s, m) && (s[m.size()] == ' ' || s[m.size()] == '\t'))
      return Probe::kYes;
    more = more || prefix_of(m);
  }
  return more ? Probe::kMore : Probe::kNo;
}

HttpConfig::HttpConfig(const AppConfig& limits) : limits_(limits) {
  cfg_ = htp_config_create();
  // Suricata's shipped configuration: personality IDS with its path lower-casing turned back
  // off, '+' not decoded to a space.
  htp_config_set_server_personality(cfg_, HTP_SERVER_IDS);
  htp_config_set_convert_lowercase(cfg_, HTP_DECODER_URL_PATH, 0);
  htp_config_set_plusspace_decode(cfg_, HTP_DECODER_URLENCODED, 0);
  htp_config_set_request_decompression(cfg_, 1);
  htp_config_set_log_level(cfg_, HTP_LOG_NONE);
  htp_config_set_tx_auto_destroy(cfg_, 1);
  htp_config_set_response_decompression(cfg_, 1);
  htp_config_set_compression_bomb_limit(cfg_, limits.decompression_limit);
  htp_config_set_parse_request_cookies(cfg_, 0);
  htp_config_register_request_start(cfg_, HttpCallbacks::request_start);
  htp_config_register_response_start(cfg_, HttpCallbacks::response_start);
  htp_config_register_request_header_data(cfg_, HttpCallbacks::request_header_data);
  htp_config_register_response_header_data(cfg_, HttpCallbacks::response_header_data);
  htp_config_register_request_body_data(cfg_, HttpCallbacks::request_body_data);
  htp_config_register_response_body_data(cfg_, HttpCallbacks::response_body_data);
  htp_config_register_request_complete(cfg_, HttpCallbacks::request_complete);
  htp_config_register_response_complete(cfg_, HttpCallbacks::response_complete);
}

HttpConfig::~HttpConfig() { htp_config_destroy(cfg_); }

HttpFlow::HttpFlow(const HttpConfig& cfg, AppCounters& counters) : cfg_(cfg), counters_(counters) {
  connp_ = htp_connp_create(cfg.get());
  if (connp_) {
    htp_connp_set_user_data(connp_, this);
    htp_connp_open(connp_, nullptr, 0, nullptr, 0, nullptr);
  } else {
    stopped_ = true;
  }
}

HttpFlow::~HttpFlow() {
  if (connp_) htp_connp_destroy_all(connp_);
}

void HttpFlow::finish_request(Tx& t, htp_tx_t* tx) {
  t.request_done = true;
  AppTx& a = t.built;
  a.layer  = AppLayer::kHttp;
  a.id     = t.id;
  if (tx->request_method) a.set(AppBuffer::kHttpMethod, view(tx->request_method));
  if (tx->request_line) a.set(AppBuffer::kHttpRequestLine, view(tx->request_line));
  if (tx->request_protocol) a.set(AppBuffer::kHttpRequestProtocol, view(tx->request_protocol));
  if (tx->request_uri) a.set(AppBuffer::kHttpUriRaw, view(tx->request_uri));
  if (const htp_uri_t* u = tx->parsed_uri) {  // the normalised URI: path, ?query, #fragment
    std::string uri(view(u->path));
    if (u->query) {  // URL-decoded ('+' kept), as Suricata's SCHTPGenerateNormalizedUri
      bstr* q = bstr_dup(u->query);
      uint64_t flags = 0;
      if (q) htp_urldecode_inplace(tx->cfg, HTP_DECODER_URLENCODED, q, &flags);
      uri.append("?").append(q ? view(q) : view(u->query));
      if (q) bstr_free(q);
    }
    if (u->fragment) uri.append("#").append(view(u->fragment));
    a.set(AppBuffer::kHttpUri, uri);
  }
  if (tx->request_hostname) {
    std::string host(view(tx->request_hostname));
    for (char& c : host) c = char(std::tolower(static_cast<unsigned char>(c)));
    a.set(AppBuffer::kHttpHost, host);
  }
  header_side(tx->request_headers, kRequestSide, view(tx->request_line), t.req_raw_headers, a);
  if (!t.req_body.empty()) a.set(AppBuffer::kHttpRequestBody, t.req_body);
  std::string().swap(t.req_body);  // in the transaction's buffers now
  std::string().swap(t.req_raw_headers);
  a.response = false;
  ++counters_.http_txs;
  if (ready_) ready_->push_back(a);
}

void HttpFlow::finish_response(Tx& t, htp_tx_t* tx) {
  AppTx a = std::move(t.built);
  a.layer        = AppLayer::kHttp;
  a.id           = t.id;
  a.response     = true;
  a.last         = true;
  a.response_len = tx->response_message_len;
  if (tx->response_status) a.set(AppBuffer::kHttpStatCode, view(tx->response_status));
  if (tx->response_message) a.set(AppBuffer::kHttpStatMsg, view(tx->response_message));
  if (tx->response_line) a.set(AppBuffer::kHttpResponseLine, view(tx->response_line));
  if (tx->response_protocol) a.set(AppBuffer::kHttpResponseProtocol, view(tx->response_protocol));
  header_side(tx->response_headers, kResponseSide, view(tx->response_line), t.res_raw_headers, a);
  if (!t.res_body.empty()) a.set(AppBuffer::kHttpResponseBody, t.res_body);
  ++counters_.http_responses;
  if (ready_) ready_->push_back(std::move(a));
}

void HttpFlow::run(uint64_t ts_ns) {
  const htp_time_t tv = time_of(ts_ns);
  // Feed each direction what it holds; a side that waits on the other (HTP_STREAM_DATA_OTHER)
  // keeps its rest until the other side has been fed. Bounded: each pass consumes bytes or ends.
  for (int pass = 0; pass < 8 && !stopped_; ++pass) {
    bool progress = false;
    for (uint8_t d = 0; d < 2 && !stopped_; ++d) {
      std::string& p = pending_[d];
      if (p.empty()) continue;
      const int rc = d == 0 ? htp_connp_req_data(connp_, &tv, p.data(), p.size())
                            : htp_connp_res_data(connp_, &tv, p.data(), p.size());
      if (rc == HTP_STREAM_DATA_OTHER) {
        const size_t used = d == 0 ? htp_connp_req_data_consumed(connp_) : htp_connp_res_data_consumed(connp_);
        progress |= used > 0;
        p.erase(0, used);
      } else if (rc == HTP_STREAM_ERROR) {
        ++counters_.parse_errors;
        stopped_ = true;
      } else {
        progress = true;
        p.clear();
      }
    }
    if (!progress) break;
  }
  if (over_) stopped_ = true;
}

void HttpFlow::feed(uint8_t dir, const uint8_t* data, size_t len, uint64_t ts_ns, std::vector<AppTx>& ready) {
  if (stopped_ || !len) return;
  std::string& p = pending_[dir & 1];
  if (p.size() + len > (1u << 20)) {  // one side waits on the other past 1 MiB: give up
    ++counters_.parse_errors;
    stopped_ = true;
    return;
  }
  p.append(reinterpret_cast<const char*>(data), len);
  ready_ = &ready;
  run(ts_ns);
  ready_ = nullptr;
}

void HttpFlow::gap() { stopped_ = true; }

size_t HttpFlow::held() const noexcept {
  size_t n = pending_[0].size() + pending_[1].size();
  for (const auto& t : txs_) {
    n += t->req_raw_headers.size() + t->res_raw_headers.size() + t->req_body.size() + t->res_body.size();
    for (const std::string& b : t->built.buf) n += b.size();  // a request kept for its response
  }
  return n;
}

void HttpFlow::close(uint64_t ts_ns, std::vector<AppTx>& ready) {
  ready_ = &ready;
  if (!stopped_ && connp_) {
    const htp_time_t tv = time_of(ts_ns);
    htp_connp_close(connp_, &tv);  // completes what the end of the stream completes
  }
  // Transactions still open: their request as it is, and a response that began.
  for (auto& t : txs_) {
    htp_tx_t* tx = t->tx;
    const bool response = tx->response_progress > HTP_RESPONSE_LINE;
    if (!t->request_done && tx->request_progress > HTP_REQUEST_LINE) {
      finish_request(*t, tx);
      ready.back().last = !response;  // no response to wait for: the request is logged now
    } else if (t->request_done && !response) {
      AppTx logged   = t->built;  // inspected already; unanswered: logged as it is
      logged.last    = true;
      logged.log_only = true;
      ready.push_back(std::move(logged));
    }
    if (response) finish_response(*t, tx);
    htp_tx_set_user_data(tx, nullptr);
  }
  txs_.clear();
  ready_ = nullptr;
  stopped_ = true;
}

}  // namespace warpath::nids::detail
