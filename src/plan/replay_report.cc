// src/plan/replay_report.cc
#include "ncclpm/plan/replay_report.h"

#include <cstdio>

#include "ncclpm/vocab/nccl_enums.h"
#include "ncclpm/util/text.h"

namespace ncclpm::plan {
namespace {

constexpr size_t kMaxGpuLines = 64;  // beyond this the per-rank lines are summarised

std::string env_list(const std::map<std::string, std::string>& env) {
  std::string out;
  for (const auto& [k, v] : env) out += (out.empty() ? "" : " ") + k + "=" + v;
  return out;
}

std::string redop_column(const CollectivePlan& p) {
  return op_reduces(p.op) ? vocab::redop_name(p.redop) : "none";
}

int root_column(const CollectivePlan& p) { return op_has_root(p.op) ? p.root : -1; }

std::string finding_line(const ReplayContext& c, const char* what) {
  if (c.finding == nullptr)
    return std::string("# ncclpm replay") + what + ": an explicit collective\n";
  const FindingRef& f = *c.finding;
  std::string s = std::string("# ncclpm replay") + what + ": finding " +
                  std::to_string(f.finding_id) + " (" + f.category + ", rule " + f.rule + ")";
  if (!f.job.empty()) s += " of job " + f.job;
  return s + "\n";
}

std::string launch_text(const ReplayContext& c) {
  const LaunchInfo& l = c.launch;
  std::string gpus = c.gpus_per_process > 0 ? std::to_string(c.gpus_per_process) : "all visible";
  if (!l.multi_process()) {
    std::string s = "one process driving " + gpus + " GPU(s), one rank each";
    if (c.dry_run && c.settings->gpus_per_process == 0)
      s += " (all visible GPUs if fewer are here)";
    return s;
  }
  std::string s = std::string(launcher_name(l.launcher)) + ": process " + std::to_string(l.rank) +
                  " of " + std::to_string(l.world_size) + ", " +
                  (c.gpus_per_process > 0 ? std::to_string(c.gpus_per_process) : std::string("1")) +
                  " GPU(s) each, bootstrap NCCL_COMM_ID=" + l.comm_id;
  if (!l.comm_id_source.empty()) s += " (" + l.comm_id_source + ")";
  return s;
}

// "NCCL_IB_HCA=mlx5 (job's logs); NCCL_ALGO=Ring (--env); NCCL_DEBUG=INFO (inherited)"
std::string environment_text(const ReplayContext& c) {
  const ReplaySettings& s = *c.settings;
  std::string out;
  auto part = [&](const std::map<std::string, std::string>& env, const char* from) {
    if (env.empty()) return;
    out += (out.empty() ? "" : "; ") + env_list(env) + " (" + from + ")";
  };
  std::map<std::string, std::string> logs, inherited;
  for (const auto& [k, v] : s.env_from_logs)
    if (!s.env_from_user.count(k)) logs[k] = v;
  for (const auto& [k, v] : c.inherited_env)
    if (!s.plan.env.count(k)) inherited[k] = v;
  part(logs, "from the job's logs");
  part(s.env_from_user, "--env");
  part(inherited, "inherited");
  return out.empty() ? "none beyond NCCL's defaults" : out;
}

// The job's settings that a replay without --env-from-logs leaves out.
std::map<std::string, std::string> logs_env_unused(const ReplayContext& c) {
  std::map<std::string, std::string> out;
  if (c.finding == nullptr || !c.finding->plan || !c.settings->env_from_logs.empty()) return out;
  for (const auto& [k, v] : c.finding->plan->env)
    if (env_not_applicable(k).empty() && !c.settings->plan.env.count(k)) out[k] = v;
  return out;
}

NcclTestsArgs tests_args(const ReplayContext& c) {
  NcclTestsArgs a;
  a.gpus_per_process =
      c.launch.multi_process() ? std::max(1, c.gpus_per_process) : c.gpus_per_process;
  a.warmup_iters = c.settings->warmup;
  a.iters = c.settings->iters;
  a.check = c.settings->check;
  return a;
}

std::string fmt(const char* f, double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string time_column(double us) {
  if (us < 1e4) return fmt("%.2f", us);
  if (us < 1e6) return fmt("%.1f", us);
  return fmt("%.0f", us);
}

std::string nranks_text(const ReplaySettings& s) {
  std::string out =
      s.plan.nranks > 0 ? std::to_string(s.plan.nranks) : std::string("one per visible GPU");
  if (s.job_nranks > 0 && s.plan.nranks > 0 && s.job_nranks != s.plan.nranks)
    out +=
        " (the job's collective had " + std::to_string(s.job_nranks) + "; per-rank sizes are kept)";
  return out;
}

std::string deadline_text(const ReplayContext& c) {
  std::string s = format_duration_us(static_cast<double>(c.settings->timeout_ms) * 1e3);
  if (c.finding != nullptr && c.finding->timeout_ms > 0)
    s += " (the job's watchdog allowed " +
         format_duration_us(static_cast<double>(c.finding->timeout_ms) * 1e3) + ")";
  return s;
}

}  // namespace

std::string table_header() {
  char a[160], b[160];
  std::snprintf(a, sizeof a, "#%11s  %12s  %9s  %6s  %5s  %9s  %7s  %7s  %7s\n", "size", "count",
                "type", "redop", "root", "time", "algbw", "busbw", "#wrong");
  std::snprintf(b, sizeof b, "#%11s  %12s  %9s  %6s  %5s  %9s  %7s  %7s  %7s\n", "(B)",
                "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "");
  return std::string(a) + b;
}

std::string table_row(const CollectivePlan& p, const ReplayResult* r, bool checked) {
  std::string time = "-", algbw = "-", busbw = "-", wrong = checked ? "-" : "N/A";
  if (r != nullptr) {
    if (r->outcome == Outcome::kCompleted && r->time_us > 0) {
      time = time_column(r->time_us);
      algbw = fmt("%.2f", r->algbw_gbps);
      busbw = fmt("%.2f", r->busbw_gbps);
    } else if (r->outcome == Outcome::kTimedOut) {
      time = "timeout";
    } else {
      time = outcome_name(r->outcome);
    }
    if (checked && r->wrong >= 0) wrong = std::to_string(r->wrong);
  }
  char row[200];
  std::snprintf(row, sizeof row, " %11lld  %12lld  %9s  %6s  %5d  %9s  %7s  %7s  %7s\n",
                static_cast<long long>(p.nccl_tests_size_bytes()), static_cast<long long>(p.count),
                nccl_tests_datatype_name(p.datatype), redop_column(p).c_str(), root_column(p),
                time.c_str(), algbw.c_str(), busbw.c_str(), wrong.c_str());
  return row;
}

std::string render_dry_run_text(const ReplayContext& c) {
  const ReplaySettings& s = *c.settings;
  const CollectivePlan& p = s.plan;
  int size = vocab::datatype_size(p.datatype);
  std::string out = finding_line(c, " --dry-run");
  auto line = [&](const char* key, const std::string& value) {
    char k[16];
    std::snprintf(k, sizeof k, "%-13s", key);
    out += std::string(k) + value + "\n";
  };
  line("op", op_name(p.op));
  line("count", std::to_string(p.count) + " per rank" +
                    (s.count_source.empty() ? "" : " (" + s.count_source + ")"));
  line("dtype", vocab::datatype_name(p.datatype));
  if (!p.dtype_note.empty()) line("", p.dtype_note + "; --dtype sets it");
  if (op_reduces(p.op)) line("redop", vocab::redop_name(p.redop));
  if (op_has_root(p.op)) line("root", std::to_string(p.root));
  line("ranks", nranks_text(s));
  if (p.nranks > 0) {
    line("bytes", util::with_commas(p.send_count() * size) + " sent, " +
                      util::with_commas(p.recv_count() * size) +
                      " received per rank; nccl-tests size " +
                      std::to_string(p.nccl_tests_size_bytes()));
  }
  line("environment", environment_text(c));
  if (auto unused = logs_env_unused(c); !unused.empty())
    line("", "not applied: " + env_list(unused) + " from the job's logs (add --env-from-logs)");
  for (const std::string& skipped : s.env_not_applied) line("", "not applied: " + skipped);
  line("launch", launch_text(c));
  line("iterations", std::to_string(s.warmup) + " warm-up, " + std::to_string(s.iters) + " timed");
  line("deadline", deadline_text(c));
  line("check",
       s.check ? "on (result data verified)" : "off (add --check to verify the result data)");
  if (p.nranks > 0) line("nccl-tests", p.nccl_tests_command(tests_args(c)));
  return out;
}

void write_plan(util::JsonWriter& w, const ReplayContext& c) {
  const ReplaySettings& s = *c.settings;
  const CollectivePlan& p = s.plan;
  int size = vocab::datatype_size(p.datatype);
  w.begin_object();
  w.key("op").value(op_name(p.op));
  w.key("count").value(p.count);
  if (!s.count_source.empty()) w.key("count_source").value(s.count_source);
  w.key("dtype").value(vocab::datatype_name(p.datatype));
  if (!p.dtype_note.empty()) w.key("dtype_note").value(p.dtype_note);
  w.key("redop").value(op_reduces(p.op) ? vocab::redop_name(p.redop) : "none");
  w.key("root").value(root_column(p));
  w.key("nranks").value(p.nranks);
  if (s.job_nranks > 0) w.key("job_nranks").value(s.job_nranks);
  w.key("send_bytes").value(p.send_count() * size);
  w.key("recv_bytes").value(p.recv_count() * size);
  w.key("size_bytes").value(p.nccl_tests_size_bytes());
  w.key("warmup").value(s.warmup);
  w.key("iters").value(s.iters);
  w.key("timeout_ms").value(s.timeout_ms);
  w.key("check").value(s.check);
  if (c.finding != nullptr) w.key("job_timeout_ms").value_or_null(c.finding->timeout_ms);
  if (p.nranks > 0) w.key("nccl_tests_command").value(p.nccl_tests_command(tests_args(c)));
  w.end_object();
}

void write_environment(util::JsonWriter& w, const ReplayContext& c) {
  const ReplaySettings& s = *c.settings;
  auto object = [&](const char* key, const std::map<std::string, std::string>& env) {
    w.key(key).begin_object();
    for (const auto& [k, v] : env) w.key(k).value(v);
    w.end_object();
  };
  w.begin_object();
  object("applied", s.plan.env);
  object("from_logs", s.env_from_logs);
  object("from_user", s.env_from_user);
  object("inherited", c.inherited_env);
  w.key("not_applied").begin_array();
  for (const std::string& n : s.env_not_applied) w.value(n);
  for (const auto& [k, v] : logs_env_unused(c)) w.value(k + "=" + v + " (no --env-from-logs)");
  w.end_array();
  w.key("launcher").value(launcher_name(c.launch.launcher));
  w.key("processes").value(c.launch.world_size);
  w.key("gpus_per_process").value(c.gpus_per_process);
  if (!c.launch.comm_id.empty()) w.key("NCCL_COMM_ID").value(c.launch.comm_id);
  w.end_object();
}

void write_devices(util::JsonWriter& w, const ReplayResult& r) {
  w.begin_array();
  for (const RankResult& k : r.ranks) {
    w.begin_object();
    w.key("rank").value(k.rank);
    w.key("host").value(k.host);
    w.key("gpu").value(k.gpu.device);
    w.key("name").value(k.gpu.name);
    w.key("bus_id").value(k.gpu.bus_id);
    w.end_object();
  }
  w.end_array();
}

void write_results(util::JsonWriter& w, const ReplayContext& c, const ReplayResult& r) {
  const CollectivePlan& p = c.settings->plan;
  w.begin_object();
  w.key("outcome").value(outcome_name(r.outcome));
  if (!r.stage.empty()) w.key("stage").value(r.stage);
  if (!r.failure.empty()) w.key("failure").value(r.failure);
  w.key("size_bytes").value(p.nccl_tests_size_bytes());
  w.key("count").value(p.count);
  w.key("type").value(nccl_tests_datatype_name(p.datatype));
  w.key("redop").value(redop_column(p));
  w.key("root").value(root_column(p));
  w.key("time_us").value(r.time_us);
  w.key("time_us_min").value(r.time_us_min);
  w.key("time_us_max").value(r.time_us_max);
  w.key("algbw_gbps").value(r.algbw_gbps);
  w.key("busbw_gbps").value(r.busbw_gbps);
  w.key("bus_factor").value(bus_factor(p.op, p.nranks));
  w.key("wrong").value_or_null(r.wrong);
  w.key("warmup").value(r.warmup);
  w.key("iters").value(r.iters);
  w.key("elapsed_s").value(r.elapsed_s);
  w.key("incomplete_ranks").begin_array();
  for (int k : incomplete_ranks(r)) w.value(k);
  w.end_array();
  w.key("ranks").begin_array();
  for (const RankResult& k : r.ranks) {
    w.begin_object();
    w.key("rank").value(k.rank);
    w.key("host").value(k.host);
    w.key("gpu").value(k.gpu.device);
    w.key("reported").value(k.reported);
    w.key("outcome").value(outcome_name(k.outcome));
    if (!k.stage.empty()) w.key("stage").value(k.stage);
    if (!k.call.empty()) w.key("call").value(k.call);
    if (!k.message.empty()) w.key("message").value(k.message);
    w.key("time_us").value(k.time_us);
    w.key("wrong").value_or_null(k.wrong);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

std::string render_result_text(const ReplayContext& c, const ReplayResult& r, const Verdict& v) {
  const ReplaySettings& s = *c.settings;
  const CollectivePlan& p = s.plan;
  std::string out = finding_line(c, "");
  out += "# collective: " + std::string(op_name(p.op)) + ", " + std::to_string(p.count) + " " +
         vocab::datatype_name(p.datatype) + " per rank" +
         (s.count_source.empty() ? "" : " (" + s.count_source + ")") + ", " + nranks_text(s) +
         " ranks\n";
  if (!p.dtype_note.empty()) out += "#   " + p.dtype_note + "\n";
  out += "# " + launch_text(c) + "\n";
  out += "# NCCL " + (r.nccl_version.empty() ? std::string("?") : r.nccl_version) +
         ", CUDA driver " + (r.cuda_driver.empty() ? std::string("?") : r.cuda_driver) +
         ", runtime " + (r.cuda_runtime.empty() ? std::string("?") : r.cuda_runtime) + "\n";
  out += "# environment: " + environment_text(c) + "\n";
  for (const std::string& skipped : s.env_not_applied) out += "#   not applied: " + skipped + "\n";
  size_t shown = 0;
  for (const RankResult& k : r.ranks) {
    if (shown++ == kMaxGpuLines) {
      out += "#   ... and " + std::to_string(r.ranks.size() - kMaxGpuLines) + " more ranks\n";
      break;
    }
    char buf[256];
    if (k.gpu.device >= 0 || !k.host.empty()) {
      std::snprintf(buf, sizeof buf, "#  rank %3d  host %-16s GPU %2d  %-24s %s\n", k.rank,
                    k.host.c_str(), k.gpu.device, k.gpu.name.c_str(), k.gpu.bus_id.c_str());
    } else {
      std::snprintf(buf, sizeof buf, "#  rank %3d  (did not report)\n", k.rank);
    }
    out += buf;
  }
  out += "# warm-up " + std::to_string(s.warmup) + ", iterations " + std::to_string(s.iters) +
         ", deadline " + deadline_text(c) + ", data check " + (s.check ? "on" : "off") + "\n#\n";
  out += table_header();
  out += table_row(p, &r, s.check);
  if (!r.failure.empty()) out += "# error: " + r.failure + "\n";
  if (auto missing = incomplete_ranks(r); !missing.empty() && r.outcome != Outcome::kCompleted)
    out += "# did not complete: " + describe_ranks(r, missing) + "\n";
  std::string confirms = !v.confirms   ? "undecided"
                         : *v.confirms ? "confirms the finding"
                                       : "refutes the finding";
  out +=
      "verdict: " + v.text + (c.finding != nullptr ? " [" + confirms + "]" : std::string()) + "\n";
  return out;
}

std::string render_dry_run_json(const ReplayContext& c) {
  util::JsonWriter w;
  w.begin_object();
  w.key("schema").value("ncclpm.replay-plan/1");
  if (c.finding != nullptr) {
    w.key("finding_id").value(c.finding->finding_id);
    w.key("job").value(c.finding->job);
    w.key("category").value(c.finding->category);
    w.key("rule").value(c.finding->rule);
  } else {
    w.key("finding_id").null();
  }
  w.key("plan");
  write_plan(w, c);
  w.key("environment");
  write_environment(w, c);
  w.end_object();
  return w.str() + "\n";
}

std::string render_result_json(const ReplayContext& c, const ReplayResult& r, const Verdict& v,
                               int64_t replay_id) {
  util::JsonWriter w;
  w.begin_object();
  w.key("schema").value("ncclpm.replay/1");
  w.key("replay_id");
  if (replay_id > 0)
    w.value(replay_id);
  else
    w.null();
  if (c.finding != nullptr) {
    w.key("finding_id").value(c.finding->finding_id);
    w.key("job").value(c.finding->job);
    w.key("category").value(c.finding->category);
    w.key("rule").value(c.finding->rule);
  } else {
    w.key("finding_id").null();
  }
  w.key("plan");
  write_plan(w, c);
  w.key("environment");
  write_environment(w, c);
  w.key("nccl_version").value(r.nccl_version);
  w.key("cuda_driver").value(r.cuda_driver);
  w.key("cuda_runtime").value(r.cuda_runtime);
  w.key("devices");
  write_devices(w, r);
  w.key("results");
  write_results(w, c, r);
  w.key("verdict").value(v.text);
  w.key("confirms");
  if (v.confirms)
    w.value(*v.confirms);
  else
    w.null();
  w.key("exit_code").value(static_cast<int>(exit_code_for(r.outcome)));
  w.end_object();
  return w.str() + "\n";
}

}  // namespace ncclpm::plan
