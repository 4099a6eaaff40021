// tests/plan/data_pattern_test.cc
//
// The check data is verified against a slow host reference of every
// collective: fill each rank's send buffer, compute the receive buffers the way
// the op is defined, and count_wrong must find nothing, for every op, redop and
// datatype; one corrupted element must be found.
#include "ncclpm/plan/data_pattern.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ncclpm/vocab/nccl_enums.h"

namespace ncclpm::plan {
namespace {

using Buffer = std::vector<std::byte>;

double value_at(const CollectivePlan& p, const Buffer& b, int64_t i) {
  return decode_value(p.datatype, b.data() + i * vocab::datatype_size(p.datatype));
}

// One value rounded to the datatype, as each step of a reduction on the GPU is.
double in_type(int type, double v) {
  std::byte b[8];
  encode_value(type, v, b);
  return decode_value(type, b);
}

double reduce(int type, int redop, const std::vector<double>& v) {
  if (redop == 4 && type >= 6) {
    // Floating avg: NCCL pre-multiplies by 1/n, then sums, rounding in the type.
    double inv = in_type(type, 1.0 / static_cast<double>(v.size()));
    double r = in_type(type, v[0] * inv);
    for (size_t i = 1; i < v.size(); ++i) r = in_type(type, r + in_type(type, v[i] * inv));
    return r;
  }
  double r = v[0];
  for (size_t i = 1; i < v.size(); ++i) {
    switch (redop) {
      case 1:
        r *= v[i];
        break;
      case 2:
        r = std::max(r, v[i]);
        break;
      case 3:
        r = std::min(r, v[i]);
        break;
      default:
        r += v[i];
    }
  }
  return redop == 4 ? r / static_cast<double>(v.size()) : r;
}

// What NCCL computes, element by element, on the host.
std::vector<Buffer> reference(const CollectivePlan& p, const std::vector<Buffer>& send) {
  int n = p.nranks, size = vocab::datatype_size(p.datatype);
  int64_t c = p.count;
  std::vector<Buffer> recv(static_cast<size_t>(n),
                           Buffer(static_cast<size_t>(recv_elements(p) * size)));
  auto put = [&](int r, int64_t i, double v) {
    encode_value(p.datatype, v, recv[r].data() + i * size);
  };
  auto reduced = [&](int64_t i) {
    std::vector<double> v;
    for (int s = 0; s < n; ++s) v.push_back(value_at(p, send[s], i));
    return reduce(p.datatype, p.redop, v);
  };
  for (int r = 0; r < n; ++r) {
    for (int64_t i = 0; i < recv_elements(p); ++i) {
      switch (p.op) {
        case Op::kAllReduce:
          put(r, i, reduced(i));
          break;
        case Op::kReduce:
          if (r == p.root) put(r, i, reduced(i));
          break;
        case Op::kReduceScatter:
          put(r, i, reduced(r * c + i));
          break;
        case Op::kAllGather:
          put(r, i, value_at(p, send[i / c], i % c));
          break;
        case Op::kBroadcast:
          put(r, i, value_at(p, send[p.root], i));
          break;
        case Op::kAllToAll:
          put(r, i, value_at(p, send[i / c], r * c + i % c));
          break;
        case Op::kSendRecv:
          put(r, i, value_at(p, send[(r - 1 + n) % n], i));
          break;
      }
    }
  }
  return recv;
}

int64_t wrong_total(const CollectivePlan& p, const std::vector<Buffer>& recv) {
  int64_t w = 0;
  for (int r = 0; r < p.nranks; ++r) w += count_wrong(p, r, 0, recv[r]);
  return w;
}

TEST(ReplayData, ReferenceCollectivesPassTheCheckForEveryOpRedopAndType) {
  for (int nranks : {2, 3, 5, 8, 13})
    for (Op op : {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kBroadcast, Op::kReduce,
                  Op::kAllToAll, Op::kSendRecv}) {
      for (int redop = 0; redop < (op_reduces(op) ? 5 : 1); ++redop) {
        for (int type = 0; type < 12; ++type) {
          CollectivePlan p;
          p.op = op;
          p.redop = redop;
          p.datatype = type;
          p.nranks = nranks;
          p.root = nranks - 1;
          p.count = 37;
          int size = vocab::datatype_size(type);
          std::vector<Buffer> send;
          for (int r = 0; r < p.nranks; ++r) {
            send.emplace_back(static_cast<size_t>(send_elements(p) * size));
            fill_send(p, r, 0, send.back());
          }
          std::vector<Buffer> recv = reference(p, send);
          std::string what = std::string(op_name(op)) + " " + vocab::redop_name(redop) + " " +
                             vocab::datatype_name(type) + " on " + std::to_string(nranks) +
                             " ranks";
          EXPECT_EQ(wrong_total(p, recv), 0) << what;
          // Corrupt one element of the last rank that receives a result.
          int victim = p.op == Op::kReduce ? p.root : p.nranks - 1;
          encode_value(type, 0, recv[victim].data() + 5 * size);
          EXPECT_EQ(wrong_total(p, recv), 1) << what;
        }
      }
    }
}

TEST(ReplayData, ChecksChunksAtAnOffset) {
  CollectivePlan p;
  p.op = Op::kAllGather;
  p.datatype = 9;
  p.nranks = 4;
  p.count = 100;
  std::vector<Buffer> send;
  for (int r = 0; r < 4; ++r) {
    send.emplace_back(200);
    fill_send(p, r, 0, send.back());
  }
  Buffer all = reference(p, send)[2];
  std::span<const std::byte> tail(all.data() + 150 * 2, 250 * 2);
  EXPECT_EQ(count_wrong(p, 2, 150, tail), 0);
  EXPECT_GT(count_wrong(p, 2, 149, tail), 0);  // misplaced data is caught
}

TEST(ReplayData, EncodesKnownBitPatterns) {
  std::byte b[8];
  auto bits16 = [&](int type, double v) {
    encode_value(type, v, b);
    return static_cast<unsigned>(std::to_integer<unsigned>(b[0]) | std::to_integer<unsigned>(b[1])
                                                                       << 8);
  };
  auto bits8 = [&](int type, double v) {
    encode_value(type, v, b);
    return std::to_integer<unsigned>(b[0]);
  };
  EXPECT_EQ(bits16(6, 1.0), 0x3C00u);  // fp16
  EXPECT_EQ(bits16(6, 8.0), 0x4800u);
  EXPECT_EQ(bits16(6, -2.0), 0xC000u);
  EXPECT_EQ(bits16(9, 1.0), 0x3F80u);  // bf16
  EXPECT_EQ(bits16(9, 7.0), 0x40E0u);
  EXPECT_EQ(bits8(10, 1.0), 0x38u);  // e4m3
  EXPECT_EQ(bits8(10, 8.0), 0x50u);
  EXPECT_EQ(bits8(10, 448.0), 0x7Eu);  // largest e4m3
  EXPECT_EQ(bits8(11, 1.0), 0x3Cu);    // e5m2
  EXPECT_EQ(bits8(11, 2.0), 0x40u);
  b[0] = std::byte{0x7F};
  EXPECT_TRUE(std::isnan(decode_value(10, b)));  // e4m3 NaN
  b[0] = std::byte{0x7C};
  EXPECT_TRUE(std::isinf(decode_value(11, b)));  // e5m2 inf
  b[0] = std::byte{0x01};
  EXPECT_DOUBLE_EQ(decode_value(10, b), std::ldexp(1.0, -9));  // e4m3 smallest subnormal
  for (int type = 0; type < 12; ++type) {
    for (int v = 0; v <= 8; ++v) {
      encode_value(type, v, b);
      EXPECT_EQ(decode_value(type, b), v) << vocab::datatype_name(type);
    }
  }
}

TEST(ReplayData, ReduceLeavesNonRootsAlone) {
  CollectivePlan p;
  p.op = Op::kReduce;
  p.nranks = 4;
  p.root = 1;
  p.count = 8;
  EXPECT_TRUE(receives_result(p, 1));
  EXPECT_FALSE(receives_result(p, 0));
  Buffer garbage(32, std::byte{0xFF});
  EXPECT_EQ(count_wrong(p, 0, 0, garbage), 0);
}

}  // namespace
}  // namespace ncclpm::plan
