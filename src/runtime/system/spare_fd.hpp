// src/runtime/system/spare_fd.hpp: accepting when the process is out of descriptors. accept4
// then fails with EMFILE while the connection stays queued, the listener stays readable and a
// poll loop would spin. A spare descriptor held for this is given up to accept the connection
// and close it at once (the peer sees it end), then taken again, as nginx and libev do.
#pragma once
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace warpath::runtime {

class SpareFd {
 public:
  SpareFd() : fd_(::open("/dev/null", O_RDONLY | O_CLOEXEC)) {}
  ~SpareFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  SpareFd(const SpareFd&)            = delete;
  SpareFd& operator=(const SpareFd&) = delete;

  /// After accept4 on `listener` failed: true when it was for want of descriptors and one
  /// queued connection was shed (accept again), false otherwise (stop accepting for now).
  bool shed(int listener) {
    if ((errno != EMFILE && errno != ENFILE) || fd_ < 0) return false;
    ::close(fd_);
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) ::close(fd);
    fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    return fd >= 0;
  }

 private:
  int fd_;
};

}  // namespace warpath::runtime
