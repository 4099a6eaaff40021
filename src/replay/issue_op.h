// src/replay/issue_op.h
//
// One collective of a plan on one rank, as NCCL's API spells it. The
// caller wraps the ranks of this process in ncclGroupStart/End. AllToAll is
// a group of ncclSend/ncclRecv to every peer (it works on every NCCL
// release); sendrecv sends to rank + 1 and receives from rank - 1, a ring.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "ncclpm/plan/collective_plan.h"

namespace ncclpm::replay {

/// The NCCL function the op calls, for error messages: "ncclAllGather".
const char* nccl_call_name(plan::Op op);

ncclResult_t issue_op(const plan::CollectivePlan& p, int rank, const void* send, void* recv,
                      ncclComm_t comm, cudaStream_t stream);

}  // namespace ncclpm::replay
