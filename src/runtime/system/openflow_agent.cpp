// src/runtime/system/openflow_agent.cpp: the OpenFlow agent's sockets (openflow_agent.hpp).
#include "warpath/runtime/openflow_agent.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "runtime/system/openflow_tls.hpp"
#include "runtime/system/spare_fd.hpp"
#include "warpath/openflow/wire.hpp"
#include "warpath/runtime/metrics.hpp"

namespace warpath::runtime {
namespace {

constexpr size_t kMaxPending     = 4u << 20;  // unsent bytes before a peer is dropped
constexpr size_t kMaxConnections = 64;  // beyond: the least recently active accepted one goes
constexpr uint64_t kStallMs      = 2000;

struct Target {
  bool listen = false;
  bool tls    = false;  // pssl:, ssl:
  std::string host;
  uint16_t port = 0;
};

Result<Target> parse_target(const std::string& t) {
  Target out;
  std::string rest;
  if (t.rfind("ptcp:", 0) == 0 || t.rfind("pssl:", 0) == 0) {
    out.listen = true;
    out.tls    = t[1] == 's';
    rest       = t.substr(5);
    if (rest.find(':') == std::string::npos) rest = "127.0.0.1:" + rest;
  } else if (t.rfind("tcp:", 0) == 0 || t.rfind("ssl:", 0) == 0) {
    out.tls = t[0] == 's';
    rest    = t.substr(4);
  } else {
    return Status(Errc::kInvalidArgument,
                  "--openflow " + t + ": must be ptcp:[IP:]PORT or pssl:[IP:]PORT (listen), or "
                  "tcp:HOST:PORT or ssl:HOST:PORT (a controller)");
  }
  Result<ListenAddress> a = parse_listen_address(rest);
  if (!a.is_ok()) return Status(Errc::kInvalidArgument, "--openflow " + t + ": " + a.status().message());
  out.host = a->host;
  out.port = a->port;
  return out;
}

bool resolve(const Target& t, sockaddr_storage& sa, socklen_t& len) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(t.host.c_str(), std::to_string(t.port).c_str(), &hints, &res) != 0 || !res)
    return false;
  std::memcpy(&sa, res->ai_addr, res->ai_addrlen);
  len = socklen_t(res->ai_addrlen);
  freeaddrinfo(res);
  return true;
}

void nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

struct Conn {
  int fd = -1;
  std::unique_ptr<TlsStream> tls;  // pssl:, ssl: (the socket stays Conn's)
  std::unique_ptr<openflow::Session> session;
  std::vector<uint8_t> out;
  std::string peer;
  int target = -1;  // the controller target it serves, or -1 (accepted)
  bool connecting = false;
  uint64_t sent_ms = 0;  // the last time the socket took bytes (or had none waiting)
  uint64_t opened_ms = 0;  // accepted, or connected to the controller
  uint64_t rx_ms     = 0;  // the last time the peer sent anything
  uint64_t tx_ms     = 0;  // the last time the socket took bytes (a peer reading a long reply
                           // is active, though it sends nothing)
  uint64_t probe_ms  = 0;  // when the inactivity probe (an ECHO_REQUEST) went out; 0: none out
};

bool loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

class Agent final : public OpenflowAgent {
 public:
  Agent(const openflow::SwitchControl& sw, openflow::SwitchInfo info,
        std::function<void(const std::string&)> notice, const OpenflowAgentOptions& options)
      : sw_(sw), info_(std::move(info)), notice_(std::move(notice)),
        tls_files_(options.tls), probe_ms_(options.inactivity_probe_ms) {}

  ~Agent() override {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    for (Conn& c : conns_) {
      c.tls.reset();
      if (c.fd >= 0) ::close(c.fd);
    }
    for (int fd : listeners_) ::close(fd);
  }

  Status init(const std::vector<std::string>& targets) {
    for (const std::string& text : targets) {
      WARPATH_ASSIGN_OR_RETURN(Target t, parse_target(text));
      if (t.tls && !tls_) {
        auto ctx = TlsContext::create(tls_files_);
        if (!ctx.is_ok()) return Status(ctx.status().code(), "--openflow " + text + ": " + ctx.status().message());
        tls_ = *ctx;
      }
      if (!t.listen) {
        controllers_.push_back(t);
        retry_at_.push_back(0);
        continue;
      }
      sockaddr_storage sa{};
      socklen_t len = 0;
      if (!resolve(t, sa, len)) return Status(Errc::kInvalidArgument, "--openflow " + text + ": cannot resolve " + t.host);
      const int fd = ::socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      const int one = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&sa), len) != 0 || ::listen(fd, 128) != 0) {
        const std::string why = std::strerror(errno);
        if (fd >= 0) ::close(fd);
        return Status(Errc::kIoError, "--openflow " + text + ": cannot listen: " + why);
      }
      nonblocking(fd);
      sockaddr_storage bound{};
      socklen_t blen = sizeof bound;
      getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &blen);
      const uint16_t port = ntohs(bound.ss_family == AF_INET6
                                      ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                      : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
      listening_.push_back(t.host + ":" + std::to_string(port));
      listeners_.push_back(fd);
      listener_tls_.push_back(t.tls);
      if (!t.tls && !loopback(t.host))
        warnings_.push_back("--openflow " + text + ": listening beyond loopback without TLS: "
                            "anyone who reaches " + t.host + ":" + std::to_string(port) +
                            " can program the switch (pssl: with certificates, a firewall, or "
                            "127.0.0.1)");
    }
    // OpenSSL writes with write(2), not send(MSG_NOSIGNAL): a peer that reset its connection
    // must not end the run with SIGPIPE.
    if (tls_) std::signal(SIGPIPE, SIG_IGN);
    if (tls_files_.any() && !tls_)
      warnings_.push_back("--openflow-private-key, --openflow-certificate and --openflow-ca-cert "
                          "are used by pssl: and ssl: targets only");
    thread_ = std::thread([this] { loop(); });
    return Status::ok();
  }

  std::vector<std::string> listening() const override { return listening_; }
  std::vector<std::string> warnings() const override { return warnings_; }

 private:
  void say(const std::string& line) {
    if (notice_) notice_(line);
  }

  void open_session(Conn& c, bool controller) {
    c.session = std::make_unique<openflow::Session>(sw_, info_, controller);
    const std::vector<uint8_t> h = c.session->hello();
    c.out.insert(c.out.end(), h.begin(), h.end());
  }

  void accept_all(int lfd, bool tls, uint64_t now_ms) {
    for (;;) {
      sockaddr_storage sa{};
      socklen_t len = sizeof sa;
      const int fd  = ::accept4(lfd, reinterpret_cast<sockaddr*>(&sa), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        if (spare_.shed(lfd)) continue;
        return;
      }
      // Full: an accepted connection makes room, so idle peers never starve a new one (they
      // are also closed by the inactivity probe): first one that has not finished its
      // handshake (TLS and HELLO: on pssl:, peers without a certificate can never push out an
      // authenticated session), the oldest of those, else the least recently active.
      size_t live = 0, victim = conns_.size();
      auto rank = [](const Conn& c) {
        return std::pair(c.session->hello_received(), std::max(c.rx_ms, c.tx_ms));
      };
      for (size_t k = 0; k < conns_.size(); ++k) {
        if (conns_[k].fd < 0) continue;
        ++live;
        if (conns_[k].target < 0 && (victim == conns_.size() || rank(conns_[k]) < rank(conns_[victim])))
          victim = k;
      }
      if (live >= kMaxConnections) {
        if (victim == conns_.size()) {
          ::close(fd);
          continue;
        }
        drop(conns_[victim], std::string(conns_[victim].session->hello_received()
                                             ? "the least recently active"
                                             : "the oldest without a handshake") +
                                 " of " + std::to_string(kMaxConnections) +
                                 " connections, closed for a new one");
      }
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      Conn c;
      c.fd = fd;
      if (tls && !(c.tls = tls_->stream(fd, true))) {  // never plain TCP on a TLS target
        ::close(fd);
        continue;
      }
      char host[64] = "?";
      uint16_t port  = 0;
      if (sa.ss_family == AF_INET) {
        inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&sa)->sin_addr, host, sizeof host);
        port = ntohs(reinterpret_cast<sockaddr_in*>(&sa)->sin_port);
      } else if (sa.ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&sa)->sin6_addr, host, sizeof host);
        port = ntohs(reinterpret_cast<sockaddr_in6*>(&sa)->sin6_port);
      }
      c.peer = std::string(host) + ":" + std::to_string(port);
      // The loop's clock, read before the poll: a later reading would run ahead of it.
      c.sent_ms = c.opened_ms = c.rx_ms = now_ms;
      open_session(c, false);
      conns_.push_back(std::move(c));
    }
  }

  void connect_controllers(uint64_t now_ms) {
    for (size_t t = 0; t < controllers_.size(); ++t) {
      bool up = false;
      for (const Conn& c : conns_) up |= c.target == int(t);
      if (up || now_ms < retry_at_[t]) continue;
      retry_at_[t] = now_ms + 1000;
      sockaddr_storage sa{};
      socklen_t len = 0;
      if (!resolve(controllers_[t], sa, len)) continue;
      const int fd = ::socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0) continue;
      if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), len) != 0 && errno != EINPROGRESS) {
        ::close(fd);
        continue;
      }
      Conn c;
      c.fd         = fd;
      c.target     = int(t);
      if (controllers_[t].tls && !(c.tls = tls_->stream(fd, false))) {
        ::close(fd);
        continue;
      }
      c.connecting = true;
      c.peer       = controllers_[t].host + ":" + std::to_string(controllers_[t].port);
      c.sent_ms    = now_ms;
      c.opened_ms = c.rx_ms = now_ms;
      open_session(c, true);
      conns_.push_back(std::move(c));
    }
  }

  void drop(Conn& c, const std::string& why) {
    if (c.connecting && c.target >= 0) {
      c.tls.reset();
      ::close(c.fd);  // not up yet: retried quietly
      c.fd = -1;
      return;
    }
    // ovs-ofctl opens a connection per request: only errors and controllers are news.
    if (!why.empty() || c.target >= 0)
      say("openflow: " + c.peer + " closed" + (why.empty() ? "" : ": " + why));
    c.tls.reset();
    ::close(c.fd);
    c.fd = -1;
  }

  // Whether to wait for the socket to take bytes: connecting, replies waiting, or TLS waiting
  // to write. Not during a TLS handshake that waits to read (the socket is writable, and the
  // loop would spin; each pass tries the queued HELLO again anyway).
  static bool wants_pollout(const Conn& c) {
    if (c.connecting) return true;
    if (c.tls) return c.tls->wants_write() || (c.tls->established() && !c.out.empty());
    return !c.out.empty();
  }

  // Sends what the socket takes. A peer is dropped only when it stops reading: more than
  // kMaxPending bytes waiting and nothing sent for kStallMs (a dump of a million flows is
  // 130 MB of replies, sent as fast as the peer reads them).
  void flush(Conn& c, uint64_t now_ms) {
    size_t at = 0;  // erased once at the end: a 100 MB dump is not moved per send
    while (at < c.out.size()) {
      const ssize_t n = c.tls ? c.tls->write(c.out.data() + at, c.out.size() - at)
                              : ::send(c.fd, c.out.data() + at, c.out.size() - at, MSG_NOSIGNAL);
      if (n < 0 && c.tls) {
        drop(c, c.tls->why());
        return;
      }
      if (n <= 0) break;
      at += size_t(n);
      c.sent_ms = c.tx_ms = now_ms;
    }
    c.out.erase(c.out.begin(), c.out.begin() + long(at));
    if (c.out.empty()) c.sent_ms = now_ms;
    if (c.out.size() > kMaxPending && now_ms - c.sent_ms > kStallMs) drop(c, "it does not read its replies");
  }

  void broadcast(const std::vector<uint8_t>& m, bool packet_in = false, const openflow::PacketIn* p = nullptr) {
    for (Conn& c : conns_) {
      if (c.fd < 0 || c.connecting || !c.session->async()) continue;
      if (packet_in && !c.session->packet_ins()) continue;
      if (packet_in) {
        const std::vector<uint8_t> pm = openflow::Session::packet_in(*p, c.session->miss_send_len());
        c.out.insert(c.out.end(), pm.begin(), pm.end());
      } else {
        c.out.insert(c.out.end(), m.begin(), m.end());
      }
    }
  }

  void async_work() {
    for (const openflow::RemovedFlow& f : sw_.expire())
      if (f.entry.spec.flags & openflow::kSendFlowRem)
        broadcast(openflow::wire::flow_removed(f, sw_.now_ns()));
    std::vector<openflow::PacketIn> ins;
    sw_.take_packet_ins(ins);
    for (const openflow::PacketIn& p : ins) broadcast({}, true, &p);
  }

  // Open vSwitch's inactivity probe: a peer silent through the handshake is closed after the
  // interval; one silent for the interval after it is sent an ECHO_REQUEST, and closed when
  // nothing comes back within another. 0: off.
  void probe(uint64_t now_ms) {
    if (!probe_ms_) return;
    const std::string secs = fmt_seconds(probe_ms_);
    for (Conn& c : conns_) {
      if (c.fd < 0 || c.connecting) continue;
      if (!c.session->hello_received()) {
        if (now_ms - c.opened_ms >= probe_ms_) drop(c, "no HELLO within " + secs);
      } else if (c.probe_ms) {
        // The probe may wait behind a long reply: its deadline runs from the last byte sent.
        if (now_ms - std::max(c.probe_ms, c.tx_ms) >= probe_ms_)
          drop(c, "no reply to the inactivity probe within " + secs);
      } else if (now_ms - std::max(c.rx_ms, c.tx_ms) >= probe_ms_) {
        const std::vector<uint8_t> m = openflow::Session::echo_request(uint32_t(++probe_xid_));
        c.out.insert(c.out.end(), m.begin(), m.end());
        c.probe_ms = now_ms;
      }
    }
  }
  static std::string fmt_seconds(uint64_t ms) {
    return ms % 1000 ? std::to_string(ms) + " ms" : std::to_string(ms / 1000) + " s";
  }

  void loop() {
    using clock         = std::chrono::steady_clock;
    const auto t0       = t0_;
    uint64_t next_async = 0;
    std::vector<uint8_t> buf(65536);
    while (!stop_.load()) {
      const auto now_ms = uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - t0).count());
      connect_controllers(now_ms);
      std::vector<pollfd> fds;
      for (int fd : listeners_) fds.push_back({fd, POLLIN, 0});
      for (const Conn& c : conns_)
        fds.push_back({c.fd, short(POLLIN | (wants_pollout(c) ? POLLOUT : 0)), 0});
      ::poll(fds.data(), fds.size(), 50);
      for (size_t l = 0; l < listeners_.size(); ++l)
        if (fds[l].revents & POLLIN) accept_all(listeners_[l], listener_tls_[l], now_ms);
      const size_t base = listeners_.size();
      for (size_t k = 0; k < conns_.size() && base + k < fds.size(); ++k) {
        Conn& c           = conns_[k];
        const short ev    = fds[base + k].revents;
        if (c.fd < 0 || !ev) continue;
        if (c.connecting) {
          int err = 0;
          socklen_t el = sizeof err;
          getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &el);
          if (err || (ev & (POLLERR | POLLHUP))) {
            drop(c, std::strerror(err));
            continue;
          }
          if (ev & POLLOUT) {
            c.connecting = false;
            c.opened_ms = c.rx_ms = now_ms;
            say("openflow: connected to controller " + c.peer);
          }
        }
        // TLS: what OpenSSL decrypted may wait in its buffer, unseen by poll: read it all.
        const bool readable = (ev & (POLLIN | POLLHUP | POLLERR)) || (c.tls && (ev & POLLOUT));
        for (bool more = readable; more && c.fd >= 0;) {
          ssize_t n = 0;
          if (c.tls) {
            n = c.tls->read(buf.data(), buf.size());
            if (n < 0) {
              drop(c, c.tls->why());
              break;
            }
            if (n == 0) break;  // until OpenSSL has nothing more
          } else {
            more = false;
            n    = ::recv(c.fd, buf.data(), buf.size(), 0);
            if (n <= 0) {
              if (n == 0 || (errno != EAGAIN && errno != EINTR)) drop(c, "");
              break;
            }
          }
          c.rx_ms    = now_ms;
          c.probe_ms = 0;
          if (!c.session->receive(buf.data(), size_t(n), c.out)) {
            flush(c, now_ms);
            if (c.fd >= 0) drop(c, c.session->why());
            break;
          }
          for (const openflow::RemovedFlow& f : c.session->take_removed())
            broadcast(openflow::wire::flow_removed(f, sw_.now_ns()));
          for (const std::vector<uint8_t>& m : c.session->take_port_status()) broadcast(m);
        }
      }
      if (now_ms >= next_async) {
        async_work();
        next_async = now_ms + 100;
      }
      probe(now_ms);
      bool listening = false;
      for (Conn& c : conns_) {
        if (c.fd >= 0 && !c.connecting) flush(c, now_ms);
        listening |= c.fd >= 0 && !c.connecting && c.session->packet_ins();
      }
      std::erase_if(conns_, [](const Conn& c) { return c.fd < 0; });
      if (listening != told_listening_) sw_.listen_packet_in(told_listening_ = listening);
    }
  }

  const openflow::SwitchControl& sw_;
  openflow::SwitchInfo info_;
  std::function<void(const std::string&)> notice_;
  std::vector<int> listeners_;
  std::vector<std::string> listening_, warnings_;
  std::vector<bool> listener_tls_;
  SpareFd spare_;
  TlsFiles tls_files_;
  std::shared_ptr<TlsContext> tls_;
  uint32_t probe_ms_;
  uint64_t probe_xid_ = 0;
  std::vector<Target> controllers_;
  std::vector<uint64_t> retry_at_;
  std::vector<Conn> conns_;
  bool told_listening_ = false;  // what the switch was last told: someone takes PACKET_INs
  std::atomic<bool> stop_{false};
  const std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  std::thread thread_;
};

}  // namespace

Result<std::unique_ptr<OpenflowAgent>> OpenflowAgent::start(
    const openflow::SwitchControl& sw, openflow::SwitchInfo info,
    const std::vector<std::string>& targets, std::function<void(const std::string&)> notice,
    const OpenflowAgentOptions& options) {
  auto a = std::make_unique<Agent>(sw, std::move(info), std::move(notice), options);
  WARPATH_TRY(a->init(targets));
  return std::unique_ptr<OpenflowAgent>(std::move(a));
}

}  // namespace warpath::runtime
