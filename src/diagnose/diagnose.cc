// src/diagnose/diagnose.cc
//
// From facts to ordered findings: evaluate the rules, attach culprits,
// collective, evidence, advice and a replay plan to each fired rule, demote
// the findings that are a cascade of an earlier crash, order root causes first.
#include "ncclpm/diagnose/diagnose.h"

#include <re2/re2.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "alignment.h"
#include "describe.h"
#include "job_facts.h"
#include "job_phases.h"
#include "lead.h"
#include "ncclpm/store/schema.h"
#include "ncclpm/vocab/nccl_enums.h"
#include "rule_eval.h"
#include "silent_hang.h"

namespace ncclpm::diagnose {
namespace {

constexpr size_t kEvidencePerFinding = 6;

int severity_rank(const std::string& s) {
  return s == "critical" ? 0 : s == "error" ? 1 : s == "warning" ? 2 : 3;
}

bool about_a_collective(const std::string& category) {
  static const std::set<std::string> kCats = {
      "collective_timeout", "save_phase_stall", "eval_generate_stall", "packing_deadlock",
      "desync",             "data_imbalance",   "network_ib",          "network_socket",
      "watchdog_stuck"};
  return kCats.count(category) != 0;
}

bool is_crash(const std::string& category) {
  return category == "rank_crash" || category == "rank_crash_oom" || category == "gpu_hardware" ||
         category == "cuda_error";
}

// Evidence from as many different ranks as possible.
std::vector<Evidence> pick_evidence(const RuleHits& hits) {
  std::vector<Evidence> out;
  std::set<int> ranks;
  for (int pass = 0; pass < 2 && out.size() < kEvidencePerFinding; ++pass) {
    for (const Located& l : hits.lines) {
      if (out.size() >= kEvidencePerFinding) break;
      bool new_rank = ranks.insert(l.rank).second;
      bool taken = std::any_of(out.begin(), out.end(),
                               [&](const Evidence& e) { return e.file == l.file && e.line == l.line; });
      if (!taken && (pass == 1 || new_rank)) out.push_back(l.evidence());
    }
  }
  return out;
}

// The dtype the job used for this op, when COLL lines or Flight Recorder say.
Result<int> dtype_of_op(store::Connection& db, int64_t job_id, const std::string& op) {
  // COLL lines name the op as NCCL does ("AllGather"), Flight Recorder as
  // PyTorch does ("nccl:_all_gather_base"); compare canonical names.
  for (const char* sql :
       {"SELECT datatype FROM collective_summary WHERE job_id = ?1 AND lower(op) = ?2"
        " GROUP BY datatype ORDER BY sum(calls) DESC, datatype LIMIT 1",
        "SELECT datatype FROM flight_recorder_entries WHERE job_id = ?1 AND op = ?2 AND datatype IS NOT NULL"
        " GROUP BY datatype ORDER BY count(*) DESC, datatype LIMIT 1"}) {
    auto stmt = db.prepare(sql);
    if (!stmt) return stmt.take_error();
    if (Status s = stmt->bind_all({job_id, op}); !s) return s.take_error();
    if (stmt->step()) return static_cast<int>(stmt->column_int(0));
  }
  return -1;
}

CollectiveRef collective_of(const Alignment& a, int world_size, int datatype) {
  CollectiveRef c;
  c.pg = a.pg;
  c.seq = a.seq;
  c.op_type = a.op_type;
  c.op = vocab::canonical_op(a.op_type);
  c.numel_in = a.numel_in;
  c.numel_out = a.numel_out;
  c.timeout_ms = a.timeout_ms;
  c.nranks = world_size > 0 ? world_size : -1;
  c.hang_start_us = a.hang_start_ts;
  if (datatype >= 0) {
    c.dtype = vocab::datatype_name(datatype);
    int64_t n = std::max(a.numel_in, a.numel_out);
    if (n > 0) c.bytes = n * vocab::datatype_size(datatype);
  }
  return c;
}

std::optional<plan::CollectivePlan> replay_plan(const CollectiveRef& c, const JobFacts& f, int datatype) {
  auto p = plan::plan_from_work(c.op_type, c.numel_in, c.numel_out, std::max(c.nranks, 1));
  if (!p) return std::nullopt;
  if (datatype >= 0) {
    p->datatype = datatype;
  } else {
    p->datatype = 9;
    p->dtype_note = "bfloat16 assumed: the logs do not name the dtype (NCCL_DEBUG_SUBSYS=COLL would)";
  }
  p->timeout_ms = c.timeout_ms;
  for (int r = 0; r < c.nranks; ++r) p->ranks.push_back(r);
  for (const auto& [k, v] : f.nccl_env)
    if (k.rfind("NCCL_", 0) == 0) p->env[k] = v;
  return p;
}

// Whether `a` was printed before `b`: by time when both have one, else by
// line within one file; unknown (false) otherwise.
bool printed_before(const Evidence& a, const Evidence& b) {
  if (a.ts_us != 0 && b.ts_us != 0) return a.ts_us < b.ts_us;
  return a.file == b.file && a.line < b.line;
}

// A job stopped by its user at the terminal: the interrupt is what the user
// did, not what went wrong.
bool is_user_interrupt(const Finding& f) { return f.rule == "job-interrupted-by-user"; }

// The alignment's findings about ranks absent from the collective the others
// waited in (rules/collective/watchdog-timeout.toml).
bool names_ranks_missing_from_collective(const Finding& f) {
  return f.rule == "rank-never-issued-collective" || f.rule == "rank-never-reached-first-collective";
}

// A job stopped from outside (scancel, preemption, eviction, Ctrl-C) before
// any rank failed: the ranks' errors after it are what the stop did to them.
// Stopped by the scheduler after a failure instead, the stop is its end.
void stop_before_failures_leads(std::vector<Finding>& findings) {
  for (Finding& stop : findings) {
    if ((stop.rule != "job-stopped-from-outside" && !is_user_interrupt(stop)) || stop.evidence.empty()) continue;
    bool first = std::all_of(findings.begin(), findings.end(), [&](const Finding& f) {
      return &f == &stop || !f.root_cause || f.evidence.empty() ||
             printed_before(stop.evidence.front(), f.evidence.front());
    });
    bool others = std::any_of(findings.begin(), findings.end(),
                              [&](const Finding& f) { return &f != &stop && f.root_cause; });
    if (first && others) {
      stop.confidence = 0.9;
      stop.summary += " It came before any rank failed: the failures below followed from it.";
      continue;
    }
    // Stopped from outside after the job had failed (a hung job cancelled, or
    // killed at its time limit): the stop ended the failure, it did not cause it.
    if (stop.rule != "job-stopped-from-outside" || !stop.root_cause) continue;
    auto before_stop = [&](const Finding& f) {
      return &f != &stop && f.root_cause && !f.evidence.empty() && !is_user_interrupt(f) &&
             printed_before(f.evidence.front(), stop.evidence.front());
    };
    auto earlier = std::find_if(findings.begin(), findings.end(), before_stop);
    if (earlier != findings.end()) {
      stop.root_cause = false;
      stop.summary += " It came after the job had failed (" + earlier->category + ", " +
                      earlier->evidence.front().file + ":" + std::to_string(earlier->evidence.front().line) +
                      "): it ended that failure.";
    }
  }
}

// With no root cause but the user's interrupt, the logs' last lines before it
// may show the phase that hung; that phase then leads and the interrupt is
// its symptom.
Status add_where_the_logs_stop(store::Connection& db, int64_t job_id, const rules::RuleSet& rules,
                               std::vector<Finding>& findings) {
  bool explained = std::any_of(findings.begin(), findings.end(),
                               [](const Finding& f) { return f.root_cause && !is_user_interrupt(f); });
  if (explained) return Ok{};
  std::vector<Evidence> interrupts;
  for (const Finding& f : findings)
    if (is_user_interrupt(f)) interrupts.insert(interrupts.end(), f.evidence.begin(), f.evidence.end());
  auto silent = logs_end_in_stall_phase(db, job_id, rules, interrupts);
  if (!silent) return silent.take_error();
  if (!*silent) return Ok{};
  for (Finding& f : findings)
    if (is_user_interrupt(f)) f.root_cause = false;
  findings.push_back(std::move(**silent));
  return Ok{};
}

// The single rank below the highest one that waited that did not wait itself
// (ranks 1-3 timed out, or gave up on rank 0's ncclUniqueId: rank 0); -1 when
// none or several are missing.
int only_rank_missing(const JobFacts& f, const Alignment& a) {
  std::set<int> waited(a.victims);
  for (const TimeoutRecord& t : f.timeouts)
    if (t.at.rank >= 0) waited.insert(t.at.rank);
  waited.insert(f.awaited_rank0.begin(), f.awaited_rank0.end());
  if (waited.empty()) return -1;
  int missing = -1;
  for (int r = 0; r < *waited.rbegin(); ++r) {
    if (waited.count(r) != 0) continue;
    if (missing >= 0) return -1;
    missing = r;
  }
  return missing;
}

// A save, evaluation or generation marker printed without a rank was the
// main process's: the frameworks print these on global rank 0 only (HF
// Trainer's metrics and bars, Accelerate, Lightning, NeMo, torchtune,
// DeepSpeed's log_dist; fixtures/phase-markers/NOTES.md). That holds only
// while rank 0 is not among the ranks that waited in the collective.
bool main_process_was_in_phase(const std::string& category, const JobFacts& f, const Alignment& a) {
  if (category != "save_phase_stall" && category != "eval_generate_stall") return false;
  if (!a.has_timeouts || a.victims.count(0) != 0) return false;
  return std::none_of(f.timeouts.begin(), f.timeouts.end(), [](const TimeoutRecord& t) { return t.at.rank == 0; });
}

// A stall of a whole phase: what a rank did instead of the collective.
bool is_phase(const std::string& category) {
  return category == "save_phase_stall" || category == "eval_generate_stall" || category == "packing_deadlock" ||
         category == "data_imbalance" || category == "straggler";
}

// Whether two findings may be about the same rank: they name a common one,
// or one of them names none and they cannot be told apart.
bool may_share_culprit(const Finding& a, const Finding& b) {
  if (a.culprit_ranks.empty() || b.culprit_ranks.empty()) return true;
  return std::any_of(a.culprit_ranks.begin(), a.culprit_ranks.end(), [&](int r) {
    return std::find(b.culprit_ranks.begin(), b.culprit_ranks.end(), r) != b.culprit_ranks.end();
  });
}

// Whether two findings blame the same ranks: a rank in common, or neither
// names a rank and they name a host in common or no host at all.
bool same_culprits_named(const Finding& a, const Finding& b) {
  if (!a.culprit_ranks.empty() && !b.culprit_ranks.empty()) return may_share_culprit(a, b);
  if (!a.culprit_ranks.empty() || !b.culprit_ranks.empty()) return false;
  if (a.culprit_hosts.empty() && b.culprit_hosts.empty()) return true;
  return std::any_of(a.culprit_hosts.begin(), a.culprit_hosts.end(), [&](const std::string& h) {
    return std::find(b.culprit_hosts.begin(), b.culprit_hosts.end(), h) != b.culprit_hosts.end();
  });
}

// What a rank was doing instead of the collective (saving, evaluating,
// generating, preparing data) is why the others waited: the desync findings
// about that rank (the never-issued analysis, PyTorch's desync report) are how
// the phase shows in the collectives. One story, one root cause.
void phase_explains_desync(std::vector<Finding>& findings) {
  for (const Finding& phase : findings) {
    if (!phase.root_cause || !is_phase(phase.category)) continue;
    for (Finding& f : findings) {
      if (&f == &phase || !f.root_cause || f.category != "desync" || !may_share_culprit(phase, f)) continue;
      f.root_cause = false;
      f.summary += " This is the " + phase.category + " finding (" + phase.rule +
                   ") seen from the collectives, not a second cause.";
    }
  }
}

// "unhandled cuda error" is NCCL's result code for any of its CUDA calls that
// failed. A cuda-error finding made of that code alone yields to a finding
// whose own lines say which call failed and why (the driver refusing NVLS
// multicast, a build without this GPU's kernels, the GPU lost): that one is
// the cause, the code its report.
void named_cuda_cause_explains_result_code(std::vector<Finding>& findings) {
  static const RE2 kCode(R"((?i)unhandled cuda error|ncclUnhandledCudaError)");
  static const std::set<std::string> kNamedCauses = {"nccl_setup_error", "version_mismatch", "gpu_hardware"};
  for (Finding& code : findings) {
    if (code.rule != "cuda-error" || !code.root_cause || code.evidence.empty()) continue;
    bool only_the_code = std::all_of(code.evidence.begin(), code.evidence.end(),
                                     [](const Evidence& e) { return RE2::PartialMatch(e.text, kCode); });
    if (!only_the_code) continue;
    for (const Finding& named : findings) {
      if (!named.root_cause || !kNamedCauses.count(named.category) || named.rule == "earliest-error-line") continue;
      code.root_cause = false;
      code.summary += " NCCL's own words name the failed call: the " + named.category + " finding.";
      break;
    }
  }
}

// PyTorch's NCCL error names only NCCL's result code ("internal error",
// "invalid usage"); the "Last error:" under it is NCCL's (or its network
// plugin's) own words about what failed. When the catalogues name those words,
// that finding is the cause and the result code its symptom.
void nccl_words_explain_result_code(std::vector<Finding>& findings) {
  for (Finding& code : findings) {
    if (code.rule != "nccl-setup-error" || !code.root_cause) continue;
    for (const Finding& words : findings) {
      if (words.rule != "nccl-warning-catalogued" || !words.root_cause || words.category == code.category) continue;
      bool same_error = std::any_of(words.evidence.begin(), words.evidence.end(), [&](const Evidence& w) {
        return std::any_of(code.evidence.begin(), code.evidence.end(),
                           [&](const Evidence& c) { return c.file == w.file && c.line == w.line; });
      });
      if (!same_error) continue;
      code.root_cause = false;
      code.summary += " NCCL's own words under it name what failed: the " + words.category + " finding.";
      break;
    }
  }
}

// A failed IB work completion is what the peers of a faulty HCA see: a port
// that went down, a fatal device error, a queue pair's access violation or a
// changed GID table is reported as an async event on the host that has the
// device, and as failed completions on every host that talked to it. When
// both are logged, the device's event is the cause and names the host to
// look at: unless their times say otherwise, an event after the completions
// failed, or long before (a GID table that changed at start-up, hours before
// the completions: NCCL's retries give up within minutes of a fault).
constexpr int64_t kDeviceEventReachUs = 10LL * 60 * 1000 * 1000;

void device_event_explains_failed_completions(std::vector<Finding>& findings) {
  for (Finding& completion : findings) {
    if (completion.rule != "ib-completion-error" || !completion.root_cause) continue;
    for (const Finding& event : findings) {
      if (event.rule != "ib-async-event" || !event.root_cause) continue;
      bool timed = event.first_ts_us != 0 && completion.first_ts_us != 0;
      if (timed && (event.first_ts_us > completion.first_ts_us ||
                    completion.first_ts_us - event.first_ts_us > kDeviceEventReachUs))
        continue;
      completion.root_cause = false;
      completion.summary += " An IB device reported an event of its own (the ib-async-event finding): failed "
                            "completions are how its peers see it.";
      break;
    }
  }
}

// Untimed lines are ordered only within a file, and only within one process
// (two processes' lines in one console interleave as their buffers flush): a
// network error a process logged above its own crash came before it and is no
// echo of it (an IB completion error in the proxy thread, then the main
// thread's CUDA failure). True when that holds for every crash in `crashes`.
bool logged_before_each_crash_by_its_process(const Finding& net, const std::vector<const Finding*>& crashes) {
  if (crashes.empty()) return false;
  for (const Finding* c : crashes) {
    bool before = false;
    for (const Evidence& n : net.evidence) {
      if (n.ts_us != 0 || n.host.empty() || n.pid == 0) continue;
      for (const Evidence& e : c->evidence)
        if (e.ts_us == 0 && e.file == n.file && e.host == n.host && e.pid == n.pid && n.line < e.line) before = true;
    }
    if (!before) return false;
  }
  return true;
}

// After the sort by confidence: an untimed network error that a process
// logged above its own crash goes before the crash it preceded.
void network_error_logged_first_leads(std::vector<Finding>& findings) {
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding& f = findings[i];
    if (!f.root_cause || (f.category != "network_socket" && f.category != "network_ib")) continue;
    std::vector<const Finding*> ahead;
    size_t first = i;
    for (size_t j = 0; j < i; ++j) {
      if (!findings[j].root_cause || !is_crash(findings[j].category)) continue;
      ahead.push_back(&findings[j]);
      first = std::min(first, j);
    }
    if (!logged_before_each_crash_by_its_process(f, ahead)) continue;
    findings[i].summary += " Its process logged it before its own crash: it came first.";
    std::rotate(findings.begin() + static_cast<std::ptrdiff_t>(first), findings.begin() + static_cast<std::ptrdiff_t>(i),
                findings.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  }
}

// A crash logged without a rank (a framework's own line, a traceback pasted
// bare) was the failure of the worker its launcher says failed first.
void crashed_rank_from_launcher(std::vector<Finding>& findings, const JobFacts& facts) {
  if (!facts.launcher_first_failed) return;
  const Located& exit = *facts.launcher_first_failed;
  std::string host = exit.host;
  if (auto h = facts.host_of_rank.find(exit.rank); host.empty() && h != facts.host_of_rank.end()) host = h->second;
  for (Finding& f : findings) {
    if (!f.root_cause || !is_crash(f.category) || !f.culprit_ranks.empty()) continue;
    bool same_host = f.culprit_hosts.empty() || host.empty() ||
                     std::find(f.culprit_hosts.begin(), f.culprit_hosts.end(), host) != f.culprit_hosts.end();
    if (!same_host) continue;
    f.culprit_ranks = {exit.rank};
    if (f.culprit_hosts.empty() && !host.empty()) f.culprit_hosts = {host};
    f.summary += " Its line names no rank; the launcher reports rank " + std::to_string(exit.rank) +
                 " as the first to fail (" + exit.file + ":" + std::to_string(exit.line) + ").";
  }
}

void order_findings(std::vector<Finding>& findings) {
  stop_before_failures_leads(findings);
  nccl_words_explain_result_code(findings);
  named_cuda_cause_explains_result_code(findings);
  phase_explains_desync(findings);
  device_event_explains_failed_completions(findings);
  // A network error after another rank crashed is that crash seen from the
  // other side of the connection: a cascade, not a cause.
  int64_t first_crash = 0;
  bool crash = false;
  std::vector<const Finding*> crashes;
  for (const Finding& f : findings) {
    if (!is_crash(f.category) || !f.root_cause) continue;
    crash = true;
    crashes.push_back(&f);
    if (f.first_ts_us != 0 && (first_crash == 0 || f.first_ts_us < first_crash)) first_crash = f.first_ts_us;
  }
  for (Finding& f : findings) {
    // Ranks that "never issued" the collective because one of them crashed:
    // the crash is the cause, the missing collective its consequence.
    if (crash && names_ranks_missing_from_collective(f) && f.root_cause) {
      f.root_cause = false;
      f.summary += " The crash above explains it.";
    }
    bool network = f.category == "network_socket" || f.category == "network_ib";
    if (crash && network && f.root_cause && (first_crash == 0 || f.first_ts_us == 0 || f.first_ts_us >= first_crash) &&
        !logged_before_each_crash_by_its_process(f, crashes)) {
      f.root_cause = false;
      f.summary += " This follows a crash on another rank: a cascade, not a cause.";
    }
  }
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (a.root_cause != b.root_cause) return a.root_cause;
    if (a.confidence != b.confidence) return a.confidence > b.confidence;
    if ((a.first_ts_us == 0) != (b.first_ts_us == 0)) return a.first_ts_us != 0;
    if (a.first_ts_us != b.first_ts_us) return a.first_ts_us < b.first_ts_us;
    return severity_rank(a.severity) < severity_rank(b.severity);
  });
  network_error_logged_first_leads(findings);
  // A cause whose evidence a stronger cause already shows adds nothing of its
  // own: of the same category it goes (a generic exception rule under the OOM
  // rule); of another it is what the stronger one did, a symptom (the crash a
  // bus error in NCCL's shared memory caused). Symptoms stay: each carries its
  // own advice (the 10-minute FSDP timeout's, say).
  std::vector<Finding> kept;
  for (Finding& f : findings) {
    auto covering = std::find_if(kept.begin(), kept.end(), [&](const Finding& k) {
      return f.root_cause && k.root_cause && !f.evidence.empty() &&
             std::all_of(f.evidence.begin(), f.evidence.end(), [&](const Evidence& e) {
               return std::any_of(k.evidence.begin(), k.evidence.end(),
                                  [&](const Evidence& x) { return x.file == e.file && x.line == e.line; });
             });
    });
    if (covering != kept.end() && covering->category == f.category) continue;
    if (covering != kept.end()) {
      f.root_cause = false;
      f.summary += " The " + covering->category + " finding (" + covering->rule + ") explains it.";
    }
    // Two ways of seeing one cause (PyTorch's mismatch report and the
    // never-issued analysis of the same rank; two IB errors of one fabric
    // fault) tell one story: the stronger is the root cause, the other
    // corroborates it.
    auto same_story = std::find_if(kept.begin(), kept.end(), [&](const Finding& k) {
      return f.root_cause && k.root_cause && k.category == f.category && same_culprits_named(k, f);
    });
    if (same_story != kept.end()) {
      f.root_cause = false;
      f.summary += " It corroborates the " + same_story->rule + " finding: the same cause seen another way.";
    }
    kept.push_back(std::move(f));
  }
  findings = std::move(kept);
}

std::vector<RankState> rank_states(const JobFacts& f, const Alignment& a) {
  std::vector<RankState> out;
  std::set<int> crashed;
  for (const Failure& fl : f.failures)
    if (fl.at.rank >= 0 && fl.kind == "traceback" && !fl.cascade) crashed.insert(fl.at.rank);
  std::set<int> all(a.victims);
  all.insert(a.culprits.begin(), a.culprits.end());
  all.insert(crashed.begin(), crashed.end());
  for (int r : all) {
    RankState s;
    s.rank = r;
    auto h = f.host_of_rank.find(r);
    if (h != f.host_of_rank.end()) s.host = h->second;
    auto e = a.last_enqueued.find(r);
    if (e != a.last_enqueued.end()) s.last_enqueued = e->second;
    auto c = a.last_completed.find(r);
    if (c != a.last_completed.end()) s.last_completed = c->second;
    s.role = a.culprits.count(r) ? "culprit" : crashed.count(r) ? "crashed" : "victim";
    out.push_back(s);
  }
  return out;
}

// What a phase root cause says its culprit was doing.
std::string phase_words(const Finding& f) {
  if (f.rule == "data-preparation-outlasted-timeout") return "preparing data";
  if (f.category == "save_phase_stall") return "saving a checkpoint";
  if (f.category == "eval_generate_stall") return "evaluating or generating";
  if (f.category == "packing_deadlock") return "in TRL's packing=False start-up";
  if (f.category == "data_imbalance") return "done with its batches";
  if (f.category == "straggler") return "stepping slower than the others";
  return {};
}

// Each rank's phase when the job hung: what a phase root cause says of its
// culprits (a main process's save counts for rank 0), else where the rank
// waited, and how far its training loop had got (its last progress bar).
void add_phases(std::vector<RankState>& ranks, const std::vector<Finding>& findings, const JobFacts& f,
                const Alignment& a) {
  std::map<int, const ProgressBar*> bar_of;  // a rank's first loop's bar
  for (const ProgressBar& b : f.last_bars) bar_of.emplace(b.at.rank, &b);
  for (RankState& s : ranks) {
    std::string failed;  // a root cause of another kind naming the rank: it failed
    for (const Finding& fd : findings) {
      bool names_it = std::find(fd.culprit_ranks.begin(), fd.culprit_ranks.end(), s.rank) != fd.culprit_ranks.end();
      if (!fd.root_cause || !names_it) continue;
      if (s.phase = phase_words(fd); !s.phase.empty()) break;
      if (names_ranks_missing_from_collective(fd)) continue;  // said below: "not in <op> seq N"
      if (failed.empty() && fd.category == "desync") failed = "issued another collective";
      if (failed.empty()) failed = "failed (" + fd.category + ")";
    }
    if (s.phase.empty()) s.phase = failed;
    if (s.phase.empty() && s.role == "victim" && a.seq >= 0)
      s.phase = "waiting in " + a.op_type + " seq " + std::to_string(a.seq);
    if (s.phase.empty() && s.role == "culprit" && a.seq >= 0)
      s.phase = "not in " + a.op_type + " seq " + std::to_string(a.seq);
    if (s.phase.empty() && s.role == "crashed") s.phase = "crashed";
    if (auto it = bar_of.find(s.rank); it != bar_of.end()) {
      const ProgressBar& b = *it->second;
      std::string loop = b.label.empty() ? "" : " of '" + b.label + "'";
      s.phase += (s.phase.empty() ? "" : ", ") + std::string("at step ") + std::to_string(b.step) + "/" +
                 std::to_string(b.total) + loop;
    }
  }
}

// The hosts whose times ingest shifted onto the reference clock.
Result<std::vector<ClockSkew>> load_clock_skews(store::Connection& db, int64_t job_id) {
  auto stmt = db.prepare(
      "SELECT host, reference_host, offset_us, moments, basis FROM clock_offsets"
      " WHERE job_id = ? AND corrected = 1 ORDER BY abs(offset_us) DESC, host");
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({job_id}); !s) return s.take_error();
  std::vector<ClockSkew> out;
  std::optional<Error> error;
  while (stmt->step(&error))
    out.push_back({stmt->column_text(0), stmt->column_text(1), static_cast<double>(stmt->column_int(2)) / 1e6,
                   static_cast<int>(stmt->column_int(3)), stmt->column_text(4)});
  if (error) return std::move(*error);
  return out;
}

}  // namespace

std::string ClockSkew::words() const {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f s", offset_s < 0 ? -offset_s : offset_s);
  return "The clock of " + host + " runs " + seconds + (offset_s < 0 ? " behind " : " ahead of ") + reference +
         "'s (estimated from " + basis + ", " + std::to_string(moments) + (moments == 1 ? " moment" : " moments") +
         " all ranks shared); its times are shown on " + reference + "'s clock.";
}

bool Diagnosis::has_root_cause() const {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.root_cause; });
}

Result<int64_t> resolve_job(store::Connection& db, const std::string& name, std::string* resolved) {
  auto stmt = db.prepare(name.empty() ? "SELECT job_id, name FROM jobs ORDER BY updated_at DESC, job_id DESC LIMIT 1"
                                      : "SELECT job_id, name FROM jobs WHERE name = ?");
  if (!stmt) return stmt.take_error();
  if (!name.empty()) {
    if (Status s = stmt->bind_all({name}); !s) return s.take_error();
  }
  std::optional<Error> err;
  if (!stmt->step(&err)) {
    if (err) return *err;
    // A damaged file can lose its jobs without an error: look before saying there are none.
    auto check = db.prepare("PRAGMA quick_check(1)");
    if (check && check->step() && check->column_text(0) != "ok") return store::damaged_database(db);
    if (name.empty()) return Error::at(db.path(), "no job in this database", "run `ncclpm ingest LOG_DIR` first");
    return Error::at(db.path(), "no job named '" + name + "'",
                     "list them with: ncclpm query \"SELECT name FROM jobs\"");
  }
  if (resolved != nullptr) *resolved = stmt->column_text(1);
  return stmt->column_int(0);
}

Result<EvidenceGaps> evidence_gaps(store::Connection& db, int64_t job_id) {
  auto stmt = db.prepare("SELECT rel_path, status, coalesce(problem, ''), lines_read FROM files WHERE job_id = ?");
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({job_id}); !s) return s.take_error();
  EvidenceGaps g;
  std::optional<Error> err;
  while (stmt->step(&err)) {
    std::string status = stmt->column_text(1), problem = stmt->column_text(2);
    int64_t lines = stmt->column_int(3);
    ++g.files;
    g.lines_read += lines;
    if (status == "skipped") ++g.skipped;
    else if (status == "error") ++g.unreadable;
    else if (status == "partial") ++g.partial;
    else if (lines == 0) ++g.empty;
    if (!problem.empty() && g.examples.size() < 3) g.examples.push_back(stmt->column_text(0) + ": " + problem);
  }
  if (err) return *err;
  return g;
}

std::string EvidenceGaps::words() const {
  std::string out;
  auto add = [&](int64_t n, const char* what) {
    if (n > 0) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(unreadable, "unreadable");
  add(skipped, "skipped (not text)");
  add(partial, "partly readable");
  add(empty, "empty");
  out = "of " + std::to_string(files) + " files, " + out;
  for (size_t i = 0; i < examples.size(); ++i) out += (i == 0 ? " (" : "; ") + examples[i];
  if (!examples.empty()) out += ")";
  return out;
}

Result<Diagnosis> run(store::Connection& db, int64_t job_id, const rules::RuleSet& rules) {
  auto facts_or = load_facts(db, job_id);
  if (!facts_or) return facts_or.take_error();
  JobFacts& facts = *facts_or;
  Alignment a = align_collectives(facts);
  // Ranks blamed for their silence may have reported their timeout in a line
  // cut short: those lines are read only then.
  if (a.culprit_basis == "silent") {
    if (Status s = load_cut_timeout_ranks(db, facts); !s) return s.take_error();
    if (!facts.cut_timeout_ranks.empty()) a = align_collectives(facts);
  }
  auto scan = scan_lines(db, job_id, rules);
  if (!scan) return scan.take_error();
  auto ignored = ignored_nccl_settings(scan->nccl_assignments, facts);
  if (!ignored) return ignored.take_error();
  facts.ignored_settings = std::move(ignored).value();
  std::vector<ScannedLine> nccl_lines = std::move(scan->nccl_error_lines);
  auto fired = evaluate_rules(db, facts, a, rules, std::move(scan).value());
  if (!fired) return fired.take_error();

  Diagnosis d;
  d.job_id = job_id;
  d.world_size = facts.world_size;
  int datatype = -1;
  if (a.has_timeouts) {
    auto dt = dtype_of_op(db, job_id, vocab::canonical_op(a.op_type));
    if (!dt) return dt.take_error();
    datatype = *dt;
  }
  for (auto& [index, hits] : *fired) {
    const rules::Rule& rule = rules.rules()[index];
    Finding f;
    f.rule = rule.id;
    f.category = rule.category;
    f.title = rule.title;
    f.severity = rule.severity;
    f.confidence = rule.confidence;
    f.root_cause = rule.root_cause;
    bool own_culprits = !rule.builtin.empty() && builtin_names_culprits(rule.builtin);
    bool symptom_of_collective =
        !own_culprits && (!rule.root_cause || !rule.builtin.empty() || rule.scope == rules::Scope::kCulpritTail);
    std::set<int> culprits = symptom_of_collective && !a.culprits.empty() ? a.culprits : hits.ranks;
    if (hits.before_failure) culprits = hits.ranks;  // whoever printed what the job was doing then
    // What the job was doing, printed without a rank (a main process's bars):
    // the one rank that did not time out with the others was doing it.
    bool main_process_inferred = false;
    if (hits.before_failure && culprits.empty() && rule.scope == rules::Scope::kCulpritTail) {
      if (int r = only_rank_missing(facts, a); r >= 0) {
        culprits = {r};
      } else if (main_process_was_in_phase(rule.category, facts, a)) {
        culprits = {0};
        main_process_inferred = true;
      }
    }
    if (rule.category == "collective_timeout" || rule.category == "launcher_sigterm") culprits = a.culprits;
    if (rule.category == "desync" && rule.builtin.empty() && !facts.reported_culprits.empty())
      culprits = facts.reported_culprits;
    if (!hits.waited_for.empty()) culprits = hits.waited_for;  // whom the printers waited for
    culprits.erase(-1);
    if (culprits.empty() && rule.root_cause && !hits.before_failure) culprits = a.culprits;
    f.culprit_ranks.assign(culprits.begin(), culprits.end());
    f.culprit_ranks.erase(std::remove(f.culprit_ranks.begin(), f.culprit_ranks.end(), -1), f.culprit_ranks.end());
    for (int r : f.culprit_ranks) {
      auto h = facts.host_of_rank.find(r);
      if (h != facts.host_of_rank.end() &&
          std::find(f.culprit_hosts.begin(), f.culprit_hosts.end(), h->second) == f.culprit_hosts.end())
        f.culprit_hosts.push_back(h->second);
    }
    if (f.culprit_hosts.empty() && rule.root_cause) {
      for (const Located& l : hits.lines)
        if (!l.host.empty() && std::find(f.culprit_hosts.begin(), f.culprit_hosts.end(), l.host) == f.culprit_hosts.end())
          f.culprit_hosts.push_back(l.host);
    }
    // A timeout cut before it named its collective (no op, no seq) gives no
    // collective to show or replay.
    bool collective_named = !a.op_type.empty() || a.seq >= 0;
    if (a.has_timeouts && collective_named && about_a_collective(rule.category)) {
      f.collective = collective_of(a, facts.world_size, datatype);
      f.replay = replay_plan(*f.collective, facts, datatype);
    }
    f.evidence = pick_evidence(hits);
    for (const Evidence& e : f.evidence)
      if (e.ts_us != 0 && (f.first_ts_us == 0 || e.ts_us < f.first_ts_us)) f.first_ts_us = e.ts_us;
    f.summary = summarize(rule, f, hits, facts, a);
    if (main_process_inferred) {
      f.summary += " Rank 0 is inferred: the line names no rank, and frameworks print it on the main process only.";
      f.confidence = std::max(0.0, f.confidence - 0.1);
    }
    f.advice = fill_advice(rule.advice, f, hits, facts, a);
    d.findings.push_back(std::move(f));
  }
  // No signature explained the job: its earliest error line still leads
  // somewhere. Errors before any communicator formed: say it never started.
  if (Status s = add_catalogue_findings(db, facts, rules.catalog(), nccl_lines, d.findings); !s)
    return s.take_error();
  // Not an error line anywhere (but the user's Ctrl-C): where the logs stop
  // may still tell.
  if (Status s = add_where_the_logs_stop(db, job_id, rules, d.findings); !s) return s.take_error();
  crashed_rank_from_launcher(d.findings, facts);
  order_findings(d.findings);
  d.ranks = rank_states(facts, a);
  add_phases(d.ranks, d.findings, facts, a);
  // The timeline: what each root cause shows first, each rank's own failure,
  // and the first timeout; not the echoes (aborts after a timeout, SIGTERMs).
  auto add_to_timeline = [&d](const Evidence& e) {
    bool seen = std::any_of(d.timeline.begin(), d.timeline.end(),
                            [&](const Evidence& t) { return t.file == e.file && t.line == e.line; });
    if (!seen) d.timeline.push_back(e);
  };
  for (const Finding& f : d.findings)
    if (f.root_cause && !f.evidence.empty()) add_to_timeline(f.evidence.front());
  for (const Failure& fl : facts.failures) {
    if (d.timeline.size() >= 8) break;
    if (fl.cascade) continue;
    if (a.has_timeouts && fl.kind.ends_with(":SIGABRT")) continue;  // the watchdog taking its process down
    Evidence e = fl.at.evidence();
    e.text = fl.what;
    add_to_timeline(e);
  }
  if (a.has_timeouts && !a.evidence.empty()) {
    Evidence e = a.evidence.front().evidence();
    e.ts_us = a.first_timeout_ts != 0 ? a.first_timeout_ts : e.ts_us;
    add_to_timeline(e);
  }
  std::stable_sort(d.timeline.begin(), d.timeline.end(), [](const Evidence& x, const Evidence& y) {
    if ((x.ts_us == 0) != (y.ts_us == 0)) return x.ts_us != 0;
    return x.ts_us < y.ts_us;
  });
  auto skews = load_clock_skews(db, job_id);
  if (!skews) return skews.take_error();
  d.clock_skews = std::move(skews).value();
  auto phases = load_job_phases(db, job_id, rules);
  if (!phases) return phases.take_error();
  d.phases = std::move(phases).value();
  d.phase_at_hang = phase_at(d.phases, a.hang_start_ts);
  auto year = db.scalar_int("SELECT ref_year IS NOT NULL FROM jobs WHERE job_id = ?", {job_id});
  if (!year) return year.take_error();
  d.years_known = *year != 0;
  return d;
}

}  // namespace ncclpm::diagnose
