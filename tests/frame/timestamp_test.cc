// tests/frame/timestamp_test.cc
//
// Clock and date parsing for the time styles of log-formats.md E.11.
#include "ncclpm/frame/timestamp.h"

#include <gtest/gtest.h>

namespace ncclpm::frame {
namespace {

TEST(Timestamp, CountsDaysFromTheEpochAcrossLeapYears) {
  EXPECT_EQ(days_from_civil(1970, 1, 1), 0);
  EXPECT_EQ(days_from_civil(1969, 12, 31), -1);
  EXPECT_EQ(days_from_civil(2000, 7, 9), 11147);
  EXPECT_EQ(days_from_civil(2024, 2, 1), 19754);
  EXPECT_EQ(days_from_civil(2024, 2, 29), 19782);
  EXPECT_EQ(days_from_civil(1600, 3, 1), -135080);
}

TEST(Timestamp, ConvertsToMicrosecondsOfTheLocalWallClock) {
  Timestamp ts;
  ts.year = 2024;
  ts.month = 2;
  ts.day = 1;
  ts.hour = 9;
  ts.minute = 14;
  ts.second = 29;
  ts.micros = 497000;
  EXPECT_TRUE(ts.valid());
  EXPECT_TRUE(ts.has_year());
  EXPECT_EQ(ts.to_us(), (int64_t{19754} * 86400 + 9 * 3600 + 14 * 60 + 29) * 1000000 + 497000);
}

TEST(Timestamp, UsesProvisionalYear2000WhenTheLineHadNone) {
  Timestamp ts;  // c10 "E709 17:05:38"
  ts.month = 7;
  ts.day = 9;
  ts.hour = 17;
  ts.minute = 5;
  ts.second = 38;
  EXPECT_FALSE(ts.has_year());
  EXPECT_EQ(ts.to_us(), (int64_t{11147} * 86400 + 17 * 3600 + 5 * 60 + 38) * 1000000);
}

TEST(Timestamp, TimeOfDayAloneIsNotAValidTimestamp) {
  Timestamp ts;
  ts.hour = 18;
  ts.minute = 11;
  EXPECT_FALSE(ts.valid());
  EXPECT_EQ(ts.to_us(), 0);
}

TEST(Timestamp, ParsesClockWithEveryFractionStyle) {
  Timestamp ts;
  EXPECT_EQ(parse_clock("17:05:38 rest", ts), 8u);
  EXPECT_EQ(ts.hour, 17);
  EXPECT_EQ(ts.minute, 5);
  EXPECT_EQ(ts.second, 38);
  EXPECT_EQ(ts.micros, 0);

  // c10 2.4+: nine digits, microsecond precision kept.
  EXPECT_EQ(parse_clock("17:05:38.162814866 ProcessGroupNCCL.cpp:632]", ts), 18u);
  EXPECT_EQ(ts.micros, 162814);
  // Python logging: comma and milliseconds.
  EXPECT_EQ(parse_clock("09:14:29,497]", ts), 12u);
  EXPECT_EQ(ts.micros, 497000);
  EXPECT_EQ(parse_clock("09:14:29.5", ts), 10u);
  EXPECT_EQ(ts.micros, 500000);
  // A dot with no digits is not part of the clock.
  EXPECT_EQ(parse_clock("09:14:29. done", ts), 8u);
  EXPECT_EQ(ts.micros, 0);
}

TEST(Timestamp, DropsFractionOnRequestButConsumesIt) {
  Timestamp ts;
  EXPECT_EQ(parse_clock("17:05:38.162814866 x", ts, /*keep_fraction=*/false), 18u);
  EXPECT_EQ(ts.second, 38);
  EXPECT_EQ(ts.micros, 0);
}

TEST(Timestamp, RejectsWhatIsNoClock) {
  Timestamp ts;
  EXPECT_EQ(parse_clock("7:05:38", ts), 0u);
  EXPECT_EQ(parse_clock("24:00:00", ts), 0u);
  EXPECT_EQ(parse_clock("17:60:00", ts), 0u);
  EXPECT_EQ(parse_clock("17:05", ts), 0u);
  EXPECT_EQ(parse_clock("17-05-38", ts), 0u);
  EXPECT_EQ(parse_clock("", ts), 0u);
}

TEST(Timestamp, ParsesDateTimeWithSpaceUnderscoreOrT) {
  Timestamp ts;
  EXPECT_EQ(parse_date_time("2025-04-08 08:39:46] host", ts), 19u);  // NCCL 2.26+
  EXPECT_EQ(ts.year, 2025);
  EXPECT_EQ(ts.month, 4);
  EXPECT_EQ(ts.day, 8);
  EXPECT_EQ(ts.hour, 8);
  EXPECT_EQ(ts.second, 46);

  EXPECT_EQ(parse_date_time("2024-06-01_12:34:56", ts), 19u);  // elastic summary time
  EXPECT_EQ(ts.day, 1);
  EXPECT_EQ(ts.minute, 34);

  EXPECT_EQ(parse_date_time("2024-02-01 09:14:29,497] torch", ts), 23u);  // torch 2.2-2.3
  EXPECT_EQ(ts.micros, 497000);

  EXPECT_EQ(parse_date_time("2024-06-01T12:34:56.123456Z", ts), 26u);
  EXPECT_EQ(ts.micros, 123456);
}

TEST(Timestamp, RejectsMalformedDatesAndLeavesTheTimestampAlone) {
  Timestamp ts;
  ts.year = 1999;
  EXPECT_EQ(parse_date_time("2024-13-01 00:00:00", ts), 0u);
  EXPECT_EQ(parse_date_time("2024-06-00 00:00:00", ts), 0u);
  EXPECT_EQ(parse_date_time("2024/06/01 12:34:56", ts), 0u);
  EXPECT_EQ(parse_date_time("2024-06-01 12:34", ts), 0u);
  EXPECT_EQ(parse_date_time("2024-06-01-12:34:56", ts), 0u);
  EXPECT_EQ(parse_date_time("2024-06-01 25:34:56", ts), 0u);
  EXPECT_EQ(ts.year, 1999);
}

}  // namespace
}  // namespace ncclpm::frame
