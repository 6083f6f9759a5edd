// TLS handshakes (src/nids/app/tls_flow.hpp).
#include "nids/app/tls_flow.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace warpath::nids::detail {
namespace {

constexpr size_t kMaxRecord  = (1u << 14) + 2048;
constexpr size_t kMaxMessage = 64u << 10;

bool grease(uint16_t v) { return (v & 0x0f0f) == 0x0a0a && (v >> 8) == (v & 0xff); }

// A bounded reader over a message body.
struct Reader {
  const uint8_t* p;
  size_t n, at = 0;
  bool ok = true;
  uint32_t u(size_t bytes) {
    if (!ok || n - at < bytes) return ok = false, 0;
    uint32_t v = 0;
    for (size_t i = 0; i < bytes; ++i) v = v << 8 | p[at++];
    return v;
  }
  Reader sub(size_t len_bytes) {  // a length-prefixed part
    const size_t len = u(len_bytes);
    if (!ok || n - at < len) return ok = false, Reader{p, 0, 0, false};
    Reader r{p + at, len};
    at += len;
    return r;
  }
  bool done() const { return at == n; }
};

// A hello's extensions (if any follow): `each(type, body)` for each; false when malformed.
template <class F>
bool extensions(Reader& r, F&& each) {
  if (!r.ok || r.done()) return true;
  Reader ext = r.sub(2);
  while (ext.ok && !ext.done()) {
    const uint32_t type = ext.u(2);
    Reader body = ext.sub(2);
    if (!ext.ok) break;
    each(type, body);
  }
  return ext.ok;
}

std::string join(const std::vector<uint32_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "-" : "") + std::to_string(v[i]);
  return s;
}

std::string version_name(uint32_t v) {
  switch (v) {
    case 0x0300: return "SSLv3";  // Suricata's names
    case 0x0301: return "TLSv1";
    case 0x0302: return "TLS 1.1";
    case 0x0303: return "TLS 1.2";
    case 0x0304: return "TLS 1.3";
    default: return "UNDETERMINED";
  }
}

std::string hex(const uint8_t* p, size_t n, bool upper) {
  std::string s;
  char b[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, upper ? "%02X" : "%02x", p[i]);
    if (i) s.push_back(':');
    s += b;
  }
  return s;
}

std::string name_text(const X509_NAME* name) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  if (!bio) return {};
  X509_NAME_print_ex(bio.get(), name, 0, ASN1_STRFLGS_UTF8_CONVERT | XN_FLAG_SEP_CPLUS_SPC | XN_FLAG_FN_SN);
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  return len > 0 ? std::string(data, size_t(len)) : std::string();
}

}  // namespace

bool probe_tls(const uint8_t* d, size_t len, bool& more) noexcept {
  more = false;
  if (len >= 1 && d[0] != 0x16) return false;
  if (len >= 2 && d[1] != 0x03) return false;
  if (len >= 3 && d[2] > 0x04) return false;
  if (len < 3) return more = true, false;
  return true;
}

std::string md5_hex(const std::string& s) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (!EVP_Digest(s.data(), s.size(), md, &n, EVP_md5(), nullptr)) return {};
  std::string out;
  char b[3];
  for (unsigned i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", md[i]);
    out += b;
  }
  return out;
}

bool parse_client_hello(const uint8_t* p, size_t n, TlsHello& out) {
  Reader r{p, n};
  const uint32_t version = r.u(2);
  r.at += 32;  // random
  if (r.at > n) return false;
  r.sub(1);    // session id
  Reader suites = r.sub(2);
  r.sub(1);    // compression methods
  std::vector<uint32_t> ciphers, exts, groups, formats;
  while (suites.ok && !suites.done()) {
    const uint32_t c = suites.u(2);
    if (suites.ok && !grease(uint16_t(c))) ciphers.push_back(c);
  }
  uint32_t best = version, number = version;
  const bool ext_ok = extensions(r, [&](uint32_t type, Reader& body) {
    if (!grease(uint16_t(type))) exts.push_back(type);
    if (type == 0) {  // server_name: a list of (type, name)
      Reader list = body.sub(2);
      while (list.ok && !list.done()) {
        const uint32_t kind = list.u(1);
        Reader name = list.sub(2);
        if (list.ok && kind == 0 && out.sni.empty())
          out.sni.assign(reinterpret_cast<const char*>(name.p), name.n);
      }
    } else if (type == 10) {  // supported_groups
      Reader list = body.sub(2);
      while (list.ok && !list.done()) {
        const uint32_t g = list.u(2);
        if (list.ok && !grease(uint16_t(g))) groups.push_back(g);
      }
    } else if (type == 11) {  // ec_point_formats
      Reader list = body.sub(1);
      while (list.ok && !list.done()) formats.push_back(list.u(1));
    } else if (type == 43) {  // supported_versions: the highest that is not GREASE
      Reader list = body.sub(1);
      while (list.ok && !list.done()) {
        const uint32_t v = list.u(2);
        if (list.ok && !grease(uint16_t(v)) && v > best && v <= 0x0304) best = v;
        if (list.ok && (v == 0x0304 || v >> 8 == 0x7f) && number == version) number = v;
      }
    }
  });
  if (!ext_ok || !r.ok) return false;
  out.ja3 = std::to_string(version) + "," + join(ciphers) + "," + join(exts) + "," + join(groups) + "," +
            join(formats);
  out.version = version_name(best);
  out.number  = uint16_t(number);
  return true;
}

bool parse_server_hello(const uint8_t* p, size_t n, TlsHello& out) {
  Reader r{p, n};
  const uint32_t version = r.u(2);
  r.at += 32;
  if (r.at > n) return false;
  r.sub(1);
  const uint32_t cipher = r.u(2);
  r.u(1);
  std::vector<uint32_t> exts;
  uint32_t chosen = version;
  const bool ext_ok = extensions(r, [&](uint32_t type, Reader& body) {
    exts.push_back(type);
    if (type == 43) chosen = body.u(2);
  });
  if (!ext_ok || !r.ok) return false;
  out.ja3     = std::to_string(version) + "," + std::to_string(cipher) + "," + join(exts);
  out.version = version_name(chosen);
  out.number  = uint16_t(chosen);
  return true;
}

void TlsFlow::feed(uint8_t dir, const uint8_t* data, size_t len, std::vector<AppTx>& ready) {
  Side& s = side_[dir & 1];
  if (s.stopped || s.encrypted) return;  // nothing after the handshake is read
  s.records.append(reinterpret_cast<const char*>(data), len);
  size_t at = 0;
  while (!s.stopped && !s.encrypted && s.records.size() - at >= 5) {
    const auto* h = reinterpret_cast<const uint8_t*>(s.records.data() + at);
    const size_t n = size_t(h[3] << 8 | h[4]);
    if (h[1] != 0x03 || n > kMaxRecord || h[0] < 20 || h[0] > 24) {  // not TLS (any more)
      s.stopped = true;
      ++counters_.parse_errors;
      break;
    }
    if (s.records.size() - at - 5 < n) break;
    record(dir & 1, h[0], h + 5, n, ready);
    at += 5 + n;
  }
  if (s.stopped || s.encrypted) {
    std::string().swap(s.records);
    std::string().swap(s.handshake);
  } else {
    s.records.erase(0, at);
  }
}

void TlsFlow::record(uint8_t dir, uint8_t type, const uint8_t* p, size_t n, std::vector<AppTx>& ready) {
  Side& s = side_[dir];
  if (type == 20 || type == 23) {  // ChangeCipherSpec, application data: encrypted from here on
    s.encrypted = true;
    if (dir == 1) server_done(ready);
    return;
  }
  if (type != 22) return;  // alerts, heartbeats
  s.handshake.append(reinterpret_cast<const char*>(p), n);
  size_t at = 0;
  while (s.handshake.size() - at >= 4) {
    const auto* m = reinterpret_cast<const uint8_t*>(s.handshake.data() + at);
    const size_t len = size_t(m[1]) << 16 | size_t(m[2]) << 8 | m[3];
    if (len > kMaxMessage) {
      s.stopped = true;
      ++counters_.parse_errors;
      return;
    }
    if (s.handshake.size() - at - 4 < len) break;
    message(dir, m[0], m + 4, len, ready);
    at += 4 + len;
    if (s.stopped || s.encrypted) return;
  }
  s.handshake.erase(0, at);
}

void TlsFlow::message(uint8_t dir, uint8_t type, const uint8_t* p, size_t n, std::vector<AppTx>& ready) {
  TlsHello hello;
  if (dir == 0 && type == 1 && !client_sent_) {  // ClientHello: the request phase
    if (!parse_client_hello(p, n, hello)) {
      side_[0].stopped = true;
      ++counters_.parse_errors;
      return;
    }
    ++counters_.tls_handshakes;
    client_.layer = AppLayer::kTls;
    if (!hello.sni.empty()) client_.set(AppBuffer::kTlsSni, hello.sni);
    client_.set(AppBuffer::kJa3String, hello.ja3);
    client_.set(AppBuffer::kJa3Hash, md5_hex(hello.ja3));
    client_.tls_version = hello.version;
    version_[0]  = hello.number;
    client_sent_ = true;
    ready.push_back(client_);
  } else if (dir == 1 && type == 2) {  // ServerHello
    if (!parse_server_hello(p, n, hello)) {
      side_[1].stopped = true;
      ++counters_.parse_errors;
      return;
    }
    ++counters_.tls_handshakes;
    server_began_ = true;
    server_.set(AppBuffer::kJa3sString, hello.ja3);
    server_.set(AppBuffer::kJa3sHash, md5_hex(hello.ja3));
    server_.tls_version = hello.version;
    version_[1]         = hello.number;
    if (hello.version == "TLS 1.3") server_done(ready);  // its certificates are encrypted
  } else if (dir == 1 && type == 11) {  // Certificate
    ++counters_.tls_handshakes;
    server_began_ = true;
    certificates(p, n);
  } else if (dir == 1 && type == 14) {  // ServerHelloDone
    server_done(ready);
  }
}

void TlsFlow::certificates(const uint8_t* p, size_t n) {
  Reader r{p, n};
  Reader list = r.sub(3);
  bool leaf = true;
  while (list.ok && !list.done()) {
    Reader der = list.sub(3);
    if (!list.ok) break;
    server_.add(AppBuffer::kTlsCerts, std::string(reinterpret_cast<const char*>(der.p), der.n));
    if (!leaf) continue;
    leaf = false;
    const unsigned char* q = der.p;
    std::unique_ptr<X509, decltype(&X509_free)> cert(d2i_X509(nullptr, &q, long(der.n)), X509_free);
    if (!cert) continue;
    server_.set(AppBuffer::kTlsCertSubject, name_text(X509_get_subject_name(cert.get())));
    server_.set(AppBuffer::kTlsCertIssuer, name_text(X509_get_issuer_name(cert.get())));
    if (const ASN1_INTEGER* serial = X509_get0_serialNumber(cert.get())) {
      // The serial's DER content bytes (a leading 00 where the high bit is set), as Suricata.
      std::vector<uint8_t> bytes(ASN1_STRING_get0_data(serial), ASN1_STRING_get0_data(serial) + ASN1_STRING_length(serial));
      if (bytes.empty() || bytes[0] & 0x80) bytes.insert(bytes.begin(), 0);
      server_.set(AppBuffer::kTlsCertSerial, hex(bytes.data(), bytes.size(), true));
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(der.p, der.n, md, &len, EVP_sha1(), nullptr))
      server_.set(AppBuffer::kTlsCertFingerprint, hex(md, len, false));
  }
}

void TlsFlow::server_done(std::vector<AppTx>& ready) {
  if (server_sent_ || !server_began_) return;
  server_sent_     = true;
  AppTx t          = server_;
  t.layer          = AppLayer::kTls;
  t.response       = true;
  t.last           = true;
  // The client's fields too: one TLS transaction, logged (EVE's tls event) from this phase.
  for (AppBuffer b : {AppBuffer::kTlsSni, AppBuffer::kJa3Hash, AppBuffer::kJa3String})
    if (client_.has[size_t(b)]) t.set(b, client_.buf[size_t(b)]);
  ready.push_back(std::move(t));
}

void TlsFlow::close(std::vector<AppTx>& ready) {
  server_done(ready);
  if (!server_sent_ && client_sent_) {  // no server side: the client's hello is logged alone
    AppTx t = client_;
    t.last  = true;
    t.response = false;
    // Inspected already: logged only (the inspector skips the rules of a repeated phase).
    t.log_only = true;
    ready.push_back(std::move(t));
  }
}

}  // namespace warpath::nids::detail
