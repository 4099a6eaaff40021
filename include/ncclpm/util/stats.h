// include/ncclpm/util/stats.h
//
// The median, for estimates that must not follow one odd reading (a clock
// offset, a host's step time).
#pragma once

#include <algorithm>
#include <vector>

namespace ncclpm::util {

/// The middle value of a non-empty list; the mean of the two middle ones for
/// an even count (integers round toward zero).
template <typename T>
T median(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace ncclpm::util
