// include/ncclpm/util/result.h
//
// Result<T, E> is a value or an error, never both. g++ 12 has no
// std::expected in C++20, so library code returns this and never prints.
#pragma once

#include <cassert>
#include <utility>
#include <variant>

#include "ncclpm/util/error.h"

namespace ncclpm {

template <typename T, typename E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(E error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

  const E& error() const { assert(!ok()); return std::get<1>(v_); }
  E&& take_error() { assert(!ok()); return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, E> v_;
};

/// A Result that carries no value: success, or an error.
struct Ok {};
using Status = Result<Ok, Error>;

}  // namespace ncclpm
