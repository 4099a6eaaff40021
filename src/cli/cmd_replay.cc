// src/cli/cmd_replay.cc
//
// `ncclpm replay --finding N | --op OP --count N|--bytes N [options]`: runs the
// suspect collective with NCCL on live GPUs (one process driving every GPU, or
// one process per rank under torchrun, srun or mpirun), never hangs, and
// records whether the result confirms the finding. Compiles without CUDA too:
// then only --dry-run works.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "ncclpm/plan/launch_env.h"
#include "ncclpm/plan/replay_report.h"
#include "ncclpm/plan/replay_store.h"
#include "ncclpm/store/schema.h"
#include "ncclpm/util/text.h"
#include "options.h"
#ifdef NCCLPM_HAVE_REPLAY
#include "ncclpm/replay/engine.h"
#endif

extern char** environ;

namespace ncclpm::cli {
namespace {

const CommandHelp kHelp{
    "replay", "ncclpm replay --finding N | --op OP --count N|--bytes N [options]",
    "Runs the collective a finding suspects with NCCL on the GPUs of this host, or on\n"
    "many hosts when started by torchrun --no-python, srun or mpirun (rank and world\n"
    "size from their environment, NCCL's bootstrap through NCCL_COMM_ID). Measures as\n"
    "nccl-tests does, never hangs (non-blocking communicators, abort at the deadline)\n"
    "and stores a verdict in the replays table: does it confirm the finding?\n"
    "Exit codes: 0 ran, 1 failed, 2 usage, 3 timed out, 130 interrupted.",
    "  ncclpm replay --finding 1 --dry-run\n"
    "  ncclpm replay --finding 1 --env-from-logs --check\n"
    "  ncclpm replay --op allgather --count 29171712 --dtype bf16 --gpus 8\n"
    "  srun -N2 --ntasks-per-node=8 ncclpm replay --finding 1 --db /shared/incidents.db\n"
    "  mpirun -np 16 -x MASTER_ADDR=node07 -x MASTER_PORT=29500 ncclpm replay --finding 1\n"
    "  torchrun --nnodes 2 --nproc-per-node 8 --rdzv-endpoint node07:29400 --no-python ncclpm "
    "replay --finding 1"};

std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

int error_exit(const Error& e, ExitCode code = ExitCode::kError) {
  print_error(e);
  return static_cast<int>(code);
}

// The ranks in the job's collective, or the ones a dry run can count without a GPU.
int dry_run_nranks(const plan::ReplaySettings& s, const plan::LaunchInfo& launch) {
  if (launch.multi_process()) return launch.world_size * std::max(1, s.gpus_per_process);
  if (s.gpus_per_process > 0) return s.gpus_per_process;
  return s.job_nranks;
}

int dry_run(plan::ReplaySettings& s, plan::ReplayContext& c, const std::string& format) {
  int nranks = dry_run_nranks(s, c.launch);
  if (nranks <= 0)
    return usage_error("replay",
                       "--dry-run of an explicit collective needs --gpus N: it looks at no GPU");
  if (Status st = plan::set_nranks(s, nranks); !st)
    return usage_error("replay", st.error().message);
  c.gpus_per_process = c.launch.multi_process() ? std::max(1, s.gpus_per_process) : nranks;
  c.dry_run = true;
  if (c.launch.rank != 0) return 0;  // under a launcher, one copy of the plan is enough
  std::cout << (format == "json" ? plan::render_dry_run_json(c) : plan::render_dry_run_text(c));
  return 0;
}

#ifdef NCCLPM_HAVE_REPLAY

// One overprinted progress line, only when stderr is a terminal.
std::function<void(const std::string&)> progress_line(bool rank0) {
  if (!rank0 || isatty(STDERR_FILENO) == 0) return {};
  return [](const std::string& line) { std::cerr << "\r\x1b[Kreplay: " << line << std::flush; };
}

int real_run(plan::ReplaySettings& s, plan::ReplayContext& c, const std::string& format,
             const std::string& db_path) {
  const plan::LaunchInfo& launch = c.launch;
  std::string host = host_name();
  std::string who =
      "host " + host + (launch.multi_process() ? " rank " + std::to_string(launch.rank) : "");
  // NCCL and CUDA read their settings once, at first use: set them all now.
  for (const auto& [k, v] : s.plan.env) setenv(k.c_str(), v.c_str(), 1);
  // Several processes meet at rank 0's NCCL_COMM_ID; one process makes its own
  // id, and a stale NCCL_COMM_ID inherited from the job would send it elsewhere.
  if (launch.multi_process())
    setenv("NCCL_COMM_ID", launch.comm_id.c_str(), 1);
  else
    unsetenv("NCCL_COMM_ID");

  auto gpus = replay::visible_gpus();
  if (!gpus)
    return error_exit(Error{"replay", who + ": " + gpus.error().message, gpus.error().hint});
  int visible = static_cast<int>(gpus->size());
  // One process: as many GPUs as the job's collective had ranks when they are
  // here, else all of them. Under a launcher: one GPU per process.
  int per_process = s.gpus_per_process > 0                        ? s.gpus_per_process
                    : launch.multi_process()                      ? 1
                    : s.job_nranks > 0 && s.job_nranks <= visible ? s.job_nranks
                                                                  : visible;
  auto devices = plan::pick_devices(launch, per_process, visible);
  if (!devices)
    return error_exit(Error{"replay", who + ": " + devices.error().message, devices.error().hint});
  if (Status st = plan::set_nranks(s, per_process * launch.world_size); !st)
    return usage_error("replay", st.error().message);
  c.gpus_per_process = per_process;

  replay::EngineConfig config;
  config.plan = s.plan;
  config.warmup = s.warmup;
  config.iters = s.iters;
  config.check = s.check;
  config.timeout_ms = s.timeout_ms;
  config.launch = launch;
  for (int d : *devices) config.gpus.push_back((*gpus)[static_cast<size_t>(d)]);
  config.host = host;
  config.interrupted = &g_interrupted;
  config.progress = progress_line(launch.rank == 0);
  plan::ReplayResult r = replay::run(config);
  if (config.progress) std::cerr << "\r\x1b[K" << std::flush;
  int code = static_cast<int>(plan::exit_code_for(r.outcome));
  if (!r.failure.empty() && r.outcome != plan::Outcome::kInterrupted)
    print_error(Error{"replay", r.failure, {}});
  if (launch.rank != 0) return code;  // rank 0 reports for everyone

  plan::VerdictInput in;
  in.has_finding = c.finding != nullptr;
  if (c.finding != nullptr) {
    in.finding_id = c.finding->finding_id;
    in.category = c.finding->category;
    in.rule = c.finding->rule;
    in.job_timeout_ms = c.finding->timeout_ms;
  }
  in.outcome = r.outcome;
  in.stage = r.stage;
  in.failure = r.failure;
  in.incomplete = plan::describe_ranks(r, plan::incomplete_ranks(r));
  in.time_us = r.time_us;
  in.busbw_gbps = r.busbw_gbps;
  in.ranks = static_cast<int>(r.ranks.size());
  in.size_bytes = s.plan.nccl_tests_size_bytes();
  in.wrong = r.wrong;
  in.deadline_ms = s.timeout_ms;
  in.min_busbw_gbps = s.min_busbw_gbps;
  plan::Verdict v = plan::judge(in);

  int64_t replay_id = 0;
  if (c.finding != nullptr && r.outcome != plan::Outcome::kInterrupted) {
    auto part = [&](auto write) {
      util::JsonWriter w(false);
      write(w);
      return w.str();
    };
    plan::ReplayRecord rec;
    rec.finding_id = c.finding->finding_id;
    rec.job_id = c.finding->job_id;
    rec.plan_json = part([&](util::JsonWriter& w) { plan::write_plan(w, c); });
    rec.environment_json = part([&](util::JsonWriter& w) { plan::write_environment(w, c); });
    rec.devices_json = part([&](util::JsonWriter& w) { plan::write_devices(w, r); });
    rec.results_json = part([&](util::JsonWriter& w) { plan::write_results(w, c, r); });
    rec.nccl_version = r.nccl_version;
    rec.verdict = v.text;
    rec.confirms = v.confirms;
    rec.exit_code = code;
    auto db = store::open_for_update(db_path);
    auto id = db ? plan::store_replay(*db, rec) : Result<int64_t>(db.error());
    if (!id) {
      print_error(id.error());
      if (code == 0) code = static_cast<int>(ExitCode::kError);
    } else {
      replay_id = *id;
    }
  }
  std::cout << (format == "json" ? plan::render_result_json(c, r, v, replay_id)
                                 : plan::render_result_text(c, r, v));
  if (isatty(STDERR_FILENO) == 0 && replay_id > 0)
    std::cerr << "replay " << replay_id << " of finding " << c.finding->finding_id << " stored in "
              << db_path << "\n";
  return code;
}

#endif  // NCCLPM_HAVE_REPLAY

}  // namespace

int cmd_replay(const Args& args) {
  // clang-format off
  po::options_description what("What to replay");
  what.add_options()
      ("finding", po::value<int64_t>(), "id of a stored finding (see `ncclpm diagnose`)")
      ("op", po::value<std::string>(), "allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv")
      ("count", po::value<int64_t>(), "elements per rank (NCCL's count; NumelIn for allgather, NumelOut for reducescatter)")
      ("bytes", po::value<std::string>(), "size as nccl-tests takes it (-b: 1048576, 64K, 512M, 1G): the whole collective's buffer")
      ("dtype", po::value<std::string>(), "bfloat16, float16, float32, int8, ... (default float32, or the finding's)")
      ("redop", po::value<std::string>(), "sum, prod, max, min, avg (reductions)")
      ("root", po::value<int>(), "root rank (broadcast, reduce)");
  po::options_description how("How to run it");
  how.add_options()
      ("gpus", po::value<int>()->default_value(0), "GPUs per process (default: all visible with one process, 1 under a launcher)")
      ("iters", po::value<int>()->default_value(20), "timed iterations")
      ("warmup", po::value<int>()->default_value(5), "warm-up iterations")
      ("timeout", po::value<double>()->default_value(120), "seconds before the communicators are aborted")
      ("check", "verify the result data")
      ("min-busbw", po::value<double>()->default_value(5), "GB/s below which a collective of 1 MiB or more is slow")
      ("env", po::value<std::vector<std::string>>()->composing(), "KEY=VALUE for NCCL (repeatable)")
      ("env-from-logs", "apply the NCCL settings seen in the job's logs")
      ("bootstrap", po::value<std::string>()->default_value(""), "HOST:PORT of rank 0 for NCCL_COMM_ID (several processes)");
  po::options_description out("Output");
  out.add_options()
      ("dry-run", "print the plan and the nccl-tests command; no GPU needed")
      ("db", po::value<std::string>()->default_value(default_db_path()), "incident database")
      ("format", po::value<std::string>()->default_value("text"), "text or json");
  // clang-format on
  po::options_description visible;
  visible.add(what).add(how).add(out);
  po::options_description hidden;
  po::positional_options_description pos;
  po::variables_map vm;
  if (auto rc = parse_options(kHelp, visible, hidden, pos, args, vm)) return *rc;

  std::string format = vm["format"].as<std::string>();
  if (format != "text" && format != "json")
    return usage_error("replay", "--format must be text or json, not " + util::quoted(format));
  plan::ReplayOptions o;
  if (vm.count("finding")) o.finding_id = vm["finding"].as<int64_t>();
  if (vm.count("finding") && o.finding_id <= 0)
    return usage_error("replay", "--finding takes a finding id (1 or more)");
  if (vm.count("op")) o.op = vm["op"].as<std::string>();
  if (vm.count("count")) o.count = std::max<int64_t>(0, vm["count"].as<int64_t>());
  if (vm.count("bytes")) {
    auto bytes = plan::parse_byte_size(vm["bytes"].as<std::string>());
    if (!bytes) {
      const Error& e = bytes.error();
      return usage_error("replay", e.hint.empty() ? e.message : e.message + " (" + e.hint + ")");
    }
    o.bytes = *bytes;
  }
  if (vm.count("dtype")) o.dtype = vm["dtype"].as<std::string>();
  if (vm.count("redop")) o.redop = vm["redop"].as<std::string>();
  if (vm.count("root")) o.root = std::max(-2, vm["root"].as<int>());
  o.gpus = vm["gpus"].as<int>();
  o.iters = vm["iters"].as<int>();
  o.warmup = vm["warmup"].as<int>();
  o.timeout_s = vm["timeout"].as<double>();
  o.check = vm.count("check") != 0;
  o.min_busbw_gbps = vm["min-busbw"].as<double>();
  if (vm.count("env")) o.env = vm["env"].as<std::vector<std::string>>();
  o.env_from_logs = vm.count("env-from-logs") != 0;
  o.dry_run = vm.count("dry-run") != 0;
  std::string db_path = vm["db"].as<std::string>();

  std::optional<plan::FindingRef> finding;
  if (o.finding_id > 0) {
    auto db = store::open_for_reading(db_path);
    if (!db) return error_exit(db.error());
    auto f = plan::load_finding(*db, o.finding_id);
    if (!f) return error_exit(f.error());
    finding = std::move(f).value();
    if (!finding->plan) {
      return error_exit(Error::plain(
          "finding " + std::to_string(o.finding_id) + " (" + finding->category +
              ") names no collective to replay",
          "replay an explicit collective instead: --op allreduce --count N --dtype bfloat16"));
    }
  }
  auto settings = plan::resolve_settings(o, finding ? &*finding : nullptr);
  if (!settings) {
    const Error& e = settings.error();
    return usage_error("replay", e.message + (e.hint.empty() ? "" : " (" + e.hint + ")"));
  }
  auto launch = plan::detect_launch(plan::process_env(), vm["bootstrap"].as<std::string>());
  if (!launch) return error_exit(Error{"replay", launch.error().message, launch.error().hint});

  plan::ReplayContext c;
  c.settings = &*settings;
  c.finding = finding ? &*finding : nullptr;
  c.launch = *launch;
  c.inherited_env = plan::inherited_nccl_env(environ);
  if (o.dry_run) return dry_run(*settings, c, format);
#ifdef NCCLPM_HAVE_REPLAY
  return real_run(*settings, c, format, db_path);
#else
  return error_exit(Error::plain(
      "this ncclpm was built without the replay engine (CUDA and NCCL were not found)",
      "--dry-run prints the plan and the nccl-tests command; rebuild with CUDA and NCCL "
      "(cmake -DNCCLPM_REPLAY=ON) to run it"));
#endif
}

}  // namespace ncclpm::cli
