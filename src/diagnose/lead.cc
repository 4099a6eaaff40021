// src/diagnose/lead.cc
#include "lead.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "ncclpm/recognize/parsers.h"
#include "ncclpm/util/text.h"

namespace ncclpm::diagnose {
namespace {

bool names_startup_step(std::string_view line);

constexpr size_t kCascadeLines = 5;

// Event kinds that are failures whatever their words.
bool error_kind(const std::string& kind) {
  static const std::set<std::string> kKinds = {
      "nccl_warn",   "nccl_error_trace", "nccl_error_surfaced", "traceback",      "cpp_exception",
      "store_error", "process_exit",     "watchdog_stuck",      "pg_terminate",   "collective_mismatch",
      "desync_report", "logged_error"};
  return kKinds.count(kind) != 0;
}

// Words that make a line an error when no catalogue names it. Deliberately
// broad: the point is that no error line goes unmentioned.
const RE2& error_words() {
  static const RE2 kRe(
      R"(\b[A-Z]\w*(?:Error|Exception)\b|\bERROR\b|\bFATAL\b|\b[Ee]rror:|\bfailed\b|\bfailure\b|Segmentation fault|)"
      R"(core dumped|\bKilled\b|CANCELLED|\bSIG(?:TERM|KILL|SEGV|ABRT|BUS)\b|exitcode\s*:\s*-?[1-9]|)"
      R"(exit code:? -?[1-9]|non-zero exit|has been aborted|\bXid\b|timed out|[Ww]atchdog caught|)"
      // A crash handler's banner, its signal's name maybe on a later line
      // (Open MPI's and UCX's: "*** Process received signal ***", "Caught signal 11").
      R"(\*\*\* Process received signal|Caught signal \d+|)"
      // A message that begins with the word, at whatever level its logger
      // printed it (glog's "curl_transport.cc:444] Error [28]=Timeout was
      // reached", a bare "Error while ..."): it reports an error.
      R"((?:^|\]\s*)Error\b|)"
      // A native backtrace (glibc's backtrace_symbols: "libc.so.6(abort+0xc2)[0x7fda...]")
      // through abort() or raise(): the process was aborting when it was printed.
      R"(\((?:__GI_)?(?:abort|raise)\+0x[0-9a-f]+\)\[0x|)"
      // A network's failed work completion, whatever transport or plugin printed it.
      R"(Got completion (?:from peer \S+ )?with (?:error|status))");
  return kRe;
}

// A command line printed as Python's list of its arguments (a launcher's
// record of the worker that failed: "['python', '-u', 'train.py',
// '--ddp_timeout', '3600', ...]"): the words in it are options, not what went
// wrong. The list is cut out before the words are read.
std::string without_argument_lists(std::string_view text) {
  static const RE2 kArgv(R"(\[\s*'[^']*'(?:,\s*'[^']*')+,?\]?)");
  std::string out(text);
  RE2::GlobalReplace(&out, kArgv, "[...]");
  return out;
}

// A category from the words of a line no catalogue names: a classification
// by the field's vocabulary, most specific first.
std::string category_from_words(std::string_view line) {
  std::string text = without_argument_lists(line);
  static const std::vector<std::pair<std::string, std::unique_ptr<RE2>>> kByWords = [] {
    std::vector<std::pair<std::string, std::unique_ptr<RE2>>> v;
    auto add = [&v](const char* cat, const char* re) { v.emplace_back(cat, std::make_unique<RE2>(re)); };
    add("rank_crash_oom", R"((?i)out of memory|OutOfMemory|\bOOM\b|Cannot allocate memory|oom-kill|OOMKilled)");
    add("gpu_hardware", R"(\bXid\b|\bECC\b|fallen off the bus|(?i)nvlink error|uncorrectable)");
    add("duplicate_gpu", R"(Duplicate GPU detected)");
    add("cuda_error", R"((?i)cuda error|cuda failure|cudaError|unhandled cuda|illegal memory access|device-side assert|CUBLAS_STATUS|CUDNN_STATUS|launch failure)");
    add("network_ib", R"(\bibv_|NET/IB|\bmlx\d|RoCE|InfiniBand|IBV_WC_|ib_plugin|net_ib)");
    add("version_mismatch", R"((?i)version mismatch|mismatched versions?|driver version is insufficient)");
    add("init_failure", R"(TCPStore|[Rr]endezvous|DistStoreError|init_process_group|ncclCommInit|[Bb]ootstrap|ncclUniqueId|EADDRINUSE|[Aa]ddress already in use)");
    add("network_socket", R"((?i)socket|connection (?:reset|refused|closed)|broken pipe|no route to host|NET/Socket|remote process exited|\bconnect to\b|call to connect)");
    add("nccl_setup_error", R"(ncclInternalError|ncclInvalidUsage|ncclInvalidArgument|ncclSystemError|(?i)internal error|invalid usage|NCCL_TOPO|topology|/dev/shm)");
    add("collective_timeout", R"([Ww]atchdog caught|[Tt]imed out|[Tt]imeout)");
    add("launcher_sigterm", R"(SIGTERM|SIGHUP|SignalException|Terminating|CANCELLED|closing signal|[Pp]reempt|mpirun|prterun|job has been aborted)");
    return v;
  }();
  for (const auto& [cat, re] : kByWords)
    if (RE2::PartialMatch(text, *re)) return cat;
  return "rank_crash";
}

// A traceback's exception: its last line that is no frame, no frame's source
// line and no chaining header. Usually the block's last line, but not when
// the paste was cut inside a chained exception's frames.
std::string_view exception_line(std::string_view traceback) {
  std::string_view found;
  bool after_frame = false;
  for (std::string_view l : util::split(traceback, '\n')) {
    l = util::trim(l);
    bool frame = l.starts_with("File \"");
    if (!l.empty() && !frame && !after_frame && !l.starts_with("Traceback (most recent call last)") &&
        !l.starts_with("The above exception was") && !l.starts_with("During handling of the above"))
      found = l;
    after_frame = frame;
  }
  return found;
}

// The line of a block that says what went wrong: a traceback's exception,
// otherwise the first.
std::string_view telling_line(std::string_view text, const std::string& kind) {
  std::string_view t = util::trim(text);
  if (kind == "traceback") {
    if (std::string_view e = exception_line(t); !e.empty()) return e;
    return util::trim(t.substr(t.rfind('\n') == std::string_view::npos ? 0 : t.rfind('\n') + 1));
  }
  return util::trim(t.substr(0, t.find('\n')));
}

struct NamedLine {
  std::string_view line;
  const vocab::CatalogEntry* entry = nullptr;  // the catalogue's name for it, if any
};

// The line of an event that says what went wrong, with its catalogue entry.
// Of an error with detail lines under it (PyTorch's "NCCL error in: ..." then
// "Last error:" and NCCL's own words), the catalogued cause says most.
NamedLine telling_named_line(std::string_view text, const std::string& kind, const vocab::Catalog& catalog) {
  // Of a traceback, only its exception's message may hold such lines (its
  // frames' source lines are code).
  std::string_view detail = text;
  if (kind == "traceback") {
    std::string_view e = exception_line(text);
    detail = e.empty() ? std::string_view() : text.substr(static_cast<size_t>(e.data() - text.data()));
  }
  if (detail.find('\n') != std::string_view::npos) {
    // A cause first; else a line that may be one (a network plugin's failed call).
    for (const char* role : {"cause", "either"}) {
      for (std::string_view l : util::split(detail, '\n')) {
        const vocab::CatalogEntry* c = catalog.classify(util::trim(l));
        if (c != nullptr && c->is_error() && c->role == role && (c->printed_by_nccl() || c->role == "cause"))
          return {util::trim(l), c};
      }
    }
  }
  std::string_view line = telling_line(text, kind);
  return {line, catalog.classify(line)};
}

constexpr const char* kFramesOnly = "frames of a Python traceback (its exception line is not in the logs)";

// A line without a letter names no error: the "{" that opens the JSON
// torchelastic's error handler prints at ERROR level, a row of dashes. What
// follows says it.
bool names_nothing(std::string_view line) {
  return std::none_of(line.begin(), line.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; });
}

// An exception named by its type: out of memory, a CUDA error, a crash.
std::optional<ErrorLine> classify(const Located& at, const std::string& kind, const vocab::Catalog& catalog) {
  auto [line, entry] = telling_named_line(at.text, kind, catalog);
  if (names_nothing(line)) return std::nullopt;
  ErrorLine e{at, kind, "", "error", "either", ""};
  e.at.text = std::string(line);
  // PyTorch's "NCCL error in: ..." says only the result; NCCL's own words
  // under "Last error:" may name the step that failed. (A traceback's frames
  // name the code it passed through, not a step that failed.)
  if (kind != "traceback")
    for (std::string_view l : util::split(at.text, '\n'))
      e.detail_names_startup = e.detail_names_startup || (l.data() != line.data() && names_startup_step(l));
  if (const vocab::CatalogEntry* c = entry) {
    if (!c->is_error() && !error_kind(kind)) return std::nullopt;
    e.category = c->category;
    // A notice is a message its producer prints and carries on after (NCCL
    // falling back to sockets when it cannot load libibverbs): kept as such.
    e.severity = c->is_error() || c->severity == "notice" ? c->severity : "error";
    e.role = c->role;
    e.named_by = c->catalog + " catalogue (" + c->source + ")";
    e.catalog = c->catalog;
    e.printed_by_nccl = c->printed_by_nccl();
    e.source = c->source;
    return e;
  }
  bool words = RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), error_words());
  // A Python traceback's frame that no traceback event took in: the paste
  // was cut above its "Traceback" header, but an exception was raised there
  // all the same. The frame's source line that raises ("raise
  // RendezvousConnectionError(") names an exception but is code, not its message.
  bool frame = line.starts_with("raise ") ||
               (!words && recognize::is_python_frame(line));
  if (kind == "unparsed" && frame) {
    e.category = "rank_crash";
    e.named_by = kFramesOnly;
    // Its exception is usually a few lines below, not grouped with the frames
    // (the header was cut): that line says more, so the frames lead only
    // when no other error line is there.
    e.role = "consequence";
    return e;
  }
  if (!error_kind(kind) && !words) return std::nullopt;
  if (kind == "process_exit" && !words && line.find("exit") == std::string_view::npos) return std::nullopt;
  e.category = category_from_words(line);
  e.named_by = kind == "traceback" ? "exception" : "words";
  // An error trace (`init.cc:123 -> 2`) and a torchrun summary report a failure
  // that happened elsewhere first.
  if (kind == "nccl_error_trace" || kind == "process_exit" || kind == "pg_terminate") e.role = "consequence";
  return e;
}

std::string advice_for(const std::string& category, const std::string& catalog = "") {
  // The OFI plugin's network is libfabric's (AWS EFA), not an InfiniBand HCA.
  if (catalog == "nccl-net-ofi" && category == "network_ib")
    return "The aws-ofi-nccl plugin's libfabric provider failed on the named host: check `fi_info -p efa` there, that "
           "the container sees the EFA devices (/dev/infiniband), that the security group allows all traffic to and "
           "from itself (EFA needs it), and that the plugin release suits the NCCL version; NCCL_DEBUG=INFO "
           "NCCL_DEBUG_SUBSYS=INIT,NET shows the provider it chose. NCCL_NET=Socket tells the fabric apart from the rest.";
  static const std::map<std::string, std::string> kAdvice = {
      {"network_ib", "Check the InfiniBand/RoCE fabric of the named host: `ibstat` / `ibv_devinfo` port state, `ibdev2netdev`, the NCCL_IB_HCA and NCCL_IB_GID_INDEX settings, and run nccl-tests (all_reduce_perf) across the hosts involved."},
      {"network_socket", "Check the interface NCCL uses between the hosts (NCCL_SOCKET_IFNAME), firewalls and MTU; if another rank failed first, this is its cascade."},
      {"cuda_error", "Run the failing rank with CUDA_LAUNCH_BLOCKING=1 and check `nvidia-smi -q` and `dmesg` on its host for Xid errors; make sure the driver supports the CUDA version the job was built with."},
      {"gpu_hardware", "Drain the named host and check `nvidia-smi -q -d ECC,ROW_REMAPPER` and `dmesg | grep -i xid`; reset or replace the GPU before rerunning."},
      {"rank_crash_oom", "Reduce memory on the named rank: smaller per-device batch, activation checkpointing, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; check the host's OOM killer in `dmesg`."},
      {"init_failure", "The job did not get past initialisation: check that every rank reaches the same MASTER_ADDR:MASTER_PORT, the port is free, and all ranks start within the store timeout."},
      {"nccl_setup_error", "Rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV to see the setup step that failed; check NCCL_TOPO_FILE / NCCL_GRAPH_FILE settings and the size of /dev/shm in containers."},
      {"collective_timeout", "A collective hung: rerun with TORCH_NCCL_DESYNC_DEBUG=1 and NCCL_DEBUG=INFO to see which rank did not join."},
      {"desync", "The ranks disagreed about a message or a collective (sizes, order, or versions): compare the ranks' NCCL versions and the collectives each issued; TORCH_DISTRIBUTED_DEBUG=DETAIL reports mismatched collectives."},
      {"launcher_sigterm", "The launcher or the scheduler stopped the job: check the scheduler's record of the job (time limit, preemption, cancel) and whether a rank failed before it."},
  };
  auto it = kAdvice.find(category);
  return it != kAdvice.end() ? it->second
                             : "Read the named rank's log around this line; rerun with NCCL_DEBUG=INFO and "
                               "TORCH_DISTRIBUTED_DEBUG=DETAIL for more detail.";
}

// The line's host, or the host its rank ran on when the line names none.
std::string host_of(const Located& l, const JobFacts& facts) {
  if (!l.host.empty() || l.rank < 0) return l.host;
  auto h = facts.host_of_rank.find(l.rank);
  return h != facts.host_of_rank.end() ? h->second : std::string();
}

template <typename T>
void add_once(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

std::string where(const Located& l, const JobFacts& facts) {
  std::string host = host_of(l, facts);
  std::string w = l.rank >= 0 ? "rank " + std::to_string(l.rank) : "";
  if (!host.empty()) w += w.empty() ? host : " (" + host + ")";
  return w.empty() ? l.file + ":" + std::to_string(l.line) : w;
}

// The heading of a finding that diagnose itself makes (no rule file names it).
Finding finding_of(std::string rule, std::string category, std::string title, std::string severity,
                   double confidence, bool root_cause) {
  Finding f;
  f.rule = std::move(rule);
  f.category = std::move(category);
  f.title = std::move(title);
  f.severity = std::move(severity);
  f.confidence = confidence;
  f.root_cause = root_cause;
  return f;
}

}  // namespace

Result<std::vector<ErrorLine>> error_lines(store::Connection& db, const JobFacts& facts, const vocab::Catalog& catalog) {
  // NCCL's INFO chatter is most of a big job's unparsed lines; the INFO lines
  // that report a failure carry one of recognize's failure words (LIKE
  // ignores their case too), or an error trace's arrow.
  static const std::string kNcclInfoFailure = [] {
    std::string sql = "(u.producer <> 'nccl' OR u.text LIKE '% -> %'";
    for (std::string_view w : recognize::kNcclInfoFailureWords) sql += " OR u.text LIKE '%" + std::string(w) + "%'";
    return sql + ")";
  }();
  std::string sql = std::string("SELECT ") + kLocatedColumns +
                    ", e.kind FROM events e JOIN files f USING (file_id) WHERE e.job_id = ?1 AND " +
                    event_kind_not_in(kNcclChatterKinds);
  // A progress bar may carry another process's error glued to its end, where
  // no framer split it off (`... 2.88s/it][rank5]:[E602 ...] Watchdog caught ...`).
  sql += " UNION ALL SELECT f.rel_path, p.line_no, p.rank, p.host, coalesce(p.ts_us, 0), p.text, 'training_progress'"
         " FROM training_progress p JOIN files f USING (file_id) WHERE p.job_id = ?1";
  // A line its producer logged at level E or F (c10d's `[E212 ...]`, glog,
  // Python logging's ERROR) is an error whatever its words, even cut short.
  sql += " UNION ALL SELECT f.rel_path, u.line_no, u.rank, u.host, coalesce(u.ts_us, 0), u.text,"
         " CASE WHEN u.severity IN ('E', 'F') THEN 'logged_error' ELSE 'unparsed' END"
         " FROM unparsed_lines u JOIN files f USING (file_id) WHERE u.job_id = ?1 AND ";
  sql += kNcclInfoFailure;
  auto stmt = db.prepare(sql);
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({facts.job_id}); !s) return s.take_error();
  std::vector<ErrorLine> out;
  std::optional<Error> err;
  while (stmt->step(&err))
    if (auto e = classify(read_located(*stmt), stmt->column_text(6), catalog)) out.push_back(std::move(*e));
  if (err) return *err;
  std::sort(out.begin(), out.end(), [](const ErrorLine& x, const ErrorLine& y) { return earlier(x.at, y.at); });
  return out;
}

std::vector<ErrorLine> nccl_error_lines(const std::vector<ScannedLine>& scanned, const vocab::Catalog& catalog) {
  std::vector<ErrorLine> out;
  for (const ScannedLine& l : scanned)
    if (auto e = classify(l.at, l.kind, catalog)) out.push_back(std::move(*e));
  std::sort(out.begin(), out.end(), [](const ErrorLine& x, const ErrorLine& y) { return earlier(x.at, y.at); });
  return out;
}

std::optional<Lead> earliest_error_lead(const std::vector<ErrorLine>& errors, const JobFacts& facts) {
  if (errors.empty()) return std::nullopt;
  // A failure reported as a consequence of another (a peer closing its
  // socket, torchrun's summary), or a notice its producer carried on after,
  // leads only when nothing else is there.
  auto telling = [](const ErrorLine& e) { return e.role != "consequence" && e.severity != "notice"; };
  auto lead = std::find_if(errors.begin(), errors.end(), telling);
  // Frames whose exception line is not in the logs say least of all: an
  // exception line below them, even a reported consequence, says more.
  if (lead == errors.end())
    lead = std::find_if(errors.begin(), errors.end(), [](const ErrorLine& e) { return e.named_by != kFramesOnly; });
  if (lead == errors.end()) lead = errors.begin();
  // Time orders lines across files; within one file, lines are in the order
  // they were written: an error without a time above the lead in its own
  // file came first (a launcher's line among a worker's timed ones).
  if (lead->at.ts_us != 0) {
    for (auto e = errors.begin(); e != errors.end(); ++e)
      if (telling(*e) && e->at.ts_us == 0 && e->at.file == lead->at.file && e->at.line < lead->at.line)
        lead = e;
  }
  double confidence = lead->named_by.find("catalogue") != std::string::npos ? 0.35 : 0.25;
  Finding f = finding_of("earliest-error-line", lead->category, "The earliest error in the logs", lead->severity,
                         confidence, true);
  if (lead->at.rank >= 0) f.culprit_ranks = {lead->at.rank};
  if (std::string host = host_of(lead->at, facts); !host.empty()) f.culprit_hosts = {host};
  f.evidence.push_back(lead->at.evidence());
  for (const ErrorLine& e : errors) {
    if (f.evidence.size() > kCascadeLines) break;
    bool same = e.at.file == lead->at.file && e.at.line == lead->at.line;
    bool seen = std::any_of(f.evidence.begin(), f.evidence.end(), [&](const Evidence& x) { return x.text == e.at.text; });
    if (!same && !seen && !(e.at.ts_us != 0 && lead->at.ts_us != 0 && e.at.ts_us < lead->at.ts_us))
      f.evidence.push_back(e.at.evidence());
  }
  f.first_ts_us = lead->at.ts_us;
  f.summary = "No known signature explains this job. The earliest error is on " + where(lead->at, facts) + ": " +
              std::string(util::clip(lead->at.text, 200)) + " (" + lead->category + " by the " + lead->named_by + ").";
  if (f.evidence.size() > 1) f.summary += " The lines below it followed it.";
  f.advice = advice_for(lead->category, lead->catalog);
  bool catalogued = !lead->catalog.empty();
  return Lead{std::move(f), catalogued && lead->role == "cause", catalogued && lead->role == "consequence"};
}

std::vector<Finding> catalogued_nccl_warnings(const std::vector<ErrorLine>& errors, const JobFacts& facts,
                                              const std::vector<Finding>& existing) {
  std::map<std::string, Finding> by_category;
  for (const ErrorLine& e : errors) {
    if (!e.printed_by_nccl || e.role == "consequence" || e.severity == "notice") continue;
    bool named = std::any_of(existing.begin(), existing.end(), [&](const Finding& f) { return f.category == e.category; });
    if (named) continue;
    auto [it, fresh] = by_category.try_emplace(e.category);
    Finding& f = it->second;
    if (fresh) {
      f.rule = "nccl-warning-catalogued";
      f.category = e.category;
      f.title = "NCCL reported a failure";
      f.severity = e.severity;
      f.confidence = e.role == "cause" ? 0.72 : 0.66;
      // NCCL printed it as INFO (a retry, a recovery): it went on after it.
      if (e.source.ends_with("[INFO]")) f.confidence -= 0.1;
      f.root_cause = true;
      f.first_ts_us = e.at.ts_us;
      f.summary = "NCCL reported on " + where(e.at, facts) + ": " + std::string(util::clip(e.at.text, 200)) + " (" +
                  e.category + " by the " + e.named_by + ").";
      f.advice = advice_for(e.category, e.catalog);
    }
    // Every rank that reported it is a culprit; the evidence shows a few.
    if (e.at.rank >= 0) add_once(f.culprit_ranks, e.at.rank);
    if (std::string host = host_of(e.at, facts); !host.empty()) add_once(f.culprit_hosts, host);
    bool seen = std::any_of(f.evidence.begin(), f.evidence.end(),
                            [&](const Evidence& x) { return x.text == e.at.text && x.host == e.at.host; });
    if (f.evidence.size() <= kCascadeLines && !seen) f.evidence.push_back(e.at.evidence());
  }
  std::vector<Finding> out;
  for (auto& [cat, f] : by_category) {
    std::sort(f.culprit_ranks.begin(), f.culprit_ranks.end());
    out.push_back(std::move(f));
  }
  return out;
}

namespace {

// How far each process got: 1 NCCL loaded (its version banner, or an NCCL_* setting
// it read, which it prints while setting up its first communicator), 2 init started, 3 channels, 4 Init COMPLETE.
struct InitProgress {
  std::map<int, std::vector<std::string>> by_stage;  // stage -> "rank 3 (host)"
  std::map<std::pair<int, std::string>, int> stage_of;  // (rank, host) -> stage
  std::set<std::string> hosts;  // hosts where a process logged its NCCL start-up
  bool any_complete = false;
  bool trained = false;  // the training loop printed progress, or NCCL logged collectives
};

Result<InitProgress> load_init_progress(store::Connection& db, const JobFacts& facts) {
  auto stmt = db.prepare(
      "SELECT rank, host, pid, max(stage) FROM ("
      " SELECT coalesce(e.rank, -1) AS rank, coalesce(e.host, '') AS host, coalesce(e.pid, -1) AS pid,"
      "  CASE WHEN c.event = 'init_complete' OR c.event = 'summary' THEN 4 WHEN c.event = 'init_start' THEN 2"
      "  ELSE 1 END AS stage"
      "  FROM events e LEFT JOIN communicators c USING (event_id) WHERE e.job_id = ?1"
      "  AND e.kind IN ('nccl_version', 'nccl_env', 'nccl_comm')"
      // A process that printed its transports or its channels got that far:
      // its groups say so without a block decoded.
      " UNION ALL SELECT coalesce(rank, -1), coalesce(host, ''), coalesce(pid, -1),"
      "  CASE kind WHEN 'nccl_channel' THEN 3 ELSE 1 END FROM line_groups"
      "  WHERE job_id = ?1 AND kind IN ('nccl_channel', 'nccl_network'))"
      " GROUP BY 1, 2, 3");
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({facts.job_id}); !s) return s.take_error();
  InitProgress p;
  std::optional<Error> err;
  while (stmt->step(&err)) {
    Located l{"", 0, static_cast<int>(stmt->column_int(0)), stmt->column_text(1), 0, ""};
    int stage = static_cast<int>(stmt->column_int(3));
    p.any_complete = p.any_complete || stage == 4;
    std::string host = host_of(l, facts);
    int64_t pid = stmt->column_int(2);
    // A process nobody can name (a paste without prefixes) is left out.
    if (l.rank < 0 && host.empty() && pid < 0) continue;
    int& known = p.stage_of[{l.rank, host}];
    known = std::max(known, stage);
    if (!host.empty()) p.hosts.insert(host);
    std::string process = host;
    if (pid >= 0) process += (host.empty() ? "pid " : " pid ") + std::to_string(pid);
    add_once(p.by_stage[stage], l.rank >= 0 ? where(l, facts) : process);
  }
  if (err) return *err;
  auto progress_streams = db.scalar_int("SELECT count(*) FROM progress_streams WHERE job_id = ?1", {facts.job_id});
  if (!progress_streams) return progress_streams.take_error();
  p.trained = *progress_streams > 0 || !facts.coll_stats.empty();
  return p;
}

// Words of a start-up step: the calls and files of communicator set-up and
// of joining the job, and what NCCL does only while connecting a communicator.
bool names_startup_step(std::string_view line) {
  static const RE2 kInitPath(
      R"(init\.cc|ncclCommInit|[Bb]ootstrap|ncclCommSplit|[Rr]endezvous|TCPStore|DistStoreError|init_process_group|)"
      R"(ncclUniqueId|proxy\.cc|transport\.cc|[Aa]ddress already in use|worker group|)"
      R"(client socket (?:has failed to connect|has timed out after \S+ while trying to connect|cannot be initialized)|)"
      R"(TCP client failed to connect|connection to the C10d store|)"
      // no NCCL to load: the framework's build has none, or the library is missing
      R"(have NCCL built in|Unable to load NCCL library|libnccl\.so[.\d]*: cannot open|support Op 'Nccl|)"
      // PyTorch's NCCLComm wrapper (NCCLUtils.hpp, NCCLUtils.cpp from 2.6)
      // checks the calls that create and split a communicator, which PyTorch
      // makes at a rank's first collective; its other checked calls (abort,
      // finalize, buffer registration) seldom fail.
      R"(NCCL error in: \S*NCCLUtils\.(?:hpp|cpp):\d+|Exception raised from (?:create|split)\w* at \S*NCCLUtils)");
  // What NCCL does only while connecting a communicator, whichever file of
  // whichever release prints it: picking a network interface, creating,
  // binding and listening on its sockets, opening a connection, creating and
  // sizing the shared-memory segments of its SHM transport and proxy.
  // (Tearing them down, and a peer closing a
  // connection, happen at any time and are not here; a process that printed
  // Init COMPLETE is not counted whatever it says.)
  static const RE2 kSetupStep(
      R"([Ss]ocket creation (?:failed|error)|Call to (?:socket|bind|listen) failed|[Nn]o (?:socket |IP |usable )?)"
      R"((?:listening )?interface found|(?:creating|attaching to) shared memory segment|failed to extend \S*/dev/shm|)"
      R"(failed to create shared memory file|Call to (?:posix_fallocate|shm_open|mmap) failed|)"
      R"(failed ?: Connection refused|)"
      // NCCL's socket connect, whatever the reason it failed: bootstrap,
      // socket transport and proxy connect only while setting up (every
      // release: "Connect to %s failed : %s", "socketStartConnect: ...",
      // "socketPollConnect to %s failed with error %s")
      R"(\bConnect to \S+ (?:failed|returned)|socketPollConnect to \S+ failed|)"
      // and its retries of a refused or unreachable peer ("Call to connect
      // returned %s, retrying", "%s: connect [to %s ]returned %s, retrying ...")
      R"(\b[Cc](?:all to c)?onnect (?:to \S+ )?returned .*, retrying|)"
      // the proxy thread setting up a connection for its rank
      R"(operation[= ]Connect\b)");
  re2::StringPiece l(line.data(), line.size());
  return RE2::PartialMatch(l, kInitPath) || RE2::PartialMatch(l, kSetupStep);
}

// An error on the start-up path: its words name it (or those of the NCCL
// detail under it), NCCL prints it only while setting a communicator up, or
// its category is a start-up one. A client connects to the c10d store only
// when it joins the job, so its connect failing is a start-up failure too (a
// socket error by category).
bool on_startup_path(const ErrorLine& e) {
  // NCCL prints these files' messages only while a communicator is being set
  // up: its init, bootstrap, topology and graph search, transport and proxy
  // connection setup, NVLS buffers.
  static const RE2 kInitSource(
      R"(^src/(?:init\.cc|bootstrap\.cc|graph/|transport\.cc|proxy\.cc|channel\.cc|transport/nvls\.cc|)"
      R"(transport/p2p\.cc|transport/shm\.cc|misc/shmutils\.cc|include/shm\.h))");
  // A frame of a cut traceback says where code ran, not that it failed there.
  if (e.named_by.starts_with("frames of")) return false;
  // Those files also print, at any time, a report of a peer that went away
  // ("[Service thread] Connection closed by localRank 7", proxy.cc) and the
  // hang of a mismatched collective (init.cc, 2.4-2.7): not start-up steps.
  bool setup_file = e.catalog == "nccl" && RE2::PartialMatch(e.source, kInitSource) && e.role != "consequence" &&
                    e.category != "desync";
  return names_startup_step(e.at.text) || e.detail_names_startup || setup_file || e.category == "duplicate_gpu" ||
         e.category == "init_failure";
}

// "rank 0 (a), rank 1 (a) printed Init COMPLETE; b pid 7 loaded NCCL"
std::string progress_words(const InitProgress& p) {
  static const char* kStage[] = {"", "loaded NCCL", "started communicator init", "connected channels",
                                 "printed Init COMPLETE"};
  std::string progress;
  for (auto it = p.by_stage.rbegin(); it != p.by_stage.rend(); ++it) {
    std::string who;
    for (size_t i = 0; i < it->second.size() && i < 6; ++i) who += (i ? ", " : "") + it->second[i];
    if (it->second.size() > 6) who += " and " + std::to_string(it->second.size() - 6) + " more";
    progress += (progress.empty() ? "" : "; ") + who + " " + kStage[it->first];
  }
  return progress;
}

// A launcher kills the remaining workers only once one of them failed, or
// once it was signalled itself (then it says so: "Main process received
// SIGTERM", and the rules name the stop). A kill cascade with no error line
// and no such signal in the logs says a worker failed whose own output is not
// there: that failure is the cause, unnamed.
std::optional<Finding> failure_behind_launcher_kill(const std::vector<Finding>& findings) {
  static const RE2 kSignalled(R"([Rr]eceived (?:SIG[A-Z]+|Signals\.SIG[A-Z]+|\d+ death signal))");
  const Finding* kill = nullptr;
  for (const Finding& f : findings) {
    if (f.rule != "launcher-sigterm-cascade") continue;
    for (const Evidence& e : f.evidence)
      if (RE2::PartialMatch(e.text, kSignalled)) return std::nullopt;
    kill = &f;
  }
  if (kill == nullptr || kill->evidence.empty()) return std::nullopt;
  Finding f = finding_of("failure-behind-launcher-kill", "rank_crash",
                         "A worker failed before the launcher stopped the others", "error", 0.3, true);
  f.evidence = kill->evidence;
  f.first_ts_us = kill->first_ts_us;
  f.summary = "The launcher killed its workers (" + std::string(util::clip(kill->evidence.front().text, 120)) +
              ") and was not signalled itself: a worker failed first, and its own output is not in the logs.";
  f.advice = "Find the worker that exited first: its exit status is in the launcher's log (torchrun's 'failed "
             "(exitcode: N)', DeepSpeed's 'exits with return code = N'; a negative code is the signal that killed "
             "it: -9 often the host's OOM killer, -6 an abort, -11 a segfault). Collect that rank's own output "
             "(stdout and stderr per rank: torchrun --redirects 3 --log-dir) and check `dmesg` on its host.";
  return f;
}

}  // namespace

Result<std::optional<Finding>> startup_failure(store::Connection& db, const JobFacts& facts,
                                               const std::vector<ErrorLine>& errors) {
  // Once a collective timed out the communicator had formed: not a start-up failure.
  if (!facts.timeouts.empty()) return std::optional<Finding>();
  // Nor without an error: then the (costly, on NCCL INFO logs) stages are not read.
  if (std::all_of(errors.begin(), errors.end(), [](const ErrorLine& e) { return e.severity == "notice"; }))
    return std::optional<Finding>();
  auto progress = load_init_progress(db, facts);
  if (!progress) return progress.take_error();
  const ErrorLine* first = nullptr;
  for (const ErrorLine& e : errors) {
    // A process whose communicator did form failed later, not at start-up.
    // (A process that formed one communicator and failed to set up another
    // is not told apart: its stage is its furthest.)
    auto st = progress->stage_of.find({e.at.rank, host_of(e.at, facts)});
    if (st != progress->stage_of.end() && st->second == 4) continue;
    // An NCCL error in a job whose NCCL logged its start-up and never printed
    // Init COMPLETE, or any error on the start-up path itself.
    if (e.severity == "notice") continue;  // NCCL carried on after it
    bool nccl_error = e.kind == "nccl_warn" || e.kind == "nccl_error_trace" || e.kind == "nccl_error_surfaced" ||
                      e.printed_by_nccl;
    bool never_complete = !progress->by_stage.empty() && !progress->any_complete;
    // Any failure (a crash signal, an exception) of a host whose processes
    // logged their NCCL start-up while no process ever printed Init COMPLETE,
    // in a job that never trained: it died starting. (A job that trained
    // formed its communicators; its start-up lines are another one's, or the
    // paste skipped the middle.)
    std::string host = host_of(e.at, facts);
    bool died_starting = never_complete && !progress->trained &&
                         (progress->hosts.empty() || progress->hosts.count(host) > 0 ||
                          (host.empty() && progress->hosts.size() == 1));
    if (on_startup_path(e) || (nccl_error && never_complete) || died_starting) {
      first = &e;
      break;
    }
  }
  if (first == nullptr) return std::optional<Finding>();
  // Not a root cause: the stage; the specific cause is its own finding.
  Finding f = finding_of("startup-failure", "init_failure",
                         "The job did not get past initialisation", "critical", 0.6, false);
  f.evidence.push_back(first->at.evidence());
  f.first_ts_us = first->at.ts_us;
  if (first->at.rank >= 0) f.culprit_ranks = {first->at.rank};
  if (std::string host = host_of(first->at, facts); !host.empty()) f.culprit_hosts = {host};
  std::string steps = progress_words(*progress);
  f.summary = "A communicator never formed: the first failure on the start-up path is on " + where(first->at, facts) +
              ": " + std::string(util::clip(first->at.text, 160)) + "." +
              (steps.empty() ? " No NCCL init lines were logged (NCCL_DEBUG=INFO shows them)."
                             : " How far the processes got: " + steps + ".");
  f.advice = advice_for("init_failure") +
             " The finding above it names the specific cause; NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,BOOTSTRAP "
             "shows each step of the next attempt.";
  return std::optional<Finding>(std::move(f));
}

// Logs that end inside NCCL's start-up: some process logged it, none printed
// Init COMPLETE, nothing failed and nothing trained. The communicator never
// formed while the job was watched (a hang in bootstrap, topology or
// connection setup, or a paste that stops there: hence the low confidence).
Result<std::optional<Finding>> startup_stall(store::Connection& db, const JobFacts& facts) {
  auto progress = load_init_progress(db, facts);
  if (!progress) return progress.take_error();
  if (progress->by_stage.empty() || progress->any_complete || progress->trained) return std::optional<Finding>();
  Finding f = finding_of("startup-never-completed", "init_failure",
                         "The logs end before any communicator formed", "error", 0.3, true);
  f.summary = "No process printed NCCL's Init COMPLETE and no error was logged: the logs end during start-up. How far the "
              "processes got: " + progress_words(*progress) + ".";
  f.advice = advice_for("init_failure") +
             " A start-up that stops without an error is usually waiting: on a peer that never joined, on a network "
             "interface that the peers cannot reach from one another (compare the Bootstrap and NET lines of each "
             "host), or in a transport's setup (NVLS, P2P). If the job was still running when the logs were taken, "
             "take them again; NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,BOOTSTRAP shows each step of the next attempt.";
  return std::optional<Finding>(std::move(f));
}

// A lead the catalogue calls the report of another failure, which a rule
// read as a failure of another kind ("Failed to recv, got 0 bytes ... Did the
// remote server shutdown or crash?": a peer died), says through that rule
// what the other failure was: with nothing else to explain the job, the
// rule's reading is the diagnosis, and the lead stays beside it as a symptom.
void promote_the_leads_reading(Lead& lead_of_job, std::vector<Finding>& findings) {
  if (!lead_of_job.catalogued_consequence) return;
  Finding& lead = lead_of_job.finding;
  const Evidence& line = lead.evidence.front();
  auto reads_it = [&](const Finding& f) {
    return !f.root_cause && f.category != lead.category &&
           std::any_of(f.evidence.begin(), f.evidence.end(),
                       [&](const Evidence& e) { return e.file == line.file && e.line == line.line; });
  };
  auto reading = std::find_if(findings.begin(), findings.end(), reads_it);
  if (reading == findings.end()) return;
  reading->root_cause = true;
  reading->summary += " Nothing else in the logs explains the job.";
  lead.root_cause = false;
}

// A Python exception whose message is one the catalogue names as a cause of
// another kind (c10d's own words raised as a plain exception: "ValueError:
// host not found: Name or service not known" from the store's address
// lookup): the catalogue's reading is the diagnosis, and the exception is how
// the rank died of it.
void catalogue_reads_the_exception(const std::vector<ErrorLine>& errors, const JobFacts& facts,
                                   std::vector<Finding>& findings) {
  std::vector<Finding> named;
  for (Finding& f : findings) {
    if (f.rule != "python-exception" || !f.root_cause || f.evidence.empty()) continue;
    const Evidence& at = f.evidence.front();
    auto e = std::find_if(errors.begin(), errors.end(), [&](const ErrorLine& e) {
      return e.at.file == at.file && e.at.line == at.line && !e.catalog.empty() && e.role == "cause" &&
             e.category != f.category;
    });
    if (e == errors.end()) continue;
    Finding reading = finding_of("exception-catalogued", e->category, "The exception's message is a known failure",
                                 e->severity, f.confidence, true);
    reading.culprit_ranks = f.culprit_ranks;
    reading.culprit_hosts = f.culprit_hosts;
    reading.evidence = f.evidence;
    reading.first_ts_us = f.first_ts_us;
    reading.summary = "The exception on " + where(e->at, facts) + ", " + std::string(util::clip(e->at.text, 200)) +
                      ", is a message the " + e->catalog + " catalogue names as " + e->category + " (" + e->source +
                      ").";
    reading.advice = advice_for(e->category, e->catalog);
    f.root_cause = false;
    f.summary += " Its message is one the catalogue names as " + e->category + ": the exception-catalogued finding.";
    named.push_back(std::move(reading));
  }
  for (Finding& r : named) findings.push_back(std::move(r));
}

Status add_catalogue_findings(store::Connection& db, const JobFacts& facts, const vocab::Catalog& catalog,
                              const std::vector<ScannedLine>& nccl_lines, std::vector<Finding>& findings) {
  for (Finding& f : catalogued_nccl_warnings(nccl_error_lines(nccl_lines, catalog), facts, findings))
    findings.push_back(std::move(f));
  bool specific_cause = std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.root_cause; });
  bool has_init =
      std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.category == "init_failure"; });
  // Every line is read only when a lead or the start-up stage may be needed:
  // on a big job with a cause and a timeout that pass would be most of diagnose.
  if (specific_cause && (has_init || !facts.timeouts.empty())) return Ok{};
  auto errors = error_lines(db, facts, catalog);
  if (!errors) return errors.take_error();
  catalogue_reads_the_exception(*errors, facts, findings);
  if (!specific_cause) {
    auto lead = earliest_error_lead(*errors, facts);
    // A catalogued cause says more than the symptom; a line named only by its
    // words or by a report of another failure says less than a hang PyTorch
    // itself reported (a collective's timeout, a stuck watchdog, a wait on the
    // c10d store that gave up): then that hang is the diagnosis.
    Finding* hang = nullptr;
    for (Finding& f : findings)
      if ((f.category == "collective_timeout" || f.category == "watchdog_stuck" || f.category == "init_failure") &&
          (hang == nullptr || f.confidence > hang->confidence))
        hang = &f;
    if (hang != nullptr && !(lead && lead->catalogued_cause)) {
      hang->root_cause = true;
      hang->summary += " Nothing in the logs explains it further.";
    } else if (lead) {
      promote_the_leads_reading(*lead, findings);
      findings.push_back(std::move(lead->finding));
    } else if (auto unseen = failure_behind_launcher_kill(findings)) {
      findings.push_back(std::move(*unseen));
    } else if (!has_init && facts.timeouts.empty()) {
      auto stall = startup_stall(db, facts);
      if (!stall) return stall.take_error();
      if (*stall) {
        findings.push_back(std::move(**stall));
        return Ok{};
      }
    }
  }
  // The stage the job never got past; the specific cause is its own finding
  // (the field's reports name the cause, a socket or a setting, not the stage).
  if (!has_init) {
    auto startup = startup_failure(db, facts, *errors);
    if (!startup) return startup.take_error();
    if (*startup) findings.push_back(std::move(**startup));
  }
  return Ok{};
}

}  // namespace ncclpm::diagnose
