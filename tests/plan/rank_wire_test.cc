// tests/plan/rank_wire_test.cc
#include "ncclpm/plan/rank_wire.h"

#include <gtest/gtest.h>

#include <cstring>

namespace ncclpm::plan {
namespace {

TEST(ReplayWire, RoundTripsARanksResult) {
  RankResult r;
  r.rank = 11;
  r.host = "gpu-node08";
  r.gpu = GpuInfo{3, "NVIDIA H100 80GB HBM3", "0000:9A:00.0", int64_t{85} << 30};
  r.outcome = Outcome::kCompleted;
  r.stage = "results";
  r.time_us = 2412.5;
  r.wrong = 0;
  RankResult back = from_wire(to_wire(r));
  EXPECT_TRUE(back.reported);
  EXPECT_EQ(back.rank, 11);
  EXPECT_EQ(back.host, "gpu-node08");
  EXPECT_EQ(back.gpu.device, 3);
  EXPECT_EQ(back.gpu.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(back.gpu.bus_id, "0000:9A:00.0");
  EXPECT_EQ(back.gpu.memory_bytes, int64_t{85} << 30);
  EXPECT_EQ(back.outcome, Outcome::kCompleted);
  EXPECT_DOUBLE_EQ(back.time_us, 2412.5);
  EXPECT_EQ(back.wrong, 0);
}

TEST(ReplayWire, CutsLongStringsAndSpotsUnwrittenBlocks) {
  RankResult r;
  r.message = std::string(1000, 'x');
  RankWire w = to_wire(r);
  EXPECT_EQ(from_wire(w).message.size(), sizeof(w.message) - 1);
  RankWire zero;
  std::memset(&zero, 0, sizeof zero);
  EXPECT_FALSE(from_wire(zero).reported);
}

}  // namespace
}  // namespace ncclpm::plan
