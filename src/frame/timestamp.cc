// src/frame/timestamp.cc
#include "ncclpm/frame/timestamp.h"

namespace ncclpm::frame {

int64_t days_from_civil(int y, int m, int d) {
  // Howard Hinnant's algorithm.
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int64_t Timestamp::to_us() const {
  if (!valid()) return 0;
  int64_t days = days_from_civil(year != 0 ? year : 2000, month, day);
  int64_t secs = days * 86400 + hour * 3600 + minute * 60 + second;
  return secs * 1000000 + micros;
}

static bool two_digits(std::string_view s, size_t at, int& out) {
  if (at + 2 > s.size()) return false;
  char a = s[at], b = s[at + 1];
  if (a < '0' || a > '9' || b < '0' || b > '9') return false;
  out = (a - '0') * 10 + (b - '0');
  return true;
}

size_t parse_clock(std::string_view s, Timestamp& ts, bool keep_fraction) {
  int h = 0, m = 0, sec = 0;
  if (!two_digits(s, 0, h) || s.size() < 8 || s[2] != ':' || !two_digits(s, 3, m) ||
      s[5] != ':' || !two_digits(s, 6, sec))
    return 0;
  if (h > 23 || m > 59 || sec > 60) return 0;
  ts.hour = h;
  ts.minute = m;
  ts.second = sec;
  ts.micros = 0;
  size_t i = 8;
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
    size_t j = i + 1;
    int micros = 0, digits = 0;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') {
      if (digits < 6) micros = micros * 10 + (s[j] - '0');
      ++digits;
      ++j;
    }
    if (digits == 0) return i;
    for (int k = digits; k < 6; ++k) micros *= 10;
    if (keep_fraction) ts.micros = micros;
    i = j;
  }
  return i;
}

size_t parse_date_time(std::string_view s, Timestamp& ts) {
  if (s.size() < 19) return 0;
  int y1 = 0, y2 = 0, mo = 0, d = 0;
  if (!two_digits(s, 0, y1) || !two_digits(s, 2, y2) || s[4] != '-' || !two_digits(s, 5, mo) ||
      s[7] != '-' || !two_digits(s, 8, d))
    return 0;
  if (s[10] != ' ' && s[10] != '_' && s[10] != 'T') return 0;
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return 0;
  Timestamp t;
  size_t n = parse_clock(s.substr(11), t);
  if (n == 0) return 0;
  t.year = y1 * 100 + y2;
  t.month = mo;
  t.day = d;
  ts = t;
  return 11 + n;
}

}  // namespace ncclpm::frame
