// include/ncclpm/vocab/nccl_enums.h
//
// NCCL's numeric enums as they appear in logs (log-formats A.6, A.7, A.8):
// ncclDataType_t, ncclRedOp_t, ncclResult_t and ibv_wc_status, with names and
// element sizes, and the mapping from PyTorch OpType names to NCCL ops.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ncclpm::vocab {

/// "bfloat16" for 9; "type<N>" for numbers NCCL does not define.
std::string datatype_name(int datatype);
/// Bytes per element; 0 when unknown.
int datatype_size(int datatype);
/// Parses "bf16", "bfloat16", "float32", "fp32", "half", "int8", ... or a number.
std::optional<int> parse_datatype(std::string_view name);
/// PyTorch dtype names as printed by Flight Recorder ("BFloat16", "Float").
std::optional<int> datatype_from_torch(std::string_view torch_dtype);

std::string redop_name(int op);  ///< "sum", "prod", "max", "min", "avg", "premulsum<N>"
std::optional<int> parse_redop(std::string_view name);

/// ncclResult_t name: 6 -> "ncclRemoteError".
std::string result_name(int result);
/// ibv_wc_status name: 12 -> "IBV_WC_RETRY_EXC_ERR".
std::string ib_status_name(int64_t status);

/// Canonical collective names used across ncclpm: allreduce, allgather,
/// reducescatter, broadcast, reduce, alltoall, sendrecv, barrier.
/// From PyTorch OpType ("_ALLGATHER_BASE" -> "allgather") or NCCL COLL names
/// ("AllGather" -> "allgather"); empty when unknown.
std::string canonical_op(std::string_view op);

}  // namespace ncclpm::vocab
