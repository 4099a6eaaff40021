// include/ncclpm/vocab/categories.h
//
// The finding categories: the public contract of `diagnose --format json`
// (shared/DESIGN.md). Rules, the message catalogues and the field corpus all
// name failures with these words.
#pragma once

#include <string>
#include <vector>

namespace ncclpm::vocab {

const std::vector<std::string>& categories();
bool is_category(const std::string& name);

}  // namespace ncclpm::vocab
