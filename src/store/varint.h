// src/store/varint.h
//
// LEB128 varints and zigzag differences: the integer encoding of the compact
// blocks (collective_codec.cc, line_codec.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ncclpm::store {

/// Writes `v` at `out`; returns the bytes written (at most 10).
inline size_t write_varint(char* out, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  out[n++] = static_cast<char>(v);
  return n;
}

inline void put_varint(std::string& out, uint64_t v) {
  char buf[10];
  out.append(buf, write_varint(buf, v));
}

/// Reads a varint of `data` at `at`, moving `at` past it; false when cut short.
inline bool read_varint(std::string_view data, size_t& at, uint64_t& v) {
  v = 0;
  for (int shift = 0; at < data.size() && shift < 64; shift += 7) {
    auto b = static_cast<uint8_t>(data[at++]);
    v |= uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

/// A difference (computed unsigned, so that it wraps instead of overflowing)
/// as a small unsigned number whatever its sign.
inline uint64_t zigzag(uint64_t difference) {
  auto d = static_cast<int64_t>(difference);
  return (difference << 1) ^ static_cast<uint64_t>(d >> 63);
}
inline uint64_t unzigzag(uint64_t z) { return (z >> 1) ^ (~(z & 1) + 1); }

/// `now - before` as a zigzag number. Both are signed values read from logs
/// (a fuzzed line can say any time or step), so the difference wraps rather
/// than overflowing; add_difference undoes it exactly.
inline uint64_t zigzag_difference(int64_t now, int64_t before) {
  return zigzag(static_cast<uint64_t>(now) - static_cast<uint64_t>(before));
}
inline int64_t add_difference(int64_t base, uint64_t zigzagged) {
  return static_cast<int64_t>(static_cast<uint64_t>(base) + unzigzag(zigzagged));
}

/// A count that may be -1 for "not said" (a step, a total) as an unsigned
/// number, -1 and below as 0; from_count undoes it. Unsigned, so that the
/// largest count does not overflow.
inline uint64_t to_count(int64_t v) { return v < 0 ? 0 : static_cast<uint64_t>(v) + 1; }
inline int64_t from_count(uint64_t v) { return static_cast<int64_t>(v - 1); }

}  // namespace ncclpm::store
