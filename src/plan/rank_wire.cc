// src/plan/rank_wire.cc
#include "ncclpm/plan/rank_wire.h"

#include <cstring>
#include <string>

#include "ncclpm/util/text.h"

namespace ncclpm::plan {
namespace {

template <size_t N>
void put(char (&dst)[N], const std::string& s) {
  std::string_view cut = util::clip(s, N - 1);
  std::memcpy(dst, cut.data(), cut.size());
  dst[cut.size()] = '\0';
}

template <size_t N>
std::string take(const char (&src)[N]) {
  return std::string(src, strnlen(src, N));
}

}  // namespace

RankWire to_wire(const RankResult& r) {
  RankWire w;
  std::memset(&w, 0, sizeof w);
  w.magic = kRankWireMagic;
  w.rank = r.rank;
  w.device = r.gpu.device;
  w.outcome = static_cast<int32_t>(r.outcome);
  w.wrong = r.wrong;
  w.memory_bytes = r.gpu.memory_bytes;
  w.time_us = r.time_us;
  put(w.host, r.host);
  put(w.gpu_name, r.gpu.name);
  put(w.bus_id, r.gpu.bus_id);
  put(w.stage, r.stage);
  put(w.call, r.call);
  put(w.message, r.message);
  return w;
}

RankResult from_wire(const RankWire& w) {
  RankResult r;
  if (w.magic != kRankWireMagic) return r;
  r.reported = true;
  r.rank = w.rank;
  r.gpu.device = w.device;
  r.outcome = w.outcome >= 0 && w.outcome <= 3 ? static_cast<Outcome>(w.outcome) : Outcome::kFailed;
  r.wrong = w.wrong;
  r.gpu.memory_bytes = w.memory_bytes;
  r.time_us = w.time_us;
  r.host = take(w.host);
  r.gpu.name = take(w.gpu_name);
  r.gpu.bus_id = take(w.bus_id);
  r.stage = take(w.stage);
  r.call = take(w.call);
  r.message = take(w.message);
  return r;
}

}  // namespace ncclpm::plan
