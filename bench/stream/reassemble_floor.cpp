// warpath-reassemble-floor: the I/O floor of `warpath reassemble` (issue 66's yardstick, the
// kind ADR 0009 uses): the least a tool must do to turn a capture into one file per TCP
// direction, and nothing else.
//
//   warpath-reassemble-floor [--buffer BYTES] CAPTURE OUT_DIR
//
// It reads a classic pcap file of Ethernet frames with read(2) through one 1 MiB buffer, finds
// each TCP segment's payload (up to two VLAN tags, IPv4 or IPv6 without extension headers),
// finds its direction by the 4-tuple in a hash map, and appends the payload, in arrival order,
// to that direction's buffer (--buffer bytes, 65536 unless told), written to the direction's
// file (created at its first payload, named N-SRC.PORT-DST.PORT as warpath's are, IPv6
// addresses written out in full) each time it fills. Like warpath, it raises its limit on open
// files to the hard limit first. A FIN or RST ends the direction: its buffer is written, its file closed and the buffer
// reused by the next. No tracking, no acknowledgement, no overlap or order rules, no index, no
// cap on open files: on a capture without loss or reordering the files hold the same bytes as
// warpath's, and on any capture the same amount give or take the retransmissions. What
// `warpath reassemble` takes beyond this is its own work; bench/stream/tcpflow_compare.py runs
// it with each --buffer it is given and keeps the fastest (the anchor at its best).
//
// Exit status 0; 1 with a message for an unreadable capture, a pcapng file, or a failed write.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

int die(const std::string& what) {
  std::fprintf(stderr, "warpath-reassemble-floor: %s\n", what.c_str());
  return 1;
}

uint16_t be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }

// One direction: the addresses in words 0-3 (IPv4: source and destination in word 0; IPv6:
// source in 0-1, destination in 2-3), the ports and family in word 4. Whole words, stored as
// whole words: the hash's loads are served by the stores that made them (a key built by byte
// stores and read back as words stalled on store forwarding, half this program's time).
struct Key {
  uint64_t w[5];  ///< set whole by tcp_payload() (a zeroing constructor compiled to rep stos)
  bool operator==(const Key& o) const { return std::memcmp(w, o.w, sizeof w) == 0; }
  uint8_t family() const { return uint8_t(w[4] >> 32); }
};
struct KeyHash {
  size_t operator()(const Key& k) const noexcept {
    uint64_t h = 0;
    for (const uint64_t x : k.w) h = (h ^ x) * 0x9e3779b97f4a7c15ull, h ^= h >> 29;
    return size_t(h);
  }
};

struct Direction {
  int fd        = -1;
  bool ended    = false;  ///< a FIN or RST was seen: what follows is not written
  uint32_t used = 0;
  char* buf     = nullptr;  ///< from the pool while the direction is open
};

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

std::string endpoint(const Key& k, bool src) {
  uint8_t a[16];
  const bool v4 = k.family() == 4;
  std::memcpy(a,
              v4 ? reinterpret_cast<const uint8_t*>(&k.w[0]) + (src ? 0 : 4)
                 : reinterpret_cast<const uint8_t*>(&k.w[src ? 0 : 2]),
              v4 ? 4 : 16);
  char text[64];
  if (v4)
    std::snprintf(text, sizeof text, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
  else
    std::snprintf(text, sizeof text,
                  "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", a[0],
                  a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13],
                  a[14], a[15]);
  const uint16_t port = uint16_t(k.w[4] >> (src ? 0 : 16));
  return std::string(text) + "." + std::to_string(port);
}

// The TCP segment in an Ethernet frame [p, p + cap): its key, its payload's offset and length,
// whether it ends its direction (FIN or RST); false when the frame holds none (not TCP, cut).
bool tcp_payload(const uint8_t* p, uint32_t cap, Key& k, uint32_t& off, uint32_t& len, bool& fin) {
  uint32_t l3 = 14;
  if (cap < l3) return false;
  uint16_t type = be16(p + 12);
  for (int tags = 0; (type == 0x8100 || type == 0x88a8) && tags < 2; ++tags) {
    if (cap < l3 + 4) return false;
    type = be16(p + l3 + 2);
    l3 += 4;
  }
  uint32_t l4 = 0, end = 0;
  if (type == 0x0800) {
    if (cap < l3 + 20 || (p[l3] >> 4) != 4 || (p[l3] & 15) < 5 || p[l3 + 9] != 6 ||
        (be16(p + l3 + 6) & 0x1fff))
      return false;
    std::memcpy(&k.w[0], p + l3 + 12, 8);
    k.w[1] = k.w[2] = k.w[3] = 0;
    k.w[4]                   = uint64_t(4) << 32;
    l4                       = l3 + uint32_t(p[l3] & 15) * 4;
    end                      = l3 + be16(p + l3 + 2);
  } else if (type == 0x86dd) {
    if (cap < l3 + 40 || p[l3 + 6] != 6) return false;
    std::memcpy(&k.w[0], p + l3 + 8, 32);
    k.w[4] = uint64_t(6) << 32;
    l4     = l3 + 40;
    end    = l4 + be16(p + l3 + 4);
  } else {
    return false;
  }
  if (end > cap) end = cap;
  if (l4 + 20 > end || (p[l4 + 12] >> 4) < 5) return false;
  k.w[4] |= uint64_t(be16(p + l4)) | uint64_t(be16(p + l4 + 2)) << 16;
  fin = (p[l4 + 13] & 0x05) != 0;  // FIN or RST
  off = l4 + uint32_t(p[l4 + 12] >> 4) * 4;
  len = off < end ? end - off : 0;
  return true;
}

// Classic pcap records from a file descriptor, through one buffer.
class Records {
 public:
  explicit Records(int fd) : fd_(fd), buf_(1u << 20) {}
  // The next record's bytes and captured length; false at the end (`error` set when the file
  // is cut or unreadable).
  bool next(const uint8_t*& data, uint32_t& caplen, std::string& error) {
    if (!have(16, error)) {
      if (error.empty() && end_ > at_) error = "the capture ends inside a record's header";
      return false;
    }
    const uint8_t* h = buf_.data() + at_;
    uint32_t incl;
    std::memcpy(&incl, h + 8, 4);
    if (swapped_) incl = __builtin_bswap32(incl);
    if (incl > buf_.size() - 16) {
      error = "a record of " + std::to_string(incl) + " bytes";
      return false;
    }
    if (!have(16 + incl, error)) {
      if (error.empty()) error = "the capture ends inside a record";
      return false;
    }
    data   = buf_.data() + at_ + 16;
    caplen = incl;
    at_ += 16 + incl;
    return true;
  }
  bool header(std::string& error) {
    if (!have(24, error)) {
      if (error.empty()) error = "no pcap header";
      return false;
    }
    uint32_t magic;
    std::memcpy(&magic, buf_.data(), 4);
    if (magic == 0xa1b2c3d4 || magic == 0xa1b23c4d) {
      swapped_ = false;
    } else if (magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1) {
      swapped_ = true;
    } else {
      error = "not a classic pcap file (pcapng is not read by this yardstick)";
      return false;
    }
    uint32_t link;
    std::memcpy(&link, buf_.data() + 20, 4);
    if ((swapped_ ? __builtin_bswap32(link) : link) != 1) {
      error = "not an Ethernet capture (link type " +
              std::to_string(swapped_ ? __builtin_bswap32(link) : link) + ")";
      return false;
    }
    at_ = 24;
    return true;
  }

 private:
  bool have(size_t n, std::string& error) {
    if (end_ - at_ >= n) return true;
    std::memmove(buf_.data(), buf_.data() + at_, end_ - at_);
    end_ -= at_;
    at_ = 0;
    while (end_ < n) {
      const ssize_t got = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) error = std::strerror(errno);
      if (got <= 0) return false;
      end_ += size_t(got);
    }
    return true;
  }
  int fd_;
  std::vector<uint8_t> buf_;
  size_t at_ = 0, end_ = 0;
  bool swapped_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  size_t buffer = 65536;
  int arg       = 1;
  if (argc == 5 && std::strcmp(argv[1], "--buffer") == 0) {
    buffer = std::strtoul(argv[2], nullptr, 10);
    arg    = 3;
  }
  if (argc - arg != 2 || buffer < 64 || buffer > (size_t(1) << 30))
    return die("usage: warpath-reassemble-floor [--buffer BYTES (64 .. 2^30)] CAPTURE OUT_DIR");
  if (rlimit r{}; getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;  // thousands of directions open at once, as warpath allows itself
    (void)setrlimit(RLIMIT_NOFILE, &r);
  }
  const char* capture = argv[arg];
  const int in        = ::open(capture, O_RDONLY | O_CLOEXEC);
  if (in < 0) return die(std::string(capture) + ": " + std::strerror(errno));
  const int dir = ::open(argv[arg + 1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return die(std::string(argv[arg + 1]) + ": " + std::strerror(errno));
  Records records(in);
  std::string error;
  if (!records.header(error)) return die(std::string(capture) + ": " + error);
  std::unordered_map<Key, Direction, KeyHash> dirs;
  std::vector<std::unique_ptr<char[]>> buffers;  // every buffer made
  std::vector<char*> free_buffers;
  size_t files = 0;
  auto end_of  = [&](Direction& d) -> bool {  // writes what is buffered, closes, frees
    d.ended = true;
    if (d.fd < 0) return true;
    const bool ok = write_all(d.fd, d.buf, d.used);
    ::close(d.fd);
    free_buffers.push_back(d.buf);
    d.fd  = -1;
    d.buf = nullptr;
    return ok;
  };
  const uint8_t* data = nullptr;
  uint32_t caplen = 0, off = 0, len = 0;
  bool fin = false;
  while (records.next(data, caplen, error)) {
    Key k;
    if (!tcp_payload(data, caplen, k, off, len, fin)) continue;
    Direction& d = dirs[k];
    if (d.ended) continue;
    if (len && d.fd < 0) {
      const std::string name =
          std::to_string(++files) + "-" + endpoint(k, true) + "-" + endpoint(k, false);
      d.fd = ::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (d.fd < 0) return die(name + ": " + std::strerror(errno));
      if (free_buffers.empty()) {
        buffers.emplace_back(new char[buffer]);
        free_buffers.push_back(buffers.back().get());
      }
      d.buf = free_buffers.back();
      free_buffers.pop_back();
    }
    for (const char* p = reinterpret_cast<const char*>(data + off); len > 0;) {
      const uint32_t take = uint32_t(std::min<size_t>(len, buffer - d.used));
      std::memcpy(d.buf + d.used, p, take);
      d.used += take;
      p += take;
      len -= take;
      if (d.used == buffer) {
        if (!write_all(d.fd, d.buf, d.used))
          return die(std::string("write failed: ") + std::strerror(errno));
        d.used = 0;
      }
    }
    if (fin && !end_of(d)) return die(std::string("write failed: ") + std::strerror(errno));
  }
  if (!error.empty()) return die(std::string(capture) + ": " + error);
  for (auto& [key, d] : dirs)
    if (!end_of(d)) return die(std::string("write failed: ") + std::strerror(errno));
  std::printf("%zu files, %zu buffers of %zu bytes\n", files, buffers.size(), buffer);
  return 0;
}
