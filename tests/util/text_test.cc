// tests/util/text_test.cc
#include "ncclpm/util/text.h"

#include <gtest/gtest.h>

namespace ncclpm::util {

TEST(Text, ParsesIntegersAndRejectsTrailingJunk) {
  EXPECT_EQ(parse_int("59709"), 59709);
  EXPECT_EQ(parse_int("-6"), -6);
  EXPECT_FALSE(parse_int("12a"));
  EXPECT_FALSE(parse_int(""));
}

TEST(Text, ParsesHexWithAndWithoutPrefix) {
  EXPECT_EQ(parse_hex("1a"), 26u);
  EXPECT_EQ(parse_hex("0x55d5a8b3c2d0"), 0x55d5a8b3c2d0u);
  EXPECT_FALSE(parse_hex("(nil)"));
}

TEST(Text, StripsAnsiColourAndCursorCodes) {
  EXPECT_EQ(strip_ansi("\x1b[36m(WorkerDict pid=1230)\x1b[0m hi"), "(WorkerDict pid=1230) hi");
  EXPECT_EQ(strip_ansi("bar\x1b[A\x1b[2Kdone"), "bardone");
}

TEST(Text, RepairsInvalidUtf8WithReplacementCharacter) {
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9"));
  EXPECT_FALSE(is_valid_utf8("bad \xFF byte"));
  EXPECT_EQ(to_valid_utf8("bad \xFF byte"), "bad \xEF\xBF\xBD byte");
  EXPECT_EQ(to_valid_utf8("cut \xE2\x82"), "cut \xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(Text, ClipNeverSplitsAUtf8Sequence) {
  std::string s = "ab\xC3\xA9";  // "abé"
  EXPECT_EQ(clip(s, 3), "ab");
  EXPECT_EQ(clip(s, 4), s);
}

TEST(Text, FormatsCountsWithCommas) {
  EXPECT_EQ(with_commas(1284311), "1,284,311");
  EXPECT_EQ(with_commas(12), "12");
  EXPECT_EQ(with_commas(-1000), "-1,000");
}

}  // namespace ncclpm::util
