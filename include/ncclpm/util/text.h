// include/ncclpm/util/text.h
//
// Small string helpers that know nothing of NCCL or logs: number parsing that
// never throws, ANSI escape removal, UTF-8 repair for storage, trimming.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ncclpm::util {

/// Decimal integer (optional leading '-') filling the whole of `s`.
std::optional<int64_t> parse_int(std::string_view s);
/// The same, inline for hot loops: numbers of up to 18 digits cannot
/// overflow, so they need no checks but the digits themselves; longer ones go
/// to parse_int.
inline std::optional<int64_t> parse_short_int(std::string_view s) {
  size_t digits_from = !s.empty() && s[0] == '-' ? 1 : 0;
  if (s.size() <= digits_from || s.size() - digits_from > 18) return parse_int(s);
  int64_t v = 0;
  for (size_t i = digits_from; i < s.size(); ++i) {
    auto d = static_cast<unsigned>(s[i] - '0');
    if (d > 9) return std::nullopt;
    v = v * 10 + d;
  }
  return digits_from == 1 ? -v : v;
}
/// Hexadecimal integer, with or without a leading "0x".
std::optional<uint64_t> parse_hex(std::string_view s);
/// Floating point filling the whole of `s`.
std::optional<double> parse_double(std::string_view s);

/// Reads the run of decimal digits at `s[pos]` (none: nullopt); advances `pos`.
std::optional<int64_t> take_digits(std::string_view s, size_t& pos);

std::string_view trim(std::string_view s);
std::string_view trim_left(std::string_view s);
bool starts_with_digit(std::string_view s);
bool is_blank(std::string_view s);
/// `s` with ASCII letters in lower case, written into `buffer` (the caller's,
/// reused across calls): words can then be found in any case with find(), as
/// SQL's LIKE finds them.
std::string_view ascii_lower(std::string_view s, std::string& buffer);
std::vector<std::string_view> split(std::string_view s, char sep);

/// True when `s` contains an ANSI escape (ESC byte).
inline bool has_escape(std::string_view s) { return s.find('\x1b') != std::string_view::npos; }
/// Removes ANSI CSI sequences (`ESC [ ... letter`) and lone ESC bytes.
std::string strip_ansi(std::string_view s);
/// Where the character at `stripped_offset` of strip_ansi(s) is in `s`
/// (s.size() past its end): offsets found in the stripped text, mapped back.
size_t offset_before_stripping(std::string_view s, size_t stripped_offset);

/// Returns `s` with every invalid UTF-8 sequence replaced by U+FFFD, so it can
/// be stored as SQLite TEXT; `s` itself when it is already valid.
std::string to_valid_utf8(std::string_view s);
/// `s` as SQLite TEXT can hold it: valid UTF-8, and NUL bytes (which cut C
/// strings short) replaced by U+FFFD too.
std::string to_sqlite_text(std::string_view s);
bool is_valid_utf8(std::string_view s);
/// True when to_sqlite_text(s) would be `s` itself (the common case, no copy needed).
bool is_sqlite_text(std::string_view s);

/// Cuts `s` to at most `max_bytes` without splitting a UTF-8 sequence.
std::string_view clip(std::string_view s, size_t max_bytes);

/// 1234567 -> "1,234,567": counts read by people.
std::string with_commas(int64_t n);

/// {9,0,1,2,3,5,8} -> "0-3, 5, 8-9": sorted, runs folded; the rank lists
/// people read, short even for thousands of ranks.
std::string rank_ranges(std::vector<int> ranks);

/// strerror(err) starting lowercase, for error messages: "permission denied".
std::string errno_text(int err);

/// Quotes a value for an error message: 'value'.
std::string quoted(std::string_view s);

/// `s` as one shell word, for commands printed to be pasted: as it is when
/// it holds only safe characters, else in single quotes ('it'\''s').
std::string shell_word(std::string_view s);

}  // namespace ncclpm::util
