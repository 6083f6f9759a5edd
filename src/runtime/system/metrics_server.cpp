// src/runtime/system/metrics_server.cpp: GET /metrics over HTTP (metrics.hpp), with
// cpp-httplib (Debian libcpp-httplib-dev, header-only).
#include <httplib.h>

#include <sys/socket.h>

#include <charconv>
#include <chrono>
#include <mutex>
#include <thread>

#include "warpath/runtime/metrics.hpp"

namespace warpath::runtime {
namespace {

class HttpMetricsServer final : public MetricsServer {
 public:
  ~HttpMetricsServer() override {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  void publish(std::string text) override {
    std::lock_guard<std::mutex> lock(mu_);
    text_ = std::move(text);
  }
  uint16_t port() const noexcept override { return port_; }

  Status listen(const std::string& host, int port) {
    server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      std::string body;
      {
        std::lock_guard<std::mutex> lock(mu_);
        body = text_;
      }
      res.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
    });
    server_.set_keep_alive_max_count(4);
    // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, with which a second warpath
    // would bind the same port and take half of the scrapes.
    server_.set_socket_options([](int sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    const int bound = port == 0 ? server_.bind_to_any_port(host) : server_.bind_to_port(host, port)
                                                                     ? port
                                                                     : -1;
    if (bound <= 0)
      return Status(Errc::kIoError, "--metrics " + host + ":" + std::to_string(port) +
                                        ": cannot listen there (address in use or not local?)");
    port_   = uint16_t(bound);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() does nothing before the loop runs: wait for it, so the destructor cannot hang.
    for (int i = 0; i < 5000 && !server_.is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!server_.is_running()) return Status(Errc::kIoError, "--metrics: the server did not start");
    return Status::ok();
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  std::mutex mu_;
  std::string text_;
  uint16_t port_ = 0;
};

}  // namespace

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(std::string_view listen) {
  auto address = parse_listen_address(listen);
  if (!address)
    return Status(Errc::kInvalidArgument,
                  "--metrics " + std::string(listen) + ": " + address.status().message());
  const std::string host = address->host;
  const int port         = address->port;
  auto server = std::make_unique<HttpMetricsServer>();
  WARPATH_TRY(server->listen(host, port));
  return std::unique_ptr<MetricsServer>(std::move(server));
}

}  // namespace warpath::runtime
