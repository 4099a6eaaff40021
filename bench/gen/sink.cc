// bench/gen/sink.cc
#include "gen/sink.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ncclpm::bench {
namespace {

constexpr size_t kBufferBytes = 1 << 20;

std::runtime_error fail(const std::string& path, const std::string& what) {
  return std::runtime_error(path + ": " + what);
}

}  // namespace

struct Sink::Codec {
  z_stream z{};
  bool z_open = false;
  ZSTD_CCtx* zstd = nullptr;
  ~Codec() {
    if (z_open) deflateEnd(&z);
    if (zstd != nullptr) ZSTD_freeCCtx(zstd);
  }
};

const char* compress_suffix(Compress c) {
  switch (c) {
    case Compress::kGzip:
      return ".gz";
    case Compress::kZstd:
      return ".zst";
    case Compress::kNone:
      break;
  }
  return "";
}

Sink::Sink(const std::filesystem::path& path, Compress c, int level)
    : path_(path.string() + compress_suffix(c)), compress_(c), codec_(std::make_unique<Codec>()) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) throw fail(path.parent_path().string(), "cannot create folder: " + ec.message());
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw fail(path_, std::string("cannot create: ") + std::strerror(errno));
  buf_.reserve(kBufferBytes + 64 * 1024);
  if (c == Compress::kGzip) {
    // windowBits 15 + 16: a gzip header and trailer around the deflate stream.
    if (deflateInit2(&codec_->z, level < 0 ? 1 : level, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
      throw fail(path_, "cannot start gzip stream");
    codec_->z_open = true;
    zbuf_.resize(kBufferBytes);
  } else if (c == Compress::kZstd) {
    codec_->zstd = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(codec_->zstd, ZSTD_c_compressionLevel, level < 0 ? 3 : level);
    zbuf_.resize(ZSTD_CStreamOutSize());
  }
}

Sink::~Sink() {
  if (fd_ >= 0) ::close(fd_);
}

void Sink::write(std::string_view text) {
  if (text.empty()) return;
  text_bytes_ += text.size();
  newlines_ += static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
  last_ = text.back();
  buf_.append(text);
  if (buf_.size() >= kBufferBytes) flush_buffer(false);
}

void Sink::write_raw(const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd_, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw fail(path_, std::string("cannot write: ") + std::strerror(errno));
    }
    data += w;
    n -= static_cast<size_t>(w);
    disk_bytes_ += static_cast<uint64_t>(w);
  }
}

void Sink::flush_buffer(bool last) {
  switch (compress_) {
    case Compress::kNone:
      write_raw(buf_.data(), buf_.size());
      break;
    case Compress::kGzip: {
      z_stream& z = codec_->z;
      z.next_in = reinterpret_cast<Bytef*>(buf_.data());
      z.avail_in = static_cast<uInt>(buf_.size());
      int rc;
      do {
        z.next_out = reinterpret_cast<Bytef*>(zbuf_.data());
        z.avail_out = static_cast<uInt>(zbuf_.size());
        rc = deflate(&z, last ? Z_FINISH : Z_NO_FLUSH);
        if (rc == Z_STREAM_ERROR) throw fail(path_, "gzip stream error");
        write_raw(zbuf_.data(), zbuf_.size() - z.avail_out);
      } while (z.avail_out == 0 || (last && rc != Z_STREAM_END));
      break;
    }
    case Compress::kZstd: {
      ZSTD_inBuffer in{buf_.data(), buf_.size(), 0};
      bool done = false;
      while (!done) {
        ZSTD_outBuffer out{zbuf_.data(), zbuf_.size(), 0};
        size_t rem =
            ZSTD_compressStream2(codec_->zstd, &out, &in, last ? ZSTD_e_end : ZSTD_e_continue);
        if (ZSTD_isError(rem)) throw fail(path_, std::string("zstd: ") + ZSTD_getErrorName(rem));
        write_raw(zbuf_.data(), out.pos);
        done = last ? rem == 0 : in.pos == in.size;
      }
      break;
    }
  }
  buf_.clear();
}

void Sink::close(SinkCounts& totals) {
  flush_buffer(true);
  if (::close(fd_) != 0) {
    fd_ = -1;
    throw fail(path_, std::string("cannot close: ") + std::strerror(errno));
  }
  fd_ = -1;
  totals.files += 1;
  totals.text_bytes += text_bytes_;
  totals.disk_bytes += disk_bytes_;
  totals.lines += newlines_ + (text_bytes_ > 0 && last_ != '\n' ? 1 : 0);
}

}  // namespace ncclpm::bench
