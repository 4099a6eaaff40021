// tests/util/literal_test.cc
//
// The literal search (include/ncclpm/util/literal.h) looks for a literal's
// rarest byte first: it must find exactly what string_view::find finds.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ncclpm::util
