// src/recognize/parsers_progress.cc
//
// How far a training loop got, from the lines it prints about itself: tqdm
// bars (Transformers' Trainer, Accelerate and Lightning draw theirs with it,
// datasets' map too), the Trainer's metrics dicts, and Megatron-LM's
// iteration lines. A bar's redraws ('\r') reach here as their last state.
//
// These lines are most of a console, so they are read by hand, not by
// regular expressions: a capturing match costs more than the rest of the
// line's way into the database. Each reader's comment gives the expression
// it stands for; tests/recognize/parsers_progress_test.cc holds them to it.
#include <re2/re2.h>

#include <charconv>
#include <climits>
#include <cstdlib>

#include "match.h"
#include "ncclpm/recognize/parsers.h"
#include "ncclpm/util/text.h"

namespace ncclpm::recognize {
namespace {

// The classes of RE2's \s, \d and \w (ASCII; \s has no \v).
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_word(char c) { return is_digit(c) || is_letter(c) || c == '_'; }
bool is_decimal(char c) { return is_digit(c) || c == '.'; }
bool is_float(char c) { return is_decimal(c) || c == 'e' || c == 'E' || c == '+' || c == '-'; }

// A reading position in one line: each step says whether the text there
// fits, and moves past it only when it does.
struct Cursor {
  std::string_view s;
  size_t at = 0;

  bool eat(char c) {
    if (at >= s.size() || s[at] != c) return false;
    ++at;
    return true;
  }
  bool eat(std::string_view lit) {
    if (!s.substr(at).starts_with(lit)) return false;
    at += lit.size();
    return true;
  }
  // The longest run of `fits` here (greedy, as a regex's `x*`).
  template <class Fits>
  std::string_view run(Fits fits) {
    size_t from = at;
    while (at < s.size() && fits(s[at])) ++at;
    return s.substr(from, at - from);
  }
  void skip_spaces() { run(is_space); }
};

// strtod's value of a number as these lines print it. from_chars gives the
// same correctly rounded value without a copy and a locale; what it does not
// take (a leading '+', a value out of range, no number at all) goes to strtod.
double to_double(std::string_view s) {
  double v = 0;
  auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (error == std::errc{}) return v;
  return std::strtod(std::string(s).c_str(), nullptr);
}

// atoll's value of a run of digits, saturated as glibc's strtoll is.
int64_t to_count(std::string_view digits) {
  int64_t v = 0;
  for (char c : digits) {
    if (v > (LLONG_MAX - (c - '0')) / 10) return LLONG_MAX;
    v = v * 10 + (c - '0');
  }
  return v;
}

// The first place `lit` occurs that `fits` takes (given where it is and a
// cursor just past it), and that cursor as `fits` left it; nullopt when none does.
template <class Fits>
std::optional<Cursor> find_fitting(std::string_view s, std::string_view lit, Fits fits) {
  for (size_t at = s.find(lit); at != std::string_view::npos; at = s.find(lit, at + 1)) {
    Cursor c{s, at + lit.size()};
    if (fits(at, c)) return c;
  }
  return std::nullopt;
}

// "[10:00<12:13,  1.33s/it, loss=0.5]": seconds per step from the rate
// ("?it/s" before the first step says nothing).
double seconds_per_step(std::string_view value, std::string_view unit) {
  double v = to_double(value);
  if (v <= 0) return -1;
  return unit == "s/it" ? v : 1.0 / v;
}

// From a bar's percent on: `(\d{1,3})%\|[^|]*\|\s*(\d+)/(\d+)\s*\[[0-9:]*
// (?:<[0-9:?]*)?(?:,\s*([0-9.]+|\?)\s*(s/it|it/s|[A-Za-z]+/s))?`.
bool read_bar(Cursor c, TrainingProgress& p, std::string_view& rate, std::string_view& unit) {
  size_t digits = c.run(is_digit).size();
  if (digits < 1 || digits > 3 || !c.eat("%|")) return false;
  size_t bar_end = c.s.find('|', c.at);
  if (bar_end == std::string_view::npos) return false;
  c.at = bar_end + 1;
  c.skip_spaces();
  std::string_view n = c.run(is_digit);
  if (n.empty() || !c.eat('/')) return false;
  std::string_view total = c.run(is_digit);
  if (total.empty()) return false;
  c.skip_spaces();
  if (!c.eat('[')) return false;
  p.step = to_count(n);
  p.total = to_count(total);
  c.run([](char x) { return is_digit(x) || x == ':'; });
  if (c.eat('<')) c.run([](char x) { return is_digit(x) || x == ':' || x == '?'; });
  // The rate is optional: a bar whose rate does not read keeps none.
  if (!c.eat(',')) return true;
  c.skip_spaces();
  std::string_view value = c.run(is_decimal);
  if (value.empty() && c.eat('?')) value = "?";
  if (value.empty()) return true;
  c.skip_spaces();
  size_t from = c.at;
  if (!c.eat("s/it") && !c.eat("it/s") && !(!c.run(is_letter).empty() && c.eat("/s"))) return true;
  rate = value;
  unit = c.s.substr(from, c.at - from);
  return true;
}

// `^\s*(?:(.*?):?\s+)?` before the bar: the label is what stands before the
// first bar that reads after it, less one ':' (it holds no line break). As
// the optional group is tried first, a bar with a label wins over one at the
// line's start.
std::optional<TrainingProgress> parse_tqdm(std::string_view body) {
  auto read = [&](size_t at, std::string_view label) -> std::optional<TrainingProgress> {
    TrainingProgress p;
    std::string_view rate, unit;
    if (!read_bar(Cursor{body, at}, p, rate, unit)) return std::nullopt;
    p.source = "tqdm";
    p.label = label;
    if (!rate.empty()) p.seconds_per_step = seconds_per_step(rate, unit);
    if (!unit.empty()) p.unit = unit == "s/it" || unit == "it/s" ? "it" : unit.substr(0, unit.size() - 2);
    return p;
  };
  size_t lead = Cursor{body}.run(is_space).size();
  for (size_t d = body.find_first_of("0123456789", lead + 1); d != std::string_view::npos;
       d = body.find_first_of("0123456789", d + 1)) {
    if (!is_space(body[d - 1])) continue;
    size_t blank = d;
    while (is_space(body[blank - 1])) --blank;
    std::string_view label = body.substr(lead, blank - lead);
    if (label.ends_with(':')) label.remove_suffix(1);
    if (label.find('\n') != std::string_view::npos) break;
    if (auto p = read(d, label)) return p;
  }
  return read(lead, {});
}

// A number after `lit` (the first that has one), and the character it must
// be followed by when `then` is not empty.
template <class Fits>
std::optional<std::string_view> number_after(std::string_view body, std::string_view lit, Fits fits,
                                             std::string_view then = {}, bool word_start = false) {
  std::string_view value;
  auto reads = [&](size_t at, Cursor& c) {
    if (word_start && at > 0 && is_word(body[at - 1])) return false;
    value = c.run(fits);
    return !value.empty() && (then.empty() || (c.at < body.size() && then.find(body[c.at]) != std::string_view::npos));
  };
  if (!find_fitting(body, lit, reads)) return std::nullopt;
  return value;
}

std::optional<TrainingProgress> parse_hf_metrics(std::string_view body) {
  // The Trainer logs a dict per logging step; 'epoch' is in every one:
  // `'epoch': ([0-9.]+)[,}]`, and `\{'(?:train_)?loss': ([0-9.eE+-]+)[,}]`.
  if (body.find("{'") == std::string_view::npos) return std::nullopt;
  auto epoch = number_after(body, "'epoch': ", is_decimal, ",}");
  if (!epoch) return std::nullopt;
  TrainingProgress p;
  p.source = "hf_metrics";
  p.epoch = to_double(*epoch);
  std::string_view loss;
  auto reads_loss = [&](size_t, Cursor& c) {
    if (!c.eat("loss': ") && !c.eat("train_loss': ")) return false;
    loss = c.run(is_float);
    return !loss.empty() && c.at < body.size() && (body[c.at] == ',' || body[c.at] == '}');
  };
  if (find_fitting(body, "{'", reads_loss)) p.loss = to_double(loss);
  return p;
}

std::optional<TrainingProgress> parse_megatron(std::string_view body) {
  // `\biteration\s+(\d+)/\s*(\d+)\s*\|`
  std::string_view n, total;
  auto reads_iteration = [&](size_t at, Cursor& c) {
    if (at > 0 && is_word(body[at - 1])) return false;
    if (c.run(is_space).empty()) return false;
    n = c.run(is_digit);
    if (n.empty() || !c.eat('/')) return false;
    c.skip_spaces();
    total = c.run(is_digit);
    c.skip_spaces();
    return !total.empty() && c.eat('|');
  };
  if (!find_fitting(body, "iteration", reads_iteration)) return std::nullopt;
  TrainingProgress p;
  p.source = "megatron";
  p.step = to_count(n);
  p.total = to_count(total);
  // `elapsed time per iteration \(ms\): ([0-9.]+)`, `\blm loss: ([0-9.eE+-]+)`
  if (auto ms = number_after(body, "elapsed time per iteration (ms): ", is_decimal)) p.seconds_per_step = to_double(*ms) / 1000;
  if (auto loss = number_after(body, "lm loss: ", is_float, {}, true)) p.loss = to_double(*loss);
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
