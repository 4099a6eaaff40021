// src/frame/frame_line.cc
//
// Framer: the order in which prefixes are peeled, outermost first, and the
// launcher prefixes whose meaning depends on the file as a whole.
#include <algorithm>

#include "chars.h"
#include "collectors.h"
#include "ncclpm/frame/framer.h"
#include "ncclpm/util/literal.h"
#include "ncclpm/util/text.h"

namespace ncclpm::frame {
namespace {

// Slurm --label: optional "P<het> ", spaces, task id, ": ".
bool match_slurm_label(std::string_view s, int* task, size_t* len) {
  size_t i = 0;
  if (s.size() > 2 && s[0] == 'P' && is_digit(s[1])) {
    i = 1;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i >= s.size() || s[i] != ' ') return false;
    ++i;
  }
  while (i < s.size() && s[i] == ' ') ++i;
  size_t start = i;
  int v = 0;
  while (i < s.size() && is_digit(s[i]) && i - start < 7) v = v * 10 + (s[i++] - '0');
  if (i == start || i + 1 >= s.size() + 1 || s.substr(i, 2) != ": ") {
    // "3:" at the very end of a line (an empty output line) is a label too.
    if (i == start || i != s.size() - 1 || s[i] != ':') return false;
    *task = v;
    *len = s.size();
    return true;
  }
  *task = v;
  *len = i + 2;
  return true;
}

// pdsh: "<host>: " where the host looks like a host name: it carries a digit,
// a dash or a dot (so "RuntimeError: " and "Traceback: " are not hosts).
bool match_pdsh_host(std::string_view s, std::string_view* host, size_t* len) {
  size_t i = 0;
  while (i < s.size() && is_host_char(s[i]) && i < 128) ++i;
  if (i == 0 || i + 1 >= s.size() || s[i] != ':' || s[i + 1] != ' ') return false;
  std::string_view h = s.substr(0, i);
  if (!looks_like_host(h)) return false;
  *host = h;
  *len = i + 2;
  return true;
}

// ctime() style "Fri Aug 11 12:31:45 2023" (Open MPI --timestamp-output).
bool parse_ctime(std::string_view s, Timestamp& ts) {
  static constexpr std::string_view kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
  s = util::trim(s);
  if (s.size() < 24 || s[3] != ' ' || s[7] != ' ') return false;
  size_t month = kMonths.find(s.substr(4, 3));
  if (month == std::string_view::npos || month % 3 != 0) return false;
  size_t i = 8;
  while (i < s.size() && s[i] == ' ') ++i;
  auto day = util::take_digits(s, i);
  if (!day || *day < 1 || *day > 31 || i >= s.size() || s[i] != ' ') return false;
  Timestamp t;
  size_t n = parse_clock(s.substr(i + 1), t);
  i += 1 + n;
  if (n == 0 || i >= s.size() || s[i] != ' ') return false;
  auto year = util::parse_int(s.substr(i + 1));
  if (!year || *year < 1970 || *year > 9999) return false;
  t.year = static_cast<int>(*year);
  t.month = static_cast<int>(month / 3) + 1;
  t.day = static_cast<int>(*day);
  ts = t;
  return true;
}

// Open MPI --tag-output "[1,3]<stdout>:", possibly glued to a date.
bool peel_openmpi(std::string_view& rest, Frame& f) {
  size_t tag = rest.substr(0, 96).find("]<std");  // the tag sits at the start (after a date at most)
  if (tag == std::string_view::npos || tag > 80) return false;
  size_t open = rest.rfind('[', tag);
  if (open == std::string_view::npos) return false;
  std::string_view ids = rest.substr(open + 1, tag - open - 1);  // "1,3"
  size_t comma = ids.find(',');
  if (comma == std::string_view::npos) return false;
  auto rank = util::parse_int(ids.substr(comma + 1));
  if (!rank || !util::parse_int(ids.substr(0, comma))) return false;
  size_t close = rest.find(">:", tag);
  if (close == std::string_view::npos || close - tag > 12) return false;
  f.rank = static_cast<int>(*rank);
  if (Timestamp ts; open > 0 && parse_ctime(rest.substr(0, open), ts)) f.ts = ts;
  size_t i = close + 2;
  if (i < rest.size() && rest[i] == ' ') ++i;
  rest.remove_prefix(i);
  return true;
}

// Ray: "(WorkerDict pid=1230, ip=10.0.0.2) ", "(pid=77) ", "(raylet) ".
bool peel_ray(std::string_view& rest, Frame& f) {
  if (rest.empty() || rest[0] != '(') return false;
  size_t close = rest.find(") ");
  if (close == std::string_view::npos || close > 200) return false;
  std::string_view inside = rest.substr(1, close - 1);
  size_t pid_at = inside.find("pid=");
  bool system = inside.starts_with("raylet") || inside.starts_with("autoscaler");
  if (pid_at == std::string_view::npos && !system) return false;
  if (pid_at != std::string_view::npos) {
    size_t i = pid_at + 4, start = i;
    while (i < inside.size() && is_digit(inside[i])) ++i;
    auto pid = util::parse_int(inside.substr(start, i - start));
    if (!pid) return false;
    f.pid = *pid;
  }
  size_t ip_at = inside.find("ip=");
  if (ip_at != std::string_view::npos) {
    std::string_view ip = inside.substr(ip_at + 3);
    size_t end = ip.find_first_of(",)");
    f.host = ip.substr(0, end);
  }
  rest.remove_prefix(close + 2);
  return true;
}

// " [repeated 14x across cluster]" at the end of a Ray line.
void peel_ray_repeat(std::string_view& rest, Frame& f) {
  constexpr std::string_view kTail = "x across cluster]";
  size_t dedup = util::find(rest, " (Ray deduplicates logs by default.");  // by its 'R', not at every space
  if (dedup != std::string_view::npos) rest = rest.substr(0, dedup);
  while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
  if (!rest.ends_with(kTail)) return;
  size_t open = rest.rfind(" [repeated ");
  if (open == std::string_view::npos) return;
  std::string_view num = rest.substr(open + 11, rest.size() - kTail.size() - open - 11);
  if (auto n = util::parse_int(num)) {
    f.repeated = static_cast<int>(*n);
    rest = rest.substr(0, open);
  }
}

// "[rank3]:" -> 3; "[default3]:" -> role "default", 3. Returns bytes used.
size_t match_bracket_rank(std::string_view s, std::string_view* role, int* n) {
  if (s.size() < 4 || s[0] != '[') return 0;
  size_t i = 1;
  while (i < s.size() && (is_alpha(s[i]) || s[i] == '_' || s[i] == '-') && i < 40) ++i;
  *role = s.substr(1, i - 1);
  size_t start = i;
  int v = 0;
  while (i < s.size() && is_digit(s[i]) && i - start < 7) v = v * 10 + (s[i++] - '0');
  if (i == start || s.substr(i, 2) != "]:") return 0;
  *n = v;
  return i + 2;
}

// The last '\r' of a line, or npos. rfind reads byte by byte; most lines
// have none, which memchr tells at once.
size_t last_carriage_return(std::string_view s) {
  return s.find('\r') == std::string_view::npos ? std::string_view::npos : s.rfind('\r');
}

// Text that tqdm-style progress bars leave before a glued log line.
bool looks_like_progress_bar(std::string_view s) {
  return util::contains(s, "it/s") || util::contains(s, "s/it") || s.find("%|") != std::string_view::npos;
}

// Where a tqdm bar's stats bracket ends ("...| 31/67 [29:02<35:12, 58.67s/it]"),
// when more text follows on the same line; 0 otherwise. tqdm writes nothing
// after the bracket but the next redraw, which starts with '\r': text there
// is another writer's line that lost the newline before it ("...s/it]slurmstepd:
// error: *** STEP 6053.0 ... CANCELLED ...").
size_t text_after_bar_stats(std::string_view s) {
  size_t pct = s.find("%|");
  if (pct == std::string_view::npos) return 0;
  size_t open = s.find(" [", pct);
  if (open == std::string_view::npos) return 0;
  size_t close = s.find(']', open);
  if (close == std::string_view::npos) return 0;
  std::string_view stats = s.substr(open + 2, close - open - 2);
  if (stats.find('<') == std::string_view::npos && !util::contains(stats, "it/s") && !util::contains(stats, "s/it"))
    return 0;
  size_t next = close + 1;
  while (next < s.size() && s[next] == ' ') ++next;
  if (next >= s.size()) return 0;
  std::string_view after = s.substr(next);
  // Redraws whose '\r' was lost run on as bars: one line of the bar's own.
  if (looks_like_progress_bar(after)) return 0;
  if (is_alpha(s[next]) || is_digit(s[next])) return next;
  // A bracket there is the bar's own decoration unless a producer's prefix
  // opens with it ("...?it/s][2024-01-03 14:05:36,090] [INFO] [launch.py:315:...]").
  std::string_view glued = after;
  Frame probe;
  if (s[next] == '[' && (peel_c10(glued, probe) || peel_deepspeed(glued, probe) || peel_hf_logging(glued, probe) ||
                         peel_nemo(glued, probe) || peel_py_logging(glued, probe)))
    return next;
  return 0;
}

// A c10 log line glued to the end of a progress bar with no tee prefix
// between them: "...66.12it/s][E ProcessGroupNCCL.cpp:567] [Rank 1] ...".
// Returns whether it found one; `rest` then starts at it.
bool glue_c10_line(std::string_view& rest, Frame& f) {
  for (size_t at = rest.find("]["); at != std::string_view::npos; at = rest.find("][", at + 1)) {
    std::string_view candidate = rest.substr(at + 1);
    Frame probe;
    if (!peel_c10(candidate, probe)) continue;
    rest.remove_prefix(at + 1);
    f.progress_bar = true;
    return true;
  }
  return false;
}

// A log pasted as a Markdown quote: "> " before each line, ">" alone for a
// blank one. The quote is no part of what the job wrote.
std::string_view without_quote(std::string_view line) {
  // A quote of a quote (a reply that quoted a pasted log) has one per level.
  while (line.starts_with("> ")) line.remove_prefix(2);
  if (line.starts_with('>') && util::is_blank(line.substr(1))) return line.substr(1);
  return line;
}

// What `grep PATTERN *.log` puts before each line it found in several
// files: the file's name and a colon, and with -n the line's number and a
// colon ("prefill-2.log:[2025-09-17 15:16:23] ..."). Only names of log files
// (.log, .out, .err, .txt) count: "torch.distributed.DistBackendError:" is
// a message.
std::string_view without_grep_name(std::string_view line) {
  size_t colon = 0;
  while (colon < line.size() && colon < 256 && (is_host_char(line[colon]) || line[colon] == '/' || line[colon] == '_'))
    ++colon;
  if (colon >= line.size() || line[colon] != ':') return line;
  std::string_view name = line.substr(0, colon);
  bool log_file = false;
  for (std::string_view ext : {".log", ".out", ".err", ".txt"}) log_file |= name.size() > ext.size() && name.ends_with(ext);
  if (!log_file) return line;
  std::string_view rest = line.substr(colon + 1);
  size_t digits = 0;
  while (digits < rest.size() && is_digit(rest[digits])) ++digits;
  if (digits > 0 && digits < rest.size() && rest[digits] == ':') rest.remove_prefix(digits + 1);
  return rest;
}

// Whether most of the sample's lines, past a Markdown quote when the file is
// quoted, carry `strip`'s prefix.
template <typename Strip>
bool mostly_prefixed(const std::vector<std::string_view>& sample, bool quoted, Strip strip) {
  size_t nonblank = 0, prefixed = 0;
  for (std::string_view line : sample) {
    if (quoted) line = without_quote(line);
    if (util::is_blank(line)) continue;
    ++nonblank;
    if (strip(line).size() < line.size()) ++prefixed;
  }
  return nonblank > 0 && prefixed * 10 >= nonblank * 6;
}

}  // namespace

void Framer::learn_launcher(const std::vector<std::string_view>& sample) {
  quoted_ = mostly_prefixed(sample, false, without_quote);
  grep_named_ = mostly_prefixed(sample, quoted_, without_grep_name);
  size_t nonblank = 0, name_tags = 0;
  for (std::string_view quoted_line : sample) {
    std::string_view line = unwrap_paste(quoted_line);
    if (util::is_blank(line)) continue;
    ++nonblank;
    if (starts_with_name_tag(line)) ++name_tags;
  }
  // A launcher prefixes every line it forwards; most of the sample must carry it.
  if (nonblank == 0) return;
  name_tags_ = name_tags * 10 >= nonblank * 6;
  size_t slurm = 0, pdsh = 0, pdsh_slurm = 0;
  for (std::string_view quoted_line : sample) {
    std::string_view line = unwrap_paste(quoted_line);
    // Collectors wrap launchers (a Kubernetes log of DeepSpeed's pdsh lines,
    // docker compose's name over srun's label): the launcher's prefix is
    // learnt behind theirs.
    Frame collector;
    for (int layer = 0; layer < 4 && peel_collector(line, collector, name_tags_); ++layer) {
    }
    int task = 0;
    size_t len = 0;
    std::string_view host;
    if (match_slurm_label(line, &task, &len)) ++slurm;
    if (match_pdsh_host(line, &host, &len)) {
      ++pdsh;
      size_t label_len = 0;
      if (match_slurm_label(line.substr(len), &task, &label_len)) ++pdsh_slurm;
    }
  }
  if (slurm * 10 >= nonblank * 6) {
    launcher_ = LauncherFormat::kSlurmLabel;
  } else if (pdsh * 10 >= nonblank * 6) {
    launcher_ = LauncherFormat::kPdsh;
    slurm_after_pdsh_ = pdsh_slurm * 10 >= nonblank * 6;
  }
}

std::string_view Framer::unwrap_paste(std::string_view line) const {
  if (quoted_) line = without_quote(line);
  return grep_named_ ? without_grep_name(line) : line;
}

bool Framer::peel_launcher(std::string_view& rest, Frame& f, unsigned& peeled) {
  // A launcher labels each line once: after "node07: " the text
  // "torch.distributed.DistBackendError: ..." is the message, not another host.
  constexpr unsigned kPdshDone = 1, kSlurmDone = 2;
  // Log collectors' own time: "【2025-09-25 14:27:49】" and "18:11:06.680 ".
  if (rest.starts_with("\xE3\x80\x90")) {
    size_t close = rest.find("\xE3\x80\x91");
    if (close != std::string_view::npos && close < 48) {
      Timestamp ts;
      if (parse_date_time(rest.substr(3, close - 3), ts) != 0) f.ts = ts;
      rest.remove_prefix(close + 3);
      return true;
    }
  }
  if (!rest.empty() && is_digit(rest[0])) {
    // Only before a bracketed tag ("[rank4]:", "[E..."), so that NCCL's
    // "host:pid:tid [0]" with a numeric host is not taken for a clock.
    Timestamp ts;
    size_t n = parse_clock(rest, ts);
    if (n > 0 && n + 2 < rest.size() && rest[n] == ' ' && rest[n + 1] == '[' &&
        is_alpha(rest[n + 2])) {
      if (!f.ts.valid()) f.ts = ts;
      rest.remove_prefix(n + 1);
      return true;
    }
  }
  if (peel_openmpi(rest, f) || peel_ray(rest, f)) return true;
  // Collectors wrap launchers: their prefixes come before Slurm's or pdsh's.
  if (peeled == 0 && peel_collector(rest, f, name_tags_)) return true;
  bool slurm = launcher_ == LauncherFormat::kSlurmLabel ||
               (launcher_ == LauncherFormat::kPdsh && slurm_after_pdsh_ && (peeled & kPdshDone));
  if (slurm && !(peeled & kSlurmDone)) {
    int task = 0;
    size_t len = 0;
    if (match_slurm_label(rest, &task, &len)) {
      if (f.rank < 0) f.rank = task;
      rest.remove_prefix(len);
      peeled |= kSlurmDone;
      return true;
    }
  }
  if (launcher_ == LauncherFormat::kPdsh && !(peeled & kPdshDone)) {
    std::string_view host;
    size_t len = 0;
    if (match_pdsh_host(rest, &host, &len)) {
      if (f.host.empty()) f.host = host;
      rest.remove_prefix(len);
      // "10.0.87.143: 10.0.87.143: ": two layers that prefix the host the
      // pdsh way (DeepSpeed's pdsh runner over a wrapper that does the same)
      // each said it; the second is no part of the line.
      std::string_view again;
      if (match_pdsh_host(rest, &again, &len) && again == host) rest.remove_prefix(len);
      peeled |= kPdshDone;
      return true;
    }
  }
  return false;
}

bool Framer::peel_bracket_prefixes(std::string_view& rest, Frame& f) {
  bool any = false;
  bool saw_rank_tag = false;
  while (!rest.empty() && rest[0] == '[') {
    std::string_view role;
    int n = 0;
    size_t len = match_bracket_rank(rest, &role, &n);
    if (len == 0) break;
    // A bare "[0]:" line is an entry of torchrun's failure summary, not a tag.
    if (role.empty() && util::is_blank(rest.substr(len))) break;
    if (role == "rank") {
      // "[rank3]:[rank11]:" : the outer one was torchrun's tee with --role rank
      // (a local rank); the inner one is c10's global rank.
      if (saw_rank_tag && f.rank != n) {
        f.local_rank = f.rank;
      }
      f.rank = n;
      saw_rank_tag = true;
    } else if (role.empty()) {
      if (f.rank < 0) f.rank = n;  // a launcher tag "[3]:" before raw glog
    } else {
      f.local_rank = n;  // torchrun tee: [default3]:, [trainer3]:
    }
    rest.remove_prefix(len);
    // The excepthook writes "[rank3]: <line>": one space belongs to the prefix.
    if (!rest.empty() && rest[0] == ' ' && role == "rank") rest.remove_prefix(1);
    any = true;
  }
  return any;
}

void Framer::peel_producer(std::string_view& rest, Frame& f) {
  if (rest.empty()) return;
  if (rest[0] == '[') {
    if (peel_c10(rest, f) || peel_nccl(rest, f) || peel_deepspeed(rest, f) || peel_hf_logging(rest, f) ||
        peel_nemo(rest, f) || peel_py_logging(rest, f))
      return;
    return;
  }
  if (peel_nccl(rest, f) || peel_glog(rest, f) || peel_vllm(rest, f) || peel_py_logging(rest, f)) return;
}

void Framer::peel_pg_prefix(Frame& f) {
  // "[Rank 3] ", "[PG 0 Rank 2] ", "[PG 0 (default_pg) Rank 1] ",
  // "[PG ID 2 PG GUID 3(mesh_tp) Rank 3] "; FATAL lines carry it twice.
  for (int pass = 0; pass < 2; ++pass) {
    std::string_view b = f.body;
    if (!b.starts_with("[Rank ") && !b.starts_with("[PG ")) return;
    size_t close = b.find(']');
    if (close == std::string_view::npos || close > 200) return;
    std::string_view inside = b.substr(1, close - 1);
    size_t rank_at = inside.rfind("Rank ");
    if (rank_at == std::string_view::npos) return;
    auto rank = util::parse_int(inside.substr(rank_at + 5));
    if (!rank) return;
    f.pg_rank = static_cast<int>(*rank);
    std::string_view pg = util::trim(inside.substr(0, rank_at));
    if (pg.starts_with("PG ID ")) {
      pg.remove_prefix(6);
      size_t sp = pg.find(' ');
      f.pg_id = pg.substr(0, sp);
      size_t guid = pg.find("PG GUID ");
      if (guid != std::string_view::npos) {
        std::string_view g = pg.substr(guid + 8);
        size_t paren = g.find('(');
        f.pg_name = g.substr(0, paren);
        if (paren != std::string_view::npos) f.pg_desc = g.substr(paren + 1, g.rfind(')') - paren - 1);
      }
    } else if (pg.starts_with("PG ")) {
      pg.remove_prefix(3);
      size_t paren = pg.find(" (");
      f.pg_id = pg.substr(0, paren);
      f.pg_name = f.pg_id;
      if (paren != std::string_view::npos) f.pg_desc = pg.substr(paren + 2, pg.rfind(')') - paren - 2);
    }
    f.body = util::trim_left(b.substr(close + 1));
  }
}

// Most lines of a big job are NCCL lines straight from NCCL_DEBUG_FILE or a
// per-rank file: "host:pid:tid [dev] NCCL INFO ...". When the file uses no
// launcher prefix and the line has nothing to peel before it, take them in
// one step instead of trying every outer prefix.
bool Framer::frame_plain_nccl(std::string_view line, Frame& f) const {
  if (launcher_ != LauncherFormat::kNone || line.empty()) return false;
  char c = line[0];
  bool host_start = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':';
  if (!host_start || util::has_escape(line) || line.find('\r') != std::string_view::npos) return false;
  std::string_view rest = line;
  if (!peel_nccl(rest, f)) return false;
  f.had_prefix = true;
  f.body = rest;
  return true;
}

Frame Framer::frame(std::string_view raw) {
  // Offsets into the line (glued_at) stay those of the physical line.
  std::string_view line = unwrap_paste(raw);
  Frame f;
  if (frame_plain_nccl(line, f)) return f;
  f = Frame{};
  std::string_view rest = line;
  bool stripped = util::has_escape(rest);
  if (stripped) {
    scratch_ = util::strip_ansi(rest);
    rest = scratch_;
  }
  // Where a position in the text being framed is in the physical line (0:
  // nowhere inside it): the same place, or, when colours were stripped
  // first, the place the stripped text's character came from.
  auto raw_offset = [&](const char* at) -> size_t {
    if (at > raw.data() && at < raw.data() + raw.size()) return static_cast<size_t>(at - raw.data());
    if (!stripped || at < scratch_.data() || at >= scratch_.data() + scratch_.size()) return 0;
    size_t offset = static_cast<size_t>(line.data() - raw.data()) +
                    util::offset_before_stripping(line, static_cast<size_t>(at - scratch_.data()));
    return offset < raw.size() ? offset : 0;
  };
  unsigned peeled = 0;
  while (peel_launcher(rest, f, peeled)) f.had_prefix = true;
  peel_ray_repeat(rest, f);
  // torchrun's tee prefix wraps whatever its child wrote, '\r' redraws included.
  if (peel_bracket_prefixes(rest, f)) f.had_prefix = true;
  // Progress bars redraw with '\r': the last non-empty segment is what stayed on screen.
  if (size_t cr = last_carriage_return(rest); cr != std::string_view::npos) {
    std::string_view last = rest.substr(cr + 1);
    while (util::is_blank(last) && cr > 0) {
      size_t prev = rest.rfind('\r', cr - 1);
      last = rest.substr(prev == std::string_view::npos ? 0 : prev + 1,
                         cr - (prev == std::string_view::npos ? 0 : prev + 1));
      if (prev == std::string_view::npos) break;
      cr = prev;
    }
    rest = last;
    f.progress_bar = true;
    if (peel_bracket_prefixes(rest, f)) f.had_prefix = true;
  }
  if (!rest.empty() && rest[0] != '[') {
    // A log line glued to the end of a progress bar: "...181.19s/it][rank0]:[E709 ...".
    // Behind a launcher or tee prefix only when the text before it is a progress bar.
    for (std::string_view marker : {std::string_view("[rank"), std::string_view("[default")}) {
      size_t at = rest.find(marker);
      std::string_view role;
      int n = 0;
      if (at != std::string_view::npos && at > 0 &&
          match_bracket_rank(rest.substr(at), &role, &n) &&
          (!f.had_prefix || looks_like_progress_bar(rest.substr(0, at)))) {
        rest.remove_prefix(at);
        f.glued_at = raw_offset(rest.data());
        f.progress_bar = true;
        if (peel_bracket_prefixes(rest, f)) f.had_prefix = true;
        break;
      }
    }
  }
  // Most lines have no "][": one scan for it before the bar's three.
  if (f.glued_at == 0 && !rest.empty() && rest[0] != '[' && rest.find("][") != std::string_view::npos &&
      looks_like_progress_bar(rest) && glue_c10_line(rest, f))
    f.glued_at = raw_offset(rest.data());
  if (f.glued_at == 0 && !rest.empty() && rest[0] != '[') {
    size_t at = text_after_bar_stats(rest);
    if (at > 0 && raw_offset(rest.data() + at) > 0) {
      rest.remove_prefix(at);
      f.glued_at = raw_offset(rest.data());
      f.progress_bar = true;
    }
  }
  peel_producer(rest, f);
  if (f.producer != Producer::kUnknown) f.had_prefix = true;
  f.body = rest;
  if (f.producer == Producer::kC10 || f.producer == Producer::kGlog ||
      f.producer == Producer::kPyLogging || f.producer == Producer::kUnknown)
    peel_pg_prefix(f);
  return f;
}

}  // namespace ncclpm::frame
