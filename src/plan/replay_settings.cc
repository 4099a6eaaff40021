// src/plan/replay_settings.cc
#include "ncclpm/plan/replay_settings.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ncclpm/vocab/nccl_enums.h"
#include "ncclpm/util/text.h"

namespace ncclpm::plan {
namespace {

constexpr const char* kOps =
    "allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv";
constexpr std::string_view kOpNames[] = {"allreduce", "allgather", "reducescatter", "broadcast",
                                          "reduce",    "alltoall",  "sendrecv"};
constexpr int kMaxGpusPerProcess = 1024;
// More than any GPU holds: a size past it is a typo or an overflow, not a plan.
constexpr int64_t kMaxBytesPerRank = int64_t{1} << 40;  // 1 TiB

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// An op as the user names it: exactly one of NCCL's collectives (case,
// '_' and '-' aside: all_reduce, AllReduce). A near miss is an error that
// says what was probably meant, never a silent guess.
Result<Op> parse_cli_op(const std::string& name) {
  std::string key;
  for (char c : name)
    if (c != '_' && c != '-') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view op : kOpNames)
    if (key == op) return *parse_op(std::string(op));
  std::string_view nearest;
  size_t best = 3;  // at most two edits away
  for (std::string_view op : kOpNames) {
    size_t d = edit_distance(key, op);
    if (d < best || (key.size() > op.size() && key.starts_with(op) && nearest.empty())) {
      best = std::min(best, d);
      nearest = op;
    }
  }
  std::string hint = nearest.empty() ? std::string("ops: ") + kOps
                                     : "did you mean " + std::string(nearest) + "? ops: " + kOps;
  return Error::plain("unknown op " + util::quoted(name), hint);
}
constexpr const char* kTypes =
    "int8, uint8, int32, uint32, int64, uint64, float16, float32, float64, bfloat16, float8e4m3, "
    "float8e5m2";

Status check_numbers(const ReplayOptions& o) {
  if (o.iters < 1)
    return Error::plain("--iters must be at least 1, not " + std::to_string(o.iters));
  if (o.warmup < 0) return Error::plain("--warmup must not be negative");
  if (!(o.timeout_s > 0)) return Error::plain("--timeout must be a positive number of seconds");
  if (o.gpus < 0) return Error::plain("--gpus must not be negative");
  if (o.gpus > kMaxGpusPerProcess)
    return Error::plain("--gpus " + std::to_string(o.gpus) + " is more GPUs than one process drives (at most " +
                        std::to_string(kMaxGpusPerProcess) + ")");
  if (o.count == 0 || o.count < -1)
    return Error::plain("--count must be a positive number of elements");
  if (o.count > kMaxBytesPerRank)
    return Error::plain("--count " + std::to_string(o.count) + " is more elements than a GPU holds");
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
    auto op = parse_cli_op(o.op);
    if (!op) return op.take_error();
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

Result<int64_t> parse_byte_size(std::string_view text) {
  std::string_view t = util::trim(text);
  size_t digits = 0;
  while (digits < t.size() && std::isdigit(static_cast<unsigned char>(t[digits]))) ++digits;
  std::string unit;
  for (char c : t.substr(digits)) unit += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.ends_with("IB")) unit.resize(unit.size() - 2);
  else if (unit.ends_with("B")) unit.resize(unit.size() - 1);
  int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : unit == "T" ? 40 : -1;
  auto n = digits > 0 && digits <= 18 ? util::parse_int(t.substr(0, digits)) : std::nullopt;
  if (!n || shift < 0)
    return Error::plain("--bytes " + util::quoted(text) + " is not a size", "e.g. 1048576, 64K, 512M, 1G");
  if (*n > (INT64_MAX >> shift)) return Error::plain("--bytes " + util::quoted(text) + " is too large");
  return *n << shift;
}

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
  // The largest buffer, count x ranks x element size, checked for overflow and
  // for sense before anything multiplies it unchecked.
  bool per_rank_times_n = s.plan.op == Op::kAllGather || s.plan.op == Op::kReduceScatter ||
                          s.plan.op == Op::kAllToAll;
  int64_t elements = s.plan.count, bytes = 0;
  bool overflow = s.plan.count < 1 || (per_rank_times_n && __builtin_mul_overflow(s.plan.count, nranks, &elements)) ||
                  __builtin_mul_overflow(elements, vocab::datatype_size(s.plan.datatype), &bytes);
  if (overflow || bytes > kMaxBytesPerRank) {
    return Error::plain("the collective would need more than 1 TiB per rank (" + std::to_string(s.plan.count) +
                            " " + vocab::datatype_name(s.plan.datatype) + " elements, " +
                            std::to_string(nranks) + " ranks)",
                        "check --count/--bytes: the count is per rank, the bytes are nccl-tests' whole buffer");
  }
  if (op_has_root(s.plan.op) && (s.plan.root < 0 || s.plan.root >= nranks)) {
    return Error::plain("--root " + std::to_string(s.plan.root) + " is not one of the " +
                        std::to_string(nranks) + " ranks");
  }
  return Ok{};
}

}  // namespace ncclpm::plan
