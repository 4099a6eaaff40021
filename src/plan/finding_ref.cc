// src/plan/finding_ref.cc
#include "ncclpm/plan/finding_ref.h"

#include <simdjson.h>

#include <algorithm>

#include "ncclpm/vocab/nccl_enums.h"
#include "ncclpm/util/text.h"

namespace ncclpm::plan {
namespace {

using simdjson::dom::element;

std::string str(element e, const char* key) {
  std::string_view s;
  if (e[key].get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  return {};
}

// Integers, or -1 when absent or null ("not known" in ncclpm's C++).
int64_t num(element e, const char* key) {
  int64_t i = 0;
  if (e[key].get_int64().get(i) == simdjson::SUCCESS) return i;
  double d = 0;
  if (e[key].get_double().get(d) == simdjson::SUCCESS) return static_cast<int64_t>(d);
  return -1;
}

Result<CollectivePlan> parse_plan(element r) {
  CollectivePlan p;
  std::string op = str(r, "op");
  auto parsed_op = parse_op(op);
  if (!parsed_op) return Error::plain("replay plan names an unknown op " + util::quoted(op));
  p.op = *parsed_op;
  p.count = num(r, "count");
  if (p.count <= 0) return Error::plain("replay plan has no element count");
  std::string dtype = str(r, "dtype");
  auto t = vocab::parse_datatype(dtype);
  if (!t) return Error::plain("replay plan names an unknown dtype " + util::quoted(dtype));
  p.datatype = *t;
  p.dtype_note = str(r, "dtype_note");
  std::string redop = str(r, "redop");
  if (!redop.empty()) {
    auto o = vocab::parse_redop(redop);
    if (!o) return Error::plain("replay plan names an unknown redop " + util::quoted(redop));
    p.redop = *o;
  }
  p.root = std::max<int64_t>(0, num(r, "root"));
  p.nranks = static_cast<int>(std::max<int64_t>(0, num(r, "nranks")));
  simdjson::dom::object env;
  if (r["env"].get_object().get(env) == simdjson::SUCCESS) {
    for (auto field : env) {
      std::string_view v;
      if (field.value.get_string().get(v) == simdjson::SUCCESS)
        p.env[std::string(field.key)] = std::string(v);
    }
  }
  return p;
}

}  // namespace

Result<FindingRef> parse_finding_json(std::string_view json) {
  simdjson::dom::parser parser;
  element doc;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS)
    return Error::plain("finding is not valid JSON");
  FindingRef f;
  f.finding_id = std::max<int64_t>(0, num(doc, "id"));
  f.rule = str(doc, "rule");
  f.category = str(doc, "category");
  f.title = str(doc, "title");
  bool root = false;
  if (doc["root_cause"].get_bool().get(root) == simdjson::SUCCESS) f.root_cause = root;
  simdjson::dom::array arr;
  if (doc["culprit_ranks"].get_array().get(arr) == simdjson::SUCCESS) {
    for (element e : arr) {
      int64_t r = 0;
      if (e.get_int64().get(r) == simdjson::SUCCESS) f.culprit_ranks.push_back(static_cast<int>(r));
    }
  }
  if (doc["culprit_hosts"].get_array().get(arr) == simdjson::SUCCESS) {
    for (element e : arr) {
      std::string_view h;
      if (e.get_string().get(h) == simdjson::SUCCESS) f.culprit_hosts.emplace_back(h);
    }
  }
  element c;
  if (doc["collective"].get(c) == simdjson::SUCCESS && c.is_object()) {
    f.op_type = str(c, "op");
    f.numel_in = num(c, "numel_in");
    f.numel_out = num(c, "numel_out");
    f.timeout_ms = num(c, "timeout_ms");
  }
  element r;
  if (doc["replay"].get(r) == simdjson::SUCCESS && r.is_object()) {
    auto p = parse_plan(r);
    if (!p) return p.take_error();
    p->timeout_ms = f.timeout_ms;
    f.plan = std::move(p).value();
  }
  return f;
}

std::string count_source(const FindingRef& f) {
  if (!f.plan) return {};
  const CollectivePlan& p = *f.plan;
  if (f.numel_in > 0 && p.count == f.numel_in) return "NumelIn";
  if (f.numel_out > 0 && p.count == f.numel_out) return "NumelOut";
  if (p.nranks > 0 && f.numel_in > 0 && p.count * p.nranks == f.numel_in)
    return "NumelIn / " + std::to_string(p.nranks);
  if (p.nranks > 0 && f.numel_out > 0 && p.count * p.nranks == f.numel_out)
    return "NumelOut / " + std::to_string(p.nranks);
  return {};
}

}  // namespace ncclpm::plan
