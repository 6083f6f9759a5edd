// TLS for the OpenFlow agent (openflow_tls.hpp), with OpenSSL's libssl.
#include "runtime/system/openflow_tls.hpp"

#ifdef WARPATH_HAVE_TLS
#include <openssl/err.h>
#include <openssl/ssl.h>
#endif

namespace warpath::runtime {

#ifdef WARPATH_HAVE_TLS
namespace {

std::string openssl_error() {
  std::string out;
  for (unsigned long e; (e = ERR_get_error()) != 0;) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out = buf;  // the last is the most specific
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

SSL* ssl_of(void* p) { return static_cast<SSL*>(p); }

}  // namespace

Result<std::shared_ptr<TlsContext>> TlsContext::create(const TlsFiles& f) {
  const char* missing = f.private_key.empty()   ? "--openflow-private-key"
                        : f.certificate.empty() ? "--openflow-certificate"
                        : f.ca_cert.empty()     ? "--openflow-ca-cert"
                                                : nullptr;
  if (missing)
    return Status(Errc::kInvalidArgument,
                  std::string("pssl: and ssl: targets need ") + missing +
                      " (a private key, its certificate and the peers' CA certificate, as "
                      "ovs-vswitchd's --private-key, --certificate and --ca-cert)");
  std::shared_ptr<TlsContext> c(new TlsContext);
  SSL_CTX* ctx = SSL_CTX_new(TLS_method());
  if (!ctx) return Status(Errc::kIoError, "TLS: " + openssl_error());
  c->ctx_ = ctx;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  auto load = [&](bool ok, const std::string& what, const std::string& path) -> Status {
    if (ok) return Status::ok();
    return Status(Errc::kInvalidArgument, what + " " + path + ": " + openssl_error());
  };
  WARPATH_TRY(load(SSL_CTX_use_certificate_chain_file(ctx, f.certificate.c_str()) == 1,
                   "--openflow-certificate", f.certificate));
  WARPATH_TRY(load(SSL_CTX_use_PrivateKey_file(ctx, f.private_key.c_str(), SSL_FILETYPE_PEM) == 1,
                   "--openflow-private-key", f.private_key));
  WARPATH_TRY(load(SSL_CTX_check_private_key(ctx) == 1, "--openflow-private-key", f.private_key +
                                                                                      " (does it "
                                                                                      "match the "
                                                                                      "certificate?)"));
  WARPATH_TRY(load(SSL_CTX_load_verify_locations(ctx, f.ca_cert.c_str(), nullptr) == 1,
                   "--openflow-ca-cert", f.ca_cert));
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return c;
}

TlsContext::~TlsContext() {
  if (ctx_) SSL_CTX_free(static_cast<SSL_CTX*>(ctx_));
}

std::unique_ptr<TlsStream> TlsContext::stream(int fd, bool server) const {
  SSL* ssl = SSL_new(static_cast<SSL_CTX*>(ctx_));
  if (!ssl) return nullptr;
  SSL_set_fd(ssl, fd);
  if (server)
    SSL_set_accept_state(ssl);
  else
    SSL_set_connect_state(ssl);
  return std::make_unique<TlsStream>(ssl);
}

TlsStream::~TlsStream() {
  if (!failed_) SSL_shutdown(ssl_of(ssl_));  // one close_notify, not waited for (non-blocking)
  SSL_free(ssl_of(ssl_));
}

bool TlsStream::established() const { return SSL_is_init_finished(ssl_of(ssl_)) == 1; }

ssize_t TlsStream::fail(int ret) {
  const int e  = SSL_get_error(ssl_of(ssl_), ret);
  wants_write_ = e == SSL_ERROR_WANT_WRITE;
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return 0;
  if (e == SSL_ERROR_ZERO_RETURN) {
    why_.clear();  // an orderly close_notify
    return -1;
  }
  failed_ = true;  // SSL_ERROR_SYSCALL, SSL_ERROR_SSL: SSL_shutdown must not follow
  why_    = e == SSL_ERROR_SYSCALL ? std::string("the connection ended during TLS")
                                   : "TLS: " + openssl_error();
  ERR_clear_error();
  return -1;
}

// SSL_read / SSL_write take an int length: at most 1 GiB a call.
static int chunk(size_t n) { return int(n > (size_t(1) << 30) ? size_t(1) << 30 : n); }

ssize_t TlsStream::done(int r) {
  if (r <= 0) return fail(r);
  wants_write_ = false;
  return r;
}

ssize_t TlsStream::read(void* buf, size_t n) {
  ERR_clear_error();
  return done(SSL_read(ssl_of(ssl_), buf, chunk(n)));
}

ssize_t TlsStream::write(const void* buf, size_t n) {
  if (n == 0) return 0;
  ERR_clear_error();
  return done(SSL_write(ssl_of(ssl_), buf, chunk(n)));
}

#else  // no libssl

Result<std::shared_ptr<TlsContext>> TlsContext::create(const TlsFiles&) {
  return Status(Errc::kNotSupported,
                "pssl: and ssl: targets need OpenSSL's libssl, which this build lacks "
                "(Debian libssl-dev)");
}
TlsContext::~TlsContext() = default;
std::unique_ptr<TlsStream> TlsContext::stream(int, bool) const { return nullptr; }
TlsStream::~TlsStream() = default;
bool TlsStream::established() const { return false; }
ssize_t TlsStream::fail(int) { return -1; }
ssize_t TlsStream::done(int) { return -1; }
ssize_t TlsStream::read(void*, size_t) { return -1; }
ssize_t TlsStream::write(const void*, size_t) { return -1; }

#endif

}  // namespace warpath::runtime
