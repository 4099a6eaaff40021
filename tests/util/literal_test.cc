// tests/util/literal_test.cc
//
// The literal search (include/ncclpm/util/literal.h) looks for a literal's
// rarest byte first, and find_near reads eight bytes a step: each must find
// exactly what string_view::find finds. A ByteSet rules literals out before
// any search: it must never rule out one that is there.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "ncclpm/util/literal.h"

namespace ncclpm::util {
namespace {

TEST(Contains, FindsWhatFindFinds) {
  EXPECT_TRUE(contains("slurmstepd: error: *** STEP 12.0 ON n7 CANCELLED AT 2024", " CANCELLED AT "));
  EXPECT_FALSE(contains("CANCELLED AT the start", " CANCELLED AT "));
  EXPECT_TRUE(contains("abcXY", "cXY")) << "at the very end";
  EXPECT_TRUE(contains("Xbc tail", "Xbc")) << "at the very start";
  EXPECT_FALSE(contains("Xb", "Xbc"));
  EXPECT_TRUE(contains("anything", ""));
  EXPECT_EQ(Literal(" CANCELLED AT ").rare, 1u) << "a capital, not the space";
  EXPECT_EQ(Literal("exits with").rare, 1u) << "the x";

  // Random lines over a small alphabet, so that partial matches abound.
  const std::string alphabet = "ab AB(:";
  std::mt19937 random(7);
  auto text = [&](size_t max) {
    std::string s(std::uniform_int_distribution<size_t>(0, max)(random), ' ');
    for (char& c : s) c = alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(random)];
    return s;
  };
  int found = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string s = text(24), lit = text(6);
    bool expected = s.find(lit) != std::string::npos;
    ASSERT_EQ(contains(s, Literal::of(lit)), expected) << "[" << s << "] [" << lit << "]";
    size_t from = std::uniform_int_distribution<size_t>(0, s.size() + 1)(random);
    ASSERT_EQ(find(s, Literal::of(lit), from), s.find(lit, from)) << "[" << s << "] [" << lit << "] from " << from;
    found += expected;
  }
  EXPECT_GT(found, 10000) << "too few literals found to test the hits";
}

TEST(FindNear, FindsWhereFindFindsOrTheEnd) {
  EXPECT_EQ(find_near("sendbuff 0x7f", ' '), 8u);
  EXPECT_EQ(find_near("0x7fc75ed7dc00 recvbuff", ' '), 14u) << "past the first eight bytes";
  EXPECT_EQ(find_near("[nranks=512]", ' '), 12u) << "none: the end";
  EXPECT_EQ(find_near("", ' '), 0u);
  EXPECT_EQ(find_near(" lead", ' '), 0u);
  EXPECT_EQ(find_near("a\xff\x80" "b c", '\xff'), 1u) << "a byte above 0x7f is looked for like any";

  // Every length and position, with bytes on both sides of 0x80 around the
  // byte looked for: a borrow between bytes must not report a later one.
  std::mt19937 random(11);
  const std::string bytes = std::string(" \x01\x7f\x80\xff!Ab", 8);
  for (int i = 0; i < 200000; ++i) {
    std::string s(std::uniform_int_distribution<size_t>(0, 40)(random), 'x');
    for (char& c : s) c = bytes[std::uniform_int_distribution<size_t>(0, bytes.size() - 1)(random)];
    char c = bytes[std::uniform_int_distribution<size_t>(0, bytes.size() - 1)(random)];
    size_t expected = std::min(std::string_view(s).find(c), s.size());
    ASSERT_EQ(find_near(s, c), expected) << "in " << testing::PrintToString(s) << " byte " << int(c);
  }
}

TEST(ByteSet, CoversExactlyWhenEveryByteOccurs) {
  EXPECT_TRUE(ByteSet("NCCL error in: x").covers(ByteSet("NCCL error")));
  EXPECT_FALSE(ByteSet("{'loss': 1.82, 'epoch': 0.23}").covers(ByteSet("NCCL"))) << "no capital N";
  EXPECT_TRUE(ByteSet("anything").covers(ByteSet(""))) << "the empty set is in every set";
  EXPECT_FALSE(ByteSet("").covers(ByteSet("a")));
  EXPECT_TRUE(ByteSet("\xff\x80\x01 ").covers(ByteSet("\x80\xff"))) << "bytes above 0x7f, in the upper words";
  EXPECT_FALSE(ByteSet("\xfe").covers(ByteSet("\xff")));

  std::mt19937 random(13);
  auto text = [&](size_t max) {
    std::string s(std::uniform_int_distribution<size_t>(0, max)(random), ' ');
    for (char& c : s) c = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(random));
    return s;
  };
  int covered = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string line = text(300), words = text(4);
    bool expected = std::all_of(words.begin(), words.end(),
                                [&](char c) { return line.find(c) != std::string::npos; });
    ASSERT_EQ(ByteSet(line).covers(ByteSet(words)), expected) << testing::PrintToString(words);
    covered += expected;
  }
  EXPECT_GT(covered, 1000) << "too few covered sets to test them";
}

}  // namespace
}  // namespace ncclpm::util
