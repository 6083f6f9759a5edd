// The application-layer buffers and the keywords that select them (nids/app_layer.hpp).
#include <cstring>

#include "warpath/nids/app_layer.hpp"

namespace warpath::nids {
namespace {

using B = AppBuffer;

struct Named {
  const char* keyword;
  B request, response;
  bool response_default, sticky;
};

// Sticky buffers (Suricata 6/7 names; the underscore forms of those added in 4.1 are sticky
// too) and the legacy content modifiers (http_uri ... http_server_body) they replaced.
constexpr Named kKeywords[] = {
    {"http.uri", B::kHttpUri, B::kHttpUri, false, true},
    {"http_uri", B::kHttpUri, B::kHttpUri, false, false},
    {"http.uri.raw", B::kHttpUriRaw, B::kHttpUriRaw, false, true},
    {"http_raw_uri", B::kHttpUriRaw, B::kHttpUriRaw, false, false},
    {"http.method", B::kHttpMethod, B::kHttpMethod, false, true},
    {"http_method", B::kHttpMethod, B::kHttpMethod, false, false},
    {"http.request_line", B::kHttpRequestLine, B::kHttpRequestLine, false, true},
    {"http_request_line", B::kHttpRequestLine, B::kHttpRequestLine, false, true},
    {"http.host", B::kHttpHost, B::kHttpHost, false, true},
    {"http_host", B::kHttpHost, B::kHttpHost, false, false},
    {"http.host.raw", B::kHttpHostRaw, B::kHttpHostRaw, false, true},
    {"http_raw_host", B::kHttpHostRaw, B::kHttpHostRaw, false, false},
    {"http.cookie", B::kHttpCookie, B::kHttpResponseCookie, false, true},
    {"http_cookie", B::kHttpCookie, B::kHttpResponseCookie, false, false},
    {"http.user_agent", B::kHttpUserAgent, B::kHttpUserAgent, false, true},
    {"http_user_agent", B::kHttpUserAgent, B::kHttpUserAgent, false, false},
    {"http.accept", B::kHttpAccept, B::kHttpAccept, false, true},
    {"http_accept", B::kHttpAccept, B::kHttpAccept, false, true},
    {"http.accept_enc", B::kHttpAcceptEnc, B::kHttpAcceptEnc, false, true},
    {"http_accept_enc", B::kHttpAcceptEnc, B::kHttpAcceptEnc, false, true},
    {"http.accept_lang", B::kHttpAcceptLang, B::kHttpAcceptLang, false, true},
    {"http_accept_lang", B::kHttpAcceptLang, B::kHttpAcceptLang, false, true},
    {"http.referer", B::kHttpReferer, B::kHttpReferer, false, true},
    {"http_referer", B::kHttpReferer, B::kHttpReferer, false, true},
    {"http.connection", B::kHttpConnection, B::kHttpConnection, false, true},
    {"http_connection", B::kHttpConnection, B::kHttpConnection, false, true},
    {"http.request_body", B::kHttpRequestBody, B::kHttpRequestBody, false, true},
    {"http_client_body", B::kHttpRequestBody, B::kHttpRequestBody, false, false},
    {"http.header", B::kHttpRequestHeader, B::kHttpResponseHeader, false, true},
    {"http_header", B::kHttpRequestHeader, B::kHttpResponseHeader, false, false},
    {"http.header.raw", B::kHttpRequestHeaderRaw, B::kHttpResponseHeaderRaw, false, true},
    {"http_raw_header", B::kHttpRequestHeaderRaw, B::kHttpResponseHeaderRaw, false, false},
    {"http.header_names", B::kHttpRequestHeaderNames, B::kHttpResponseHeaderNames, false, true},
    {"http_header_names", B::kHttpRequestHeaderNames, B::kHttpResponseHeaderNames, false, true},
    {"http.start", B::kHttpRequestStart, B::kHttpResponseStart, false, true},
    {"http_start", B::kHttpRequestStart, B::kHttpResponseStart, false, true},
    {"http.protocol", B::kHttpRequestProtocol, B::kHttpResponseProtocol, false, true},
    {"http_protocol", B::kHttpRequestProtocol, B::kHttpResponseProtocol, false, true},
    {"http.content_type", B::kHttpRequestContentType, B::kHttpResponseContentType, false, true},
    {"http_content_type", B::kHttpRequestContentType, B::kHttpResponseContentType, false, true},
    {"http.content_len", B::kHttpRequestContentLen, B::kHttpResponseContentLen, false, true},
    {"http_content_len", B::kHttpRequestContentLen, B::kHttpResponseContentLen, false, true},
    {"http.stat_code", B::kHttpStatCode, B::kHttpStatCode, true, true},
    {"http_stat_code", B::kHttpStatCode, B::kHttpStatCode, true, false},
    {"http.stat_msg", B::kHttpStatMsg, B::kHttpStatMsg, true, true},
    {"http_stat_msg", B::kHttpStatMsg, B::kHttpStatMsg, true, false},
    {"http.response_line", B::kHttpResponseLine, B::kHttpResponseLine, true, true},
    {"http_response_line", B::kHttpResponseLine, B::kHttpResponseLine, true, true},
    {"http.server", B::kHttpServer, B::kHttpServer, true, true},
    {"http_server", B::kHttpServer, B::kHttpServer, true, true},
    {"http.location", B::kHttpLocation, B::kHttpLocation, true, true},
    {"http_location", B::kHttpLocation, B::kHttpLocation, true, true},
    {"http.response_body", B::kHttpResponseBody, B::kHttpResponseBody, true, true},
    {"http_server_body", B::kHttpResponseBody, B::kHttpResponseBody, true, false},
    // file_data: the response body, or the request body in a to_server rule.
    {"http.request_header", B::kHttpRequestHeaderEach, B::kHttpRequestHeaderEach, false, true},
    {"http.response_header", B::kHttpResponseHeaderEach, B::kHttpResponseHeaderEach, true, true},
    {"file_data", B::kHttpRequestBody, B::kHttpResponseBody, true, true},
    {"file.data", B::kHttpRequestBody, B::kHttpResponseBody, true, true},
    // DNS and TLS (sticky buffers; the underscore forms their older names)
    {"dns.query", B::kDnsQuery, B::kDnsQuery, false, true},
    {"dns_query", B::kDnsQuery, B::kDnsQuery, false, true},
    {"tls.sni", B::kTlsSni, B::kTlsSni, false, true},
    {"tls_sni", B::kTlsSni, B::kTlsSni, false, true},
    {"ja3.hash", B::kJa3Hash, B::kJa3Hash, false, true},
    {"ja3_hash", B::kJa3Hash, B::kJa3Hash, false, true},
    {"ja3.string", B::kJa3String, B::kJa3String, false, true},
    {"ja3_string", B::kJa3String, B::kJa3String, false, true},
    {"tls.cert_subject", B::kTlsCertSubject, B::kTlsCertSubject, true, true},
    {"tls_cert_subject", B::kTlsCertSubject, B::kTlsCertSubject, true, true},
    {"tls.cert_issuer", B::kTlsCertIssuer, B::kTlsCertIssuer, true, true},
    {"tls_cert_issuer", B::kTlsCertIssuer, B::kTlsCertIssuer, true, true},
    {"tls.cert_serial", B::kTlsCertSerial, B::kTlsCertSerial, true, true},
    {"tls_cert_serial", B::kTlsCertSerial, B::kTlsCertSerial, true, true},
    {"tls.cert_fingerprint", B::kTlsCertFingerprint, B::kTlsCertFingerprint, true, true},
    {"tls_cert_fingerprint", B::kTlsCertFingerprint, B::kTlsCertFingerprint, true, true},
    {"tls.certs", B::kTlsCerts, B::kTlsCerts, true, true},
    {"ja3s.hash", B::kJa3sHash, B::kJa3sHash, true, true},
    {"ja3s_hash", B::kJa3sHash, B::kJa3sHash, true, true},
    {"ja3s.string", B::kJa3sString, B::kJa3sString, true, true},
    {"ja3s_string", B::kJa3sString, B::kJa3sString, true, true},
};

// Each buffer's layer and side.
struct Info {
  AppLayer layer;
  bool response, multi;
};
constexpr Info info_of(B b) {
  if (b == B::kPayload || b >= B::kCount) return {AppLayer::kNone, false, false};
  if (b == B::kDnsQuery) return {AppLayer::kDns, false, true};
  if (b >= B::kTlsSni && b <= B::kJa3String) return {AppLayer::kTls, false, false};
  if (b >= B::kTlsCertSubject && b < B::kCount) return {AppLayer::kTls, true, b == B::kTlsCerts};
  if (b == B::kHttpRequestHeaderEach) return {AppLayer::kHttp, false, true};
  if (b == B::kHttpResponseHeaderEach) return {AppLayer::kHttp, true, true};
  return {AppLayer::kHttp, b >= B::kHttpStatCode, false};
}

// pcre's buffer flags, each the legacy keyword whose buffers it selects (Suricata's detect-pcre.c).
struct Flag {
  char flag;
  const char* keyword;
};
constexpr Flag kPcreFlags[] = {
    {'U', "http_uri"},        {'I', "http_raw_uri"},    {'M', "http_method"},
    {'H', "http_header"},     {'D', "http_raw_header"}, {'C', "http_cookie"},
    {'P', "http_client_body"}, {'Q', "http_server_body"}, {'S', "http_stat_code"},
    {'Y', "http_stat_msg"},   {'V', "http_user_agent"}, {'W', "http_host"},
    {'Z', "http_raw_host"},
};

}  // namespace

const char* app_layer_name(AppLayer a) noexcept {
  switch (a) {
    case AppLayer::kNone: return "";
    case AppLayer::kHttp: return "http";
    case AppLayer::kDns: return "dns";
    case AppLayer::kTls: return "tls";
    case AppLayer::kFtp: return "ftp";
    case AppLayer::kSmtp: return "smtp";
    case AppLayer::kSsh: return "ssh";
    case AppLayer::kSmb: return "smb";
  }
  return "";
}

const char* app_buffer_name(AppBuffer b) noexcept {
  if (b == B::kPayload) return "payload";
  for (const Named& n : kKeywords)
    if (n.sticky && (n.request == b || n.response == b) && std::strcmp(n.keyword, "file_data") != 0 &&
        std::strcmp(n.keyword, "file.data") != 0)
      return n.keyword;
  return "?";
}

bool app_buffer_is_response(AppBuffer b) noexcept { return info_of(b).response; }
bool app_buffer_is_multi(AppBuffer b) noexcept { return info_of(b).multi; }
AppLayer app_buffer_layer(AppBuffer b) noexcept { return info_of(b).layer; }

bool find_buffer_keyword(std::string_view name, BufferKeyword& out) noexcept {
  for (const Named& n : kKeywords)
    if (name == n.keyword) {
      out = {n.request, n.response, n.response_default, n.sticky};
      return true;
    }
  return false;
}

bool find_pcre_buffer(char flag, BufferKeyword& out) noexcept {
  for (const Flag& f : kPcreFlags)
    if (f.flag == flag) return find_buffer_keyword(f.keyword, out);
  return false;
}

}  // namespace warpath::nids
