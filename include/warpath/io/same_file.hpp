// include/warpath/io/same_file.hpp: whether two paths name the same file, so that no command
// writes over one of its own inputs. "x.pcap", "./x.pcap", "dir/../x.pcap", a symbolic link to
// it and a hard link all name the same file: existing files are compared by device and inode
// (stat(2) follows links); a path that does not exist yet is compared by its normalised
// absolute form (links in its directories resolved).
#pragma once
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace warpath::io {

inline bool same_file(const std::string& a_in, const std::string& b_in) {
  if (a_in.empty() || b_in.empty()) return false;
  const std::string a = a_in == "-" ? "/dev/stdin" : a_in;  // "-": standard input
  const std::string b = b_in == "-" ? "/dev/stdin" : b_in;
  struct stat sa {}, sb {};
  const bool ea = ::stat(a.c_str(), &sa) == 0, eb = ::stat(b.c_str(), &sb) == 0;
  if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea != eb) return false;
  std::error_code e1, e2;
  const auto ca = std::filesystem::weakly_canonical(a, e1);
  const auto cb = std::filesystem::weakly_canonical(b, e2);
  return !e1 && !e2 && ca == cb;
}

}  // namespace warpath::io
