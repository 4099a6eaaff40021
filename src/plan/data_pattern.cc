// src/plan/data_pattern.cc
#include "ncclpm/plan/data_pattern.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ncclpm/vocab/nccl_enums.h"

namespace ncclpm::plan {
namespace {

// A small float format: sign, `ebits` exponent bits (bias), `mbits` mantissa bits.
struct MiniFloat {
  int ebits, mbits, bias;
  bool ieee;  // all-ones exponent is inf/NaN (fp16, bf16, e5m2); e4m3 has only S.1111.111 = NaN
};
constexpr MiniFloat kHalf{5, 10, 15, true}, kBf16{8, 7, 127, true}, kE4m3{4, 3, 7, false},
    kE5m2{5, 2, 15, true};

uint32_t encode_mini(double v, MiniFloat f) {
  uint32_t sign = std::signbit(v) ? 1u : 0u;
  v = std::fabs(v);
  uint32_t bits = 0;
  if (v != 0) {
    int e = 0;
    double m = std::frexp(v, &e);  // v = m * 2^e, m in [0.5, 1)
    int exp = e - 1 + f.bias;      // biased exponent of the 1.f form
    if (exp <= 0) {                // subnormal: an integer multiple of the smallest step
      bits = static_cast<uint32_t>(std::nearbyint(std::ldexp(v, f.bias - 1 + f.mbits)));
    } else {
      auto frac = static_cast<uint32_t>(std::nearbyint(std::ldexp(m * 2 - 1, f.mbits)));
      if (frac == (1u << f.mbits)) {  // rounded up into the next binade
        frac = 0;
        ++exp;
      }
      bits = (static_cast<uint32_t>(exp) << f.mbits) | frac;
    }
  }
  return (sign << (f.ebits + f.mbits)) | bits;
}

double decode_mini(uint32_t bits, MiniFloat f) {
  uint32_t emask = (1u << f.ebits) - 1, mmask = (1u << f.mbits) - 1;
  bool negative = ((bits >> (f.ebits + f.mbits)) & 1u) != 0;
  uint32_t exp = (bits >> f.mbits) & emask, man = bits & mmask;
  double v;
  if (f.ieee && exp == emask)
    v = man == 0 ? INFINITY : NAN;
  else if (!f.ieee && exp == emask && man == mmask)
    v = NAN;
  else if (exp == 0)
    v = std::ldexp(static_cast<double>(man), 1 - f.bias - f.mbits);
  else
    v = std::ldexp(static_cast<double>((1u << f.mbits) | man),
                   static_cast<int>(exp) - f.bias - f.mbits);
  return negative ? -v : v;
}

template <typename T>
void put(std::byte* out, T v) {
  std::memcpy(out, &v, sizeof v);
}
template <typename T>
T get(const std::byte* in) {
  T v;
  std::memcpy(&v, in, sizeof v);
  return v;
}

// 1..7, well mixed over rank and index, so a misplaced block shows.
int pattern(int rank, int64_t index) {
  uint64_t x = static_cast<uint64_t>(index) * 0x9E3779B97F4A7C15ull +
               static_cast<uint64_t>(rank + 1) * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return static_cast<int>(x % 7) + 1;
}

// The exact result of the reductions at `global`: the pattern, except for avg
// on 8-bit integers, whose sum of nranks values must fit the type (NCCL sums,
// then divides).
int reduce_result(int redop, int datatype, int64_t global) {
  if (redop == 4 && (datatype == 0 || datatype == 1)) return 1;
  return pattern(-1, global);
}

// Reductions: the element's owner holds the result value, the others the
// neutral value, so the result is exact in every type.
int reduce_input(int redop, int datatype, int rank, int nranks, int64_t global) {
  bool owner = global % nranks == rank;
  int v = reduce_result(redop, datatype, global);
  switch (redop) {
    case 1:
      return owner ? v : 1;  // prod
    case 2:
      return owner ? v : 0;  // max
    case 3:
      return owner ? v : 8;  // min
    case 4:
      return v;  // avg: everyone the same value; the mean is that value
    default:
      return owner ? v : 0;  // sum
  }
}

bool is_float(int datatype) { return datatype >= 6; }

}  // namespace

void encode_value(int datatype, double value, std::byte* out) {
  switch (datatype) {
    case 0:
      put<int8_t>(out, static_cast<int8_t>(value));
      break;
    case 1:
      put<uint8_t>(out, static_cast<uint8_t>(value));
      break;
    case 2:
      put<int32_t>(out, static_cast<int32_t>(value));
      break;
    case 3:
      put<uint32_t>(out, static_cast<uint32_t>(value));
      break;
    case 4:
      put<int64_t>(out, static_cast<int64_t>(value));
      break;
    case 5:
      put<uint64_t>(out, static_cast<uint64_t>(value));
      break;
    case 6:
      put<uint16_t>(out, static_cast<uint16_t>(encode_mini(value, kHalf)));
      break;
    case 7:
      put<float>(out, static_cast<float>(value));
      break;
    case 8:
      put<double>(out, value);
      break;
    case 9:
      put<uint16_t>(out, static_cast<uint16_t>(encode_mini(value, kBf16)));
      break;
    case 10:
      put<uint8_t>(out, static_cast<uint8_t>(encode_mini(value, kE4m3)));
      break;
    case 11:
      put<uint8_t>(out, static_cast<uint8_t>(encode_mini(value, kE5m2)));
      break;
    default:
      break;
  }
}

double decode_value(int datatype, const std::byte* in) {
  switch (datatype) {
    case 0:
      return get<int8_t>(in);
    case 1:
      return get<uint8_t>(in);
    case 2:
      return get<int32_t>(in);
    case 3:
      return get<uint32_t>(in);
    case 4:
      return static_cast<double>(get<int64_t>(in));
    case 5:
      return static_cast<double>(get<uint64_t>(in));
    case 6:
      return decode_mini(get<uint16_t>(in), kHalf);
    case 7:
      return get<float>(in);
    case 8:
      return get<double>(in);
    case 9:
      return decode_mini(get<uint16_t>(in), kBf16);
    case 10:
      return decode_mini(get<uint8_t>(in), kE4m3);
    case 11:
      return decode_mini(get<uint8_t>(in), kE5m2);
    default:
      return NAN;
  }
}

int64_t send_elements(const CollectivePlan& p) { return p.send_count(); }
int64_t recv_elements(const CollectivePlan& p) { return p.recv_count(); }

bool receives_result(const CollectivePlan& p, int rank) {
  return p.op != Op::kReduce || rank == p.root;
}

int input_value(const CollectivePlan& p, int rank, int64_t i) {
  int n = std::max(1, p.nranks);
  switch (p.op) {
    case Op::kAllReduce:
    case Op::kReduce:
    case Op::kReduceScatter:
      return reduce_input(p.redop, p.datatype, rank, n, i);
    default:
      return pattern(rank, i);
  }
}

int expected_value(const CollectivePlan& p, int rank, int64_t i) {
  int n = std::max(1, p.nranks);
  int64_t c = p.count;
  switch (p.op) {
    case Op::kAllReduce:
    case Op::kReduce:
      return reduce_result(p.redop, p.datatype, i);
    case Op::kReduceScatter:
      return reduce_result(p.redop, p.datatype, static_cast<int64_t>(rank) * c + i);
    case Op::kAllGather:
      return pattern(static_cast<int>(i / c), i % c);
    case Op::kBroadcast:
      return pattern(p.root, i);
    case Op::kAllToAll: {
      int64_t from = i / c;  // block `from` came from rank `from`, which sent its block `rank`
      return pattern(static_cast<int>(from), static_cast<int64_t>(rank) * c + i % c);
    }
    case Op::kSendRecv:
      return pattern((rank - 1 + n) % n, i);
  }
  return 0;
}

void fill_send(const CollectivePlan& p, int rank, int64_t first, std::span<std::byte> out) {
  int size = vocab::datatype_size(p.datatype);
  if (size == 0) return;
  int64_t n = static_cast<int64_t>(out.size()) / size;
  for (int64_t k = 0; k < n; ++k)
    encode_value(p.datatype, input_value(p, rank, first + k), out.data() + k * size);
}

int64_t count_wrong(const CollectivePlan& p, int rank, int64_t first,
                    std::span<const std::byte> got) {
  int size = vocab::datatype_size(p.datatype);
  if (size == 0 || !receives_result(p, rank)) return 0;
  // avg on floats is a sum of x * (1/n): allow that rounding, relative to the
  // value, growing with the depth of the sum, and never half the value or
  // more, so a missing contribution or a zero still counts as wrong.
  double relative = 0;
  if (op_reduces(p.op) && p.redop == 4 && is_float(p.datatype)) {
    int mbits = p.datatype == 6    ? 10
                : p.datatype == 7  ? 23
                : p.datatype == 8  ? 52
                : p.datatype == 9  ? 7
                : p.datatype == 10 ? 3
                                   : 2;
    relative = std::min(0.45, std::ldexp(1.0, -mbits) * (1 + std::log2(std::max(1, p.nranks))));
  }
  int64_t n = static_cast<int64_t>(got.size()) / size, wrong = 0;
  for (int64_t k = 0; k < n; ++k) {
    double v = decode_value(p.datatype, got.data() + k * size);
    double want = expected_value(p, rank, first + k);
    if (!(std::fabs(v - want) <= relative * want)) ++wrong;  // NaN counts as wrong
  }
  return wrong;
}

}  // namespace ncclpm::plan
