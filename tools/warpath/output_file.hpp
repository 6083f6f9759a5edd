// tools/warpath/output_file.hpp: a command's --out file, written through "<path>.partial" and
// renamed when complete, so a failed run leaves no partial file behind. An empty path means
// standard output.
#pragma once
#include <cstdio>
#include <string>

#include "warpath/core/status.hpp"

namespace warpath::cli {

class OutputFile {
 public:
  explicit OutputFile(std::string path) : path_(std::move(path)) {}
  OutputFile(const OutputFile&)            = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  /// Creates the partial file (kIoError naming the path when it cannot).
  Status open();
  std::FILE* get() const { return file_; }
  /// Closes and renames; kIoError (and nothing left behind) when that fails.
  Status commit();

 private:
  std::string path_;
  std::FILE* file_ = stdout;
  bool owned_      = false;
};

}  // namespace warpath::cli
