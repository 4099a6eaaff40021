// src/discover/discover.cc
#include "ncclpm/discover/discover.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include <re2/re2.h>

#include "ncclpm/read/pickle.h"
#include "ncclpm/util/text.h"

namespace fs = std::filesystem;

namespace ncclpm::discover {
namespace {

constexpr size_t kHeadBytes = 64 * 1024;

// What identifies a file's content for "ingesting twice adds nothing": its
// relative path, size, first and last 64 KiB (`raw_head`: the first, as read).
std::string fingerprint(int fd, const std::string& rel_path, int64_t size, std::string_view raw_head) {
  uLong h = crc32(0L, Z_NULL, 0);
  h = crc32(h, reinterpret_cast<const Bytef*>(rel_path.data()), static_cast<uInt>(rel_path.size()));
  h = crc32(h, reinterpret_cast<const Bytef*>(raw_head.data()), static_cast<uInt>(raw_head.size()));
  if (fd >= 0 && size > static_cast<int64_t>(kHeadBytes)) {
    std::string tail(kHeadBytes, '\0');
    ssize_t n = ::pread(fd, tail.data(), tail.size(), size - static_cast<off_t>(kHeadBytes));
    if (n > 0) h = crc32(h, reinterpret_cast<const Bytef*>(tail.data()), static_cast<uInt>(n));
  }
  char out[48];
  std::snprintf(out, sizeof out, "%lld-%08lx", static_cast<long long>(size), h);
  return out;
}

// First bytes of the file, decompressed when needed, so that classification
// sees what the parser will see; and the file's fingerprint.
Result<std::string> read_head(const fs::path& path, DiscoveredFile& f) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error::at(path.string(), "cannot open: " + util::errno_text(errno));
  std::string raw(static_cast<size_t>(std::min<int64_t>(f.size_bytes, kHeadBytes)), '\0');
  ssize_t n = raw.empty() ? 0 : ::read(fd, raw.data(), raw.size());
  int err = errno;
  if (n >= 0) {
    raw.resize(static_cast<size_t>(n));
    f.fingerprint = fingerprint(fd, f.rel_path, f.size_bytes, raw);
  }
  ::close(fd);
  if (n < 0) return Error::at(path.string(), "cannot read: " + util::errno_text(err));
  f.compression = read::sniff_compression(raw);
  if (f.compression == read::Compression::kGzip) {
    gzFile gz = gzopen(path.c_str(), "rb");
    if (gz == nullptr) return Error::at(path.string(), "cannot open gzip stream");
    std::string out(kHeadBytes, '\0');
    int m = gzread(gz, out.data(), static_cast<unsigned>(out.size()));
    gzclose(gz);
    out.resize(m > 0 ? static_cast<size_t>(m) : 0);
    if (out.empty() && !raw.empty())
      return Error::at(path.string(), "gzip stream decodes to nothing (truncated or damaged)");
    return out;
  }
  if (f.compression == read::Compression::kZstd) {
    std::string out(kHeadBytes, '\0');
    ZSTD_DCtx* ctx = ZSTD_createDCtx();
    ZSTD_inBuffer in{raw.data(), raw.size(), 0};
    ZSTD_outBuffer o{out.data(), out.size(), 0};
    while (in.pos < in.size && o.pos < o.size) {
      size_t rc = ZSTD_decompressStream(ctx, &o, &in);
      if (ZSTD_isError(rc) || rc == 0) break;
    }
    ZSTD_freeDCtx(ctx);
    out.resize(o.pos);
    if (out.empty() && !raw.empty())
      return Error::at(path.string(), "zstd stream decodes to nothing (truncated or damaged)");
    return out;
  }
  return raw;
}

// Text logs may carry a few NUL bytes (a crashed writer's padding) and some
// invalid UTF-8; binary data is full of control bytes and invalid sequences.
bool looks_binary(std::string_view head) {
  if (head.empty()) return false;
  size_t control = 0, invalid = 0;
  for (size_t i = 0; i < head.size(); ++i) {
    auto c = static_cast<unsigned char>(head[i]);
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != 0x1b && c != '\f' && c != '\b') ++control;
    if (c >= 0x80) {
      // Count the bytes that start no valid UTF-8 sequence.
      std::string_view rest = head.substr(i, 4);
      size_t n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
      bool ok = n > 0 && rest.size() >= n && util::is_valid_utf8(rest.substr(0, n));
      if (ok) {
        i += n - 1;
      } else if (rest.size() >= 4 || n == 0) {
        ++invalid;
      }
    }
  }
  return control * 20 > head.size() || invalid * 5 > head.size();
}

std::optional<int> number_after(const std::string& s, const RE2& re) {
  int n = 0;
  if (!RE2::PartialMatch(s, re, &n)) return std::nullopt;
  return n;
}

// What a symbolic link that is not a regular file is: a loop, a dangling
// link, or a directory (not followed, so that links can never loop the walk).
std::optional<Error> symlink_problem(const fs::path& link) {
  std::error_code ec;
  fs::file_status target = fs::status(link, ec);
  if (ec == std::errc::too_many_symbolic_link_levels)
    return Error::at(link.string(), "symbolic link loop: it never reaches a file");
  if (ec || !fs::exists(target)) return Error::at(link.string(), "broken symbolic link: its target does not exist");
  if (fs::is_directory(target))
    return Error::at(link.string(), "symbolic link to a directory, not followed (links can loop)",
                     "give its target as a path of its own to read it");
  return std::nullopt;
}

}  // namespace

const char* file_kind_name(FileKind k) {
  switch (k) {
    case FileKind::kTextLog: return "text";
    case FileKind::kElasticError: return "elastic_error_json";
    case FileKind::kFlightRecorder: return "flight_recorder_json";
    case FileKind::kFlightRecorderPickle: return "flight_recorder_pickle";
    case FileKind::kJsonLines: return "json_lines";
    case FileKind::kBinary: return "binary";
    case FileKind::kEmpty: return "empty";
    case FileKind::kUnreadable: return "unreadable";
  }
  return "text";
}

PathHints hints_from_path(const fs::path& rel_path) {
  // Once per file, but a 4096-rank job has thousands: RE2, not std::regex.
  static const RE2 kAttempt(R"((?:^|/)attempt_(\d{1,9})/(\d{1,9})/[^/]+$)");
  static const RE2 kRank(R"((?i)(?:^|[^a-z])rank[_-]?(\d{1,9})(?:[^0-9/][^/]*)?$)");
  PathHints h;
  std::string s = rel_path.generic_string();
  int attempt = 0, local_rank = 0;
  if (RE2::PartialMatch(s, kAttempt, &attempt, &local_rank)) {
    h.attempt = attempt;
    h.local_rank = local_rank;
  }
  h.rank = number_after(rel_path.filename().string(), kRank);
  std::string name = rel_path.filename().string();
  if (name.find("stdout") != std::string::npos) h.stream = "stdout";
  if (name.find("stderr") != std::string::npos) h.stream = "stderr";
  return h;
}

FileKind classify(const std::string& rel_path, std::string_view head, std::string* skip_reason) {
  if (head.empty()) return FileKind::kEmpty;
  std::string name = fs::path(rel_path).filename().string();
  if (read::looks_like_pickle(head)) {
    // PyTorch's default dump: a pickled dict with these keys near its start.
    if (head.find("pg_config") != std::string_view::npos || head.find("entries") != std::string_view::npos ||
        name.find("nccl_trace_rank_") != std::string::npos)
      return FileKind::kFlightRecorderPickle;
    *skip_reason = "binary (a Python pickle, not a Flight Recorder dump)";
    return FileKind::kBinary;
  }
  if (looks_binary(head)) {
    *skip_reason = "binary data, not a text log";
    return FileKind::kBinary;
  }
  std::string_view body = util::trim_left(head);
  if (!body.empty() && body[0] == '{') {
    bool one_document_per_line = false;
    size_t nl = body.find('\n');
    if (nl != std::string_view::npos) {
      std::string_view next = util::trim_left(body.substr(nl + 1));
      one_document_per_line = !next.empty() && next[0] == '{' &&
                              util::trim(body.substr(0, nl)).back() == '}';
    }
    if (name.find("error") != std::string::npos && name.ends_with(".json") &&
        body.find("\"message\"") != std::string_view::npos)
      return FileKind::kElasticError;
    if (body.find("\"entries\"") != std::string_view::npos ||
        body.find("\"pg_config\"") != std::string_view::npos ||
        name.find("nccl_trace_rank_") != std::string::npos)
      return FileKind::kFlightRecorder;
    if (one_document_per_line) return FileKind::kJsonLines;
  }
  return FileKind::kTextLog;
}

Result<Discovery> discover(const std::vector<fs::path>& paths) {
  Discovery out;
  auto add_file = [&](const fs::path& path, const fs::path& root) {
    DiscoveredFile f;
    f.path = path;
    // The directory walk yields root/..., so the relative path is lexical:
    // no system call per file.
    fs::path rel = root == path ? path.filename() : path.lexically_relative(root);
    f.rel_path = rel.empty() ? path.string() : rel.generic_string();
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      out.problems.push_back(Error::at(path.string(), "cannot stat: " + util::errno_text(errno)));
      return;
    }
    f.size_bytes = st.st_size;
    f.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    Result<std::string> head = read_head(path, f);
    if (!head) {
      // Kept with its problem, so that the database says what was not read.
      out.problems.push_back(head.error());
      f.kind = FileKind::kUnreadable;
      f.skip_reason = head.error().message;
      if (f.fingerprint.empty()) f.fingerprint = fingerprint(-1, f.rel_path, f.size_bytes, "unreadable");
      f.hints = hints_from_path(f.rel_path);
      out.files.push_back(std::move(f));
      return;
    }
    f.kind = classify(f.rel_path, *head, &f.skip_reason);
    f.hints = hints_from_path(f.rel_path);
    out.files.push_back(std::move(f));
  };

  for (const fs::path& p : paths) {
    std::error_code ec;
    fs::file_status st = fs::status(p, ec);
    if (ec || !fs::exists(st)) {
      return Error::at(p.string(), "no such file or directory",
                       "give the directory the job's logs were collected in");
    }
    if (fs::is_regular_file(st)) {
      add_file(p, p);
      continue;
    }
    if (!fs::is_directory(st)) return Error::at(p.string(), "not a regular file or directory");
    fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec);
    if (ec) return Error::at(p.string(), "cannot list directory: " + ec.message());
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) {
        out.problems.push_back(Error::at(it->path().string(), "cannot list: " + ec.message()));
        ec.clear();
        continue;
      }
      std::error_code fec;
      if (it->is_regular_file(fec)) {
        add_file(it->path(), p);
      } else if (it->is_symlink(fec)) {
        if (std::optional<Error> e = symlink_problem(it->path())) out.problems.push_back(std::move(*e));
      }
    }
  }
  std::sort(out.files.begin(), out.files.end(),
            [](const DiscoveredFile& a, const DiscoveredFile& b) { return a.path < b.path; });
  return out;
}

}  // namespace ncclpm::discover
