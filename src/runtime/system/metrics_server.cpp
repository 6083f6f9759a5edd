// src/runtime/system/metrics_server.cpp: GET /metrics over HTTP/1.x (metrics.hpp).
//
// One thread and one poll loop that never blocks on a peer, so no client can hold up a scrape:
// a thread-per-connection server (cpp-httplib, until 2026-11-27) was locked by eight clients
// that sent a header a second (slowloris). Bounds: a request head must arrive whole within
// kHeadMs of its first byte, an idle keep-alive connection is closed after kIdleMs, a reply
// that the peer does not read for kIdleMs is dropped, and at most kMaxConnections are open
// (the one idle longest makes room for a new one). The text served is published by the run's
// stats thread and copied per reply under a mutex.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/http_head.hpp"
#include "runtime/system/spare_fd.hpp"
#include "warpath/runtime/metrics.hpp"

namespace warpath::runtime {
namespace {

constexpr uint64_t kHeadMs       = 2000;
constexpr uint64_t kDrainMs      = 1000;  // after our reply, for the peer's unread bytes
constexpr uint64_t kIdleMs       = 10000;
constexpr size_t kMaxConnections = 256;
constexpr uint32_t kMaxRequests  = 1000;  // per keep-alive connection
// Replies waiting for a peer that pipelines requests but does not read: above this, its
// requests wait unread (and it is closed after kIdleMs without progress).
constexpr size_t kMaxOut = size_t(1) << 18;

struct Client {
  int fd = -1;
  std::string in, out;
  size_t sent        = 0;  // of out
  uint64_t head_ms   = 0;  // the first byte of the pending request arrived (0: none)
  uint64_t active_ms = 0;  // the last byte read or written
  uint32_t requests  = 0;
  bool close_after   = false;  // close once out is sent
  uint64_t shut_ms = 0;  // our side shut (the reply sent): unread bytes are drained
};

class PollMetricsServer final : public MetricsServer {
 public:
  ~PollMetricsServer() override {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    for (Client& c : clients_)
      if (c.fd >= 0) ::close(c.fd);
    if (listener_ >= 0) ::close(listener_);
  }
  void publish(std::string text) override {
    std::lock_guard<std::mutex> lock(mu_);
    text_ = std::move(text);
  }
  uint16_t port() const noexcept override { return port_; }

  Status listen(const std::string& host, int port) {
    const std::string where = "--metrics " + host + ":" + std::to_string(port);
    addrinfo hints{}, *res = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags    = AI_PASSIVE;
    if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || !res)
      return Status(Errc::kIoError, where + ": cannot listen there (cannot resolve " + host + ")");
    const int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    // SO_REUSEADDR only: with SO_REUSEPORT a second warpath would bind the same port and take
    // half of the scrapes.
    const int yes = 1;
    if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    const bool ok =
        fd >= 0 && ::bind(fd, res->ai_addr, res->ai_addrlen) == 0 && ::listen(fd, 128) == 0;
    const int err = errno;
    freeaddrinfo(res);
    if (!ok) {
      if (fd >= 0) ::close(fd);
      return Status(Errc::kIoError, where + ": cannot listen there (" + std::strerror(err) + ")");
    }
    listener_ = fd;
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    port_   = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    thread_ = std::thread([this] { loop(); });
    return Status::ok();
  }

 private:
  uint64_t now_ms() const {
    return uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - t0_)
                        .count()) +
           1;  // never 0: head_ms uses 0 for none
  }

  void accept_all(uint64_t now) {
    for (;;) {
      const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        if (spare_.shed(listener_)) continue;
        return;
      }
      if (clients_.size() >= kMaxConnections) {  // the one idle longest makes room
        size_t oldest = 0;
        for (size_t k = 1; k < clients_.size(); ++k)
          if (clients_[k].active_ms < clients_[oldest].active_ms) oldest = k;
        close_client(oldest);
      }
      Client c;
      c.fd        = fd;
      c.active_ms = now;
      clients_.push_back(std::move(c));
    }
  }

  void close_client(size_t k) {
    ::close(clients_[k].fd);
    clients_[k] = std::move(clients_.back());
    clients_.pop_back();
  }

  void reply(Client& c, int code, const char* reason, const std::string& body, bool head_only,
             const char* extra = "") {
    std::string text = "HTTP/1.1 " + std::to_string(code) + " " + reason + "\r\n";
    text += code == 200 ? "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                        : "Content-Type: text/plain; charset=utf-8\r\n";
    text += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    text += extra;
    text += c.close_after ? "Connection: close\r\n\r\n" : "\r\n";
    if (!head_only) text += body;
    c.out += text;
  }

  // Answers the complete requests in c.in; false when the connection is to close now.
  bool serve(Client& c, uint64_t now) {
    while (!c.in.empty() && !c.close_after && c.out.size() < kMaxOut) {
      HttpHead head;
      size_t used = 0;
      std::string why;
      const HeadParse p = parse_http_head(c.in, head, used, why);
      if (p == HeadParse::kIncomplete) {
        if (!c.head_ms) c.head_ms = now;
        return true;
      }
      c.head_ms = 0;
      if (p == HeadParse::kBad) {
        c.close_after = true;
        reply(c, 400, "Bad Request", why + "\n", false);
        c.in.clear();
        return true;
      }
      c.in.erase(0, used);
      // A body is not read: the connection closes after the reply instead.
      c.close_after        = !head.keep_alive || head.has_body || ++c.requests >= kMaxRequests;
      const bool head_only = head.method == "HEAD";
      const std::string_view path = std::string_view(head.target).substr(0, head.target.find('?'));
      if (head.method != "GET" && !head_only) {
        reply(c, 405, "Method Not Allowed", "only GET and HEAD\n", false, "Allow: GET, HEAD\r\n");
      } else if (path != "/metrics") {
        reply(c, 404, "Not Found", "warpath serves /metrics\n", head_only);
      } else {
        std::string body;
        {
          std::lock_guard<std::mutex> lock(mu_);
          body = text_;
        }
        reply(c, 200, "OK", body, head_only);
      }
    }
    return true;
  }

  // Sends what the socket takes; false on an error.
  bool flush(Client& c, uint64_t now) {
    while (c.sent < c.out.size()) {
      const ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      c.sent += size_t(n);
      c.active_ms = now;
    }
    c.out.clear();
    c.sent = 0;
    return true;
  }

  void loop() {
    std::vector<pollfd> fds;
    char buf[4096];
    while (!stop_.load()) {
      fds.clear();
      fds.push_back({listener_, POLLIN, 0});
      for (const Client& c : clients_)
        fds.push_back({c.fd, short((c.out.size() < kMaxOut ? POLLIN : 0) | (c.out.empty() ? 0 : POLLOUT)), 0});
      ::poll(fds.data(), fds.size(), 100);
      const uint64_t now = now_ms();
      // Clients by index into fds; closing swaps the last one in, so go from the end.
      for (size_t k = clients_.size(); k-- > 0;) {
        Client& c      = clients_[k];
        const short ev = fds[k + 1].revents;
        bool keep      = true;
        if (ev & (POLLIN | POLLHUP | POLLERR)) {
          const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
          if (n > 0) {
            c.active_ms = now;
            if (!c.close_after) c.in.append(buf, size_t(n));
            keep = serve(c, now);
          } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            keep = false;
          }
        }
        if (keep && !c.out.empty()) {
          keep = flush(c, now);
          if (keep && c.out.size() < kMaxOut && !c.in.empty()) keep = serve(c, now);  // held back
          if (keep && !c.out.empty()) keep = flush(c, now);
        }
        // Closing with request bytes unread would send RST, which may destroy the reply in
        // flight (a POST's body): shut our side, drain what comes, close at its end or soon.
        if (keep && c.out.empty() && c.close_after && !c.shut_ms) {
          ::shutdown(c.fd, SHUT_WR);
          c.shut_ms = now;
        }
        if (keep && c.shut_ms && now - c.shut_ms > kDrainMs) keep = false;
        if (keep && c.head_ms && now - c.head_ms > kHeadMs) keep = false;  // slowloris
        if (keep && now - c.active_ms > kIdleMs) keep = false;  // idle, or not reading replies
        if (!keep) close_client(k);
      }
      if (fds[0].revents & POLLIN) accept_all(now);
    }
  }

  int listener_ = -1;
  SpareFd spare_;
  std::vector<Client> clients_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::string text_;
  uint16_t port_                                  = 0;
  const std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

}  // namespace

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(std::string_view listen) {
  auto address = parse_listen_address(listen);
  if (!address)
    return Status(Errc::kInvalidArgument,
                  "--metrics " + std::string(listen) + ": " + address.status().message());
  auto server = std::make_unique<PollMetricsServer>();
  WARPATH_TRY(server->listen(address->host, address->port));
  return std::unique_ptr<MetricsServer>(std::move(server));
}

}  // namespace warpath::runtime
