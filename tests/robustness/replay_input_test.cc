// tests/robustness/replay_input_test.cc
//
// replay plans nothing it was not asked for: op names match exactly (a near
// miss says what was meant), sizes that overflow or exceed any GPU are
// refused, and launcher variables are read whole and bounded.
#include <gtest/gtest.h>

#include "ncclpm/plan/launch_env.h"
#include "ncclpm/plan/replay_settings.h"

namespace ncclpm::plan {
namespace {

Result<ReplaySettings> explicit_op(const std::string& op, int64_t count) {
  ReplayOptions o;
  o.op = op;
  o.count = count;
  return resolve_settings(o, nullptr);
}

TEST(ReplayInput, OpNamesMatchExactlyAndANearMissSaysWhatWasMeant) {
  for (const char* name : {"allreduce", "AllReduce", "all_reduce", "all-gather", "reduce_scatter", "sendrecv"}) {
    EXPECT_TRUE(explicit_op(name, 8)) << name;
  }
  for (const char* name : {"alltoallv", "allreducee", "allreduce;rm", "allgathr"}) {
    auto r = explicit_op(name, 8);
    ASSERT_FALSE(r) << name << " was taken for an op";
    EXPECT_EQ(r.error().message, std::string("unknown op '") + name + "'");
    EXPECT_NE(r.error().hint.find("did you mean "), std::string::npos) << r.error().hint;
  }
  EXPECT_NE(explicit_op("alltoallv", 8).error().hint.find("did you mean alltoall?"), std::string::npos);
  auto far = explicit_op("frobnicate", 8);
  ASSERT_FALSE(far);
  EXPECT_EQ(far.error().hint.find("did you mean"), std::string::npos) << "no guess for a name far from every op";
}

TEST(ReplayInput, SizesThatOverflowOrExceedAnyGpuAreRefused) {
  auto huge = explicit_op("allreduce", INT64_MAX);
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("more elements than a GPU holds"), std::string::npos);

  // Fine alone, too big once multiplied by the ranks and the element size.
  auto s = explicit_op("allgather", int64_t{1} << 30);
  ASSERT_TRUE(s) << s.error().message;
  auto wide = set_nranks(*s, 1024);
  ASSERT_FALSE(wide);
  EXPECT_NE(wide.error().message.find("more than 1 TiB per rank"), std::string::npos) << wide.error().message;
  auto narrow = explicit_op("allgather", int64_t{1} << 20);
  ASSERT_TRUE(narrow);
  EXPECT_TRUE(set_nranks(*narrow, 1024));

  ReplayOptions gpus;
  gpus.op = "allreduce";
  gpus.count = 8;
  gpus.gpus = 1000000;
  auto g = resolve_settings(gpus, nullptr);
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("--gpus 1000000 is more GPUs than one process drives"), std::string::npos);
}

TEST(ReplayInput, BytesTakeNcclTestsSizes) {
  EXPECT_EQ(*parse_byte_size("1048576"), 1048576);
  EXPECT_EQ(*parse_byte_size("64K"), 65536);
  EXPECT_EQ(*parse_byte_size("512M"), int64_t{512} << 20);
  EXPECT_EQ(*parse_byte_size("1G"), int64_t{1} << 30);
  EXPECT_EQ(*parse_byte_size("2GiB"), int64_t{2} << 30);
  EXPECT_EQ(*parse_byte_size("8kb"), 8192);
  for (const char* bad : {"", "G", "1X", "-1G", "1.5G", "99999999999T", "1234567890123456789012"}) {
    EXPECT_FALSE(parse_byte_size(bad)) << bad;
  }
}

TEST(ReplayInput, WorldSizeIsReadWholeAndBounded) {
  // 2^32 + 2 would wrap to 2 in an int.
  auto wrapped = detect_launch(map_env({{"RANK", "1"}, {"WORLD_SIZE", "4294967298"}}));
  ASSERT_FALSE(wrapped);
  EXPECT_NE(wrapped.error().message.find("WORLD_SIZE='4294967298' is more than 1048576 ranks"), std::string::npos)
      << wrapped.error().message;
  auto largest = detect_launch(
      map_env({{"RANK", "1"}, {"WORLD_SIZE", "1048576"}, {"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}}));
  ASSERT_TRUE(largest) << largest.error().message;
  EXPECT_EQ(largest->world_size, 1048576);
}

}  // namespace
}  // namespace ncclpm::plan
