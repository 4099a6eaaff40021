// src/replay/engine.cc
//
// The stages of a replay, each bounded by the deadline: init (non-blocking
// communicators), identity exchange (multi-process: who is where), buffers,
// warm-up, timed iterations between CUDA events, check, result exchange,
// finalize. Any failure aborts the communicators and ends the run with the
// rank, host, GPU and call that failed.
#include "ncclpm/replay/engine.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>

#include "device_buffers.h"
#include "issue_op.h"
#include "local_comms.h"
#include "ncclpm/plan/rank_wire.h"
#include "ncclpm/plan/verdict.h"

namespace ncclpm::replay {
namespace {

using plan::Outcome;

// Launches queued ahead of the GPU at most: a hung collective must not let
// the launch queue fill up, which would block the host in a CUDA call.
constexpr int kBlockIters = 32;

std::string cuda_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

bool going(ncclResult_t r) { return r == ncclSuccess || r == ncclInProgress; }

class Run {
 public:
  explicit Run(const EngineConfig& c)
      : c_(c),
        first_rank_(c.launch.rank * static_cast<int>(c.gpus.size())),
        deadline_(c.timeout_ms) {}
  ~Run();
  plan::ReplayResult go();

 private:
  bool init();
  bool setup();
  bool iterate(int n, const char* stage);
  bool drain(std::vector<cudaEvent_t>& events, const Deadline& d, const char* stage,
             const char* call);
  bool exchange(const Deadline& d, const char* stage, std::vector<plan::RankResult>* all);
  bool record(std::vector<cudaEvent_t>& events, const char* stage);
  std::vector<plan::RankResult> local_results(Outcome o, const char* stage) const;

  bool handle(Wait w, const char* stage, const char* call, const CallError& err,
              const std::vector<bool>& done = {});
  bool fail(const char* stage, const CallError& e);
  bool timed_out(const char* stage, const char* call, const std::vector<bool>& done);
  bool interrupted(const char* stage);
  void say(const std::string& line) const {
    if (c_.progress) c_.progress(line);
  }
  plan::RankResult& local(size_t i) { return r_.ranks[static_cast<size_t>(first_rank_) + i]; }

  const EngineConfig& c_;
  plan::ReplayResult r_;
  int first_rank_;
  Deadline deadline_;
  DeviceBuffers bufs_;  // declared before comms_: freed after the communicators are gone
  LocalComms comms_;
  std::vector<cudaEvent_t> start_, stop_, mark_[2];
  bool clean_ = true;  // false after a hang: nothing may wait on the GPU any more
};

Run::~Run() {
  if (!clean_) return;
  for (auto* events : {&start_, &stop_, &mark_[0], &mark_[1]})
    for (cudaEvent_t e : *events)
      if (e != nullptr) cudaEventDestroy(e);
}

bool Run::fail(const char* stage, const CallError& e) {
  r_.outcome = Outcome::kFailed;
  r_.stage = stage;
  size_t at =
      static_cast<size_t>(std::clamp<int>(e.local, 0, static_cast<int>(c_.gpus.size()) - 1));
  r_.failure = plan::rank_failure(c_.host, first_rank_ + static_cast<int>(at), c_.gpus[at].device,
                                  e.call, e.message);
  for (size_t i = 0; i < c_.gpus.size(); ++i) {
    plan::RankResult& k = local(i);
    k.reported = true;
    k.outcome = Outcome::kFailed;
    k.stage = stage;
    if (i == at) {
      k.call = e.call;
      k.message = e.message;
    }
  }
  comms_.abort_all();
  bufs_.leak();  // a failing GPU may never finish its kernels: nothing may wait on it now
  clean_ = false;
  return false;
}

bool Run::timed_out(const char* stage, const char* call, const std::vector<bool>& done) {
  r_.outcome = Outcome::kTimedOut;
  r_.stage = stage;
  std::vector<int> stuck;
  for (size_t i = 0; i < c_.gpus.size(); ++i) {
    plan::RankResult& k = local(i);
    bool finished = i < done.size() && done[i];
    k.reported = true;
    k.stage = stage;
    k.outcome = finished ? Outcome::kCompleted : Outcome::kTimedOut;
    if (!finished) {
      k.call = call;
      k.message = "did not complete before the deadline";
      stuck.push_back(k.rank);
    }
  }
  r_.failure = plan::describe_ranks(r_, stuck) + ": " + call + " did not complete within the " +
               plan::format_duration_us(static_cast<double>(c_.timeout_ms) * 1e3) + " deadline";
  comms_.abort_all();
  bufs_.leak();  // cudaFree would wait for kernels that may never end
  clean_ = false;
  return false;
}

bool Run::interrupted(const char* stage) {
  r_.outcome = Outcome::kInterrupted;
  r_.stage = stage;
  r_.failure = "interrupted";
  for (size_t i = 0; i < c_.gpus.size(); ++i) {
    local(i).reported = true;
    local(i).outcome = Outcome::kInterrupted;
    local(i).stage = stage;
  }
  comms_.abort_all();
  bufs_.leak();
  clean_ = false;
  return false;
}

bool Run::handle(Wait w, const char* stage, const char* call, const CallError& err,
                 const std::vector<bool>& done) {
  switch (w) {
    case Wait::kDone:
      return true;
    case Wait::kFailed:
      return fail(stage, err);
    case Wait::kTimedOut:
      return timed_out(stage, call, done);
    case Wait::kInterrupted:
      return interrupted(stage);
  }
  return false;
}

bool Run::init() {
  std::vector<int> devices;
  for (const plan::GpuInfo& g : c_.gpus) devices.push_back(g.device);
  say("init: " + std::to_string(devices.size()) + " communicator(s), ranks " +
      std::to_string(first_rank_) + "-" +
      std::to_string(first_rank_ + static_cast<int>(devices.size()) - 1) + " of " +
      std::to_string(c_.plan.nranks));
  ncclUniqueId id;
  // With NCCL_COMM_ID set (several processes) every process gets the same id
  // and rank 0 listens on that address; otherwise NCCL makes a fresh one here.
  if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
    return fail("init", CallError{0, "ncclGetUniqueId", nccl_message(r, nullptr)});
  if (auto e = comms_.start_init(devices, c_.plan.nranks, first_rank_, id)) return fail("init", *e);
  CallError err;
  return handle(comms_.wait_ready(deadline_, c_.interrupted, "ncclCommInitRankConfig", &err),
                "init", "ncclCommInitRankConfig", err);
}

bool Run::setup() {
  say("setup: buffers" + std::string(c_.check ? " with check data" : ""));
  std::vector<int> devices;
  for (const plan::GpuInfo& g : c_.gpus) devices.push_back(g.device);
  if (auto e = bufs_.allocate(c_.plan, devices)) return fail("setup", *e);
  if (auto e = bufs_.fill(c_.plan, first_rank_, c_.check)) return fail("setup", *e);
  for (size_t i = 0; i < c_.gpus.size(); ++i) {
    cudaSetDevice(c_.gpus[i].device);
    for (auto* events : {&start_, &stop_, &mark_[0], &mark_[1]}) {
      cudaEvent_t e = nullptr;
      if (cudaError_t err = cudaEventCreate(&e); err != cudaSuccess)
        return fail("setup",
                    CallError{static_cast<int>(i), "cudaEventCreate", cudaGetErrorString(err)});
      events->push_back(e);
    }
  }
  return true;
}

// Records one event per local GPU on its stream, the GPU current as CUDA wants.
bool Run::record(std::vector<cudaEvent_t>& events, const char* stage) {
  for (size_t i = 0; i < comms_.size(); ++i) {
    cudaSetDevice(comms_.device(i));
    if (cudaError_t e = cudaEventRecord(events[i], comms_.stream(i)); e != cudaSuccess)
      return fail(stage, CallError{static_cast<int>(i), "cudaEventRecord", cudaGetErrorString(e)});
  }
  return true;
}

// Polls `events` (one per local GPU) and the communicators until all events completed.
bool Run::drain(std::vector<cudaEvent_t>& events, const Deadline& d, const char* stage,
                const char* call) {
  std::vector<bool> done(events.size(), false);
  Backoff backoff;
  for (;;) {
    bool all = true;
    for (size_t i = 0; i < events.size(); ++i) {
      if (done[i]) continue;
      cudaError_t q = cudaEventQuery(events[i]);
      if (q == cudaSuccess)
        done[i] = true;
      else if (q == cudaErrorNotReady)
        all = false;
      else
        return fail(stage, CallError{static_cast<int>(i), call, cudaGetErrorString(q)});
    }
    if (all) return true;
    if (auto e = comms_.async_error(call)) return fail(stage, *e);
    if (stop_requested(c_.interrupted)) return interrupted(stage);
    if (d.passed()) return timed_out(stage, call, done);
    backoff.pause();
  }
}

bool Run::iterate(int n, const char* stage) {
  const char* call = nccl_call_name(c_.plan.op);
  int block = 0;
  for (int it = 0; it < n; ++it) {
    if (stop_requested(c_.interrupted)) return interrupted(stage);
    if (deadline_.passed()) return timed_out(stage, call, {});
    ncclResult_t r = ncclGroupStart();
    for (size_t i = 0; i < comms_.size() && going(r); ++i) {
      DeviceBuffers::Local& b = bufs_.local(i);
      r = issue_op(c_.plan, first_rank_ + static_cast<int>(i), b.send, b.recv, comms_.comm(i),
                   comms_.stream(i));
      if (!going(r)) {
        ncclGroupEnd();
        return fail(stage, CallError{static_cast<int>(i), call, nccl_message(r, comms_.comm(i))});
      }
    }
    r = ncclGroupEnd();
    if (!going(r)) return fail(stage, CallError{0, call, nccl_message(r, nullptr)});
    CallError err;
    if (!handle(comms_.wait_ready(deadline_, c_.interrupted, call, &err), stage, call, err))
      return false;
    if ((it + 1) % kBlockIters == 0) {
      // Keep at most two blocks queued: wait for the block before this one.
      if (!record(mark_[block % 2], stage)) return false;
      if (block > 0 && !drain(mark_[(block - 1) % 2], deadline_, stage, call)) return false;
      ++block;
    }
  }
  return true;
}

std::vector<plan::RankResult> Run::local_results(Outcome o, const char* stage) const {
  std::vector<plan::RankResult> out;
  for (size_t i = 0; i < c_.gpus.size(); ++i) {
    plan::RankResult k = r_.ranks[static_cast<size_t>(first_rank_) + i];
    k.outcome = o;
    k.stage = stage;
    k.reported = true;
    out.push_back(std::move(k));
  }
  return out;
}

// Allgathers one RankWire per rank; `all` gets every rank's block.
bool Run::exchange(const Deadline& d, const char* stage, std::vector<plan::RankResult>* all) {
  const char* call = "ncclAllGather (results)";
  std::vector<plan::RankResult> mine = local_results(Outcome::kCompleted, stage);
  for (size_t i = 0; i < mine.size(); ++i) {
    plan::RankWire w = plan::to_wire(mine[i]);
    cudaSetDevice(c_.gpus[i].device);
    if (cudaError_t e = cudaMemcpy(bufs_.local(i).wire_in, &w, sizeof w, cudaMemcpyHostToDevice);
        e != cudaSuccess)
      return fail(stage, CallError{static_cast<int>(i), "cudaMemcpy", cudaGetErrorString(e)});
  }
  ncclResult_t r = ncclGroupStart();
  for (size_t i = 0; i < comms_.size() && going(r); ++i)
    r = ncclAllGather(bufs_.local(i).wire_in, bufs_.local(i).wire_out, sizeof(plan::RankWire),
                      ncclUint8, comms_.comm(i), comms_.stream(i));
  ncclResult_t end = ncclGroupEnd();
  if (!going(r) || !going(end))
    return fail(stage, CallError{0, call, nccl_message(going(r) ? end : r, comms_.comm(0))});
  CallError err;
  if (!handle(comms_.wait_ready(d, c_.interrupted, call, &err), stage, call, err)) return false;
  if (!record(mark_[0], stage) || !drain(mark_[0], d, stage, call)) return false;
  std::vector<plan::RankWire> blocks(static_cast<size_t>(c_.plan.nranks));
  cudaSetDevice(c_.gpus[0].device);
  if (cudaError_t e = cudaMemcpy(blocks.data(), bufs_.local(0).wire_out,
                                 blocks.size() * sizeof(plan::RankWire), cudaMemcpyDeviceToHost);
      e != cudaSuccess)
    return fail(stage, CallError{0, "cudaMemcpy", cudaGetErrorString(e)});
  all->clear();
  for (const plan::RankWire& b : blocks) all->push_back(plan::from_wire(b));
  return true;
}

plan::ReplayResult Run::go() {
  auto t0 = std::chrono::steady_clock::now();
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess) r_.cuda_driver = cuda_version(v);
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) r_.cuda_runtime = cuda_version(v);
  r_.nccl_version = nccl_version();
  r_.processes = c_.launch.world_size;
  r_.gpus_per_process = static_cast<int>(c_.gpus.size());
  r_.warmup = c_.warmup;
  r_.iters = c_.iters;
  r_.ranks.resize(static_cast<size_t>(c_.plan.nranks));
  for (size_t k = 0; k < r_.ranks.size(); ++k) r_.ranks[k].rank = static_cast<int>(k);
  for (size_t i = 0; i < c_.gpus.size(); ++i) {
    local(i).host = c_.host;
    local(i).gpu = c_.gpus[i];
  }
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };

  if (!init() || !setup()) return r_;
  bool multi = c_.launch.multi_process();
  if (multi) {
    // Who is where, so that a rank that later goes quiet can be named with its host.
    say("exchange: hosts and GPUs of every rank");
    std::vector<plan::RankResult> all;
    if (!exchange(deadline_, "exchange", &all)) return r_;
    for (const plan::RankResult& k : all) {
      if (!k.reported || k.rank < 0 || k.rank >= c_.plan.nranks) continue;
      plan::RankResult& mine = r_.ranks[static_cast<size_t>(k.rank)];
      mine.host = k.host;
      mine.gpu = k.gpu;
    }
  }
  say("warm-up: " + std::to_string(c_.warmup) + " iteration(s)");
  if (c_.warmup > 0) {
    if (!iterate(c_.warmup, "warmup")) return r_;
    if (!record(stop_, "warmup") || !drain(stop_, deadline_, "warmup", nccl_call_name(c_.plan.op)))
      return r_;
  }
  say("timed: " + std::to_string(c_.iters) + " iteration(s)");
  if (!record(start_, "timed") || !iterate(c_.iters, "timed") || !record(stop_, "timed") ||
      !drain(stop_, deadline_, "timed", nccl_call_name(c_.plan.op)))
    return r_;
  r_.elapsed_s = elapsed();
  for (size_t i = 0; i < comms_.size(); ++i) {
    float ms = 0;
    cudaEventElapsedTime(&ms, start_[i], stop_[i]);
    local(i).time_us = static_cast<double>(ms) * 1e3 / c_.iters;
  }
  if (c_.check) {
    say("check: reading the results back");
    std::vector<int64_t> wrong;
    if (auto e = bufs_.check(c_.plan, first_rank_, &wrong)) {
      fail("check", *e);
      return r_;
    }
    for (size_t i = 0; i < wrong.size(); ++i) local(i).wrong = wrong[i];
  }
  for (size_t i = 0; i < c_.gpus.size(); ++i) {
    local(i).reported = true;
    local(i).outcome = Outcome::kCompleted;
  }
  r_.outcome = Outcome::kCompleted;
  // The final exchange gets its own minimum time: the collective may have
  // finished just before the deadline.
  Deadline late(std::max(deadline_.remaining_ms(), c_.exchange_timeout_ms));
  if (multi) {
    say("exchange: results of every rank");
    std::vector<plan::RankResult> mine(
        r_.ranks.begin() + first_rank_,
        r_.ranks.begin() + first_rank_ + static_cast<int>(c_.gpus.size()));
    std::vector<plan::RankResult> all;
    if (!exchange(late, "results", &all)) {
      // This process's ranks finished; the silent ones are the others.
      std::string why = r_.failure;
      std::copy(mine.begin(), mine.end(), r_.ranks.begin() + first_rank_);
      std::vector<int> silent = plan::incomplete_ranks(r_);
      r_.failure = "no result from " + plan::describe_ranks(r_, silent) + " (" + why + ")";
      return r_;
    }
    for (const plan::RankResult& k : all) {
      if (!k.reported || k.rank < 0 || k.rank >= c_.plan.nranks) continue;
      r_.ranks[static_cast<size_t>(k.rank)] = k;
    }
  }
  if (auto e = comms_.finalize(late, c_.interrupted))
    say("finalize: " + e->call + ": " + e->message);
  return r_;
}

}  // namespace

plan::ReplayResult run(const EngineConfig& config) {
  Run run(config);
  plan::ReplayResult r = run.go();
  plan::summarize(r, config.plan);
  return r;
}

}  // namespace ncclpm::replay
