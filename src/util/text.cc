// src/util/text.cc
#include "ncclpm/util/text.h"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cstdlib>
#include <cstring>

namespace ncclpm::util {

std::optional<int64_t> parse_int(std::string_view s) {
  if (s.size() <= 19) {
    size_t digits_from = !s.empty() && s[0] == '-' ? 1 : 0;
    if (s.size() > digits_from && s.size() - digits_from <= 18) return parse_short_int(s);
  }
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> parse_hex(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty()) return std::nullopt;
  if (s.size() <= 15) {  // cannot overflow
    uint64_t v = 0;
    for (char ch : s) {
      unsigned d = ch >= '0' && ch <= '9' ? static_cast<unsigned>(ch - '0')
                   : ch >= 'a' && ch <= 'f' ? static_cast<unsigned>(ch - 'a' + 10)
                   : ch >= 'A' && ch <= 'F' ? static_cast<unsigned>(ch - 'A' + 10)
                                            : 16u;
      if (d > 15) return std::nullopt;
      v = v << 4 | d;
    }
    return v;
  }
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_double(std::string_view s) {
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> take_digits(std::string_view s, size_t& pos) {
  size_t start = pos;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
  if (pos == start) return std::nullopt;
  return parse_int(s.substr(start, pos - start));
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

std::string_view trim_left(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  return s.substr(i);
}

std::string_view trim(std::string_view s) {
  s = trim_left(s);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool starts_with_digit(std::string_view s) { return !s.empty() && s[0] >= '0' && s[0] <= '9'; }

bool is_blank(std::string_view s) { return trim(s).empty(); }

// ASCII only, inline: diagnose looks for words in every stored line, where
// libc's locale-aware tolower, a call per character, was a tenth of its time.
std::string_view ascii_lower(std::string_view s, std::string& buffer) {
  buffer.resize(s.size());
  std::transform(s.begin(), s.end(), buffer.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
  return buffer;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

// The length of the escape sequence at s[i] (an ESC there): a CSI (ESC [
// parameters (digits ; ?) then one final letter) whole; of a malformed one,
// ESC [ and its parameters; a lone ESC alone.
static size_t escape_length(std::string_view s, size_t i) {
  if (i + 1 >= s.size() || s[i + 1] != '[') return 1;
  size_t j = i + 2;
  while (j < s.size() && ((s[j] >= '0' && s[j] <= '9') || s[j] == ';' || s[j] == '?')) ++j;
  bool final_letter = j < s.size() && ((s[j] >= 'A' && s[j] <= 'Z') || (s[j] >= 'a' && s[j] <= 'z'));
  return (final_letter ? j + 1 : j) - i;
}

std::string strip_ansi(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\x1b') {
      i += escape_length(s, i);
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

size_t offset_before_stripping(std::string_view s, size_t stripped_offset) {
  size_t kept = 0, i = 0;
  while (i < s.size()) {
    if (s[i] == '\x1b') {
      i += escape_length(s, i);
      continue;
    }
    if (kept == stripped_offset) return i;
    ++kept;
    ++i;
  }
  return s.size();
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 when invalid.
static size_t utf8_sequence_length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t min_code = 0;
  if ((c & 0xE0) == 0xC0) { n = 2; min_code = 0x80; }
  else if ((c & 0xF0) == 0xE0) { n = 3; min_code = 0x800; }
  else if ((c & 0xF8) == 0xF0) { n = 4; min_code = 0x10000; }
  else return 0;
  if (i + n > s.size()) return 0;
  uint32_t code = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  if (code < min_code || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    // Logs are mostly ASCII: eight bytes at a time while they are.
    uint64_t eight = 0;
    if (i + 8 <= s.size() && (std::memcpy(&eight, s.data() + i, 8), (eight & 0x8080808080808080ULL) == 0)) {
      i += 8;
      continue;
    }
    if (static_cast<unsigned char>(s[i]) < 0x80) { ++i; continue; }
    size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

bool is_sqlite_text(std::string_view s) {
  return s.find('\0') == std::string_view::npos && is_valid_utf8(s);
}

std::string to_sqlite_text(std::string_view s) {
  std::string out = to_valid_utf8(s);
  for (size_t at; (at = out.find('\0')) != std::string::npos;) out.replace(at, 1, "\xEF\xBF\xBD");
  return out;
}

std::string to_valid_utf8(std::string_view s) {
  if (is_valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string_view clip(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t n = max_bytes;
  // Step back over continuation bytes so a sequence is never split.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count > 0 && count % 3 == 0) out.push_back(',');
    out.push_back(*it);
    ++count;
  }
  if (n < 0) out.push_back('-');
  return std::string(out.rbegin(), out.rend());
}

std::string rank_ranges(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(ranks[i]);
    // Pairs too ("8-9"): in "ranks 6-7 on a, ranks 8-9 on b" commas would blur the groups.
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}


std::string errno_text(int err) {
  std::string s = std::strerror(err);
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string shell_word(std::string_view s) {
  bool safe = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || (c != 0 && std::strchr("-_./=:,+@%", c) != nullptr);
  });
  if (safe) return std::string(s);
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace ncclpm::util
