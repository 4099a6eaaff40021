// bench/gen/text.h
//
// The generator's building blocks: appending numbers and text to a
// std::string without iostreams or printf (the generator writes gigabytes and
// formatting is most of its time), a wall clock for the job's timestamps and a
// small deterministic random number generator.
//
//   std::string s;
//   cat(s, host, ':', pid, ':', tid, " [", dev, "] NCCL INFO opCount ", Hex{op});
//   line(s, "Connected all trees");            // appends the text and '\n'
#pragma once

#include <charconv>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

namespace ncclpm::bench {

/// Lower-case hexadecimal without a prefix: NCCL opCount, busId.
struct Hex {
  uint64_t v;
};
/// A pointer as glibc's %p prints it: 0x-prefixed hex, `(nil)` for 0.
struct Ptr {
  uint64_t v;
};
/// An integer right-aligned in `width` characters.
struct Pad {
  int64_t v;
  int width;
  char fill = ' ';
};
/// A number with a fixed count of decimals (`%.2f`).
struct Fixed {
  double v;
  int decimals;
};

inline void put(std::string& s, std::string_view v) { s.append(v); }
inline void put(std::string& s, const char* v) { s.append(v); }
inline void put(std::string& s, const std::string& v) { s.append(v); }
inline void put(std::string& s, char c) { s.push_back(c); }
template <std::integral T>
requires(!std::same_as<T, char> && !std::same_as<T, bool>) inline void put(std::string& s, T v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  s.append(buf, r.ptr);
}
void put(std::string& s, Hex h);
void put(std::string& s, Ptr p);
void put(std::string& s, Pad p);
void put(std::string& s, Fixed f);

template <class... A>
void cat(std::string& s, const A&... a) {
  (put(s, a), ...);
}
template <class... A>
void line(std::string& s, const A&... a) {
  (put(s, a), ...);
  s.push_back('\n');
}

/// Local wall-clock time of the job, in microseconds since 1970-01-01.
struct Time {
  int64_t us = 0;
  Time plus_ms(int64_t ms) const { return Time{us + ms * 1000}; }
  Time plus_s(double s) const { return Time{us + static_cast<int64_t>(s * 1e6)}; }
};
struct Civil {
  int year, month, day, hour, minute, second, micro;
};
Civil civil(Time t);
Time make_time(int year, int month, int day, int hour, int minute, int second);

/// "2025-06-12 09:14:02" (sep between date and time is ' ' or '_').
void put_date_time(std::string& s, Time t, char sep = ' ');
/// "09:14:02"
void put_hms(std::string& s, Time t);

/// splitmix64: tiny, fast and good enough for plausible log values. Every
/// rank and phase draws from its own stream (`Rng::for_part`), so the output
/// does not depend on the order in which a layout writes the ranks.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  static Rng for_part(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0);
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [lo, hi].
  int64_t range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t s_;
};

/// "1,234,567"
std::string with_commas(uint64_t v);

}  // namespace ncclpm::bench
