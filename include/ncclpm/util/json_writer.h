// include/ncclpm/util/json_writer.h
//
// A small streaming JSON writer: keys and values in order, commas and
// escaping handled, optional indentation. Enough for reports; no parsing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ncclpm::util {

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = true) : pretty_(pretty) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(int64_t n);
  JsonWriter& value(int n) { return value(static_cast<int64_t>(n)); }
  JsonWriter& value(double d);
  JsonWriter& value(bool b);
  JsonWriter& null();
  /// Writes an integer, or null when it is negative ("not known").
  JsonWriter& value_or_null(int64_t n) { return n < 0 ? null() : value(n); }

  const std::string& str() const { return out_; }
  static std::string escape(std::string_view s);

 private:
  void before_value();
  void newline();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool pretty_;
  bool after_key_ = false;
};

}  // namespace ncclpm::util
