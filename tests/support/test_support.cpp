#include "support/test_support.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <system_error>

namespace warpath::testing {

namespace fs = std::filesystem;

namespace {
std::string source_dir() {
  if (const char* src = std::getenv("WARPATH_SOURCE_DIR"); src && *src) return src;
  return WARPATH_TEST_SOURCE_DIR;
}
}  // namespace

std::string data_dir() {
  if (const char* env = std::getenv("WARPATH_DATA"); env && *env) return env;
  return WARPATH_TEST_DATA_DIR;
}

std::string data_path(const std::string& relative) { return data_dir() + "/" + relative; }

std::string golden_path(const std::string& relative) {
  return source_dir() + "/tests/golden/" + relative;
}

bool have_data() { return fs::is_directory(data_dir()); }

/// The directories temp_dir() made, removed when the test program exits (set
/// WARPATH_KEEP_TEST_DIRS to keep them for a look).
struct TempDirs {
  std::mutex mutex;
  std::vector<std::string> dirs;
  ~TempDirs() {
    if (std::getenv("WARPATH_KEEP_TEST_DIRS")) return;
    std::error_code ec;
    for (const auto& d : dirs) fs::remove_all(d, ec);
  }
};
TempDirs& temp_dirs() {
  static TempDirs t;
  return t;
}

std::string temp_dir() {
  std::string templ = (fs::temp_directory_path() / "warpath-test-XXXXXX").string();
  char* made        = mkdtemp(templ.data());
  if (!made) return fs::temp_directory_path().string();
  TempDirs& t = temp_dirs();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.dirs.emplace_back(made);
  return made;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

const std::vector<uint32_t>& burst_sizes() {
  static const std::vector<uint32_t> sizes = {0, 1, 2, 31, 32, 33, 63, 64, 65, 255, 256, 257, 4096};
  return sizes;
}

}  // namespace warpath::testing
