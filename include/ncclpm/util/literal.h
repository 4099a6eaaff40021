// include/ncclpm/util/literal.h
//
// Looking for a fixed text in a log line. Most lines hold none of the texts
// the framer and the parsers look for, so the miss must be fast.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace ncclpm::util {

// How common a byte is in logs, roughly (lower is rarer): spaces, lowercase
// letters and digits are everywhere, capitals and brackets much less so;
// square brackets less rarely than the others, since most prefixes hold them
// ("[rank3]:", NCCL's "[0]", "[nranks=8]").
constexpr int commonness(char c) {
  if (c == ' ') return 10;
  if (c >= 'a' && c <= 'z') return std::string_view("etaoinsrl").find(c) != std::string_view::npos ? 9 : 8;
  if (c >= '0' && c <= '9') return 7;
  if (std::string_view(".,:/-_=").find(c) != std::string_view::npos) return 6;
  if (c == '[' || c == ']') return 5;
  if (c >= 'A' && c <= 'Z') return 3;
  return 4;
}

/// A text looked for, with its rarest byte found at compile time.
struct Literal {
  std::string_view text;
  size_t rare = 0;  // index of the byte memchr looks for

  template <size_t N>
  consteval Literal(const char (&s)[N]) : Literal(std::string_view(s, N - 1)) {}  // NOLINT: implicit by design
  /// A text known only at run time (tests).
  static constexpr Literal of(std::string_view s) { return Literal(s); }

 private:
  constexpr explicit Literal(std::string_view s) : text(s) {
    for (size_t i = 1; i < s.size(); ++i)
      if (commonness(s[i]) < commonness(s[rare])) rare = i;
  }
};

/// Where `lit` first occurs in `s` at or after `from`, as string_view::find.
/// memchr looks for the literal's rarest byte, not its first, which for
/// " CANCELLED AT " or "exits with" would stop at every word.
inline size_t find(std::string_view s, const Literal& lit, size_t from = 0) {
  std::string_view t = lit.text;
  if (t.size() < 3 || from > s.size() || s.size() - from < t.size()) return s.find(t, from);
  size_t k = lit.rare;
  const char* at = s.data() + from + k;
  const char* end = s.data() + (s.size() - t.size()) + k + 1;  // past the last place t[k] can be
  while (at < end) {
    const char* hit = static_cast<const char*>(std::memchr(at, t[k], static_cast<size_t>(end - at)));
    if (hit == nullptr) return std::string_view::npos;
    if (std::memcmp(hit - k, t.data(), t.size()) == 0) return static_cast<size_t>(hit - k - s.data());
    at = hit + 1;
  }
  return std::string_view::npos;
}

inline bool contains(std::string_view s, const Literal& lit) { return find(s, lit) != std::string_view::npos; }

/// Which byte values occur in a text. Built in one pass over a line, it rules
/// out, in a few instructions each, the literals with a byte the line lacks:
/// most of a long list of them on most lines, before any search.
class ByteSet {
 public:
  constexpr ByteSet() = default;
  constexpr explicit ByteSet(std::string_view s) {
    for (char c : s) {
      auto u = static_cast<unsigned char>(c);
      bits_[u >> 6] |= uint64_t{1} << (u & 63);
    }
  }
  /// Whether every byte of `other` is in this set.
  constexpr bool covers(const ByteSet& other) const {
    return ((other.bits_[0] & ~bits_[0]) | (other.bits_[1] & ~bits_[1]) | (other.bits_[2] & ~bits_[2]) |
            (other.bits_[3] & ~bits_[3])) == 0;
  }

 private:
  uint64_t bits_[4] = {};
};

/// Where byte `c` first occurs in `s`, or s.size(): for a byte expected
/// within a few words (the end of a token), where a memchr call costs more
/// than the search. Eight bytes a step: a word XORed with `c` in every byte
/// has a zero byte where `c` was, and the lowest zero byte is found exactly.
inline size_t find_near(std::string_view s, char c) {
  size_t i = 0;
  if constexpr (std::endian::native == std::endian::little) {
    constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
    const uint64_t pattern = kOnes * static_cast<unsigned char>(c);
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t word;
      std::memcpy(&word, s.data() + i, 8);
      uint64_t x = word ^ pattern;
      if (uint64_t zero = (x - kOnes) & ~x & kHighs; zero != 0)
        return i + static_cast<size_t>(std::countr_zero(zero)) / 8;
    }
  }
  while (i < s.size() && s[i] != c) ++i;
  return i;
}

}  // namespace ncclpm::util
