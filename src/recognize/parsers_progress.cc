// src/recognize/parsers_progress.cc
//
// How far a training loop got, from the lines it prints about itself: tqdm
// bars (Transformers' Trainer, Accelerate and Lightning draw theirs with it,
// datasets' map too), the Trainer's metrics dicts, and Megatron-LM's
// iteration lines. A bar's redraws ('\r') reach here as their last state.
#include <re2/re2.h>

#include <cstdlib>

#include "match.h"
#include "ncclpm/recognize/parsers.h"
#include "ncclpm/util/text.h"

namespace ncclpm::recognize {
namespace {

double to_double(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

// "[10:00<12:13,  1.33s/it, loss=0.5]": seconds per step from the rate
// ("?it/s" before the first step says nothing).
double seconds_per_step(const std::string& value, const std::string& unit) {
  double v = to_double(value);
  if (v <= 0) return -1;
  return unit == "s/it" ? v : 1.0 / v;
}

std::optional<TrainingProgress> parse_tqdm(std::string_view body) {
  // label: percent|bar| n/total [elapsed<remaining, rate unit...]
  static const RE2 bar(
      R"re(^\s*(?:(.*?):?\s+)?(\d{1,3})%\|[^|]*\|\s*(\d+)/(\d+)\s*\[[0-9:]*(?:<[0-9:?]*)?(?:,\s*([0-9.]+|\?)\s*(s/it|it/s|[A-Za-z]+/s))?)re");
  std::string label, percent, n, total, rate, unit;
  if (!RE2::PartialMatch(sp(body), bar, &label, &percent, &n, &total, &rate, &unit)) return std::nullopt;
  TrainingProgress p;
  p.source = "tqdm";
  p.label = label;
  p.step = std::atoll(n.c_str());
  p.total = std::atoll(total.c_str());
  if (!rate.empty()) p.seconds_per_step = seconds_per_step(rate, unit);
  if (!unit.empty()) p.unit = unit == "s/it" || unit == "it/s" ? "it" : unit.substr(0, unit.size() - 2);
  return p;
}

std::optional<TrainingProgress> parse_hf_metrics(std::string_view body) {
  // The Trainer logs a dict per logging step; 'epoch' is in every one.
  static const RE2 epoch(R"re('epoch': ([0-9.]+)[,}])re");
  static const RE2 loss(R"re(\{'(?:train_)?loss': ([0-9.eE+-]+)[,}])re");
  std::string e, l;
  if (body.find("{'") == std::string_view::npos || !RE2::PartialMatch(sp(body), epoch, &e)) return std::nullopt;
  TrainingProgress p;
  p.source = "hf_metrics";
  p.epoch = to_double(e);
  if (RE2::PartialMatch(sp(body), loss, &l)) p.loss = to_double(l);
  return p;
}

std::optional<TrainingProgress> parse_megatron(std::string_view body) {
  static const RE2 iteration(R"re(\biteration\s+(\d+)/\s*(\d+)\s*\|)re");
  static const RE2 elapsed(R"re(elapsed time per iteration \(ms\): ([0-9.]+))re");
  static const RE2 loss(R"re(\blm loss: ([0-9.eE+-]+))re");
  std::string n, total, ms, l;
  if (!RE2::PartialMatch(sp(body), iteration, &n, &total)) return std::nullopt;
  TrainingProgress p;
  p.source = "megatron";
  p.step = std::atoll(n.c_str());
  p.total = std::atoll(total.c_str());
  if (RE2::PartialMatch(sp(body), elapsed, &ms)) p.seconds_per_step = to_double(ms) / 1000;
  if (RE2::PartialMatch(sp(body), loss, &l)) p.loss = to_double(l);
  return p;
}

}  // namespace

std::optional<TrainingProgress> parse_training_progress(std::string_view body) {
  if (body.find("%|") != std::string_view::npos) return parse_tqdm(body);
  if (body.find("'epoch': ") != std::string_view::npos) return parse_hf_metrics(body);
  if (body.find("iteration") != std::string_view::npos) return parse_megatron(body);
  return std::nullopt;
}

std::optional<std::string> parse_rank_timers_header(std::string_view body) {
  std::string_view t = util::trim(body);
  // A logger may put its own prefix before the report's first line.
  if (t.ends_with("(min, max) time across ranks (ms):")) return "minmax";
  if (t.ends_with("max time across ranks (ms):")) return "max";
  if (t.ends_with("times across ranks (ms):")) return "all";
  return std::nullopt;
}

bool parse_rank_timer_line(std::string_view body, std::string& timer, RankTimers& report) {
  static const RE2 rank_time(R"re(^rank\s+(\d{1,7}): ([0-9.]+)$)re");
  static const RE2 name(R"re(^([A-Za-z0-9_.-]+(?:[ /][A-Za-z0-9_.-]+)*):$)re");
  static const RE2 min_max(R"re(^(\S+) \.*: \(([0-9.]+), ([0-9.]+)\)$)re");
  static const RE2 max_only(R"re(^(\S+) \.*: ([0-9.]+)$)re");
  std::string_view t = util::trim(body);
  std::string rank, a, b, n;
  RankTimerValue v;
  if (report.option == "all" && !timer.empty() && RE2::FullMatch(sp(t), rank_time, &rank, &a)) {
    v.timer = timer;
    v.rank = std::atoi(rank.c_str());
    v.ms = to_double(a);
  } else if (report.option == "all" && RE2::FullMatch(sp(t), name, &n)) {
    timer = n;
    return true;
  } else if (report.option == "minmax" && RE2::FullMatch(sp(t), min_max, &n, &a, &b)) {
    v.timer = n;
    v.min_ms = to_double(a);
    v.max_ms = to_double(b);
  } else if (report.option == "max" && RE2::FullMatch(sp(t), max_only, &n, &a)) {
    v.timer = n;
    v.ms = to_double(a);
  } else {
    return false;
  }
  report.values.push_back(std::move(v));
  return true;
}

}  // namespace ncclpm::recognize
