// src/vocab/nccl_enums.cc
#include "ncclpm/vocab/nccl_enums.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "ncclpm/util/text.h"

namespace ncclpm::vocab {
namespace {

struct TypeInfo {
  const char* name;
  int size;
};
constexpr std::array<TypeInfo, 12> kTypes = {{{"int8", 1},
                                              {"uint8", 1},
                                              {"int32", 4},
                                              {"uint32", 4},
                                              {"int64", 8},
                                              {"uint64", 8},
                                              {"float16", 2},
                                              {"float32", 4},
                                              {"float64", 8},
                                              {"bfloat16", 2},
                                              {"float8e4m3", 1},
                                              {"float8e5m2", 1}}};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::string datatype_name(int t) {
  if (t >= 0 && t < static_cast<int>(kTypes.size())) return kTypes[static_cast<size_t>(t)].name;
  return "type" + std::to_string(t);
}

int datatype_size(int t) {
  if (t >= 0 && t < static_cast<int>(kTypes.size())) return kTypes[static_cast<size_t>(t)].size;
  return 0;
}

std::optional<int> parse_datatype(std::string_view name) {
  if (auto n = util::parse_int(name)) {
    if (*n >= 0 && *n < static_cast<int64_t>(kTypes.size())) return static_cast<int>(*n);
    return std::nullopt;
  }
  std::string s = lower(name);
  static const std::pair<const char*, int> kAliases[] = {
      {"char", 0},     {"byte", 1},    {"bool", 1},    {"int", 2},      {"long", 4},
      {"half", 6},     {"fp16", 6},    {"float", 7},   {"fp32", 7},     {"double", 8},
      {"fp64", 8},     {"bf16", 9},    {"fp8e4m3", 10}, {"fp8e5m2", 11}, {"float8_e4m3fn", 10},
      {"float8_e5m2", 11}};
  for (size_t i = 0; i < kTypes.size(); ++i)
    if (s == kTypes[i].name) return static_cast<int>(i);
  for (const auto& [alias, t] : kAliases)
    if (s == alias) return t;
  return std::nullopt;
}

std::optional<int> datatype_from_torch(std::string_view torch_dtype) {
  // Flight Recorder prints c10 ScalarType names: Float, BFloat16, Half, Long, ...
  static const std::pair<const char*, int> kTorch[] = {
      {"Char", 0},  {"Byte", 1},   {"Bool", 1},     {"Int", 2},     {"Long", 4},
      {"Half", 6},  {"Float", 7},  {"Double", 8},   {"BFloat16", 9}, {"Float8_e4m3fn", 10},
      {"Float8_e5m2", 11}};
  for (const auto& [name, t] : kTorch)
    if (torch_dtype == name) return t;
  return parse_datatype(torch_dtype);
}

std::string redop_name(int op) {
  static const char* kOps[] = {"sum", "prod", "max", "min", "avg"};
  if (op >= 0 && op < 5) return kOps[op];
  return "premulsum" + std::to_string(op);
}

std::optional<int> parse_redop(std::string_view name) {
  std::string s = lower(name);
  static const char* kOps[] = {"sum", "prod", "max", "min", "avg"};
  for (int i = 0; i < 5; ++i)
    if (s == kOps[i]) return i;
  if (auto n = util::parse_int(s); n && *n >= 0 && *n < 5) return static_cast<int>(*n);
  return std::nullopt;
}

std::string result_name(int r) {
  static const char* kNames[] = {"ncclSuccess",        "ncclUnhandledCudaError", "ncclSystemError",
                                 "ncclInternalError",  "ncclInvalidArgument",    "ncclInvalidUsage",
                                 "ncclRemoteError",    "ncclInProgress",         "ncclTimeout"};
  if (r >= 0 && r < 9) return kNames[r];
  return "ncclResult" + std::to_string(r);
}

std::string ib_status_name(int64_t s) {
  static const char* kNames[] = {
      "IBV_WC_SUCCESS",          "IBV_WC_LOC_LEN_ERR",      "IBV_WC_LOC_QP_OP_ERR",
      "IBV_WC_LOC_EEC_OP_ERR",   "IBV_WC_LOC_PROT_ERR",     "IBV_WC_WR_FLUSH_ERR",
      "IBV_WC_MW_BIND_ERR",      "IBV_WC_BAD_RESP_ERR",     "IBV_WC_LOC_ACCESS_ERR",
      "IBV_WC_REM_INV_REQ_ERR",  "IBV_WC_REM_ACCESS_ERR",   "IBV_WC_REM_OP_ERR",
      "IBV_WC_RETRY_EXC_ERR",    "IBV_WC_RNR_RETRY_EXC_ERR", "IBV_WC_LOC_RDD_VIOL_ERR",
      "IBV_WC_REM_INV_RD_REQ_ERR", "IBV_WC_REM_ABORT_ERR",  "IBV_WC_INV_EECN_ERR",
      "IBV_WC_INV_EEC_STATE_ERR", "IBV_WC_FATAL_ERR",       "IBV_WC_RESP_TIMEOUT_ERR",
      "IBV_WC_GENERAL_ERR"};
  if (s >= 0 && s < 22) return kNames[s];
  return "IBV_WC_STATUS_" + std::to_string(s);
}

std::string canonical_op(std::string_view op) {
  std::string s = lower(op);
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  if (s.starts_with("nccl:")) s = s.substr(5);
  // PyTorch OpType and Flight Recorder profiling names.
  if (s.starts_with("allreduce") || s == "allreducecoalesced") return "allreduce";
  if (s == "barrier") return "barrier";
  if (s.starts_with("allgather") || s == "allgatherbase" || s == "allgatherintotensorcoalesced")
    return "allgather";
  if (s.starts_with("reducescatter")) return "reducescatter";
  if (s.starts_with("broadcast")) return "broadcast";
  if (s == "reduce") return "reduce";
  if (s.starts_with("alltoall")) return "alltoall";
  if (s.starts_with("send") || s.starts_with("recv")) return "sendrecv";
  if (s == "gather") return "gather";
  if (s == "scatter") return "scatter";
  return {};
}

}  // namespace ncclpm::vocab
