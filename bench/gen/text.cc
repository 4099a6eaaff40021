// bench/gen/text.cc
#include "gen/text.h"

#include <cmath>

namespace ncclpm::bench {

void put(std::string& s, Hex h) {
  char buf[20];
  auto r = std::to_chars(buf, buf + sizeof buf, h.v, 16);
  s.append(buf, r.ptr);
}

void put(std::string& s, Ptr p) {
  if (p.v == 0) {
    s.append("(nil)");
    return;
  }
  s.append("0x");
  put(s, Hex{p.v});
}

void put(std::string& s, Pad p) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, p.v);
  int n = static_cast<int>(r.ptr - buf);
  if (n < p.width) s.append(static_cast<size_t>(p.width - n), p.fill);
  s.append(buf, r.ptr);
}

void put(std::string& s, Fixed f) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, f.v, std::chars_format::fixed, f.decimals);
  s.append(buf, r.ptr);
}

namespace {

// Howard Hinnant's days_from_civil / civil_from_days.
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void civil_from_days(int64_t z, int* y, int* m, int* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  *m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *y = static_cast<int>(static_cast<int64_t>(yoe) + era * 400 + (*m <= 2));
}

}  // namespace

Civil civil(Time t) {
  int64_t sec = t.us >= 0 ? t.us / 1000000 : (t.us - 999999) / 1000000;
  int micro = static_cast<int>(t.us - sec * 1000000);
  int64_t days = sec >= 0 ? sec / 86400 : (sec - 86399) / 86400;
  int64_t rem = sec - days * 86400;
  Civil c{};
  civil_from_days(days, &c.year, &c.month, &c.day);
  c.hour = static_cast<int>(rem / 3600);
  c.minute = static_cast<int>(rem / 60 % 60);
  c.second = static_cast<int>(rem % 60);
  c.micro = micro;
  return c;
}

Time make_time(int year, int month, int day, int hour, int minute, int second) {
  int64_t days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return Time{((days * 86400) + hour * 3600 + minute * 60 + second) * 1000000};
}

void put_date_time(std::string& s, Time t, char sep) {
  Civil c = civil(t);
  cat(s, Pad{c.year, 4, '0'}, '-', Pad{c.month, 2, '0'}, '-', Pad{c.day, 2, '0'}, sep);
  put_hms(s, t);
}

void put_hms(std::string& s, Time t) {
  Civil c = civil(t);
  cat(s, Pad{c.hour, 2, '0'}, ':', Pad{c.minute, 2, '0'}, ':', Pad{c.second, 2, '0'});
}

Rng Rng::for_part(uint64_t seed, uint64_t a, uint64_t b, uint64_t c) {
  Rng r(seed);
  uint64_t h = r.next();
  for (uint64_t v : {a, b, c}) {
    Rng step(h ^ (v * 0xff51afd7ed558ccdULL));
    h = step.next();
  }
  return Rng(h);
}

std::string with_commas(uint64_t v) {
  std::string digits = std::to_string(v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace ncclpm::bench
