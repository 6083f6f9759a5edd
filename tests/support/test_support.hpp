// tests/support/test_support.hpp: paths and helpers shared by the C++ tests.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace warpath::testing {

/// ../shared/data, or $WARPATH_DATA.
std::string data_dir();
/// Path of a file under the data directory.
std::string data_path(const std::string& relative);
/// Path of a file under tests/golden/.
std::string golden_path(const std::string& relative);
/// True when the data directory exists (tests that need it are skipped otherwise).
bool have_data();
/// A fresh temporary directory for one test.
std::string temp_dir();
/// Whole file as bytes.
std::vector<uint8_t> read_bytes(const std::string& path);
/// Writes bytes to a file.
void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes);
/// The burst sizes every differential test runs: 0, 1, lane edges and large.
const std::vector<uint32_t>& burst_sizes();

}  // namespace warpath::testing
