// src/io/read_text_file.cpp: whole text files, plain, gzip (zlib) or xz (liblzma).
//
// The compressed form is chosen by the file name (.gz, .xz), not by sniffing, so a file named
// .gz that is not gzip data is an error instead of being read as plain text.
#include <lzma.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <system_error>

#include "warpath/io/text_file.hpp"

namespace warpath::io {
namespace {

constexpr size_t kChunk = size_t{1} << 18;

Status io_error(const std::string& path, std::string_view reason) {
  std::string message = path;
  message += ": ";
  message.append(reason);
  return Status(Errc::kIoError, std::move(message));
}

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Checks that `path` names something readable as a file, for a clear message when it is not.
Status check_path(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return io_error(path, ec && ec != std::errc::no_such_file_or_directory
                              ? "cannot open: " + ec.message()
                              : std::string("cannot open: no such file"));
  }
  if (std::filesystem::is_directory(status)) return io_error(path, "cannot read: is a directory");
  return Status::ok();
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

Status too_big(const std::string& path) {
  return Status(Errc::kCapacity, path + ": more than " + std::to_string(kMaxTextBytes >> 20) +
                                     " MiB of text (after decompression); not read any further");
}

Result<std::string> read_plain(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) return io_error(path, std::string("cannot open: ") + std::strerror(errno));
  std::string text;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxTextBytes) return too_big(path);
  if (!ec) text.reserve(static_cast<size_t>(size));
  char buf[1 << 16];
  while (true) {
    const size_t got = std::fread(buf, 1, sizeof(buf), file.get());
    text.append(buf, got);
    if (text.size() > kMaxTextBytes) return too_big(path);  // a pipe or a growing file
    if (got < sizeof(buf)) break;
  }
  if (std::ferror(file.get())) {
    return io_error(path, std::string("read failed: ") + std::strerror(errno));
  }
  return text;
}

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

Result<std::string> read_gzip(const std::string& path) {
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
  if (!file) return io_error(path, std::string("cannot open: ") + std::strerror(errno));
  gzbuffer(file.get(), static_cast<unsigned>(kChunk));
  std::string text;
  std::unique_ptr<char[]> buf(new char[kChunk]);
  bool checked_format = false;
  while (true) {
    const int got = gzread(file.get(), buf.get(), static_cast<unsigned>(kChunk));
    if (!checked_format) {
      // gzread passes non-gzip input through unchanged; a .gz file must be gzip data.
      if (gzdirect(file.get())) return io_error(path, "corrupt gzip data: not in gzip format");
      checked_format = true;
    }
    if (got < 0) break;
    text.append(buf.get(), static_cast<size_t>(got));
    if (text.size() > kMaxTextBytes) return too_big(path);
    if (got == 0) break;
  }
  int err            = Z_OK;
  const char* reason = gzerror(file.get(), &err);
  if (err == Z_BUF_ERROR) return io_error(path, "corrupt gzip data: truncated");
  if (err != Z_OK) {
    return io_error(path, std::string("corrupt gzip data: ") + (reason ? reason : "unknown"));
  }
  return text;
}

std::string_view lzma_reason(lzma_ret ret) {
  switch (ret) {
    case LZMA_MEM_ERROR:
      return "out of memory";
    case LZMA_FORMAT_ERROR:
      return "corrupt xz data: not in xz format";
    case LZMA_OPTIONS_ERROR:
      return "corrupt xz data: unsupported options";
    case LZMA_DATA_ERROR:
      return "corrupt xz data";
    case LZMA_BUF_ERROR:
      return "corrupt xz data: truncated";
    default:
      return "xz decoder error";
  }
}

Result<std::string> read_xz(const std::string& path) {
  auto compressed = read_plain(path);
  if (!compressed.is_ok()) return compressed.status();
  const std::string& in = compressed.value();

  lzma_stream strm = LZMA_STREAM_INIT;
  lzma_ret ret     = lzma_stream_decoder(&strm, UINT64_MAX, LZMA_CONCATENATED);
  if (ret != LZMA_OK) return io_error(path, lzma_reason(ret));
  const std::unique_ptr<lzma_stream, void (*)(lzma_stream*)> guard(&strm, lzma_end);

  std::string text;
  text.reserve(std::min<size_t>(in.size() * 4, kMaxTextBytes));
  std::unique_ptr<uint8_t[]> buf(new uint8_t[kChunk]);
  strm.next_in  = reinterpret_cast<const uint8_t*>(in.data());
  strm.avail_in = in.size();
  while (true) {
    strm.next_out  = buf.get();
    strm.avail_out = kChunk;
    // All input is present, so LZMA_FINISH: a stream that ends early gives LZMA_BUF_ERROR.
    ret = lzma_code(&strm, LZMA_FINISH);
    text.append(reinterpret_cast<const char*>(buf.get()), kChunk - strm.avail_out);
    if (text.size() > kMaxTextBytes) return too_big(path);
    if (ret == LZMA_STREAM_END) break;
    if (ret != LZMA_OK) return io_error(path, lzma_reason(ret));
  }
  return text;
}

}  // namespace

Result<std::string> read_text_file(const std::string& path) {
  try {
    WARPATH_TRY(check_path(path));
    if (ends_with(path, ".gz")) return read_gzip(path);
    if (ends_with(path, ".xz")) return read_xz(path);
    return read_plain(path);
  } catch (const std::bad_alloc&) {
    return Status(Errc::kOutOfMemory, path + ": out of memory while reading");
  }
}

Status check_toml_ascii(std::string_view text, std::string_view name) {
  uint64_t line = 1;
  for (const char c : text) {
    if (c == '\n') ++line;
    if (static_cast<unsigned char>(c) >= 0x80)
      return parse_error(name, line,
                         "non-ASCII character: configs are ASCII (in a \"string\" write it as a "
                         "\\uXXXX escape; the TOML library mishandles raw ones)");
  }
  return Status::ok();
}

}  // namespace warpath::io
