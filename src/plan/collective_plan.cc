// src/plan/collective_plan.cc
#include "ncclpm/plan/collective_plan.h"

#include <algorithm>

#include "ncclpm/vocab/nccl_enums.h"

namespace ncclpm::plan {

const char* op_name(Op op) {
  switch (op) {
    case Op::kAllReduce: return "allreduce";
    case Op::kAllGather: return "allgather";
    case Op::kReduceScatter: return "reducescatter";
    case Op::kBroadcast: return "broadcast";
    case Op::kReduce: return "reduce";
    case Op::kAllToAll: return "alltoall";
    case Op::kSendRecv: return "sendrecv";
  }
  return "allreduce";
}

std::optional<Op> parse_op(const std::string& name) {
  std::string c = vocab::canonical_op(name);
  if (c == "allreduce" || c == "barrier") return Op::kAllReduce;
  if (c == "allgather") return Op::kAllGather;
  if (c == "reducescatter") return Op::kReduceScatter;
  if (c == "broadcast") return Op::kBroadcast;
  if (c == "reduce") return Op::kReduce;
  if (c == "alltoall") return Op::kAllToAll;
  if (c == "sendrecv") return Op::kSendRecv;
  return std::nullopt;
}

const char* nccl_tests_binary(Op op) {
  switch (op) {
    case Op::kAllReduce: return "all_reduce_perf";
    case Op::kAllGather: return "all_gather_perf";
    case Op::kReduceScatter: return "reduce_scatter_perf";
    case Op::kBroadcast: return "broadcast_perf";
    case Op::kReduce: return "reduce_perf";
    case Op::kAllToAll: return "alltoall_perf";
    case Op::kSendRecv: return "sendrecv_perf";
  }
  return "all_reduce_perf";
}

bool op_reduces(Op op) { return op == Op::kAllReduce || op == Op::kReduceScatter || op == Op::kReduce; }

bool op_has_root(Op op) { return op == Op::kBroadcast || op == Op::kReduce; }

const char* nccl_tests_datatype_name(int datatype) {
  static const char* kNames[] = {"int8",  "uint8",  "int32",    "uint32", "int64",  "uint64",
                                 "half",  "float",  "double",   "bfloat16", "f8e4m3", "f8e5m2"};
  if (datatype >= 0 && datatype < 12) return kNames[datatype];
  return "float";
}

int64_t CollectivePlan::send_count() const {
  int n = std::max(1, nranks);
  switch (op) {
    case Op::kReduceScatter: return count * n;  // count is the per-rank output
    case Op::kAllToAll: return count * n;       // count is per peer
    default: return count;
  }
}

int64_t CollectivePlan::recv_count() const {
  int n = std::max(1, nranks);
  switch (op) {
    case Op::kAllGather: return count * n;      // count is the per-rank input
    case Op::kAllToAll: return count * n;
    default: return count;
  }
}

int64_t CollectivePlan::bytes_per_rank() const {
  return std::max(send_count(), recv_count()) * vocab::datatype_size(datatype);
}

int64_t CollectivePlan::nccl_tests_size_bytes() const {
  // nccl-tests sizes are the whole buffer: for gather/scatter-like ops the
  // per-rank count times the number of ranks.
  return std::max(send_count(), recv_count()) * vocab::datatype_size(datatype);
}

namespace {

// Shared by both overloads; `type` is the -d spelling.
std::string tests_command(const CollectivePlan& p, int gpus, const std::string& type, int warmup,
                          int iters, bool check) {
  std::string size = std::to_string(p.nccl_tests_size_bytes());
  std::string cmd;
  for (const auto& [k, v] : p.env) cmd += k + "=" + v + " ";
  cmd += std::string(nccl_tests_binary(p.op)) + " -b " + size + " -e " + size + " -g " + std::to_string(gpus) +
         " -d " + type + " -w " + std::to_string(warmup) + " -n " + std::to_string(iters) + " -c " +
         (check ? "1" : "0");
  if (op_reduces(p.op)) cmd += " -o " + vocab::redop_name(p.redop);
  if (op_has_root(p.op)) cmd += " -r " + std::to_string(p.root);
  return cmd;
}

}  // namespace

std::string CollectivePlan::nccl_tests_command(int gpus_per_process) const {
  // nccl-tests' own dtype names: it silently runs float for a name it does not know.
  NcclTestsArgs args;
  args.gpus_per_process = gpus_per_process;
  return nccl_tests_command(args);
}

std::string CollectivePlan::nccl_tests_command(const NcclTestsArgs& a) const {
  int g = a.gpus_per_process > 0 ? a.gpus_per_process : std::max(1, nranks);
  return tests_command(*this, g, nccl_tests_datatype_name(datatype), a.warmup_iters, a.iters, a.check);
}

double bus_factor(Op op, int nranks) {
  double n = std::max(1, nranks);
  switch (op) {
    case Op::kAllReduce: return 2.0 * (n - 1) / n;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll: return (n - 1) / n;
    case Op::kBroadcast:
    case Op::kReduce:
    case Op::kSendRecv: return 1.0;
  }
  return 1.0;
}

std::optional<CollectivePlan> plan_from_work(const std::string& op_type, int64_t numel_in,
                                             int64_t numel_out, int nranks) {
  auto op = parse_op(op_type);
  if (!op) return std::nullopt;
  CollectivePlan p;
  p.op = *op;
  p.nranks = nranks;
  int n = std::max(1, nranks);
  switch (*op) {
    case Op::kAllGather:
      p.count = numel_in > 0 ? numel_in : (numel_out > 0 ? numel_out / n : 0);
      break;
    case Op::kReduceScatter:
      p.count = numel_out > 0 ? numel_out : (numel_in > 0 ? numel_in / n : 0);
      break;
    case Op::kAllToAll:
      p.count = numel_in > 0 ? numel_in / n : 0;
      break;
    default:
      p.count = numel_in > 0 ? numel_in : std::max<int64_t>(numel_out, 0);
  }
  if (p.count <= 0) p.count = 1;  // barrier(): a one-element allreduce
  return p;
}

}  // namespace ncclpm::plan
