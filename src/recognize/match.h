// src/recognize/match.h
//
// Small helpers the parsers share (private to recognize/): a literal check
// before a regex, and RE2's view of a string_view.
#pragma once

#include <re2/re2.h>

#include <string_view>

namespace ncclpm::recognize {

inline bool contains(std::string_view s, std::string_view lit) { return s.find(lit) != std::string_view::npos; }
inline re2::StringPiece sp(std::string_view s) { return re2::StringPiece(s.data(), s.size()); }

}  // namespace ncclpm::recognize
