// include/ncclpm/plan/collective_plan.h
//
// A CollectivePlan is what `replay` runs: op, per-rank element count, dtype,
// number of ranks, and the NCCL settings seen in the logs. It is built from a
// finding's collective and holds the size arithmetic NCCL users get wrong:
// NCCL's `count` and PyTorch's NumelIn/NumelOut are per-rank element counts,
// and for AllGather the input is per rank while for ReduceScatter the output is.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ncclpm::plan {

enum class Op { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv };

const char* op_name(Op op);                     ///< "allreduce"
std::optional<Op> parse_op(const std::string& name);  ///< canonical names and PyTorch/NCCL spellings
/// nccl-tests binary for the op: "all_gather_perf".
const char* nccl_tests_binary(Op op);
/// True for the ops that take a reduction operator (allreduce, reducescatter, reduce).
bool op_reduces(Op op);
/// True for the ops with a root rank (broadcast, reduce).
bool op_has_root(Op op);
/// The name nccl-tests' `-d` accepts for an ncclDataType_t: "float", "half",
/// "bfloat16", "f8e4m3". nccl-tests silently falls back to float for a name it
/// does not know ("float16"), so the command line must use its own spelling.
const char* nccl_tests_datatype_name(int datatype);

/// How an nccl-tests command line should run the collective.
struct NcclTestsArgs {
  int gpus_per_process = 0;  ///< -g; 0: one process with a GPU per rank
  int warmup_iters = 5;      ///< -w
  int iters = 20;            ///< -n
  bool check = true;         ///< -c
};

struct CollectivePlan {
  Op op = Op::kAllReduce;
  int64_t count = 0;        ///< elements per rank, as ncclAllGather's sendcount etc.
  int datatype = 9;         ///< ncclDataType_t
  int redop = 0;            ///< ncclRedOp_t
  int root = 0;
  int nranks = 0;           ///< ranks of the communicator (0: all local GPUs)
  std::vector<int> ranks;   ///< global ranks involved, when known
  std::map<std::string, std::string> env;  ///< NCCL_* settings seen in the logs
  std::string dtype_note;   ///< set when the dtype was assumed, not read from the logs
  int64_t timeout_ms = -1;  ///< what the job's watchdog allowed

  int64_t send_count() const;   ///< elements each rank sends
  int64_t recv_count() const;   ///< elements each rank receives
  int64_t bytes_per_rank() const;  ///< max(send, recv) * element size
  /// nccl-tests' "size" column: bytes of the whole collective (count * nranks for gather-like ops).
  int64_t nccl_tests_size_bytes() const;
  /// The nccl-tests command line that runs the same collective.
  std::string nccl_tests_command(int gpus_per_process = 0) const;
  /// The same with nccl-tests' own datatype names and the given iterations.
  std::string nccl_tests_command(const NcclTestsArgs& args) const;
};

/// Bus bandwidth factor per op, as nccl-tests computes busbw from algbw.
double bus_factor(Op op, int nranks);

/// Builds a plan from what a watchdog record says: PyTorch's OpType and
/// NumelIn/NumelOut (elements summed over the rank's tensors).
std::optional<CollectivePlan> plan_from_work(const std::string& op_type, int64_t numel_in,
                                             int64_t numel_out, int nranks);

}  // namespace ncclpm::plan
