// src/read/byte_source.cc
#include "byte_source.h"

#include "ncclpm/util/text.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace ncclpm::read {
namespace {

class MappedSource final : public ByteSource {
 public:
  MappedSource(void* data, size_t size) : data_(data), size_(size) {}
  ~MappedSource() override {
    if (data_ != nullptr) munmap(data_, size_);
  }
  bool is_mapped() const override { return true; }
  std::string_view mapped() const override {
    return {static_cast<const char*>(data_), size_};
  }
  size_t read(std::string&, size_t) override { return 0; }
  const std::optional<Error>& error() const override { return error_; }
  // A page of a read-only private file map dropped with MADV_DONTNEED is read
  // from the file again if touched: dropping what was read bounds the
  // resident memory of a 1 GB log to what is being parsed.
  void release_before(size_t offset) override {
    static const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t end = std::min(offset, size_) / kPage * kPage;
    if (end <= released_) return;
    madvise(static_cast<char*>(data_) + released_, end - released_, MADV_DONTNEED);
    released_ = end;
  }

 private:
  void* data_;
  size_t size_;
  size_t released_ = 0;
  std::optional<Error> error_;
};

class GzipSource final : public ByteSource {
 public:
  GzipSource(gzFile f, std::string path) : file_(f), path_(std::move(path)) {}
  ~GzipSource() override { gzclose(file_); }
  size_t read(std::string& out, size_t max) override {
    if (done_) return 0;
    size_t old = out.size();
    out.resize(old + max);
    int n = gzread(file_, out.data() + old, static_cast<unsigned>(max));
    if (n <= 0) {
      out.resize(old);
      done_ = true;
      int code = 0;
      const char* msg = gzerror(file_, &code);
      if (n < 0 || code != Z_OK) {
        // zlib prefixes its message with "<fd:N>: "; the path is already in `where`.
        std::string text = msg != nullptr ? msg : "unknown error";
        if (size_t colon = text.rfind(": "); colon != std::string::npos) text = text.substr(colon + 2);
        error_ = Error::at(path_, "gzip stream is damaged or truncated: " + text,
                           "the lines before the damage were kept");
      }
      return 0;
    }
    out.resize(old + static_cast<size_t>(n));
    return static_cast<size_t>(n);
  }
  const std::optional<Error>& error() const override { return error_; }

 private:
  gzFile file_;
  std::string path_;
  bool done_ = false;
  std::optional<Error> error_;
};

class ZstdSource final : public ByteSource {
 public:
  ZstdSource(FILE* f, std::string path)
      : file_(f), path_(std::move(path)), dctx_(ZSTD_createDCtx()), in_buf_(ZSTD_DStreamInSize()) {}
  ~ZstdSource() override {
    ZSTD_freeDCtx(dctx_);
    std::fclose(file_);
  }
  size_t read(std::string& out, size_t max) override {
    size_t produced = 0;
    while (produced == 0 && !done_) {
      if (in_.pos == in_.size) {
        size_t n = std::fread(in_buf_.data(), 1, in_buf_.size(), file_);
        if (n == 0) {
          done_ = true;
          // A frame left unfinished means the file was cut short.
          if (last_hint_ != 0) {
            error_ = Error::at(path_, "zstd stream is truncated",
                               "the lines before the cut were kept");
          }
          break;
        }
        in_ = {in_buf_.data(), n, 0};
      }
      size_t old = out.size();
      out.resize(old + max);
      ZSTD_outBuffer o{out.data() + old, max, 0};
      size_t rc = ZSTD_decompressStream(dctx_, &o, &in_);
      out.resize(old + o.pos);
      produced = o.pos;
      if (ZSTD_isError(rc)) {
        done_ = true;
        error_ = Error::at(path_, std::string("zstd stream is damaged: ") + ZSTD_getErrorName(rc),
                           "the lines before the damage were kept");
        break;
      }
      last_hint_ = rc;
    }
    return produced;
  }
  const std::optional<Error>& error() const override { return error_; }

 private:
  FILE* file_;
  std::string path_;
  ZSTD_DCtx* dctx_;
  std::vector<char> in_buf_;
  ZSTD_inBuffer in_{nullptr, 0, 0};
  size_t last_hint_ = 0;
  bool done_ = false;
  std::optional<Error> error_;
};

}  // namespace

Result<std::unique_ptr<ByteSource>> open_mapped(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error::at(path.string(), "cannot open: " + util::errno_text(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Error::at(path.string(), "cannot stat: " + util::errno_text(err));
  }
  size_t size = static_cast<size_t>(st.st_size);
  void* data = nullptr;
  if (size > 0) {
    data = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return Error::at(path.string(), "cannot map into memory: " + util::errno_text(err));
    }
    madvise(data, size, MADV_SEQUENTIAL);
  }
  ::close(fd);
  return std::unique_ptr<ByteSource>(new MappedSource(data, size));
}

Result<std::unique_ptr<ByteSource>> open_gzip(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error::at(path.string(), "cannot open: " + util::errno_text(errno));
  gzFile f = gzdopen(fd, "rb");
  if (f == nullptr) {
    ::close(fd);
    return Error::at(path.string(), "cannot start gzip decompression");
  }
  gzbuffer(f, 1 << 17);
  return std::unique_ptr<ByteSource>(new GzipSource(f, path.string()));
}

Result<std::unique_ptr<ByteSource>> open_zstd(const std::filesystem::path& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Error::at(path.string(), "cannot open: " + util::errno_text(errno));
  return std::unique_ptr<ByteSource>(new ZstdSource(f, path.string()));
}

}  // namespace ncclpm::read
