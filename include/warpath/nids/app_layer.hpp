// include/warpath/nids/app_layer.hpp
//
// The application layer of the NIDS: which protocol a flow speaks (found by content, as
// Suricata's app-layer protocol detection does, not by port), the transactions its parser
// makes of the reassembled streams, and the inspection buffers rules look at in them.
//
// HTTP/1.x (OISF's libhtp, the parser Suricata used through 7.x; personality IDS): a flow is
// HTTP when its client's first bytes start with a request method and a space, or its server's
// with "HTTP/". Each request/response pair is a transaction; its buffers are Suricata's:
//   request   http.uri (normalised: path, ?query), http.uri.raw, http.method,
//             http.request_line, http.protocol, http.host (lower case), http.host.raw,
//             http.cookie, http.user_agent, http.accept, http.accept_enc, http.accept_lang,
//             http.referer, http.connection, http.content_type, http.content_len,
//             http.header ("Name: value\r\n" each, Cookie left out), http.header.raw (the
//             header bytes as sent, to the empty line), http.header_names
//             ("\r\nName\r\n...\r\n\r\n"), http.start (the line, "\r\n", every header as
//             in http.header but Cookie kept, "\r\n"), http.request_body (de-chunked,
//             decompressed; file_data in a to_server rule)
//   response  http.stat_code, http.stat_msg, http.response_line, http.server, http.location,
//             http.cookie (Set-Cookie),
//   both      http.request_header / http.response_header: each header "Name: value", an
//             instance each (multi-instance buffers, below)
//             and the response's own protocol, content_type, content_len, header (Set-Cookie
//             left out), header.raw, header_names, start, and http.response_body (de-chunked,
//             gzip/deflate decoded; file_data)
// DNS (ldns; over UDP by content, and over TCP with its length prefix): each query message is a
// transaction whose dns.query instances are its questions' names (labels joined by '.', no
// trailing dot), inspected by `alert dns` rules; responses are logged to EVE (dns answers).
//
// TLS (a bounded record and handshake parser; OpenSSL decodes certificates and computes the
// MD5 and SHA-1 digests): a flow is TLS when a side starts with a handshake record (16 03 0x).
// The request phase is the ClientHello: tls.sni, ja3.hash, ja3.string (GREASE values left out,
// as JA3 says); the response phase the server's ServerHello and certificates (until its
// ChangeCipherSpec or the flow's end): tls.cert_subject, tls.cert_issuer (in the certificate's
// order, as Suricata writes them, "C=US, O=..., CN=..."), tls.cert_serial ("00:8A:1B:...", its
// DER bytes),
// tls.cert_fingerprint (SHA-1, "aa:bb:..."), tls.certs (each certificate's DER, an instance
// each), ja3s.hash, ja3s.string. TLS 1.3 encrypts its certificates: only the hellos are seen.
//
// FTP, SMTP, SSH, SMB: detected by content as Suricata detects them (src/nids/app/label_probe.hpp
// has the patterns), not parsed: `alert ftp ...` rules look at the payload and the stream of
// the flows found to speak it; buffers of these protocols (smtp's file_data, ssh.proto, ...)
// are outside the subset.
//
// Transforms: dotprefix (Suricata's) looks at "." + the buffer, so ".example.com" with endswith
// matches the domain and its subdomains.
//
// A rule's payload contents (no buffer) beside them look at the raw stream of the transaction's
// direction: its last kStreamLookback bytes when the phase completed (Suricata inspects the
// stream beside the transaction).
// A buffer that both sides have (http.header, file_data, ...) is the response's in a rule that
// is to_client or names a response-only buffer, else the request's (file_data: the response's);
// Suricata matches such a rule that names no direction on either side, warpath on that one
// only. A rule that names request-only and response-only buffers, or a flow direction against
// its buffers, is an error, as in Suricata.
//
// When a transaction is inspected (nids/detect.hpp, Unit::tx): its request once the request is
// complete (headers and body; or at the flow's end), by the rules whose buffers are request
// buffers; its response once complete, by the rules with a response buffer. Each rule alerts
// at most once per transaction.
//
// Bounds: bodies are kept up to AppConfig's body limits (Suricata's request-body-limit and
// response-body-limit), a flow holds at most max_txs unanswered requests, and libhtp's own
// limits apply (header field sizes, decompression bomb and time limits); every bound reached
// is counted.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace warpath::nids {

/// The application protocols: HTTP, DNS and TLS are parsed; FTP, SMTP, SSH and SMB are only
/// detected (by Suricata's patterns), so that rules for them look at their flows' streams.
enum class AppLayer : uint8_t { kNone, kHttp, kDns, kTls, kFtp, kSmtp, kSsh, kSmb };
inline constexpr size_t kAppLayers = 8;
const char* app_layer_name(AppLayer a) noexcept;  ///< "", "http", "dns", "tls", "ftp", ...
/// Whether warpath parses the protocol (HTTP, DNS, TLS: it has transactions and buffers), or
/// only detects it (FTP, SMTP, SSH, SMB).
constexpr bool app_layer_parsed(AppLayer a) noexcept {
  return a == AppLayer::kHttp || a == AppLayer::kDns || a == AppLayer::kTls;
}

/// The inspection buffers. kPayload is the packet's payload or the TCP stream.
enum class AppBuffer : uint8_t {
  kPayload,
  // HTTP request
  kHttpUri, kHttpUriRaw, kHttpMethod, kHttpRequestLine, kHttpHost, kHttpHostRaw, kHttpCookie,
  kHttpUserAgent, kHttpAccept, kHttpAcceptEnc, kHttpAcceptLang, kHttpReferer, kHttpConnection,
  kHttpRequestBody, kHttpRequestHeader, kHttpRequestHeaderRaw, kHttpRequestHeaderNames,
  kHttpRequestStart, kHttpRequestProtocol, kHttpRequestContentType, kHttpRequestContentLen,
  // HTTP response
  kHttpStatCode, kHttpStatMsg, kHttpResponseLine, kHttpServer, kHttpLocation, kHttpResponseBody,
  kHttpResponseHeader, kHttpResponseHeaderRaw, kHttpResponseHeaderNames, kHttpResponseStart,
  kHttpResponseProtocol, kHttpResponseContentType, kHttpResponseContentLen, kHttpResponseCookie,
  // HTTP: each header as "Name: value", an instance each (http.request_header, .response_header)
  kHttpRequestHeaderEach, kHttpResponseHeaderEach,
  // DNS (a query's names; each question an instance of dns.query)
  kDnsQuery,
  // TLS: the ClientHello's, then the server's (ServerHello, Certificate)
  kTlsSni, kJa3Hash, kJa3String,
  kTlsCertSubject, kTlsCertIssuer, kTlsCertSerial, kTlsCertFingerprint, kTlsCerts, kJa3sHash,
  kJa3sString,
  kCount
};
inline constexpr size_t kAppBuffers = size_t(AppBuffer::kCount);

/// The buffer's keyword ("http.uri", "http.header" for both header buffers, "payload").
const char* app_buffer_name(AppBuffer b) noexcept;
/// Whether the buffer belongs to a response.
bool app_buffer_is_response(AppBuffer b) noexcept;
AppLayer app_buffer_layer(AppBuffer b) noexcept;

/// A rule keyword that selects a buffer: a sticky buffer (http.uri; following items look at
/// it), a legacy content modifier (http_uri; the content before it moves there), or a pcre flag.
struct BufferKeyword {
  AppBuffer request = AppBuffer::kPayload;   ///< the buffer in a request-side rule
  AppBuffer response = AppBuffer::kPayload;  ///< ... in a response-side rule (== request: one)
  bool response_default = false;  ///< which one a rule that says neither gets (file_data)
  bool sticky = true;             ///< false: a legacy content modifier
};
/// The buffer keyword `name` names, or false.
bool find_buffer_keyword(std::string_view name, BufferKeyword& out) noexcept;
/// The buffer a pcre flag letter selects (U, I, M, H, D, C, P, Q, S, Y, V, W, Z), or false.
bool find_pcre_buffer(char flag, BufferKeyword& out) noexcept;

/// Whether a buffer may have several instances in one transaction (dns.query, tls.certs): a
/// rule's list for it matches when it matches one of them.
bool app_buffer_is_multi(AppBuffer b) noexcept;

/// One transaction as the rules see it: its buffers (those the protocol carried).
struct AppTx {
  AppLayer layer = AppLayer::kNone;
  bool response  = false;  ///< the response phase: its buffers are filled too
  uint64_t id    = 0;      ///< the transaction's number in its flow, from 0
  bool last      = false;  ///< the transaction's last phase (it is logged then: EVE's event)
  bool log_only  = false;  ///< a phase already inspected, given again to be logged only
  int64_t response_len = 0;  ///< the response body's length as sent (EVE's http.length)
  std::array<std::string, kAppBuffers> buf;
  std::array<bool, kAppBuffers> has{};
  /// The second and later instances of multi-instance buffers (the first is in buf).
  std::vector<std::pair<AppBuffer, std::string>> more;
  /// Buffer b's (first) instance, or null when the transaction does not carry it.
  const std::string* find(AppBuffer b) const noexcept { return has[size_t(b)] ? &buf[size_t(b)] : nullptr; }
  void set(AppBuffer b, std::string_view v) {
    buf[size_t(b)].assign(v.data(), v.size());
    has[size_t(b)] = true;
  }
  /// Another instance of a multi-instance buffer (the first goes to buf).
  void add(AppBuffer b, std::string_view v) {
    if (!has[size_t(b)]) return set(b, v);
    more.emplace_back(b, std::string(v));
  }
  /// DNS: the message's header and its records, for EVE (queries and answers).
  struct DnsRecord {
    std::string name, type, data;  ///< data: an answer's rdata as text
  };
  struct Dns {
    uint16_t id = 0, rcode = 0, flags = 0;
    bool response = false;
    std::vector<DnsRecord> questions, answers;
  };
  std::shared_ptr<const Dns> dns;
  std::string tls_version;  ///< TLS: "TLS 1.2", ... (EVE's tls.version)
};

/// Limits of the application-layer parsers (Suricata's libhtp section defaults).
struct AppConfig {
  bool http = true;                         ///< parse HTTP
  bool dns  = true;                         ///< parse DNS (UDP and TCP)
  bool tls  = true;                         ///< parse TLS handshakes
  uint32_t request_body_limit  = 100 << 10; ///< bytes of a request body kept for inspection
  uint32_t response_body_limit = 100 << 10; ///< ... of a response body (after decoding)
  uint32_t max_txs = 512;                   ///< unanswered requests a flow may hold
  uint64_t decompression_limit = 1 << 20;   ///< decoded bytes a response may grow to (bomb)
  /// Bytes all flows' parsers may hold together (bodies, headers, records and messages not yet
  /// complete, detection's first bytes); a flow whose parser would pass it stops being parsed
  /// (its packets and streams are still inspected), counted as memcap (Suricata's app-layer
  /// memcap with the exception policy "ignore").
  uint64_t memcap = 256ull << 20;
  /// Keep each direction's last stream bytes for transaction rules' payload items (the
  /// inspector turns it off when no loaded rule has such items: nothing is copied then).
  bool raw_window = true;
};

struct AppCounters {
  uint64_t http_flows = 0;      ///< flows detected as HTTP
  uint64_t dns_flows = 0;       ///< ... as DNS (over UDP or TCP)
  uint64_t dns_messages = 0;    ///< DNS messages parsed (queries and responses)
  uint64_t tls_flows = 0;       ///< flows detected as TLS
  uint64_t tls_handshakes = 0;  ///< TLS hellos and certificate messages parsed
  uint64_t http_txs = 0;        ///< HTTP transactions inspected (request phase)
  uint64_t http_responses = 0;  ///< ... their responses
  uint64_t parse_errors = 0;    ///< parsers stopped on malformed data (a flow's, or a datagram)
  uint64_t body_truncated = 0;  ///< bodies cut at their limit
  uint64_t tx_limit = 0;        ///< requests dropped past max_txs
  uint64_t app_bytes = 0;       ///< stream bytes given to the parsers
  uint64_t memcap = 0;          ///< flows whose parsing stopped at AppConfig::memcap
  uint64_t held_bytes = 0;      ///< bytes the parsers hold now (over all flows)
  bool operator==(const AppCounters&) const = default;
};

}  // namespace warpath::nids
