// src/rules/rule.cc
#include "ncclpm/rules/rule.h"

#include <algorithm>

#include "ncclpm/util/text.h"

namespace ncclpm::rules {

int compare_versions(const std::string& a, const std::string& b) {
  auto pa = util::split(a, '.');
  auto pb = util::split(b, '.');
  for (size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
    int64_t x = i < pa.size() ? util::parse_int(pa[i]).value_or(0) : 0;
    int64_t y = i < pb.size() ? util::parse_int(pb[i]).value_or(0) : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

}  // namespace ncclpm::rules
