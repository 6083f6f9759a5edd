// bench/harness/isolated_run.cpp: a benchmark's work in a child process (isolated_run.hpp).
#include "isolated_run.hpp"

#include <malloc.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace warpath::bench {
namespace {

using Clock = std::chrono::steady_clock;

bool write_all(int fd, const void* p, size_t n) {
  const auto* c = static_cast<const char*>(p);
  while (n) {
    const ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w, n -= size_t(w);
  }
  return true;
}

// False when the pipe closed or failed, or (`expired` set) the deadline passed first.
bool read_all(int fd, void* p, size_t n, Clock::time_point deadline, bool& expired) {
  auto* c = static_cast<char*>(p);
  while (n) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      expired = true;
      return false;
    }
    pollfd pfd{fd, POLLIN, 0};
    const int pr = poll(&pfd, 1, int(std::min<int64_t>(left, 1'000'000)));
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) continue;  // the deadline is checked above
    if (pr < 0) return false;
    const ssize_t r = read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r, n -= size_t(r);
  }
  return true;
}

}  // namespace

IsolatedResult run_isolated(
    const std::function<void(nlohmann::json&, std::vector<uint8_t>&)>& work,
    std::chrono::seconds timeout, uint64_t max_payload) {
  IsolatedResult res;
  auto here = [&] {
    res.in_process = true;
    work(res.head, res.payload);
    res.ok = true;
    return res;
  };
  int fds[2];
  if (pipe(fds) != 0) return here();
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]), close(fds[1]);
    return here();
  }
  if (pid == 0) {  // the child: no exit handlers (DPDK's, the parent's buffers)
    close(fds[0]);
    nlohmann::json head;
    std::vector<uint8_t> payload;
    work(head, payload);
    const std::string text = head.dump();
    const uint64_t sizes[2] = {text.size(), payload.size()};
    (void)(write_all(fds[1], sizes, sizeof sizes) && write_all(fds[1], text.data(), text.size()) &&
           write_all(fds[1], payload.data(), payload.size()));
    _exit(0);
  }
  close(fds[1]);
  const auto deadline = Clock::now() + timeout;
  bool expired        = false;
  uint64_t sizes[2]   = {0, 0};
  bool ok = read_all(fds[0], sizes, sizeof sizes, deadline, expired) &&
            sizes[0] < (uint64_t(64) << 20) && sizes[1] <= max_payload;
  std::string text;
  if (ok) {
    text.resize(sizes[0]);
    ok = read_all(fds[0], text.data(), text.size(), deadline, expired);
  }
  if (ok) {
    res.payload.resize(sizes[1]);
    ok = read_all(fds[0], res.payload.data(), res.payload.size(), deadline, expired);
  }
  if (ok) {
    res.head = nlohmann::json::parse(text, nullptr, false);
    ok       = !res.head.is_discarded();
  }
  const bool timed_out = expired;
  if (!ok) kill(pid, SIGKILL);
  close(fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  res.ok        = ok;
  res.timed_out = !ok && timed_out;
  if (!ok) {
    res.head = nlohmann::json();
    res.payload.clear();
    res.why = timed_out ? "gave up after " + std::to_string(timeout.count()) + " s"
              : WIFSIGNALED(wstatus)
                  ? "crashed (signal " + std::to_string(WTERMSIG(wstatus)) + ": " +
                        strsignal(WTERMSIG(wstatus)) + ")"
                  : std::string("the process ended without a result");
  }
  return res;
}

uint64_t proc_kb_field(const char* path, const char* field) {
  std::ifstream f(path);
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(f, line))
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':')
      return std::stoull(line.substr(n + 1)) * 1024;
  return 0;
}

PeakRss::PeakRss() {
  malloc_trim(0);  // give freed engines' memory back, so the peak measures this build
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  ok_     = bool(f);
  before_ = proc_kb_field("/proc/self/status", "VmRSS");
}

uint64_t PeakRss::growth() const {
  if (!ok_) return 0;
  const uint64_t hwm = proc_kb_field("/proc/self/status", "VmHWM");
  return hwm > before_ ? hwm - before_ : 0;
}

}  // namespace warpath::bench
