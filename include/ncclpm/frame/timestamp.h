// include/ncclpm/frame/timestamp.h
//
// Log producers print time in many styles, most of them without a year or a
// time zone. A Timestamp keeps what the line said; `to_us()` turns it into
// microseconds since 1970 of the local wall clock (as if it were UTC), with a
// provisional year 2000 when the line had none (`has_year` false); ingest
// later replaces the provisional year by the job's own.
#pragma once

#include <cstdint>
#include <string_view>

namespace ncclpm::frame {

struct Timestamp {
  int year = 0;   ///< 0: not printed
  int month = 0;  ///< 0: no date at all (time of day only)
  int day = 0;
  int hour = 0, minute = 0, second = 0;
  int micros = 0;

  bool valid() const { return month != 0; }
  bool has_year() const { return year != 0; }
  int64_t to_us() const;
};

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
int64_t days_from_civil(int y, int m, int d);

/// Parses "HH:MM:SS" with an optional fraction (".123", ",123", 1-9 digits)
/// at the start of `s`; returns the number of bytes used, 0 when it is not a time.
size_t parse_clock(std::string_view s, Timestamp& ts, bool keep_fraction = true);
/// Parses "YYYY-MM-DD" then ' ' or '_' or 'T' then a clock; bytes used or 0.
size_t parse_date_time(std::string_view s, Timestamp& ts);

}  // namespace ncclpm::frame
