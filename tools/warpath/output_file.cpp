#include "output_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "warpath/io/same_file.hpp"

namespace warpath::cli {
namespace fs = std::filesystem;

OutputFile::~OutputFile() {
  if (owned_) {
    std::fclose(file_);
    if (!in_place_) std::remove((target_ + ".partial").c_str());
  }
}

Status OutputFile::open(const std::vector<std::string>& inputs) {
  if (path_.empty()) return Status::ok();
  for (const std::string& in : inputs)
    if (io::same_file(path_, in))
      return Status(Errc::kInvalidArgument, path_ + ": is the input '" + in +
                                                "'; refusing to write over it");
  // Where the bytes go: through a link to what it names (the link stays a link), and into
  // anything that is not a regular file (a device, a FIFO, /dev/stdout) in place, since
  // renaming over /dev/null as root replaces the device with a file.
  std::error_code ec;
  const fs::file_status st = fs::status(path_, ec);  // follows links
  target_                  = path_;
  in_place_                = false;
  // /dev/stdout, /proc/self/fd/N and the like name an open file, whatever it is: replacing
  // it by a rename would cut off what was already written through the descriptor.
  const bool descriptor = path_.rfind("/dev/", 0) == 0 || path_.rfind("/proc/", 0) == 0 ||
                          io::same_file(path_, "/dev/stdout") ||
                          io::same_file(path_, "/dev/stderr");
  if (!ec && fs::exists(st)) {
    if (!fs::is_regular_file(st) || descriptor || fs::hard_link_count(path_, ec) > 1) {
      in_place_ = true;  // a rename would also cut a hard link: the other names keep the old
    } else if (fs::is_symlink(fs::symlink_status(path_, ec))) {
      const fs::path real = fs::canonical(path_, ec);
      if (!ec) target_ = real.string();
    }
  } else if (fs::is_symlink(fs::symlink_status(path_, ec))) {
    in_place_ = true;  // a dangling link: creating through it makes what it names
  }
  const std::string name = in_place_ ? target_ : target_ + ".partial";
  // A descriptor that leads to a regular file (`> report.txt`) is appended to: opening it for
  // writing would truncate what the command already printed there.
  const bool append = in_place_ && descriptor && fs::is_regular_file(st);
  file_             = std::fopen(name.c_str(), append ? "a" : "w");
  if (!file_) {
    file_ = stdout;
    return Status(Errc::kIoError, path_ + ": cannot " + (in_place_ ? "open" : "create") + ": " +
                                      std::strerror(errno));
  }
  owned_ = true;
  return Status::ok();
}

Status OutputFile::commit() {
  if (!owned_)
    return std::fflush(file_) == 0 ? Status::ok() : Status(Errc::kIoError, "write failed");
  owned_                = false;
  const std::string tmp = target_ + ".partial";
  const bool written    = std::ferror(file_) == 0;
  bool ok               = std::fclose(file_) == 0 && written;
  if (!in_place_) ok = ok && std::rename(tmp.c_str(), target_.c_str()) == 0;
  file_ = stdout;
  if (!ok) {
    if (!in_place_) std::remove(tmp.c_str());
    return Status(Errc::kIoError, path_ + ": write failed");
  }
  return Status::ok();
}

}  // namespace warpath::cli
