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
std::vector<std::string_view> split(std::string_view s, char sep);

/// True when `s` contains an ANSI escape (ESC byte).
inline bool has_escape(std::string_view s) { return s.find('\x1b') != std::string_view::npos; }
/// Removes ANSI CSI sequences (`ESC [ ... letter`) and lone ESC bytes.
std::string strip_ansi(std::string_view s);

/// Returns `s` with every invalid UTF-8 sequence replaced by U+FFFD, so it can
/// be stored as SQLite TEXT; `s` itself when it is already valid.
std::string to_valid_utf8(std::string_view s);
bool is_valid_utf8(std::string_view s);

/// Cuts `s` to at most `max_bytes` without splitting a UTF-8 sequence.
std::string_view clip(std::string_view s, size_t max_bytes);

/// 1234567 -> "1,234,567": counts read by people.
std::string with_commas(int64_t n);

/// strerror(err) starting lowercase, for error messages: "permission denied".
std::string errno_text(int err);

/// Quotes a value for an error message: 'value'.
std::string quoted(std::string_view s);

}  // namespace ncclpm::util
