// src/frame/framer.cc
//
// Hand-written peelers, no regular expressions: this runs on every line of
// every file, and most lines are NCCL INFO lines whose prefix a few byte
// comparisons recognise.
#include "ncclpm/frame/framer.h"

#include "chars.h"

#include <algorithm>
#include <cstring>

#include "ncclpm/util/literal.h"
#include "ncclpm/util/text.h"

namespace ncclpm::frame {
namespace {

// Reads digits at s[i..]; returns false when there are none.
bool read_int(std::string_view s, size_t& i, int64_t& out) {
  size_t start = i;
  int64_t v = 0;
  while (i < s.size() && is_digit(s[i]) && i - start < 18) v = v * 10 + (s[i++] - '0');
  if (i == start) return false;
  out = v;
  return true;
}

// `lit` is a literal: its length is known when compiled, so the compare is
// inlined instead of a memcmp call on every NCCL line.
template <size_t N>
bool consume(std::string_view s, size_t& i, const char (&lit)[N]) {
  constexpr size_t n = N - 1;
  if (i > s.size() || s.size() - i < n || std::memcmp(s.data() + i, lit, n) != 0) return false;
  i += n;
  return true;
}

// "file.cpp:123" ending at `end` (exclusive); fills f.src_file/src_line.
bool split_file_line(std::string_view s, Frame& f) {
  size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  auto line = util::parse_int(s.substr(colon + 1));
  if (!line) return false;
  f.src_file = s.substr(0, colon);
  f.src_line = static_cast<int>(*line);
  return true;
}

// Python logging's level names, and the one letter each is stored as:
// CRITICAL is glog's and c10's F(atal).
constexpr std::string_view kPythonLevels[] = {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"};
char severity_letter(char level_initial) { return level_initial == 'C' ? 'F' : level_initial; }

bool is_severity(char c) {
  return c == 'F' || c == 'E' || c == 'W' || c == 'I' || c == 'V' || c == 'C' || c == 'D';
}

}  // namespace

const char* producer_name(Producer p) {
  switch (p) {
    case Producer::kNccl: return "nccl";
    case Producer::kC10: return "c10";
    case Producer::kGlog: return "glog";
    case Producer::kPyLogging: return "python_logging";
    case Producer::kDeepSpeed: return "deepspeed";
    case Producer::kUnknown: break;
  }
  return "plain";
}

// Who printed an NCCL line: "host:pid:tid [dev] ", or what pastes leave of it.
struct NcclSource {
  std::string_view host;
  int64_t pid = -1, tid = -1, dev = -1;
  bool complete = false;  ///< the whole "host:pid:tid": anything may stand before the level
};

// "[3] " at s[i]: NCCL's CUDA device.
bool read_device(std::string_view s, size_t& i, int64_t& dev) {
  if (i >= s.size() || s[i] != '[') return true;  // CALL lines carry none
  size_t j = i + 1;
  if (!read_int(s, j, dev) || !consume(s, j, "] ")) return false;
  i = j;
  return true;
}

// "host:pid:tid [dev] "; the empty-host forms ":16674:16674 [0]" and
// "::16674:16674 [0]" seen in real logs; a redacted pid ("host:XXXXXX [5] ")
// or a redacted host ("<cluster_name>:920:1145 [1] ").
bool read_full_source(std::string_view s, size_t& i, NcclSource& src) {
  size_t start = i;
  auto host_char = [](char c) { return is_host_char(c) || c == '<' || c == '>'; };
  while (i < s.size() && s[i] != ':' && host_char(s[i]) && i - start < 256) ++i;
  if (i >= s.size() || s[i] != ':') return false;
  src.host = s.substr(start, i - start);
  ++i;
  if (src.host.empty() && i < s.size() && s[i] == ':') ++i;
  size_t id = i;
  if (!read_int(s, i, src.pid) || !consume(s, i, ":") || !read_int(s, i, src.tid) || !consume(s, i, " ")) {
    // A redaction in place of "pid:tid" ("XXXXXX"), then the device; a lone
    // number is a malformed prefix, not a redaction.
    i = id;
    bool letters = false;
    while (i < s.size() && (is_alpha(s[i]) || is_digit(s[i]))) letters |= is_alpha(s[i++]);
    src.pid = src.tid = -1;
    if (!letters || !consume(s, i, " ") || i >= s.size() || s[i] != '[') return false;
  }
  src.complete = true;
  return read_device(s, i, src.dev);
}

// What is left when a paste cut "host:pid:tid" away or a collector rewrote
// it: "gpu-server320 [5] ", "[0] ", or nothing at all before "file:line NCCL
// WARN" / "NCCL INFO". Only "file:line" may then stand before the level.
bool read_partial_source(std::string_view s, size_t& i, NcclSource& src) {
  size_t h = i;
  while (h < s.size() && is_host_char(s[h]) && h - i < 256) ++h;
  if (h > i && h + 2 < s.size() && s[h] == ' ' && s[h + 1] == '[' && is_digit(s[h + 2])) {
    src.host = s.substr(i, h - i);
    i = h + 1;
  }
  return read_device(s, i, src.dev);
}

// The level after the source: "NCCL INFO", "NCCL CALL", "file:line [(func)]
// NCCL WARN", "ms func:line NCCL TRACE". Advances `i` past it.
bool read_level(std::string_view s, size_t& i, bool anything_before_warn, Frame& f, std::string_view& level) {
  if (consume(s, i, "NCCL INFO")) {
    level = "INFO";
    return true;
  }
  if (consume(s, i, "NCCL CALL")) {
    level = "CALL";
    return true;
  }
  if (!anything_before_warn && consume(s, i, "NCCL WARN")) {  // a paste that kept nothing before it
    level = "WARN";
    return true;
  }
  size_t marker = util::find(s, " NCCL ", i);
  if (marker == std::string_view::npos || marker - i > 200) return false;
  std::string_view lvl = s.substr(marker + 6, 5);
  std::string_view where = s.substr(i, marker - i);
  if (lvl.starts_with("WARN")) {
    size_t paren = where.find(" (");  // 2.30's "file:line (func) NCCL WARN"
    std::string_view file_line = paren == std::string_view::npos ? where : where.substr(0, paren);
    if (!anything_before_warn && file_line.find(' ') != std::string_view::npos) return false;
    // "graph/xml.h: NCCL WARN" (line number lost in a paste) still names the file.
    if (!split_file_line(file_line, f)) {
      if (anything_before_warn || !file_line.ends_with(':') || file_line.find('.') == std::string_view::npos)
        return false;
      f.src_file = file_line.substr(0, file_line.size() - 1);
    }
    level = "WARN";
    i = marker + 10;
    return true;
  }
  if (lvl == "TRACE") {
    size_t sp = where.find(' ');
    if (sp != std::string_view::npos) split_file_line(where.substr(sp + 1), f);
    level = "TRACE";
    i = marker + 11;
    return true;
  }
  return false;
}

// NCCL 2.0 to 2.2 (before its sources were published) printed the level
// without "NCCL": "host:pid:tid [dev] INFO ..." and "host:pid:tid [dev]
// file:line WARN ...". Read only after a whole "host:pid:tid [dev] " prefix.
bool read_old_level(std::string_view s, size_t& i, Frame& f, std::string_view& level) {
  if (consume(s, i, "INFO ")) {
    level = "INFO";
    return true;
  }
  size_t sp = s.find(' ', i);
  if (sp == std::string_view::npos || s.substr(sp + 1, 5) != "WARN ") return false;
  std::string_view file_line = s.substr(i, sp - i);
  std::string_view file = f.src_file;
  int line = f.src_line;
  if (!split_file_line(file_line, f) || f.src_file.find('.') == std::string_view::npos) {
    f.src_file = file;
    f.src_line = line;
    return false;
  }
  level = "WARN";
  i = sp + 6;
  return true;
}

// host:pid:tid [dev] NCCL INFO ...   (optionally after "[2025-04-08 08:39:46] ")
bool peel_nccl(std::string_view& rest, Frame& f) {
  std::string_view s = rest;
  size_t i = 0;
  Timestamp ts;
  bool device_first = s.size() > 3 && s[0] == '[' && is_digit(s[1]) && s.find("] ") < 8 &&
                      std::all_of(s.begin() + 1, s.begin() + static_cast<long>(s.find("] ")), is_digit);
  if (!device_first && !s.empty() && s[0] == '[') {
    size_t close = s.find("] ");
    if (close == std::string_view::npos || close > 64) return false;
    if (parse_date_time(s.substr(1, close - 1), ts) == 0) return false;
    i = close + 2;
    // 2.26+ with NCCL_DEBUG_TIMESTAMP_LEVELS including VERSION: "[ts] NCCL version ...".
    if (s.substr(i).starts_with("NCCL version ")) {
      f.producer = Producer::kNccl;
      f.nccl_level = "VERSION";
      f.ts = ts;
      rest = s.substr(i);
      return true;
    }
  }
  NcclSource src;
  size_t after_ts = i;
  std::string_view level;
  // read_level sets the source file; a failed try must leave f as it was.
  std::string_view file = f.src_file;
  int file_line = f.src_line;
  bool full = !device_first && read_full_source(s, i, src);
  size_t after_source = i;
  bool ok = full && read_level(s, i, true, f, level);
  if (!ok && full) {
    i = after_source;
    ok = read_old_level(s, i, f, level);
  }
  if (!ok) {
    i = after_ts;
    src = NcclSource{};
    ok = read_partial_source(s, i, src) && read_level(s, i, false, f, level);
  }
  if (!ok) {
    f.src_file = file;
    f.src_line = file_line;
    return false;
  }
  if (i < s.size() && s[i] == ' ') ++i;
  f.producer = Producer::kNccl;
  f.nccl_level = level;
  f.severity = level == "WARN" ? 'W' : 'I';
  if (!src.host.empty()) f.host = src.host;
  f.pid = src.pid;
  f.tid = src.tid;
  f.device = static_cast<int>(src.dev);
  if (ts.valid()) f.ts = ts;
  rest = s.substr(i);
  return true;
}

// [E709 17:05:38.162814866 ProcessGroupNCCL.cpp:632] or [E ProcessGroupNCCL.cpp:475]
bool peel_c10(std::string_view& rest, Frame& f) {
  std::string_view s = rest;
  if (s.size() < 6 || s[0] != '[' || !is_severity(s[1])) return false;
  size_t i = 2;
  Timestamp ts;
  if (is_digit(s[i])) {
    int64_t mmdd = 0;
    size_t start = i;
    if (!read_int(s, i, mmdd) || i - start < 3 || i - start > 4 || !consume(s, i, " ")) return false;
    ts.month = static_cast<int>(mmdd / 100);
    ts.day = static_cast<int>(mmdd % 100);
    // The sub-second digits come from CLOCK_MONOTONIC, not the wall clock: drop them.
    size_t n = parse_clock(s.substr(i), ts, /*keep_fraction=*/false);
    if (n == 0 || ts.month < 1 || ts.month > 12) return false;
    i += n;
  }
  if (!consume(s, i, " ")) return false;
  size_t close = s.find("] ", i);
  if (close == std::string_view::npos) {
    if (!s.ends_with("]")) return false;
    close = s.size() - 1;
  }
  if (close - i > 200 || !split_file_line(s.substr(i, close - i), f)) return false;
  f.producer = Producer::kC10;
  f.severity = s[1];
  if (ts.valid()) f.ts = ts;
  rest = s.substr(std::min(s.size(), close + 2));
  return true;
}

// E0709 17:05:38.162555 12345 ProcessGroupNCCL.cpp:632] msg
// W0616 20:34:34.710000 140609446490112 torch/distributed/elastic/.../api.py:851] msg
bool peel_glog(std::string_view& rest, Frame& f) {
  std::string_view s = rest;
  if (s.size() < 22 || !is_severity(s[0])) return false;
  for (int k = 1; k <= 4; ++k)
    if (!is_digit(s[k])) return false;
  if (s[5] != ' ') return false;
  Timestamp ts;
  ts.month = (s[1] - '0') * 10 + (s[2] - '0');
  ts.day = (s[3] - '0') * 10 + (s[4] - '0');
  size_t n = parse_clock(s.substr(6), ts);
  if (n == 0) return false;
  size_t i = 6 + n;
  while (i < s.size() && s[i] == ' ') ++i;
  int64_t id = 0;
  if (!read_int(s, i, id) || !consume(s, i, " ")) return false;
  size_t close = s.find(']', i);
  if (close == std::string_view::npos || close - i > 300) return false;
  if (!split_file_line(s.substr(i, close - i), f)) return false;
  i = close + 1;
  // Optional " [0/8]" trace id and " [__artifact]" groups of torch logs; a
  // glog build's "[Rank 3]" PG prefix is message text, not one of them.
  while (i + 2 < s.size() && s[i] == ' ' && s[i + 1] == '[' &&
         (is_digit(s[i + 2]) || s[i + 2] == '!' || s[i + 2] == '_')) {
    size_t end = s.find(']', i);
    if (end == std::string_view::npos) break;
    i = end + 1;
  }
  if (i < s.size() && s[i] == ' ') ++i;
  f.producer = Producer::kGlog;
  f.severity = severity_letter(s[0]);
  f.tid = id;
  f.ts = ts;
  rest = s.substr(i);
  return true;
}

// torchelastic's own format, "[%(levelname)s] %(asctime)s %(module)s:
// %(message)s" (pytorch/elastic, and torch 1.9's elastic agent):
// [ERROR] 2021-09-13 22:18:26,678 error_handler: msg
bool peel_torchelastic_logging(std::string_view& s, Frame& f) {
  for (std::string_view level : kPythonLevels) {
    size_t i = level.size() + 3;  // "[LEVEL] "
    if (s.size() <= i || s[0] != '[' || s.substr(1, level.size()) != level || s.substr(i - 2, 2) != "] ") continue;
    Timestamp ts;
    size_t n = parse_date_time(s.substr(i), ts);
    if (n == 0) return false;
    i += n;
    if (!consume(s, i, " ")) return false;
    size_t colon = s.find(": ", i);
    constexpr size_t kLongestModule = 64;
    if (colon == std::string_view::npos || colon == i || colon - i > kLongestModule) return false;
    std::string_view module = s.substr(i, colon - i);
    if (!std::all_of(module.begin(), module.end(), [](char c) { return is_host_char(c); })) return false;
    f.producer = Producer::kPyLogging;
    f.severity = severity_letter(level[0]);
    f.src_file = module;
    f.ts = ts;
    s = s.substr(colon + 2);
    return true;
  }
  return false;
}

// [2024-02-01 09:14:29,497] torch.distributed.elastic.multiprocessing.api: [WARNING] msg
// WARNING:torch.distributed.elastic.multiprocessing.api:msg
// 2024-02-01 09:14:29,497 - INFO - msg
bool peel_py_logging(std::string_view& rest, Frame& f) {
  std::string_view s = rest;
  if (peel_torchelastic_logging(s, f)) {
    rest = s;
    return true;
  }
  if (!s.empty() && s[0] == '[') {
    Timestamp ts;
    size_t n = parse_date_time(s.substr(1), ts);
    if (n == 0 || 1 + n >= s.size() || s[1 + n] != ']') return false;
    size_t i = n + 2;
    if (!consume(s, i, " ")) return false;
    size_t colon = s.find(": [", i);
    if (colon == std::string_view::npos || colon - i > 120) return false;
    size_t close = s.find("] ", colon + 3);
    if (close == std::string_view::npos || close - colon > 12) return false;
    f.producer = Producer::kPyLogging;
    f.severity = s[colon + 3];
    f.src_file = s.substr(i, colon - i);  // the logger name
    f.ts = ts;
    rest = s.substr(close + 2);
    return true;
  }
  for (std::string_view level : kPythonLevels) {
    if (s.starts_with(level) && s.size() > level.size() && s[level.size()] == ':') {
      size_t i = level.size() + 1;
      size_t colon = s.find(':', i);
      if (colon == std::string_view::npos) return false;
      std::string_view logger = s.substr(i, colon - i);
      if (logger.empty() ||
          !std::all_of(logger.begin(), logger.end(), [](char c) { return is_host_char(c); }))
        return false;
      f.producer = Producer::kPyLogging;
      f.severity = severity_letter(level[0]);
      f.src_file = logger;
      rest = s.substr(colon + 1);
      return true;
    }
  }
  Timestamp ts;
  size_t n = parse_date_time(s, ts);
  if (n == 0) return false;
  size_t i = n;
  while (i < s.size() && (s[i] == ' ' || s[i] == '-' || s[i] == '|')) ++i;
  f.producer = Producer::kPyLogging;
  f.ts = ts;
  for (std::string_view level : kPythonLevels) {
    if (s.substr(i).starts_with(level)) {
      f.severity = severity_letter(level[0]);
      i += level.size();
      while (i < s.size() && (s[i] == ' ' || s[i] == '-' || s[i] == '|' || s[i] == ':')) ++i;
      break;
    }
  }
  rest = s.substr(i);
  return true;
}

// Hugging Face transformers' logging format:
// [INFO|trainer.py:3503] 2024-08-15 20:28:18,331 >> msg
bool peel_hf_logging(std::string_view& rest, Frame& f) {
  std::string_view s = rest;
  if (s.size() < 12 || s[0] != '[') return false;
  size_t bar = s.find('|');
  size_t close = s.find("] ");
  if (bar == std::string_view::npos || close == std::string_view::npos || bar > close || bar > 10) return false;
  std::string_view level = s.substr(1, bar - 1);
  if (level != "INFO" && level != "WARNING" && level != "ERROR" && level != "DEBUG" && level != "CRITICAL")
    return false;
  if (!split_file_line(s.substr(bar + 1, close - bar - 1), f)) return false;
  size_t i = close + 2;
  Timestamp ts;
  size_t n = parse_date_time(s.substr(i), ts);
  if (n != 0) {
    f.ts = ts;
    i += n;
    if (s.substr(i, 4) == " >> ") i += 4;
  }
  f.producer = Producer::kPyLogging;
  f.severity = severity_letter(level[0]);
  rest = s.substr(std::min(i, s.size()));
  return true;
}

// [2024-05-01 10:00:00,123] [INFO] [launch.py:256:main] msg
bool peel_deepspeed(std::string_view& rest, Frame& f) {
  std::string_view s = rest;
  if (s.size() < 30 || s[0] != '[') return false;
  Timestamp ts;
  size_t n = parse_date_time(s.substr(1), ts);
  if (n == 0 || s.substr(1 + n, 3) != "] [") return false;
  size_t i = n + 4;
  size_t close = s.find("] [", i);
  if (close == std::string_view::npos || close - i > 10) return false;
  char sev = s[i];
  i = close + 3;
  size_t end = s.find(']', i);
  if (end == std::string_view::npos) return false;
  std::string_view where = s.substr(i, end - i);  // launch.py:256:main
  size_t c1 = where.find(':');
  if (c1 != std::string_view::npos) {
    f.src_file = where.substr(0, c1);
    size_t c2 = where.find(':', c1 + 1);
    auto line = util::parse_int(where.substr(c1 + 1, c2 == std::string_view::npos ? std::string_view::npos : c2 - c1 - 1));
    if (line) f.src_line = static_cast<int>(*line);
  }
  f.producer = Producer::kDeepSpeed;
  f.severity = severity_letter(sev);
  f.ts = ts;
  rest = s.substr(std::min(s.size(), end + 2));
  return true;
}

// NeMo's formatter (nemo/utils/formatters/base.py), level as one letter:
// [NeMo W 2023-01-18 07:39:42 exp_manager:423] msg
// [NeMo I 2025-03-01 10:00:00 nemo/collections/llm/api.py:88][train()] msg
bool peel_nemo(std::string_view& rest, Frame& f) {
  std::string_view s = rest;
  if (s.size() < 12 || !s.starts_with("[NeMo ") || !is_severity(s[6]) || s[7] != ' ') return false;
  Timestamp ts;
  size_t n = parse_date_time(s.substr(8), ts);
  size_t i = 8 + n;
  if (n == 0 || !consume(s, i, " ")) return false;
  size_t close = s.find(']', i);
  if (close == std::string_view::npos || close - i > 300 || !split_file_line(s.substr(i, close - i), f))
    return false;
  i = close + 1;
  if (i < s.size() && s[i] == '[') {  // the function, in the relative-path variant
    size_t end = s.find(']', i);
    if (end != std::string_view::npos && end - i < 120) i = end + 1;
  }
  if (i < s.size() && s[i] == ' ') ++i;
  f.producer = Producer::kPyLogging;
  f.severity = severity_letter(s[6]);
  f.ts = ts;
  rest = s.substr(i);
  return true;
}

// vLLM's formatter (vllm/logger.py), date without a year:
// ERROR 03-31 10:00:00 [engine.py:160] msg      (0.8 on)
// INFO 02-05 09:11:53 model_runner.py:1118] msg (before)
bool peel_vllm(std::string_view& rest, Frame& f) {
  std::string_view s = rest;
  size_t i = 0;
  for (std::string_view level : kPythonLevels) {
    if (s.starts_with(level) && s.size() > level.size() + 16 && s[level.size()] == ' ') {
      i = level.size() + 1;
      break;
    }
  }
  if (i == 0 || !is_digit(s[i]) || !is_digit(s[i + 1]) || s[i + 2] != '-' || !is_digit(s[i + 3]) ||
      !is_digit(s[i + 4]) || s[i + 5] != ' ')
    return false;
  Timestamp ts;
  ts.month = (s[i] - '0') * 10 + (s[i + 1] - '0');
  ts.day = (s[i + 3] - '0') * 10 + (s[i + 4] - '0');
  size_t n = parse_clock(s.substr(i + 6), ts);
  if (n == 0 || ts.month < 1 || ts.month > 12) return false;
  i += 6 + n;
  if (!consume(s, i, " ")) return false;
  bool bracketed = i < s.size() && s[i] == '[';
  size_t close = s.find(']', i);
  if (close == std::string_view::npos || close - i > 300 ||
      !split_file_line(s.substr(i + (bracketed ? 1 : 0), close - i - (bracketed ? 1 : 0)), f))
    return false;
  i = close + 1;
  if (i < s.size() && s[i] == ' ') ++i;
  f.producer = Producer::kPyLogging;
  f.severity = severity_letter(s[0]);
  f.ts = ts;
  rest = s.substr(i);
  return true;
}

}  // namespace ncclpm::frame
