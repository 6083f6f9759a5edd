#include "output_file.hpp"

#include <cerrno>
#include <cstring>

namespace warpath::cli {

OutputFile::~OutputFile() {
  if (owned_) {
    std::fclose(file_);
    std::remove((path_ + ".partial").c_str());
  }
}

Status OutputFile::open() {
  if (path_.empty()) return Status::ok();
  file_ = std::fopen((path_ + ".partial").c_str(), "w");
  if (!file_) {
    file_ = stdout;
    return Status(Errc::kIoError, path_ + ": cannot create: " + std::strerror(errno));
  }
  owned_ = true;
  return Status::ok();
}

Status OutputFile::commit() {
  if (!owned_)
    return std::fflush(file_) == 0 ? Status::ok() : Status(Errc::kIoError, "write failed");
  owned_                = false;
  const std::string tmp = path_ + ".partial";
  const bool ok         = std::fclose(file_) == 0 && std::rename(tmp.c_str(), path_.c_str()) == 0;
  file_                 = stdout;
  if (!ok) {
    std::remove(tmp.c_str());
    return Status(Errc::kIoError, path_ + ": write failed");
  }
  return Status::ok();
}

}  // namespace warpath::cli
