// tests/ingest/progress_test.cc
//
// The ingest progress line: redrawn a few times a second rather than once per
// file, always drawn at the end, with the time left once the rate means something.
#include <gtest/gtest.h>

#include "ncclpm/ingest/ingest.h"

namespace ncclpm::ingest {
namespace {

TEST(Progress, TwoThousandFilesInOneSecondRedrawAFewTimesNotTwoThousand) {
  ProgressThrottle throttle;
  Progress p;
  p.files_total = 2000;
  int drawn = 0;
  for (int i = 1; i <= 2000; ++i) {
    p.files_done = i;
    if (throttle.due(p, i / 2000.0)) ++drawn;
  }
  EXPECT_LE(drawn, 7);  // at 0 s, every 0.2 s, and the last
  EXPECT_GE(drawn, 5);
  ProgressThrottle again;
  p.files_done = 2000;
  EXPECT_TRUE(again.due(p, 0.0));
  EXPECT_TRUE(again.due(p, 0.01)) << "the final state is always drawn";
}

TEST(Progress, SaysTheTimeLeftOnceTheRateMeansSomething) {
  Progress p;
  p.files_done = 10;
  p.files_total = 40;
  p.bytes_done = 250'000'000;
  p.bytes_total = 1'000'000'000;
  p.lines = 1234567;
  EXPECT_EQ(progress_text(p, 1.0), "ingesting: 10/40 files, 250.0/1000.0 MB, 1,234,567 lines");
  EXPECT_EQ(progress_text(p, 20.0), "ingesting: 10/40 files, 250.0/1000.0 MB, 1,234,567 lines, about 1 min left");
  EXPECT_EQ(progress_text(p, 4.0), "ingesting: 10/40 files, 250.0/1000.0 MB, 1,234,567 lines, about 12 s left");
  p.files_done = 40;
  p.bytes_done = p.bytes_total;
  EXPECT_EQ(progress_text(p, 80.0), "ingesting: 40/40 files, 1000.0/1000.0 MB, 1,234,567 lines");
}

}  // namespace
}  // namespace ncclpm::ingest
