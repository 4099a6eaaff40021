// src/frame/chars.h
//
// Character classes the prefix peelers share (private to frame/). Plain
// comparisons: <cctype> depends on the locale and is slower.
#pragma once

namespace ncclpm::frame {

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
/// Characters of a host name as NCCL, pdsh and Slurm print it.
inline bool is_host_char(char c) { return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_'; }

}  // namespace ncclpm::frame
