// src/runtime/system/openflow_tls.hpp: TLS for the OpenFlow agent's pssl: and ssl: targets, with
// OpenSSL, as ovs-vswitchd takes them: a private key, its certificate and the CA certificate
// that every peer's certificate must chain to (the peer must present one: mutual
// authentication, SSL_VERIFY_FAIL_IF_NO_PEER_CERT). Non-blocking: a TlsStream is driven by the
// agent's poll loop, the handshake done implicitly by the first reads and writes.
// Without OpenSSL's libssl at build time, TlsContext::create says so and nothing else exists.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>

#include "warpath/core/status.hpp"
#include "warpath/runtime/openflow_agent.hpp"

namespace warpath::runtime {

using TlsFiles = OpenflowAgentOptions::Tls;

class TlsStream;

class TlsContext {
 public:
  /// kInvalidArgument naming the missing option or the file that does not load (with
  /// OpenSSL's reason); kNotSupported in a build without libssl.
  static Result<std::shared_ptr<TlsContext>> create(const TlsFiles& files);
  ~TlsContext();
  /// A stream over connected socket `fd` (not owned): `server` for accepted connections.
  std::unique_ptr<TlsStream> stream(int fd, bool server) const;

 private:
  TlsContext() = default;
  void* ctx_ = nullptr;  // SSL_CTX
};

class TlsStream {
 public:
  explicit TlsStream(void* ssl) : ssl_(ssl) {}
  ~TlsStream();
  TlsStream(const TlsStream&)            = delete;
  TlsStream& operator=(const TlsStream&) = delete;
  /// Bytes read (> 0; call again until 0: decrypted bytes wait in OpenSSL's buffer, unseen by
  /// poll); 0 when nothing is ready (the handshake or a record is incomplete);
  /// -1 when the connection ended or failed (why() says how).
  ssize_t read(void* buf, size_t n);
  /// Bytes taken (>= 0, 0 when it must wait); -1 on failure (why()).
  ssize_t write(const void* buf, size_t n);
  /// Whether the last call waits for the socket to become writable (POLLOUT).
  bool wants_write() const noexcept { return wants_write_; }
  /// Whether the handshake is done.
  bool established() const;
  const std::string& why() const noexcept { return why_; }

 private:
  ssize_t fail(int ret);
  ssize_t done(int ret);  ///< an SSL_read / SSL_write result as read() / write() give it
  void* ssl_;  // SSL
  bool wants_write_ = false;
  bool failed_      = false;  // a fatal error: no close_notify (SSL_shutdown) afterwards
  std::string why_;
};

}  // namespace warpath::runtime
