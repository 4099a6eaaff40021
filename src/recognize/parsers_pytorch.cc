// src/recognize/parsers_pytorch.cc
//
// PyTorch ProcessGroupNCCL and c10d messages (log-formats B), in every
// wording they had across releases, and the launchers' exit reports (C, D).
#include <re2/re2.h>

#include <algorithm>

#include "match.h"

#include "ncclpm/recognize/parsers.h"
#include "ncclpm/util/text.h"

namespace ncclpm::recognize {
namespace {

int64_t to_int(const std::string& s, int64_t fallback = -1) {
  auto v = util::parse_int(s);
  return v ? *v : fallback;
}

// PyTorch counters can be uninitialised garbage (2.3: 76280750235782912) or -1:
// anything outside [0, 2^53] is "unknown" (log-formats E.9).
int64_t sane_counter(const std::string& s) {
  int64_t v = to_int(s);
  return v < 0 || v > (int64_t{1} << 53) ? -1 : v;
}

// A line cut inside its WorkNCCL(...) (a search excerpt, a terminal's width):
// the fields before the cut, "SeqNum=59709, OpType=_ALLGATHER_BASE, NumelIn=29171".
// The field the cut went through is dropped: its number may be cut short.
WorkRecord cut_work_fields(std::string_view fields) {
  WorkRecord w;
  while (!fields.empty()) {
    size_t comma = fields.find(',');
    if (comma == std::string_view::npos) break;  // the last field, cut
    std::string_view field = util::trim(fields.substr(0, comma));
    fields.remove_prefix(comma + 1);
    size_t eq = field.find('=');
    if (eq == std::string_view::npos) break;
    std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "SeqNum") w.seq = to_int(std::string(value));
    else if (key == "OpType") w.op_type = std::string(value);
    else if (key == "NumelIn") w.numel_in = to_int(std::string(value));
    else if (key == "NumelOut") w.numel_out = to_int(std::string(value));
    else break;  // a tensor shape's own commas: stop at what is sure
  }
  return w;
}

// What a WorkNCCL record at `at` was printed for, by the words around it.
std::string work_context(std::string_view body, size_t at) {
  std::string_view head = body.substr(0, at);
  // "... watchdog thread terminated with exception: [Rank 1] Watchdog caught ..."
  // (and its what() copy) repeats the timeout: it is the termination.
  if (contains(head, "terminated with exception")) return "terminate_exception";
  if (contains(head, "Watchdog caught collective operation timeout") ||
      contains(head, "Caught collective operation timeout"))
    return "watchdog_timeout";
  if (contains(body, "timed out in blocking wait")) return "blocking_wait";
  if (contains(body, "raised the following async exception")) return "async_exception";
  return "mention";
}

}  // namespace

std::optional<WorkRecord> parse_work_record(std::string_view body) {
  size_t at = body.find("WorkNCCL(");
  if (at == std::string_view::npos) return std::nullopt;
  // Optional groups for every era; Timeout(ms) has nested parentheses.
  static const RE2 re(
      R"(WorkNCCL\((?:SeqNum=(\d+), )?OpType=(\w+)(?:, TensorShape=\[([^\]]*)\])?(?:, NumelIn=(-?\d+), NumelOut=(-?\d+))?, Timeout\(ms\)=(\d+)\)(?: ran for (\d+) milliseconds before timing out)?)");
  std::string seq, op, shape, nin, nout, timeout, ran;
  if (!RE2::PartialMatch(sp(body.substr(at)), re, &seq, &op, &shape, &nin, &nout, &timeout, &ran))
    return std::nullopt;
  WorkRecord w;
  w.seq = to_int(seq);
  w.op_type = op;
  w.tensor_shape = shape;
  w.numel_in = to_int(nin);
  w.numel_out = to_int(nout);
  w.timeout_ms = to_int(timeout);
  w.ran_for_ms = to_int(ran);
  w.context = work_context(body, at);
  return w;
}

std::optional<WorkRecord> parse_cut_watchdog_timeout(std::string_view body, bool from_process_group_nccl) {
  size_t at = body.find("WorkNCCL(");
  if (at == std::string_view::npos) {
    // Cut before its record ("[Rank 62] Watchdog caught collective oper"):
    // a timeout, of a collective the line no longer names.
    static constexpr std::string_view kSentence = "Watchdog caught collective operation timeout: WorkNCCL(";
    // Anywhere, the cut must keep "Watchdog caught collective" to be this
    // sentence. On ProcessGroupNCCL's own [Rank N] line a cut after
    // "Watchdog c" is enough: the only other message of its that begins with
    // "Watchdog" is "Watchdog wrote aborted communicator id to store".
    std::string_view start = from_process_group_nccl ? "Watchdog c" : "Watchdog caught collective";
    size_t sentence = body.find(start);
    if (sentence == std::string_view::npos || !kSentence.starts_with(util::trim(body.substr(sentence))))
      return std::nullopt;
    WorkRecord w;
    w.context = "watchdog_timeout";
    return w;
  }
  if (body.find(')', at) != std::string_view::npos ||
      !contains(body.substr(0, at), "Watchdog caught collective operation timeout"))
    return std::nullopt;
  WorkRecord w = cut_work_fields(body.substr(at + 9));
  w.context = work_context(body, at);
  return w;
}

std::optional<PgStatus> parse_pg_status(std::string_view body) {
  if (!contains(body, "last enqueued") && !contains(body, "Last enqueued")) return std::nullopt;
  PgStatus s;
  std::string seq, enq, done, src;
  static const RE2 old_family(
      R"((Exception \(either an error or timeout\) detected by watchdog at work|NCCL error is detected by watchdog at work|Work timeout is detected by watchdog at work|Timeout at NCCL work): (\d+), last enqueued NCCL work: (-?\d+), last completed NCCL work: (-?\d+))");
  static const RE2 new_family(
      R"(failure detected by watchdog at work sequence id: (\d+) PG status: last enqueued work: (-?\d+), last completed work: (-?\d+))");
  static const RE2 dump_signal(
      R"(Received a (?:dump signal due to a collective timeout|timeout signal) from\s+(this local rank|rank\s+-?\d+).*?Last enqueued NCCL work: (-?\d+), last completed NCCL work: (-?\d+))");
  static const RE2 periodic(
      R"(last enqueued NCCL work: (-?\d+), last completed NCCL work: (-?\d+))");
  std::string which;
  if (RE2::PartialMatch(sp(body), old_family, &which, &seq, &enq, &done)) {
    s.wording = which.starts_with("Timeout at") ? "timeout_at"
                : which.starts_with("Exception") ? "exception_detected"
                : which.starts_with("NCCL error") ? "error_detected"
                                                  : "timeout_detected";
  } else if (RE2::PartialMatch(sp(body), new_family, &seq, &enq, &done)) {
    s.wording = "failure_detected";
  } else if (RE2::PartialMatch(sp(body), dump_signal, &src, &enq, &done)) {
    s.wording = "dump_signal";
    s.source_rank = src;
  } else if (RE2::PartialMatch(sp(body), periodic, &enq, &done)) {
    s.wording = "periodic";
  } else {
    return std::nullopt;
  }
  s.seq = sane_counter(seq);
  s.last_enqueued = sane_counter(enq);
  s.last_completed = sane_counter(done);
  return s;
}

// Desync report bullets (B.8): each line is parsed alone because their
// continuation lines carry no prefix.
std::optional<DesyncReport> parse_desync_line(std::string_view body) {
  if (!contains(body, "collective")) return std::nullopt;
  DesyncReport d;
  std::string rank, op, seq, ranks;
  static const RE2 timeout_at(R"(\[(\d+)\] Timeout at collective: (\w+), #(\d+))");
  static const RE2 never_joined(R"(ranks (\[[\d, ]*\]) are the lagging ranks)");
  static const RE2 not_finished(R"((\[[\d, ]*\]) joined but didn't finish collective #(\d+))");
  static const RE2 not_joined(R"((\[[\d, ]*\]) finished collective #\d+, but didn't join collective #(\d+))");
  if (RE2::PartialMatch(sp(body), timeout_at, &rank, &op, &seq)) {
    d.kind = "timeout_at";
    d.reporter_rank = static_cast<int>(to_int(rank));
    d.op_type = op;
    d.seq = to_int(seq);
  } else if (RE2::PartialMatch(sp(body), never_joined, &ranks)) {
    d.kind = "never_joined";
    d.lagging_ranks = ranks;
  } else if (RE2::PartialMatch(sp(body), not_finished, &ranks, &seq)) {
    d.kind = "joined_not_finished";
    d.lagging_ranks = ranks;
    d.seq = to_int(seq);
  } else if (RE2::PartialMatch(sp(body), not_joined, &ranks, &seq)) {
    d.kind = "finished_not_joined";
    d.lagging_ranks = ranks;
    d.seq = to_int(seq);
  } else {
    return std::nullopt;
  }
  return d;
}

std::optional<Mismatch> parse_collective_mismatch(std::string_view body) {
  if (!contains(body, "Detected mismatch between collectives") &&
      !contains(body, "is running inconsistent collective"))
    return std::nullopt;
  Mismatch m;
  static const RE2 ranks(R"(Rank (\d+) is running (?:inconsistent )?collective: .*?but Rank (\d+) is running)");
  static const RE2 seq(R"(SequenceNumber=(\d+))");
  static const RE2 ops(R"(OpType=(\w+).*?OpType=(\w+))");
  std::string a, b, s, op_a, op_b;
  if (RE2::PartialMatch(sp(body), ranks, &a, &b)) {
    m.rank_a = static_cast<int>(to_int(a));
    m.rank_b = static_cast<int>(to_int(b));
  }
  if (RE2::PartialMatch(sp(body), seq, &s)) m.seq = to_int(s);
  if (RE2::PartialMatch(sp(body), ops, &op_a, &op_b)) {
    m.op_a = op_a;
    m.op_b = op_b;
  } else {
    // One rank's side only: 1.x's "Rank 0 is running inconsistent collective:
    // CollectiveFingerPrint(OpType=ALLGATHER, ...", or a report cut short.
    static const RE2 one(R"(Rank (\d+) is running (?:inconsistent )?collective: CollectiveFingerPrint\((?:SequenceNumber=\d+, )?OpType=(\w+))");
    if (RE2::PartialMatch(sp(body), one, &a, &op_a)) {
      m.rank_a = static_cast<int>(to_int(a));
      m.op_a = op_a;
    }
  }
  return m;
}

int rank_awaiting_unique_id(std::string_view text) {
  size_t at = text.find("] is setting up NCCL communicator");
  if (at == std::string_view::npos) return -1;
  size_t open = text.rfind('[', at);
  if (open == std::string_view::npos || open + 1 == at || at - open > 8) return -1;
  std::string_view digits = text.substr(open + 1, at - open - 1);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return -1;
  return static_cast<int>(to_int(std::string(digits)));
}

bool is_python_frame(std::string_view line) {
  static const RE2 re(R"re(^\s*File "[^"]+", line \d+, in \S)re");
  return contains(line, "File \"") && RE2::PartialMatch(sp(line), re);
}

int spawned_process_index(std::string_view text) {
  static const RE2 re(R"((?:^-- Process|\bprocess) (\d{1,6}) terminated with (?:the following error:|exit code -?\d|signal ))");
  int index = -1;
  return RE2::PartialMatch(sp(text), re, &index) ? index : -1;
}

namespace {

// PyTorch's messages that are events of their own, by the words that name
// them, in the order they are tried: the first a line holds decides.
struct Sign {
  util::Literal words;
  bool at_start;  // the message starts with them; else they are anywhere in it
  EventKind kind;
  util::ByteSet bytes{words.text};
};

constexpr Sign kSigns[] = {
    {"watchdog got stuck for", false, EventKind::kWatchdogStuck},
    {"Heartbeat monitor timed out", false, EventKind::kWatchdogStuck},
    {"ProcessGroupNCCL watchdog hang", false, EventKind::kWatchdogStuck},
    {"possible GIL induced hang", false, EventKind::kWatchdogStuck},
    {"NCCL error in:", false, EventKind::kNcclErrorSurfaced},
    {"NCCL error:", true, EventKind::kNcclErrorSurfaced},
    {": NCCL error:", false, EventKind::kNcclErrorSurfaced},
    {"NCCL communicator was aborted", false, EventKind::kNcclErrorSurfaced},
    {"NCCL communicator encountered error", false, EventKind::kNcclErrorSurfaced},
    {"remote error detected from rank", false, EventKind::kNcclErrorSurfaced},
    {"ncclRemoteError", true, EventKind::kNcclErrorSurfaced},
    {"ncclUnhandledCudaError", true, EventKind::kNcclErrorSurfaced},
    {"ncclSystemError", true, EventKind::kNcclErrorSurfaced},
    {"ncclInternalError", true, EventKind::kNcclErrorSurfaced},
    {"ncclInvalidUsage", true, EventKind::kNcclErrorSurfaced},
    {"ncclInvalidArgument", true, EventKind::kNcclErrorSurfaced},
    {"Health check failure", false, EventKind::kNcclErrorSurfaced},
    {"watchdog thread terminated with exception", false, EventKind::kPgTerminate},
    {"Some NCCL operations have failed or timed out", false, EventKind::kPgTerminate},
    {"taking the entire process down", false, EventKind::kPgTerminate},
    {"Terminating the process after attempting to dump debug info", false, EventKind::kPgTerminate},
    {"Aborting communicators that received errors", false, EventKind::kPgTerminate},
    {"flight recorder dump signal", false, EventKind::kDumpSignal},
    {"flight-recorder dump signal", false, EventKind::kDumpSignal},
    {"Dump signal received", false, EventKind::kDumpSignal},
    {"dump the debug info", false, EventKind::kDumpSignal},
    {"preparing to dump debug info", false, EventKind::kDumpSignal},
    {"dumping nccl trace to", false, EventKind::kDumpSignal},
    {"Finished writing NCCLPG debug info", false, EventKind::kDumpSignal},
    {"Finished flight recorder", false, EventKind::kDumpSignal},
    {"First PG on this rank to signal dumping", false, EventKind::kDumpSignal},
    {"Stack trace of the failed collective", false, EventKind::kDumpSignal},
    {"recvValue failed", false, EventKind::kStoreError},
    {"Failed to recv, got 0 bytes", false, EventKind::kStoreError},
    {"DistNetworkError", false, EventKind::kStoreError},
    {"DistStoreError", false, EventKind::kStoreError},
    {"RendezvousConnectionError", false, EventKind::kStoreError},
    {"store->get(", false, EventKind::kStoreError},
    {"Connection was likely closed", false, EventKind::kStoreError},
    {"terminate called after throwing an instance of", true, EventKind::kCppException},
    {"Exception raised from ", true, EventKind::kCppException},
    {"Fatal Python error:", true, EventKind::kCppException},
};

}  // namespace

std::optional<EventKind> classify_pytorch_message(std::string_view b) {
  // A traceback's source line names the exception it raises or catches
  // ("raise RendezvousConnectionError("): the message is the line after it.
  if (b.starts_with("raise ") || b.starts_with("except ")) return std::nullopt;
  const util::ByteSet in_line(b);
  for (const Sign& sign : kSigns) {
    if (!in_line.covers(sign.bytes)) continue;
    if (sign.at_start ? b.starts_with(sign.words.text) : contains(b, sign.words)) return sign.kind;
  }
  return std::nullopt;
}

std::optional<ProcessExit> parse_process_exit(std::string_view b) {
  ProcessExit e;
  std::string code, lrank, pid, host, task, msg;
  if (contains(b, "failed (exitcode: ")) {
    static const RE2 re(R"(failed \(exitcode: (-?\d+)\) local_rank: (\d+) \(pid: (\d+)\))");
    if (!RE2::PartialMatch(sp(b), re, &code, &lrank, &pid)) return std::nullopt;
    e.source = "elastic_failed";
    e.exit_code = to_int(code);
    e.local_rank = static_cast<int>(to_int(lrank));
    e.pid = to_int(pid);
  } else if (contains(b, "srun: error:")) {
    // srun: error: node-b: task 9: Exited with exit code 1
    static const RE2 re(R"(srun: error: (\S+): tasks? ([\d,\-]+): (?:Exited with exit code (\d+)|(Killed|Terminated|Segmentation fault|Aborted)))");
    std::string how;
    if (!RE2::PartialMatch(sp(b), re, &host, &task, &code, &how)) return std::nullopt;
    e.source = "srun";
    e.host = host;
    e.rank = static_cast<int>(to_int(task.substr(0, task.find_first_of(",-"))));
    e.exit_code = code.empty() ? INT64_MIN : to_int(code);
    e.signal = how;
  } else if (contains(b, "noticed that process rank ")) {
    // Open MPI's mpirun (help-orterun.txt [orterun:proc-aborted-strsignal]):
    // "mpirun noticed that process rank 0 with PID 4711 on node n1 exited on
    // signal 9 (Killed)." PRRTE wraps before "signal": then it is not known.
    static const RE2 re(R"(noticed that process rank (\d+) with PID (\d+) on node (\S+) exited on(?: signal (\d+))?)");
    std::string rank, signal;
    if (!RE2::PartialMatch(sp(b), re, &rank, &pid, &host, &signal)) return std::nullopt;
    e.source = "mpirun";
    e.rank = static_cast<int>(to_int(rank));
    e.pid = to_int(pid);
    e.host = host;
    e.exit_code = signal.empty() ? INT64_MIN : -to_int(signal);
  } else if (contains(b, " CANCELLED AT ")) {
    // slurmstepd: error: *** STEP 1234.0 ON node07 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***
    // (req.c): Slurm stopped the step on that host; no exit code is known.
    static const RE2 re(R"(\*\*\* (?:JOB|STEP) \S+ ON (\S+) (CANCELLED AT \S+(?: DUE (?:TO|to) [A-Za-z0-9 ]+?)?(?: BY \S+)?) \*\*\*)");
    if (!RE2::PartialMatch(sp(b), re, &host, &msg)) return std::nullopt;
    e.source = "slurmstepd";
    e.host = host;
    e.exit_code = INT64_MIN;
    e.message = msg;
  } else if (contains(b, "A worker died or was killed while executing a task")) {
    // Ray's raylet (node_manager.cc): "... Worker IP address: 10.0.0.5 Worker
    // port: 10185 Worker PID: 90738 Worker exit type: SYSTEM_ERROR ..." (the
    // address and pid since Ray 2.x); no exit code is given.
    static const RE2 where(R"(Worker IP address: (\S+) Worker port: \d+ Worker PID: (\d+))");
    static const RE2 detail(R"(Worker exit type: (\S+ Worker exit detail: [^.]*))");
    RE2::PartialMatch(sp(b), where, &host, &pid);
    RE2::PartialMatch(sp(b), detail, &msg);
    e.source = "ray";
    e.host = host;
    e.pid = pid.empty() ? -1 : to_int(pid);
    e.exit_code = INT64_MIN;
    e.message = msg;
  } else if (contains(b, "exits with return code")) {
    // DeepSpeed: [...'--local_rank=7', ...] exits with return code = -6
    static const RE2 re(R"(--local_rank=(\d+).*exits with return code = (-?\d+))");
    if (!RE2::PartialMatch(sp(b), re, &lrank, &code)) {
      static const RE2 bare(R"(exits with return code = (-?\d+))");
      if (!RE2::PartialMatch(sp(b), bare, &code)) return std::nullopt;
    }
    e.source = "deepspeed";
    e.local_rank = lrank.empty() ? -1 : static_cast<int>(to_int(lrank));
    e.exit_code = to_int(code);
  } else {
    return std::nullopt;
  }
  if (e.exit_code < 0 && e.exit_code != INT64_MIN) {
    static const char* kSignals[] = {"", "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT",
                                     "SIGBUS", "SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2",
                                     "SIGPIPE", "SIGALRM", "SIGTERM"};
    if (-e.exit_code < 16) e.signal = kSignals[-e.exit_code];
  }
  return e;
}

std::optional<SignalSent> parse_signal_sent(std::string_view b) {
  if (!contains(b, "closing signal")) return std::nullopt;
  static const RE2 re(R"(Sending process (\d+) closing signal (SIG\w+))");
  std::string pid, sig;
  if (!RE2::PartialMatch(sp(b), re, &pid, &sig)) return std::nullopt;
  return SignalSent{to_int(pid), sig};
}

// nccl-tests (src/common.h, common.cu): its failure messages and its device
// list, in every era of its history: " .. %s: Test failure" before the pid was
// added; "#   Rank %2d on %10s device" (2017), then with "Pid %6d", then with
// "Group %2d" as well.
std::optional<DeclaredHost> parse_nccl_tests_host(std::string_view body) {
  static const RE2 failure(R"(^(\S+): Test (?:CUDA|NCCL) failure \S+:\d+ )");
  static const RE2 failure_pid(R"(^\s*\.\. (\S+?):? (?:pid (\d+): )?Test failure \S+:\d+)");
  static const RE2 device(
      R"(^#\s+Rank\s+(\d+)(?: Group\s+\d+)?(?: Pid\s+(\d+))? on\s+(\S+) device\s+\d+ )");
  DeclaredHost d;
  std::string pid, rank;
  if (RE2::PartialMatch(sp(body), failure, &d.host)) return d;
  if (RE2::PartialMatch(sp(body), failure_pid, &d.host, &pid)) {
    if (!pid.empty()) d.pid = to_int(pid);
    return d;
  }
  if (RE2::PartialMatch(sp(body), device, &rank, &pid, &d.host)) {
    if (!pid.empty()) d.pid = to_int(pid);
    d.rank = static_cast<int>(to_int(rank));
    return d;
  }
  return std::nullopt;
}

// Ray names the node an event happened on inside its message, by IP: the
// raylet's OOM report ("... killed due to memory pressure (OOM) ... at node
// (ID: 351e..., IP: 10.95.143.76)"), OutOfMemoryError's detail ("Memory on
// the node (IP: 10.20.49.141, ID: ...)") and the version check ("This process
// on node 10.123.3.87 was started with:"). Lists of several nodes (the
// autoscaler's) have none of these shapes.
std::optional<DeclaredHost> parse_ray_node(std::string_view body) {
  if (!contains(body, "node")) return std::nullopt;
  static const RE2 re(
      R"((?:at node \(ID: [0-9a-f]+, IP: |Memory on the node \(IP: |This process on node )(\d{1,3}(?:\.\d{1,3}){3})\b)");
  std::string ip;
  if (!RE2::PartialMatch(sp(body), re, &ip)) return std::nullopt;
  return DeclaredHost{ip, -1};
}

std::optional<DeclaredHost> parse_declared_host(std::string_view body) {
  if (contains(body, "Test ") || contains(body, " device ")) {
    if (auto d = parse_nccl_tests_host(body)) return d;
  }
  if (auto d = parse_ray_node(body)) return d;
  if (!contains(body, "ostname")) return std::nullopt;
  // The banner is the whole line, after at most one "Component: " label: a
  // host name that ends the line or is followed by its pid. ("hostname
  // resolution failed" names no host.)
  static const RE2 re(
      R"(^\s*(?:\w+: )?[Hh]ostname(?::\s*|\s*=\s*|\s+)([A-Za-z][A-Za-z0-9.-]*[A-Za-z0-9])(?:,? pid (\d+)\b.*|\s*)$)");
  std::string host, pid;
  if (!RE2::FullMatch(sp(body), re, &host, &pid)) return std::nullopt;
  DeclaredHost d{host, -1};
  if (!pid.empty()) d.pid = to_int(pid);
  return d;
}

}  // namespace ncclpm::recognize
