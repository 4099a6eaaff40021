// include/ncclpm/plan/data_pattern.h
//
// The data `replay --check` puts into the send buffers and expects in the
// receive buffers, for every op and every NCCL datatype. Values are small
// integers (0 to 8), exact in every type down to fp8 e5m2, and chosen so that
// every reduction has an exact answer: for sum, max and prod one rank (the
// element's "owner", index mod nranks) holds the value and the others hold the
// neutral element, so each rank's data still reaches every result. Only avg
// on floating types is compared with a tolerance (NCCL pre-multiplies by
// 1/nranks). Pure host code: the engine copies these buffers to and from the
// GPU, and the tests run a simulated collective over them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "ncclpm/plan/collective_plan.h"

namespace ncclpm::plan {

/// Writes `value` as one element of `datatype` (little-endian) at `out`.
void encode_value(int datatype, double value, std::byte* out);
/// Reads one element of `datatype` at `in`.
double decode_value(int datatype, const std::byte* in);

/// Elements in each rank's send and receive buffers for `plan` (plan.nranks set).
int64_t send_elements(const CollectivePlan& plan);
int64_t recv_elements(const CollectivePlan& plan);
/// False for the ranks whose receive buffer NCCL leaves alone (reduce: all but the root).
bool receives_result(const CollectivePlan& plan, int rank);

/// The value `rank` sends at `index` of its send buffer.
int input_value(const CollectivePlan& plan, int rank, int64_t index);
/// The value `rank` must find at `index` of its receive buffer.
int expected_value(const CollectivePlan& plan, int rank, int64_t index);

/// Fills `out` with elements [first, first + n) of `rank`'s send buffer.
void fill_send(const CollectivePlan& plan, int rank, int64_t first, std::span<std::byte> out);
/// Counts the elements of `got` (elements [first, first + n) of `rank`'s
/// receive buffer) that differ from what the collective must produce.
int64_t count_wrong(const CollectivePlan& plan, int rank, int64_t first,
                    std::span<const std::byte> got);

}  // namespace ncclpm::plan
