// tests/recognize/nccl_enums_test.cc
//
// NCCL's numeric enums as logs print them (log-formats.md A.6, A.7, A.8) and
// the op names of PyTorch, NCCL COLL lines and Flight Recorder.
#include "ncclpm/vocab/nccl_enums.h"

#include <gtest/gtest.h>

namespace ncclpm::vocab {
namespace {

TEST(NcclEnums, NamesAndSizesEveryDatatype) {
  const char* names[] = {"int8",    "uint8",   "int32",   "uint32",   "int64",      "uint64",
                         "float16", "float32", "float64", "bfloat16", "float8e4m3", "float8e5m2"};
  const int sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  for (int t = 0; t < 12; ++t) {
    EXPECT_EQ(datatype_name(t), names[t]) << t;
    EXPECT_EQ(datatype_size(t), sizes[t]) << t;
  }
  EXPECT_EQ(datatype_name(12), "type12");
  EXPECT_EQ(datatype_name(-1), "type-1");
  EXPECT_EQ(datatype_size(12), 0);
}

TEST(NcclEnums, ParsesDatatypeNamesAliasesAndNumbers) {
  EXPECT_EQ(parse_datatype("bf16"), 9);
  EXPECT_EQ(parse_datatype("bfloat16"), 9);
  EXPECT_EQ(parse_datatype("BFloat16"), 9);
  EXPECT_EQ(parse_datatype("fp32"), 7);
  EXPECT_EQ(parse_datatype("float"), 7);
  EXPECT_EQ(parse_datatype("half"), 6);
  EXPECT_EQ(parse_datatype("double"), 8);
  EXPECT_EQ(parse_datatype("int"), 2);
  EXPECT_EQ(parse_datatype("char"), 0);
  EXPECT_EQ(parse_datatype("bool"), 1);
  EXPECT_EQ(parse_datatype("float8_e4m3fn"), 10);
  EXPECT_EQ(parse_datatype("7"), 7);
  EXPECT_FALSE(parse_datatype("12"));
  EXPECT_FALSE(parse_datatype("-1"));
  EXPECT_FALSE(parse_datatype("complex64"));
}

TEST(NcclEnums, MapsFlightRecorderDtypes) {
  EXPECT_EQ(datatype_from_torch("Float"), 7);
  EXPECT_EQ(datatype_from_torch("BFloat16"), 9);
  EXPECT_EQ(datatype_from_torch("Half"), 6);
  EXPECT_EQ(datatype_from_torch("Long"), 4);
  EXPECT_EQ(datatype_from_torch("Bool"), 1);
  EXPECT_EQ(datatype_from_torch("Byte"), 1);
  EXPECT_EQ(datatype_from_torch("Float8_e5m2"), 11);
  EXPECT_FALSE(datatype_from_torch("ComplexFloat"));
}

TEST(NcclEnums, NamesReductionOpsIncludingPreMulSum) {
  EXPECT_EQ(redop_name(0), "sum");
  EXPECT_EQ(redop_name(1), "prod");
  EXPECT_EQ(redop_name(2), "max");
  EXPECT_EQ(redop_name(3), "min");
  EXPECT_EQ(redop_name(4), "avg");
  EXPECT_EQ(redop_name(5), "premulsum5");
  EXPECT_EQ(parse_redop("SUM"), 0);
  EXPECT_EQ(parse_redop("avg"), 4);
  EXPECT_EQ(parse_redop("3"), 3);
  EXPECT_FALSE(parse_redop("5"));
  EXPECT_FALSE(parse_redop("band"));
}

TEST(NcclEnums, NamesResultCodesThroughNcclTimeout) {
  EXPECT_EQ(result_name(0), "ncclSuccess");
  EXPECT_EQ(result_name(1), "ncclUnhandledCudaError");
  EXPECT_EQ(result_name(2), "ncclSystemError");
  EXPECT_EQ(result_name(3), "ncclInternalError");
  EXPECT_EQ(result_name(5), "ncclInvalidUsage");
  EXPECT_EQ(result_name(6), "ncclRemoteError");
  EXPECT_EQ(result_name(7), "ncclInProgress");
  EXPECT_EQ(result_name(8), "ncclTimeout");
  EXPECT_EQ(result_name(9), "ncclResult9");
}

TEST(NcclEnums, NamesIbWorkCompletionStatuses) {
  EXPECT_EQ(ib_status_name(0), "IBV_WC_SUCCESS");
  EXPECT_EQ(ib_status_name(4), "IBV_WC_LOC_PROT_ERR");
  EXPECT_EQ(ib_status_name(5), "IBV_WC_WR_FLUSH_ERR");
  EXPECT_EQ(ib_status_name(12), "IBV_WC_RETRY_EXC_ERR");
  EXPECT_EQ(ib_status_name(13), "IBV_WC_RNR_RETRY_EXC_ERR");
  EXPECT_EQ(ib_status_name(21), "IBV_WC_GENERAL_ERR");
  EXPECT_EQ(ib_status_name(22), "IBV_WC_STATUS_22");
  EXPECT_EQ(ib_status_name(-1), "IBV_WC_STATUS_-1");
}

TEST(NcclEnums, CanonicalisesPytorchOpTypes) {
  EXPECT_EQ(canonical_op("ALLREDUCE"), "allreduce");
  EXPECT_EQ(canonical_op("ALLREDUCE_COALESCED"), "allreduce");
  EXPECT_EQ(canonical_op("_ALLREDUCE_SPARSE"), "allreduce");
  EXPECT_EQ(canonical_op("_ALLGATHER_BASE"), "allgather");
  EXPECT_EQ(canonical_op("ALLGATHER_INTO_TENSOR_COALESCED"), "allgather");
  EXPECT_EQ(canonical_op("_REDUCE_SCATTER_BASE"), "reducescatter");
  EXPECT_EQ(canonical_op("REDUCE_SCATTER_TENSOR_COALESCED"), "reducescatter");
  EXPECT_EQ(canonical_op("BROADCAST"), "broadcast");
  EXPECT_EQ(canonical_op("REDUCE"), "reduce");
  EXPECT_EQ(canonical_op("ALLTOALL_BASE"), "alltoall");
  EXPECT_EQ(canonical_op("SEND"), "sendrecv");
  EXPECT_EQ(canonical_op("RECVANYSOURCE"), "sendrecv");
  EXPECT_EQ(canonical_op("BARRIER"), "barrier");
  EXPECT_EQ(canonical_op("GATHER"), "gather");
  EXPECT_EQ(canonical_op("SCATTER"), "scatter");
  EXPECT_EQ(canonical_op("UNKNOWN"), "");
  EXPECT_EQ(canonical_op("COALESCED"), "");
}

TEST(NcclEnums, CanonicalisesNcclAndFlightRecorderOpNames) {
  EXPECT_EQ(canonical_op("AllReduce"), "allreduce");
  EXPECT_EQ(canonical_op("AllGather"), "allgather");
  EXPECT_EQ(canonical_op("ReduceScatter"), "reducescatter");
  EXPECT_EQ(canonical_op("AlltoAll"), "alltoall");
  EXPECT_EQ(canonical_op("Recv"), "sendrecv");
  EXPECT_EQ(canonical_op("nccl:all_reduce"), "allreduce");
  EXPECT_EQ(canonical_op("nccl:_all_gather_base"), "allgather");
  EXPECT_EQ(canonical_op("nccl:reduce_scatter_tensor_coalesced"), "reducescatter");
  EXPECT_EQ(canonical_op("nccl:send 0->1"), "sendrecv");
  EXPECT_EQ(canonical_op("PutSignal"), "");
}

}  // namespace
}  // namespace ncclpm::vocab
