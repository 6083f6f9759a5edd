// tools/warpath/output_file.hpp: a command's --out file, written through "<path>.partial" and
// renamed when complete, so a failed run leaves no partial file behind. An empty path means
// standard output. A symbolic link is written through (the file it names is replaced, the link
// stays); a path that exists and is not a regular file (/dev/null, a FIFO), or names an open
// descriptor (/dev/stdout, /proc/self/fd/N, or the file standard output goes to), or has
// other hard links, is written in place, never renamed over.
#pragma once
#include <cstdio>
#include <string>
#include <system_error>
#include <vector>

#include "warpath/core/status.hpp"

namespace warpath::cli {

class OutputFile {
 public:
  explicit OutputFile(std::string path) : path_(std::move(path)) {}
  OutputFile(const OutputFile&)            = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  /// Creates the partial file (kIoError naming the path when it cannot). kInvalidArgument when
  /// the path is one of `inputs` under any spelling (io::same_file): writing would destroy it.
  Status open(const std::vector<std::string>& inputs = {});
  std::FILE* get() const { return file_; }
  /// Closes and renames; kIoError (and nothing left behind) when that fails.
  Status commit();
  /// Runs `body(get())`, turning a failed write that fmt reports by throwing (a full disk)
  /// into kIoError "PATH: write failed: REASON".
  template <class Body>
  Status guarded(Body&& body) {
    try {
      body(file_);
      return Status::ok();
    } catch (const std::system_error& e) {
      return Status(Errc::kIoError, (path_.empty() ? std::string("standard output") : path_) +
                                        ": write failed: " + e.code().message());
    }
  }

 private:
  std::string path_;
  std::string target_;  ///< the file written: path_, or what its link names
  std::FILE* file_ = stdout;
  bool owned_      = false;
  bool in_place_   = false;  ///< no .partial: not a plain single-named file (see the header)
};

}  // namespace warpath::cli
