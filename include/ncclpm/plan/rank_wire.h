// include/ncclpm/plan/rank_wire.h
//
// A rank's result as a fixed-size block of bytes. In a multi-process replay
// every rank contributes one block to an allgather (ncclUint8) on the replay's
// own communicator, and rank 0 reads all of them; a block whose magic is wrong
// was never written, so that rank did not report. Strings are cut to fit.
// Every process runs this same binary, so layout and byte order agree.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ncclpm/plan/replay_result.h"

namespace ncclpm::plan {

struct RankWire {
  uint32_t magic;
  int32_t rank, device, outcome;
  int64_t wrong, memory_bytes;
  double time_us;
  char host[64];
  char gpu_name[96];
  char bus_id[24];
  char stage[16];
  char call[40];
  char message[232];
};
static_assert(sizeof(RankWire) == 512 && std::is_trivially_copyable_v<RankWire>);

inline constexpr uint32_t kRankWireMagic = 0x6e63706d;  // "ncpm"

RankWire to_wire(const RankResult& r);
/// The rank's result; `reported` is false when the block was never written.
RankResult from_wire(const RankWire& w);

}  // namespace ncclpm::plan
