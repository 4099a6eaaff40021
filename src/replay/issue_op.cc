// src/replay/issue_op.cc
#include "issue_op.h"

#include "ncclpm/vocab/nccl_enums.h"

namespace ncclpm::replay {
namespace {

// Inside a group of non-blocking communicators a call may answer ncclInProgress.
bool going(ncclResult_t r) { return r == ncclSuccess || r == ncclInProgress; }

ncclResult_t first_error(ncclResult_t a, ncclResult_t b) { return going(a) ? b : a; }

}  // namespace

const char* nccl_call_name(plan::Op op) {
  switch (op) {
    case plan::Op::kAllReduce:
      return "ncclAllReduce";
    case plan::Op::kAllGather:
      return "ncclAllGather";
    case plan::Op::kReduceScatter:
      return "ncclReduceScatter";
    case plan::Op::kBroadcast:
      return "ncclBroadcast";
    case plan::Op::kReduce:
      return "ncclReduce";
    case plan::Op::kAllToAll:
    case plan::Op::kSendRecv:
      return "ncclSend/ncclRecv";
  }
  return "nccl";
}

ncclResult_t issue_op(const plan::CollectivePlan& p, int rank, const void* send, void* recv,
                      ncclComm_t comm, cudaStream_t stream) {
  auto count = static_cast<size_t>(p.count);
  auto type = static_cast<ncclDataType_t>(p.datatype);
  auto redop = static_cast<ncclRedOp_t>(p.redop);
  int n = p.nranks;
  switch (p.op) {
    case plan::Op::kAllReduce:
      return ncclAllReduce(send, recv, count, type, redop, comm, stream);
    case plan::Op::kAllGather:
      return ncclAllGather(send, recv, count, type, comm, stream);
    case plan::Op::kReduceScatter:
      return ncclReduceScatter(send, recv, count, type, redop, comm, stream);
    case plan::Op::kBroadcast:
      return ncclBroadcast(send, recv, count, type, p.root, comm, stream);
    case plan::Op::kReduce:
      return ncclReduce(send, recv, count, type, redop, p.root, comm, stream);
    case plan::Op::kAllToAll: {
      size_t block = count * static_cast<size_t>(vocab::datatype_size(p.datatype));
      ncclResult_t r = ncclGroupStart();
      for (int peer = 0; peer < n && going(r); ++peer) {
        r = ncclSend(static_cast<const char*>(send) + block * peer, count, type, peer, comm,
                     stream);
        if (going(r))
          r = ncclRecv(static_cast<char*>(recv) + block * peer, count, type, peer, comm, stream);
      }
      return first_error(r, ncclGroupEnd());
    }
    case plan::Op::kSendRecv: {
      ncclResult_t r = ncclGroupStart();
      if (going(r)) r = ncclSend(send, count, type, (rank + 1) % n, comm, stream);
      if (going(r)) r = ncclRecv(recv, count, type, (rank - 1 + n) % n, comm, stream);
      return first_error(r, ncclGroupEnd());
    }
  }
  return ncclInvalidArgument;
}

}  // namespace ncclpm::replay
