// bench/gen/torch_lines.cc
#include "gen/torch_lines.h"

#include <algorithm>

namespace ncclpm::bench::torch {
namespace {

const char* const kSomeFailed =
    "Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA "
    "kernels, subsequent "
    "GPU operations might run on corrupted/incomplete data.";
const char* const kTakeDown = "To avoid data inconsistency, we are taking the entire process down.";
const char* const kCheckTimeoutAt = "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:609";
const char* const kNcclErrorsAt = "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1943";
const char* const kWatchdogAt = "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1521";

void pg_prefix(std::string& s, int rank) { cat(s, "[PG 0 (default_pg) Rank ", rank, "] "); }

void put_work(std::string& s, const Work& w) {
  cat(s, "WorkNCCL(SeqNum=", w.seq, ", OpType=", w.op_type, ", NumelIn=", w.numel_in,
      ", NumelOut=", w.numel_out, ", Timeout(ms)=", w.timeout_ms, ')');
}

// A library load address the way backtraces show them: 0x7f + 9 hex digits,
// the last three digits being the symbol offset's.
uint64_t base_address(Rng& rng) {
  return (0x7f0000000000ULL | (rng.next() & 0xfffffffff000ULL)) & 0x7fffffffffffULL;
}

enum class Frames { kCheckTimeout, kNcclErrors, kWatchdogOuter };

void put_frames(std::string& s, const Job& job, Frames kind, Rng& rng) {
  std::string lib = job.site + "/torch/lib";
  uint64_t c10 = base_address(rng), cuda = base_address(rng), stdcxx = base_address(rng),
           libc = base_address(rng);
  int i = 0;
  auto frame = [&](std::string_view sym, uint64_t off, uint64_t base, std::string_view path) {
    line(s, "frame #", i++, ": ", sym, " + 0x", Hex{off}, " (0x", Hex{base + (off & 0xfff)}, " in ",
         path, ')');
  };
  std::string libc10 = lib + "/libc10.so", libcuda = lib + "/libtorch_cuda.so";
  switch (kind) {
    case Frames::kCheckTimeout:
      frame("c10::Error::Error(c10::SourceLocation, std::string)", 0x96, c10, libc10);
      frame(
          "c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long,"
          " "
          "std::ratio<1l, 1000l> > >)",
          0x1d2, cuda, libcuda);
      frame("c10d::ProcessGroupNCCL::watchdogHandler()", 0x233, cuda, libcuda);
      frame("c10d::ProcessGroupNCCL::ncclCommWatchdog()", 0x14d, cuda, libcuda);
      break;
    case Frames::kNcclErrors:
      frame("c10::Error::Error(c10::SourceLocation, std::string)", 0x96, c10, libc10);
      frame("c10d::ProcessGroupNCCL::checkForNCCLErrorsInternal(std::shared_ptr<c10d::NCCLComm>&)",
            0x220, cuda, libcuda);
      frame("c10d::ProcessGroupNCCL::WorkNCCL::checkAndSetException()", 0x7c, cuda, libcuda);
      frame("c10d::ProcessGroupNCCL::watchdogHandler()", 0x180, cuda, libcuda);
      frame("c10d::ProcessGroupNCCL::ncclCommWatchdog()", 0x14d, cuda, libcuda);
      break;
    case Frames::kWatchdogOuter:
      frame("c10::Error::Error(c10::SourceLocation, std::string)", 0x96, c10, libc10);
      frame("<unknown function>", 0xe5aa84, cuda, libcuda);
      break;
  }
  frame("<unknown function>", 0xdc253, stdcxx, "/lib/x86_64-linux-gnu/libstdc++.so.6");
  frame("<unknown function>", 0x94ac3, libc, "/lib/x86_64-linux-gnu/libc.so.6");
  frame("clone", 0x44, libc, "/lib/x86_64-linux-gnu/libc.so.6");
}

// `terminate called ...` with the what() text, its backtrace repeated, and
// the outer ncclCommWatchdog backtrace (B.5).
void terminate_block(std::string& s, const Job& job, const std::string& what, Frames inner,
                     const char* inner_fn, const char* inner_at, Rng& rng) {
  line(s, "Exception raised from ", inner_fn, " at ", inner_at, " (most recent call first):");
  put_frames(s, job, inner, rng);
  line(s, "");
  line(s, "terminate called after throwing an instance of 'c10::DistBackendError'");
  line(s, "  what():  ", what);
  line(s, "Exception raised from ", inner_fn, " at ", inner_at, " (most recent call first):");
  put_frames(s, job, inner, rng);
  line(s, "");
  line(s, "Exception raised from ncclCommWatchdog at ", kWatchdogAt, " (most recent call first):");
  put_frames(s, job, Frames::kWatchdogOuter, rng);
  line(s, "");
}

// faulthandler (enabled by torchelastic's @record) on SIGABRT.
void faulthandler_dump(std::string& s, const Job& job, Rng& rng) {
  auto tid = [&] { return Hex{0x00007f0000000740ULL | ((rng.next() & 0xffffff) << 12)}; };
  line(s, "Fatal Python error: Aborted");
  line(s, "");
  line(s, "Thread 0x0000", tid(), " (most recent call first):");
  line(s, "  File \"/opt/conda/envs/train/lib/python3.11/threading.py\", line 331 in wait");
  line(s, "  File \"/opt/conda/envs/train/lib/python3.11/threading.py\", line 629 in wait");
  line(s, "  File \"", job.site, "/tqdm/_monitor.py\", line 60 in run");
  line(s,
       "  File \"/opt/conda/envs/train/lib/python3.11/threading.py\", line 1045 in "
       "_bootstrap_inner");
  line(s, "  File \"/opt/conda/envs/train/lib/python3.11/threading.py\", line 1002 in _bootstrap");
  line(s, "");
  line(s, "Current thread 0x0000", tid(), " (most recent call first):");
  line(s, "  <no Python frame>");
  line(s, "");
  line(s, "Thread 0x0000", tid(), " (most recent call first):");
  line(s, "  File \"", job.site,
       "/torch/distributed/fsdp/_runtime_utils.py\", line 441 in _pre_forward_unshard");
  line(s, "  File \"", job.site,
       "/torch/distributed/fsdp/fully_sharded_data_parallel.py\", line 856 in forward");
  line(s, "  File \"", job.site, "/torch/nn/modules/module.py\", line 1562 in _call_impl");
  line(s, "  File \"", job.site, "/transformers/trainer.py\", line 3318 in training_step");
  line(s, "  File \"", job.site, "/transformers/trainer.py\", line 2279 in _inner_training_loop");
  line(s, "  File \"", job.site, "/transformers/trainer.py\", line 1938 in train");
  line(s, "  File \"/workspace/train.py\", line 201 in main");
  line(s, "  File \"/workspace/train.py\", line 214 in <module>");
  line(s, "");
  line(s,
       "Extension modules: numpy.core._multiarray_umath, numpy.core._multiarray_tests, "
       "numpy.linalg._umath_linalg, "
       "torch._C, torch._C._fft, torch._C._linalg, torch._C._nested, torch._C._nn, "
       "torch._C._sparse, "
       "torch._C._special, yaml._yaml, pyarrow.lib (total: 96)");
}

void agent_prefix(std::string& s, char lvl, Time t, const HostInfo& h, std::string_view path_line) {
  Civil c = civil(t);
  cat(s, lvl, Pad{c.month, 2, '0'}, Pad{c.day, 2, '0'}, ' ');
  put_hms(s, t);
  cat(s, '.', Pad{c.micro / 1000 * 1000, 6, '0'}, ' ', h.agent_tid, ' ', path_line, "] ");
}

void carets(std::string& s, std::string_view prefix, std::string_view code) {
  size_t start = 0;
  for (std::string_view key : {"return ", "= "}) {
    size_t at = code.find(key);
    if (at != std::string_view::npos) {
      start = at + key.size();
      break;
    }
  }
  line(s, prefix, "    ", std::string(start, ' '), std::string(code.size() - start, '^'));
}

}  // namespace

Work work_of(const Job& job, const CollSpec& c, uint64_t seq) {
  return Work{seq, Job::op_type(c.op), job.numel_in(c), job.numel_out(c), job.timeout_ms};
}

void c10_prefix(std::string& s, char sev, Time t, Rng& rng, std::string_view file_line, int grank) {
  Civil c = civil(t);
  cat(s, "[rank", grank, "]:[", sev, c.month * 100 + c.day, ' ');
  put_hms(s, t);
  cat(s, '.', Pad{static_cast<int64_t>(c.micro) * 1000 + rng.range(0, 999), 9, '0'}, ' ', file_line,
      "] ");
}

void watchdog_timeout_block(std::string& s, const Job& job, const RankInfo& r, const Work& w,
                            Time t, int64_t ran_ms, Rng& rng) {
  std::string wmsg;
  cat(wmsg, "[Rank ", r.rank, "] Watchdog caught collective operation timeout: ");
  put_work(wmsg, w);
  cat(wmsg, " ran for ", ran_ms, " milliseconds before timing out.");
  // Lines logged together are microseconds apart; the nanosecond field grows.
  Time t2{t.us + 300};
  auto next = [&t2] { return Time{t2.us++}; };
  c10_prefix(s, 'E', t, rng, "ProcessGroupNCCL.cpp:607", r.rank);
  line(s, wmsg);
  c10_prefix(s, 'E', next(), rng, "ProcessGroupNCCL.cpp:1664", r.rank);
  pg_prefix(s, r.rank);
  line(s, "Exception (either an error or timeout) detected by watchdog at work: ", w.seq,
       ", last enqueued NCCL work: ", w.seq, ", last completed NCCL work: ", w.seq - 1, '.');
  c10_prefix(s, 'E', next(), rng, "ProcessGroupNCCL.cpp:1709", r.rank);
  pg_prefix(s, r.rank);
  line(s, "Timeout at NCCL work: ", w.seq, ", last enqueued NCCL work: ", w.seq,
       ", last completed NCCL work: ", w.seq - 1, '.');
  c10_prefix(s, 'E', next(), rng, "ProcessGroupNCCL.cpp:621", r.rank);
  line(s, "[Rank ", r.rank, "] ", kSomeFailed);
  c10_prefix(s, 'E', next(), rng, "ProcessGroupNCCL.cpp:627", r.rank);
  line(s, "[Rank ", r.rank, "] ", kTakeDown);
  std::string term;
  pg_prefix(term, r.rank);
  cat(term, "Process group watchdog thread terminated with exception: ", wmsg);
  c10_prefix(s, 'E', t.plus_ms(1300), rng, "ProcessGroupNCCL.cpp:1515", r.rank);
  line(s, term);
  terminate_block(s, job, term, Frames::kCheckTimeout, "checkTimeout", kCheckTimeoutAt, rng);
  faulthandler_dump(s, job, rng);
}

void async_error_block(std::string& s, const Job& job, const RankInfo& r, const Work& w, Time t,
                       const std::string& nccl_last_error, Rng& rng) {
  std::string msg;
  cat(msg, "NCCL error: remote process exited or there was a network error, NCCL version ",
      job.nccl_version,
      "\nncclRemoteError: A call failed possibly due to a network error or a remote process "
      "exiting prematurely.",
      "\nLast error:\n", nccl_last_error);
  Time t2{t.us + 40};
  auto next = [&t2] { return Time{t2.us++}; };
  c10_prefix(s, 'E', t, rng, "ProcessGroupNCCL.cpp:1595", r.rank);
  cat(s, "[Rank ", r.rank, "] Collective ");
  put_work(s, w);
  line(s, " raised the following async exception: ", msg);
  line(s, "Exception raised from checkForNCCLErrorsInternal at ", kNcclErrorsAt,
       " (most recent call first):");
  put_frames(s, job, Frames::kNcclErrors, rng);
  line(s, "");
  c10_prefix(s, 'E', next(), rng, "ProcessGroupNCCL.cpp:1664", r.rank);
  pg_prefix(s, r.rank);
  line(s, "Exception (either an error or timeout) detected by watchdog at work: ", w.seq,
       ", last enqueued NCCL work: ", w.seq, ", last completed NCCL work: ", w.seq - 1, '.');
  c10_prefix(s, 'E', next(), rng, "ProcessGroupNCCL.cpp:621", r.rank);
  line(s, "[Rank ", r.rank, "] ", kSomeFailed);
  c10_prefix(s, 'E', next(), rng, "ProcessGroupNCCL.cpp:627", r.rank);
  line(s, "[Rank ", r.rank, "] ", kTakeDown);
  std::string term;
  pg_prefix(term, r.rank);
  cat(term, "Process group watchdog thread terminated with exception: ", msg);
  c10_prefix(s, 'E', t.plus_ms(900), rng, "ProcessGroupNCCL.cpp:1515", r.rank);
  line(s, term);
  terminate_block(s, job, term, Frames::kNcclErrors, "checkForNCCLErrorsInternal", kNcclErrorsAt,
                  rng);
  faulthandler_dump(s, job, rng);
}

void oom_traceback(std::string& s, const Job& job, const RankInfo& r, Rng& rng) {
  std::string p = "[rank" + std::to_string(r.rank) + "]: ";
  struct Frame {
    std::string file;
    int line;
    const char* fn;
    const char* code;
    bool caret;
  };
  const std::string& site = job.site;
  const Frame frames[] = {
      {"/workspace/train.py", 214, "<module>", "main()", false},
      {"/workspace/train.py", 201, "main", "trainer.train()", false},
      {site + "/transformers/trainer.py", 1938, "train", "return inner_training_loop(", true},
      {site + "/transformers/trainer.py", 2279, "_inner_training_loop",
       "tr_loss_step = self.training_step(model, inputs)", true},
      {site + "/transformers/trainer.py", 3318, "training_step",
       "loss = self.compute_loss(model, inputs)", true},
      {site + "/transformers/trainer.py", 3363, "compute_loss", "outputs = model(**inputs)", true},
      {site + "/torch/nn/modules/module.py", 1553, "_wrapped_call_impl",
       "return self._call_impl(*args, **kwargs)", true},
      {site + "/torch/nn/modules/module.py", 1562, "_call_impl",
       "return forward_call(*args, **kwargs)", true},
      {site + "/torch/distributed/fsdp/fully_sharded_data_parallel.py", 863, "forward",
       "output = self._fsdp_wrapped_module(*args, **kwargs)", true},
      {site + "/transformers/models/llama/modeling_llama.py", 739, "forward",
       "hidden_states = self.mlp(hidden_states)", true},
      {site + "/transformers/models/llama/modeling_llama.py", 312, "forward",
       "down_proj = self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))", true},
  };
  line(s, p, "Traceback (most recent call last):");
  for (const Frame& f : frames) {
    line(s, p, "  File \"", f.file, "\", line ", f.line, ", in ", f.fn);
    line(s, p, "    ", f.code);
    if (f.caret) carets(s, p, f.code);
  }
  double want = 1.5 + rng.unit() * 2.0, free_gib = 0.4 + rng.unit() * 1.2;
  line(s, p, "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate ", Fixed{want, 2},
       " GiB. GPU ", r.local, " has a total capacity of 79.10 GiB of which ", Fixed{free_gib, 2},
       " GiB is free. Including non-PyTorch memory, this process has ", Fixed{78.68 - free_gib, 2},
       " GiB memory in use. Of the allocated memory 71.23 GiB is allocated by PyTorch, and 5.86 "
       "GiB is reserved by "
       "PyTorch but unallocated. If reserved but unallocated memory is large try setting "
       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
       "documentation for Memory "
       "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)");
}

void hf_line(std::string& s, Time t, std::string_view src, std::string_view msg) {
  cat(s, "[INFO|", src, "] ");
  put_date_time(s, t);
  line(s, ',', Pad{civil(t).micro / 1000, 3, '0'}, " >> ", msg);
}

void tqdm_redraw(std::string& s, int n, int total, double elapsed_s, double rate_s) {
  auto interval = [&](double secs) {
    int64_t v = static_cast<int64_t>(secs + 0.5);
    int64_t h = v / 3600, m = v / 60 % 60, sec = v % 60;
    if (h > 0)
      cat(s, h, ':', Pad{m, 2, '0'}, ':', Pad{sec, 2, '0'});
    else
      cat(s, Pad{m, 2, '0'}, ':', Pad{sec, 2, '0'});
  };
  double frac = total > 0 ? static_cast<double>(n) / total : 0.0;
  int full = static_cast<int>(frac * 10);
  static const char* const kParts[] = {" ", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  cat(s, '\r', Pad{static_cast<int64_t>(frac * 100 + 0.5), 3}, "%|");
  for (int i = 0; i < full; ++i) s += "█";
  if (full < 10) {
    s += kParts[static_cast<int>((frac * 10 - full) * 8)];
    s.append(static_cast<size_t>(9 - full), ' ');
  }
  cat(s, "| ", n, '/', total, " [");
  interval(elapsed_s);
  s += '<';
  if (n == 0) {
    s += "?, ?it/s]";
    return;
  }
  interval((total - n) * rate_s);
  cat(s, ", ", Fixed{rate_s, 2}, "s/it]");
}

void agent_banner(std::string& s, const Job& job, const HostInfo& h) {
  const char* msgs[] = {
      "", "*****************************************",
      "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid "
      "your system being overloaded, please further tune the variable for optimal performance in "
      "your application as needed. ",
      "*****************************************"};
  for (const char* m : msgs) {
    agent_prefix(s, 'W', job.t0, h, "torch/distributed/run.py:870");
    line(s, m);
  }
}

std::string signal_traceback(int sig, int pid) {
  const char* name = sig == 6    ? "SIGABRT"
                     : sig == 9  ? "SIGKILL"
                     : sig == 15 ? "SIGTERM"
                                 : "SIGSEGV";
  return "Signal " + std::to_string(sig) + " (" + name + ") received by PID " + std::to_string(pid);
}

void agent_failure(std::string& s, const Job& job, const HostInfo& h,
                   const std::vector<WorkerExit>& failures, const std::vector<int>& sigterm_pids,
                   Time t) {
  if (failures.empty()) return;
  for (int pid : sigterm_pids) {
    agent_prefix(s, 'W', t, h, "torch/distributed/elastic/multiprocessing/api.py:858");
    line(s, "Sending process ", pid, " closing signal SIGTERM");
  }
  const WorkerExit& root = failures.front();
  agent_prefix(s, 'E', t.plus_ms(318), h, "torch/distributed/elastic/multiprocessing/api.py:833");
  line(s, "failed (exitcode: ", root.exitcode, ") local_rank: ", root.local, " (pid: ", root.pid,
       ") of binary: ", job.python);
  std::string bin = job.python.substr(0, job.python.rfind('/'));
  line(s, "Traceback (most recent call last):");
  line(s, "  File \"", bin, "/torchrun\", line 8, in <module>");
  line(s, "    sys.exit(main())");
  line(s, "             ^^^^^^");
  line(s, "  File \"", job.site,
       "/torch/distributed/elastic/multiprocessing/errors/__init__.py\", line 355, in wrapper");
  line(s, "    return f(*args, **kwargs)");
  line(s, "           ^^^^^^^^^^^^^^^^^^");
  line(s, "  File \"", job.site, "/torch/distributed/run.py\", line 918, in main");
  line(s, "    run(args)");
  line(s, "  File \"", job.site, "/torch/distributed/run.py\", line 909, in run");
  line(s, "    elastic_launch(");
  line(s, "  File \"", job.site, "/torch/distributed/launcher/api.py\", line 138, in __call__");
  line(s, "    return launch_agent(self._config, self._entrypoint, list(args))");
  line(s, "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^");
  line(s, "  File \"", job.site, "/torch/distributed/launcher/api.py\", line 269, in launch_agent");
  line(s, "    raise ChildFailedError(");
  line(s, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ");

  auto entry = [&](std::string& out, int idx, const WorkerExit& f) {
    std::string time;
    put_date_time(time, f.time, '_');
    line(out, '[', idx, "]:");
    line(out, "  time      : ", time);
    line(out, "  host      : ", h.fqdn);
    line(out, "  rank      : ", f.rank, " (local_rank: ", f.local, ')');
    line(out, "  exitcode  : ", f.exitcode, " (pid: ", f.pid, ')');
    line(out, "  error_file: <N/A>");
    line(out, "  traceback : ", f.traceback);
  };
  std::string others, root_text;
  for (size_t i = 1; i < failures.size(); ++i) entry(others, static_cast<int>(i), failures[i]);
  if (failures.size() == 1) line(others, "  <NO_OTHER_FAILURES>");
  entry(root_text, 0, root);
  std::string title = job.script + " FAILED";
  size_t width = title.size();
  for (const std::string* block : {&others, &root_text}) {
    size_t start = 0;
    while (start < block->size()) {
      size_t nl = block->find('\n', start);
      width = std::max(width, nl - start);
      start = nl + 1;
    }
  }
  width = std::min<size_t>(60, width);
  line(s, std::string(width, '='));
  line(s, title);
  line(s, std::string(width, '-'));
  line(s, "Failures:");
  s += others;
  line(s, std::string(width, '-'));
  line(s, "Root Cause (first observed failure):");
  s += root_text;
  line(s, std::string(width, '='));
}

}  // namespace ncclpm::bench::torch
