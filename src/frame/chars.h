// src/frame/chars.h
//
// Character classes the prefix peelers share (private to frame/). Plain
// comparisons: <cctype> depends on the locale and is slower.
#pragma once

#include <algorithm>
#include <string_view>

namespace ncclpm::frame {

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
/// Characters of a host name as NCCL, pdsh and Slurm print it.
inline bool is_host_char(char c) { return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_'; }

/// A Python exception's qualified name ("torch.distributed.DistNetworkError"):
/// dotted like a host's, but its last part is a class that ends in Error,
/// Exception, Warning, Interrupt or Exit.
inline bool is_exception_name(std::string_view name) {
  std::string_view last = name.substr(name.rfind('.') + 1);
  if (last.empty() || last[0] < 'A' || last[0] > 'Z') return false;
  for (std::string_view end : {"Error", "Exception", "Warning", "Interrupt", "Exit"})
    if (last.size() > end.size() && last.ends_with(end)) return true;
  return false;
}

/// A token that may be a host name as launchers and collectors print it
/// ("node07", "10.0.0.2", "gpu-q-13"): it starts with a letter or digit and
/// has a digit, '-' or '.' in it, and is no exception's name.
inline bool looks_like_host(std::string_view h) {
  return !h.empty() && (is_alpha(h[0]) || is_digit(h[0])) &&
         std::any_of(h.begin(), h.end(), [](char c) { return is_digit(c) || c == '-' || c == '.'; }) &&
         !is_exception_name(h);
}

}  // namespace ncclpm::frame
