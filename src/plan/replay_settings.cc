// src/plan/replay_settings.cc
#include "ncclpm/plan/replay_settings.h"

#include <algorithm>
#include <cctype>

#include "ncclpm/vocab/nccl_enums.h"
#include "ncclpm/util/text.h"

namespace ncclpm::plan {
namespace {

constexpr const char* kOps =
    "allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv";
constexpr const char* kTypes =
    "int8, uint8, int32, uint32, int64, uint64, float16, float32, float64, bfloat16, float8e4m3, "
    "float8e5m2";

Status check_numbers(const ReplayOptions& o) {
  if (o.iters < 1)
    return Error::plain("--iters must be at least 1, not " + std::to_string(o.iters));
  if (o.warmup < 0) return Error::plain("--warmup must not be negative");
  if (!(o.timeout_s > 0)) return Error::plain("--timeout must be a positive number of seconds");
  if (o.gpus < 0) return Error::plain("--gpus must not be negative");
  if (o.count == 0 || o.count < -1)
    return Error::plain("--count must be a positive number of elements");
  if (o.bytes == 0 || o.bytes < -1)
    return Error::plain("--bytes must be a positive number of bytes");
  if (o.count > 0 && o.bytes > 0) return Error::plain("give --count or --bytes, not both");
  if (o.root < -1) return Error::plain("--root must be a rank (0 or more)");
  if (o.min_busbw_gbps < 0) return Error::plain("--min-busbw must not be negative");
  return Ok{};
}

// Overrides the plan's fields with the ones given explicitly.
Status apply_explicit(const ReplayOptions& o, CollectivePlan& p, std::string& count_source) {
  if (!o.op.empty()) {
    auto op = parse_op(o.op);
    if (!op) return Error::plain("unknown op " + util::quoted(o.op), std::string("ops: ") + kOps);
    p.op = *op;
  }
  if (!o.dtype.empty()) {
    auto t = vocab::parse_datatype(o.dtype);
    if (!t)
      return Error::plain("unknown dtype " + util::quoted(o.dtype),
                          std::string("dtypes: ") + kTypes);
    p.datatype = *t;
    p.dtype_note.clear();  // no longer assumed
  }
  if (!o.redop.empty()) {
    auto r = vocab::parse_redop(o.redop);
    if (!r)
      return Error::plain("unknown redop " + util::quoted(o.redop),
                          "redops: sum, prod, max, min, avg");
    p.redop = *r;
  }
  if (o.root >= 0) p.root = o.root;
  if (o.count > 0) {
    p.count = o.count;
    count_source = "--count";
  }
  if (o.bytes > 0) count_source = "--bytes";
  return Ok{};
}

}  // namespace

Result<std::pair<std::string, std::string>> parse_env_assignment(std::string_view kv) {
  size_t eq = kv.find('=');
  std::string_view key = eq == std::string_view::npos ? kv : kv.substr(0, eq);
  bool valid = !key.empty() && !std::isdigit(static_cast<unsigned char>(key[0])) &&
               std::all_of(key.begin(), key.end(), [](char c) {
                 return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
               });
  if (eq == std::string_view::npos || !valid)
    return Error::plain("--env " + util::quoted(kv) + " is not KEY=VALUE",
                        "e.g. --env NCCL_ALGO=Ring");
  return std::pair<std::string, std::string>(std::string(key), std::string(kv.substr(eq + 1)));
}

std::string env_not_applicable(std::string_view name) {
  if (name == "NCCL_COMM_ID") return "replay bootstraps its own communicator";
  if (name == "NCCL_DEBUG_FILE") return "it would write debug files where the job did";
  return {};
}

Result<ReplaySettings> resolve_settings(const ReplayOptions& o, const FindingRef* finding) {
  if (Status s = check_numbers(o); !s) return s.take_error();
  ReplaySettings s;
  if (finding != nullptr) {
    if (!finding->plan) {
      return Error::plain(
          "finding " + std::to_string(finding->finding_id) + " (" + finding->category +
              ") names no collective to replay",
          "replay an explicit collective instead: --op allreduce --count N --dtype bfloat16");
    }
    s.plan = *finding->plan;
    s.job_nranks = s.plan.nranks;
    s.count_source = count_source(*finding);
  } else {
    if (o.op.empty())
      return Error::plain("nothing to replay",
                          "give --finding N, or --op OP with --count N or --bytes N");
    if (o.count <= 0 && o.bytes <= 0)
      return Error::plain("--op needs --count (elements per rank) or --bytes (nccl-tests' size)");
    if (o.env_from_logs)
      return Error::plain("--env-from-logs needs --finding: the settings come from its logs");
    s.plan.datatype = 7;  // float32, as nccl-tests defaults
    s.plan.nranks = 0;
  }
  if (Status st = apply_explicit(o, s.plan, s.count_source); !st) return st.take_error();
  s.bytes = o.bytes;
  if (o.gpus > 0) s.gpus_per_process = o.gpus;
  s.iters = o.iters;
  s.warmup = o.warmup;
  s.timeout_ms = static_cast<int64_t>(o.timeout_s * 1000.0);
  s.check = o.check;
  s.min_busbw_gbps = o.min_busbw_gbps;
  if (vocab::datatype_size(s.plan.datatype) == 0)
    return Error::plain("dtype " + vocab::datatype_name(s.plan.datatype) +
                        " has no known element size");

  std::map<std::string, std::string> logs_env = s.plan.env;
  s.plan.env.clear();
  if (o.env_from_logs) {
    for (const auto& [k, v] : logs_env) {
      std::string why = env_not_applicable(k);
      if (why.empty())
        s.env_from_logs[k] = v;
      else
        s.env_not_applied.push_back(k + " (" + why + ")");
    }
  }
  for (const std::string& kv : o.env) {
    auto parsed = parse_env_assignment(kv);
    if (!parsed) return parsed.take_error();
    s.env_from_user[parsed->first] = parsed->second;
  }
  s.plan.env = s.env_from_logs;
  for (const auto& [k, v] : s.env_from_user) s.plan.env[k] = v;
  return s;
}

Status set_nranks(ReplaySettings& s, int nranks) {
  if (nranks < 1) return Error::plain("a replay needs at least one rank");
  if (s.plan.op == Op::kSendRecv && nranks < 2)
    return Error::plain("sendrecv needs at least two ranks", "run on two GPUs or more (--gpus 2)");
  s.plan.nranks = nranks;
  if (s.bytes > 0) {
    // nccl-tests' size is the whole buffer: per-rank elements are size / type
    // size, divided by the ranks for the gather- and scatter-like ops.
    int64_t elements = s.bytes / vocab::datatype_size(s.plan.datatype);
    bool per_rank_share = s.plan.op == Op::kAllGather || s.plan.op == Op::kReduceScatter ||
                          s.plan.op == Op::kAllToAll;
    s.plan.count = per_rank_share ? elements / nranks : elements;
    if (s.plan.count < 1) {
      return Error::plain("--bytes " + std::to_string(s.bytes) + " is less than one " +
                          vocab::datatype_name(s.plan.datatype) + " element per rank");
    }
  }
  if (op_has_root(s.plan.op) && (s.plan.root < 0 || s.plan.root >= nranks)) {
    return Error::plain("--root " + std::to_string(s.plan.root) + " is not one of the " +
                        std::to_string(nranks) + " ranks");
  }
  return Ok{};
}

}  // namespace ncclpm::plan
