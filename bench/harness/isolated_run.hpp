// bench/harness/isolated_run.hpp: running one engine's benchmark in a child process.
//
// A benchmark that builds and times many engines one after another must survive the one that
// crashes, hangs or runs out of memory: each runs in a forked child with a deadline, sends
// back a JSON head (its row) and a binary payload (its answers, for the cross-check), and the
// parent reports a child that crashed (with its signal), ran past the deadline (killed) or
// ended without a result, and goes on. Where fork or pipe fail, the work runs in-process.
// (A process that has used CUDA cannot fork a child that uses it: run those in-process.)
// Also here: the peak resident memory a build adds (VmHWM), read from /proc.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace warpath::bench {

struct IsolatedResult {
  bool ok = false;           ///< the child (or the in-process run) delivered head and payload
  bool in_process = false;   ///< fork or pipe failed: the work ran here
  bool timed_out  = false;   ///< the child was killed at the deadline
  nlohmann::json head;       ///< what the work wrote
  std::vector<uint8_t> payload;
  std::string why;           ///< when !ok: "gave up after N s", "crashed (signal 11: ...)", ...
};

/// Runs work(head, payload) in a child process and waits at most `timeout` for its result (the
/// child is killed past it). The payload is at most `max_payload` bytes.
IsolatedResult run_isolated(
    const std::function<void(nlohmann::json& head, std::vector<uint8_t>& payload)>& work,
    std::chrono::seconds timeout, uint64_t max_payload = uint64_t(1) << 32);

/// A field of a /proc file in bytes ("MemAvailable" of /proc/meminfo, "VmHWM" of
/// /proc/self/status; their values are in kB); 0 when absent.
uint64_t proc_kb_field(const char* path, const char* field);

/// Peak RSS growth of what runs between construction and growth(): VmHWM is reset first
/// (0 where the kernel refuses).
class PeakRss {
 public:
  PeakRss();
  uint64_t growth() const;

 private:
  bool ok_         = false;
  uint64_t before_ = 0;
};

}  // namespace warpath::bench
