// tests/util/text_test.cc
#include "ncclpm/util/text.h"

#include <gtest/gtest.h>

namespace ncclpm::util {

TEST(Text, ShellWordsPasteBackAsTheSameArgument) {
  EXPECT_EQ(util::shell_word("/data/run-4412/incidents.db"), "/data/run-4412/incidents.db");
  EXPECT_EQ(util::shell_word("my job"), "'my job'");
  EXPECT_EQ(util::shell_word("it's"), "'it'\\''s'");
  EXPECT_EQ(util::shell_word("$(rm -rf ~)"), "'$(rm -rf ~)'");
  EXPECT_EQ(util::shell_word(""), "''");
  EXPECT_EQ(util::shell_word(std::string_view("a\0b", 3)), std::string("'a\0b'", 5));
}

TEST(Text, LowersAsciiLettersOnly) {
  std::string buffer;
  EXPECT_EQ(ascii_lower("NET/IB : Got Async ERROR event", buffer), "net/ib : got async error event");
  EXPECT_EQ(ascii_lower("already lower, 42 [x]", buffer), "already lower, 42 [x]");
  EXPECT_EQ(ascii_lower("", buffer), "");
  EXPECT_EQ(ascii_lower("\xC3\x89T\xC3\x89", buffer), "\xC3\x89t\xC3\x89") << "bytes of UTF-8 are left as they are";
}

TEST(Text, ParsesIntegersAndRejectsTrailingJunk) {
  EXPECT_EQ(parse_int("59709"), 59709);
  EXPECT_EQ(parse_int("-6"), -6);
  EXPECT_FALSE(parse_int("12a"));
  EXPECT_FALSE(parse_int(""));
}

// The short-number fast path and the long-number path agree at their border.
TEST(Text, ParsesIntegersOfEveryLengthAndRefusesOverflow) {
  EXPECT_EQ(parse_int("0"), 0);
  EXPECT_EQ(parse_int("-0"), 0);
  EXPECT_EQ(parse_int("999999999999999999"), 999999999999999999);     // 18 digits
  EXPECT_EQ(parse_int("1000000000000000000"), 1000000000000000000);   // 19
  EXPECT_EQ(parse_int("-999999999999999999"), -999999999999999999);
  EXPECT_EQ(parse_int("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(parse_int("-9223372036854775808"), INT64_MIN);
  EXPECT_FALSE(parse_int("9223372036854775808"));
  EXPECT_FALSE(parse_int("00000000000000000000009x"));
  for (const char* bad : {"-", "--1", "+5", " 5", "5 ", "1-2", "12345678901234567a"}) EXPECT_FALSE(parse_int(bad)) << bad;
}

TEST(Text, ParsesHexWithAndWithoutPrefix) {
  EXPECT_EQ(parse_hex("1a"), 26u);
  EXPECT_EQ(parse_hex("0x55d5a8b3c2d0"), 0x55d5a8b3c2d0u);
  EXPECT_FALSE(parse_hex("(nil)"));
  EXPECT_EQ(parse_hex("ABCdef"), 0xabcdefu);
  EXPECT_EQ(parse_hex("fffffffffffffff"), 0xfffffffffffffffu);     // 15 digits
  EXPECT_EQ(parse_hex("ffffffffffffffff"), 0xffffffffffffffffu);   // 16
  EXPECT_FALSE(parse_hex("10000000000000000"));                    // 17: too big
  for (const char* bad : {"", "0x", "g", "1 ", "-1", "0x-1"}) EXPECT_FALSE(parse_hex(bad)) << bad;
}

TEST(Text, StripsAnsiColourAndCursorCodes) {
  EXPECT_EQ(strip_ansi("\x1b[36m(WorkerDict pid=1230)\x1b[0m hi"), "(WorkerDict pid=1230) hi");
  EXPECT_EQ(strip_ansi("bar\x1b[A\x1b[2Kdone"), "bardone");
}

TEST(Text, MapsAnOffsetInTheStrippedTextBackToTheColouredOne) {
  std::string_view coloured = "\x1b[36mbar\x1b[0m[rank1]: x";
  std::string stripped = strip_ansi(coloured);
  ASSERT_EQ(stripped, "bar[rank1]: x");
  EXPECT_EQ(offset_before_stripping(coloured, 0), 5u);
  EXPECT_EQ(offset_before_stripping(coloured, stripped.find("[rank1]")), coloured.find("[rank1]"));
  EXPECT_EQ(offset_before_stripping(coloured, stripped.size()), coloured.size());
  EXPECT_EQ(offset_before_stripping("plain", 3), 3u);
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

TEST(Text, RankRangesFoldRunsOfConsecutiveRanks) {
  EXPECT_EQ(rank_ranges({0, 1, 2, 3, 5, 7, 8, 9}), "0-3, 5, 7-9");
  EXPECT_EQ(rank_ranges({5, 4}), "4-5");
  EXPECT_EQ(rank_ranges({9, 3, 3}), "3, 9");
  EXPECT_EQ(rank_ranges({}), "");
  std::vector<int> world(4095);
  for (int r = 1; r <= 4095; ++r) world[r - 1] = r;
  EXPECT_EQ(rank_ranges(world), "1-4095");
}

}  // namespace ncclpm::util
