// src/frame/collectors.cc
#include "collectors.h"

#include <algorithm>

#include "chars.h"
#include "ncclpm/frame/timestamp.h"

namespace ncclpm::frame {
namespace {

size_t host_token(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && i < 128 && is_host_char(s[i])) ++i;
  return i;
}

// What a producer's own prefix starts with: a bracketed tag ("[rank3]:",
// "[E909 ...", "[default0]:", "[2024-...") or NCCL's "host:pid:tid [".
bool producer_starts(std::string_view s) {
  if (s.size() > 2 && s[0] == '[' && (is_alpha(s[1]) || is_digit(s[1]))) return true;
  size_t i = host_token(s);
  if (i == 0 || i >= s.size() || s[i] != ':') return false;
  size_t j = i + 1, d = j;
  while (j < s.size() && is_digit(s[j])) ++j;
  if (j == d || j >= s.size() || s[j] != ':') return false;
  size_t k = ++j;
  while (j < s.size() && is_digit(s[j])) ++j;
  return j > k && j + 1 < s.size() && s[j] == ' ' && s[j + 1] == '[';
}

// Whether a date-time ends in a zone: "Z", "+00:00" or "+0000".
bool zone_follows_clock(std::string_view stamp) {
  if (stamp.ends_with('Z')) return true;
  size_t sign = stamp.find_last_of("+-");
  return sign != std::string_view::npos && sign > 16 && stamp.size() - sign >= 5;
}

// "2024-05-01T10:11:12.123456789Z" or "2024-05-01 10:11:12,123" and the
// space after it; bytes used or 0.
size_t iso_time(std::string_view s, Timestamp& ts) {
  size_t n = parse_date_time(s, ts);
  if (n == 0) return 0;
  if (n < s.size() && s[n] == 'Z') ++n;
  // The zone, glued on or after a space ("... 15:39:31.043 +08:00", as
  // Python's %z and many collectors print it).
  size_t z = n + (n < s.size() && s[n] == ' ' ? 1 : 0);
  if (z + 5 < s.size() && (s[z] == '+' || s[z] == '-') && is_digit(s[z + 1]) && is_digit(s[z + 2])) {
    size_t len = s[z + 3] == ':' ? 6 : 5;
    if (is_digit(s[z + len - 1]) && is_digit(s[z + len - 2])) n = z + len;
  }
  return n < s.size() && s[n] == ' ' ? n + 1 : 0;
}

void take(std::string_view& rest, Frame& f, size_t len, std::string_view host, const Timestamp* ts) {
  if (f.host.empty() && looks_like_host(host)) f.host = host;
  if (ts != nullptr && ts->valid() && !f.ts.valid()) f.ts = *ts;
  rest.remove_prefix(len);
}

// Intel MPI's -l / -prepend-rank: "[155] " before what the rank printed; a
// runner that glues the rank on ("[15]worker-23:83:2526 [0] NCCL WARN ...",
// as posted from Horovod jobs) only before NCCL's own host:pid:tid.
bool peel_rank_label(std::string_view& rest, Frame& f) {
  size_t i = 1;
  int rank = 0;
  while (i < rest.size() && i < 8 && is_digit(rest[i])) rank = rank * 10 + (rest[i++] - '0');
  if (i == 1 || i + 1 >= rest.size() || rest[i] != ']') return false;
  size_t len = rest[i + 1] == ' ' ? i + 2 : i + 1;
  std::string_view after = rest.substr(len);
  if (!producer_starts(after) || (len == i + 1 && after.starts_with('['))) return false;
  if (f.rank < 0) f.rank = rank;
  rest.remove_prefix(len);
  return true;
}

// UCX (Open MPI, UCC): "[host:pid:thread:tid] " or "[host:pid:thread] ";
// Open MPI's own (its signal handler, its help messages): "[host:pid] ".
bool peel_ucx_host(std::string_view& rest, Frame& f) {
  // A host name, not a clock ("[12:34:56] ").
  if (rest.size() < 2 || !is_alpha(rest[1])) return false;
  size_t h = host_token(rest.substr(1));
  if (h == 0 || 1 + h >= rest.size() || rest[1 + h] != ':') return false;
  size_t i = 2 + h;
  int fields = 0;
  while (i < rest.size() && is_digit(rest[i])) {
    while (i < rest.size() && is_digit(rest[i])) ++i;
    ++fields;
    // UCX pads the pid to five columns: "[host:1    :0:381]".
    size_t pad = i;
    while (pad < rest.size() && rest[pad] == ' ') ++pad;
    if (pad < rest.size() && rest[pad] == ':') i = pad;
    if (i < rest.size() && rest[i] == ':') ++i;
  }
  if (fields < 1 || i + 1 >= rest.size() || rest[i] != ']' || rest[i + 1] != ' ') return false;
  take(rest, f, i + 2, rest.substr(1, h), nullptr);
  return true;
}

bool peel_kubectl(std::string_view& rest, Frame& f) {
  if (!rest.starts_with("[pod/")) return false;
  size_t close = rest.find("] ");
  if (close == std::string_view::npos || close > 256) return false;
  std::string_view inside = rest.substr(5, close - 5);
  take(rest, f, close + 2, inside.substr(0, inside.find('/')), nullptr);
  return true;
}

bool peel_syslog(std::string_view& rest, Frame& f) {
  static constexpr std::string_view kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
  if (rest.size() < 20 || rest[3] != ' ' || !is_digit(rest[7]) || rest[6] == ':') return false;
  size_t month = kMonths.find(rest.substr(0, 3));
  if (month == std::string_view::npos || month % 3 != 0) return false;
  size_t day_at = rest[4] == ' ' ? 5 : 4;  // "Nov  3" or "Nov 23"
  bool two_digits = is_digit(rest[day_at + 1]);
  if (!is_digit(rest[day_at]) || (!two_digits && rest[day_at + 1] != ' ')) return false;
  Timestamp ts;
  ts.month = static_cast<int>(month / 3) + 1;
  ts.day = two_digits ? (rest[day_at] - '0') * 10 + (rest[day_at + 1] - '0') : rest[day_at] - '0';
  size_t clock_at = day_at + (two_digits ? 3 : 2);
  size_t n = parse_clock(rest.substr(clock_at), ts);
  if (n == 0 || clock_at + n >= rest.size() || rest[clock_at + n] != ' ') return false;
  size_t host_at = clock_at + n + 1;
  size_t h = host_token(rest.substr(host_at));
  size_t proc_at = host_at + h + 1;
  if (h == 0 || proc_at >= rest.size() || rest[host_at + h] != ' ') return false;
  size_t colon = rest.find(": ", proc_at);
  if (colon == std::string_view::npos || colon - proc_at > 64 ||
      rest.substr(proc_at, colon - proc_at).find(' ') != std::string_view::npos)
    return false;
  take(rest, f, colon + 2, rest.substr(host_at, h), &ts);
  return true;
}

bool peel_cri(std::string_view& rest, Frame& f) {
  Timestamp ts;
  size_t n = iso_time(rest, ts);
  if (n == 0) return false;
  std::string_view after = rest.substr(n);
  for (std::string_view stream : {"stdout ", "stderr "}) {
    if (after.starts_with(stream) && after.size() > stream.size() + 1 &&
        (after[stream.size()] == 'F' || after[stream.size()] == 'P') && after[stream.size() + 1] == ' ') {
      take(rest, f, n + stream.size() + 2, {}, &ts);
      return true;
    }
  }
  // RFC 3339 with a zone ("2025-11-24T03:20:21.001125857Z "): kubectl logs
  // --timestamps and docker logs -t; no producer prints its own time so.
  bool zoned = rest[10] == 'T' && zone_follows_clock(rest.substr(0, n - 1));
  // A collector's time in front of a producer's own prefix.
  if (zoned || producer_starts(after)) {
    take(rest, f, n, {}, &ts);
    return true;
  }
  return false;
}

// A log viewer's table copied as text (AWS CloudWatch's console, SageMaker's
// job logs): "  | 2024-08-23T22:22:51.873Z | message".
bool peel_table_row(std::string_view& rest, Frame& f) {
  auto skip_spaces = [&rest](size_t i) {
    while (i < rest.size() && rest[i] == ' ') ++i;
    return i;
  };
  size_t i = skip_spaces(0);
  if (i >= rest.size() || rest[i] != '|') return false;
  i = skip_spaces(i + 1);
  Timestamp ts;
  size_t n = iso_time(rest.substr(i), ts);
  if (n == 0) return false;
  i = skip_spaces(i + n);
  if (i >= rest.size() || rest[i] != '|') return false;
  take(rest, f, i + 1 < rest.size() && rest[i + 1] == ' ' ? i + 2 : i + 1, {}, &ts);
  return true;
}

// "[stdout] " / "[stderr] ": a collector's stream tag.
bool peel_stream_tag(std::string_view& rest) {
  for (std::string_view tag : {"[stdout] ", "[stderr] "}) {
    if (rest.starts_with(tag)) {
      rest.remove_prefix(tag.size());
      return true;
    }
  }
  return false;
}

// "name  | ", "name [stderr] ", or a bare host/pod name in front of a
// producer prefix or a date.
bool peel_name_tag(std::string_view& rest, Frame& f) {
  size_t h = host_token(rest);
  if (h == 0 || h >= rest.size() || rest[h] != ' ') return false;
  std::string_view name = rest.substr(0, h);
  size_t i = h;
  while (i < rest.size() && rest[i] == ' ') ++i;
  if (i + 1 < rest.size() && rest[i] == '|' && rest[i + 1] == ' ') {  // docker compose
    take(rest, f, i + 2, name, nullptr);
    return true;
  }
  std::string_view after = rest.substr(h + 1);
  for (std::string_view tag : {"[stdout] ", "[stderr] "}) {
    if (after.starts_with(tag)) {
      take(rest, f, h + 1 + tag.size(), name, nullptr);
      return true;
    }
  }
  Timestamp ts;
  if (looks_like_host(name) && (producer_starts(after) || iso_time(after, ts) != 0)) {
    take(rest, f, h + 1, name, nullptr);
    return true;
  }
  return false;
}

}  // namespace

bool peel_collector(std::string_view& rest, Frame& f, bool name_tags) {
  if (rest.empty()) return false;
  char c = rest[0];
  if (c == '[')
    return peel_kubectl(rest, f) || peel_rank_label(rest, f) || peel_ucx_host(rest, f) || peel_stream_tag(rest);
  if (is_digit(c)) return peel_cri(rest, f);
  if (c == '|' || c == ' ') return peel_table_row(rest, f);
  if (is_alpha(c)) return peel_syslog(rest, f) || (name_tags && peel_name_tag(rest, f));
  return false;
}

bool starts_with_name_tag(std::string_view line) {
  Frame scratch;
  return !line.empty() && is_alpha(line[0]) && peel_name_tag(line, scratch);
}

}  // namespace ncclpm::frame
