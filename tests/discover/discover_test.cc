// tests/discover/discover_test.cc
//
// What discovery learns about each file before parsing: its path relative to
// the root it was found under, what the path says of its writer, and the
// fingerprint that makes a second ingest of the same file add nothing.
#include "ncclpm/discover/discover.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace ncclpm::discover {
namespace {

using testing::TempDir;
using testing::write_file;

TEST(PathHints, TorchrunLogDirGivesAttemptAndLocalRank) {
  PathHints h = hints_from_path("node3/run_1/attempt_2/7/stderr.log");
  EXPECT_EQ(h.attempt, 2);
  EXPECT_EQ(h.local_rank, 7);
  EXPECT_EQ(h.stream, "stderr");
  EXPECT_FALSE(h.rank);
  // Not the last two directories above the file: no worker.
  EXPECT_FALSE(hints_from_path("attempt_2/7/x/stderr.log").local_rank);
  EXPECT_FALSE(hints_from_path("myattempt_2/7/stderr.log").local_rank);
}

TEST(PathHints, RankInTheFileNameInAnyCase) {
  EXPECT_EQ(hints_from_path("logs/rank3.log").rank, 3);
  EXPECT_EQ(hints_from_path("logs/train-RANK_12.txt").rank, 12);
  EXPECT_EQ(hints_from_path("fr/nccl_trace_rank_40").rank, 40);
  EXPECT_EQ(hints_from_path("logs/rank-0").rank, 0);
  // Not a rank: part of a word, a directory, or a number too long to be one.
  EXPECT_FALSE(hints_from_path("logs/frank3.log").rank);
  EXPECT_FALSE(hints_from_path("rank3/out.log").rank);
  EXPECT_FALSE(hints_from_path("logs/rank12345678901.log").rank);
  EXPECT_EQ(hints_from_path("logs/stdout.log").stream, "stdout");
}

TEST(Discover, RelativePathsAreTakenUnderTheRootGiven) {
  TempDir t;
  write_file(t / "job/host1/attempt_0/1/stdout.log", "hello\n");
  write_file(t / "job/rank5.log", "x\n");
  auto d = discover({t / "job"});
  ASSERT_TRUE(d) << d.error().message;
  ASSERT_EQ(d->files.size(), 2u);
  EXPECT_EQ(d->files[0].rel_path, "host1/attempt_0/1/stdout.log");
  EXPECT_EQ(d->files[0].hints.local_rank, 1);
  EXPECT_EQ(d->files[1].rel_path, "rank5.log");
  EXPECT_EQ(d->files[1].hints.rank, 5);
  for (const char* spelled : {"job/", "job/.", "job/../job"}) {
    auto again = discover({t / spelled});
    ASSERT_TRUE(again);
    EXPECT_EQ(again->files.at(0).rel_path, "host1/attempt_0/1/stdout.log") << spelled;
  }
  // A file given directly is named by its file name.
  auto one = discover({t / "job/rank5.log"});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->files.at(0).rel_path, "rank5.log");
}

TEST(Discover, FingerprintFollowsPathSizeHeadAndTail) {
  TempDir t;
  std::string big(200 * 1024, 'a');
  write_file(t / "a/x.log", big);
  write_file(t / "b/x.log", big);
  std::string other_tail = big;
  other_tail[other_tail.size() - 10] = 'b';
  write_file(t / "c/x.log", other_tail);
  std::string other_middle = big;
  other_middle[100 * 1024] = 'b';  // neither in the first nor in the last 64 KiB
  write_file(t / "d/x.log", other_middle);
  write_file(t / "e/y.log", big);
  auto fp = [&](const char* dir) {
    auto d = discover({t / dir});
    EXPECT_TRUE(d);
    return d ? d->files.at(0).fingerprint : std::string();
  };
  EXPECT_EQ(fp("a"), fp("b"));
  EXPECT_NE(fp("a"), fp("c"));
  EXPECT_EQ(fp("a"), fp("d"));
  EXPECT_NE(fp("a"), fp("e"));  // another name
  EXPECT_EQ(fp("a").rfind("204800-", 0), 0u) << fp("a");
}

}  // namespace
}  // namespace ncclpm::discover
