// src/core/status.cpp: names of error codes and the log form of a Status.
#include "warpath/core/status.hpp"

namespace warpath {

std::string_view errc_name(Errc code) noexcept {
  switch (code) {
    case Errc::kOk:
      return "ok";
    case Errc::kInvalidArgument:
      return "invalid_argument";
    case Errc::kOutOfMemory:
      return "out_of_memory";
    case Errc::kCapacity:
      return "capacity";
    case Errc::kNotSupported:
      return "not_supported";
    case Errc::kNotBuilt:
      return "not_built";
    case Errc::kCudaError:
      return "cuda_error";
    case Errc::kIoError:
      return "io_error";
    case Errc::kParseError:
      return "parse_error";
    case Errc::kNotFound:
      return "not_found";
  }
  return "unknown";
}

std::string Status::to_string() const {
  std::string out(errc_name(code_));
  // A bare success has no message, so it prints as "ok" rather than "ok: ".
  if (message_.empty()) return out;
  out += ": ";
  out += message_;
  return out;
}

}  // namespace warpath
