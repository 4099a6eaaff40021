// src/recognize/match.h
//
// Small helpers the parsers share (private to recognize/): a literal check
// before a regex, and RE2's view of a string_view.
#pragma once

#include <re2/re2.h>

#include <string_view>

#include "ncclpm/util/literal.h"

namespace ncclpm::recognize {

using util::contains;
using util::Literal;

inline re2::StringPiece sp(std::string_view s) { return re2::StringPiece(s.data(), s.size()); }

}  // namespace ncclpm::recognize
