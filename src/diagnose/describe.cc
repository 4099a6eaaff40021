// src/diagnose/describe.cc
#include "describe.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>

#include "ncclpm/util/text.h"

namespace ncclpm::diagnose {

namespace {

std::string seconds(int64_t ms) {
  if (ms < 0) return "?";
  if (ms % 1000 == 0) return std::to_string(ms / 1000);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(ms) / 1000.0);
  return buf;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string hosts_of(const std::vector<int>& ranks, const JobFacts& f) {
  std::vector<std::string> hosts;
  for (int r : ranks) {
    auto it = f.host_of_rank.find(r);
    if (it != f.host_of_rank.end() && std::find(hosts.begin(), hosts.end(), it->second) == hosts.end())
      hosts.push_back(it->second);
  }
  return join(hosts, ", ");
}

std::string collective_words(const Alignment& a) {
  std::string s = a.op_type.empty() ? "a collective" : a.op_type;
  if (a.seq >= 0) s += " seq " + std::to_string(a.seq);
  if (!a.pg.empty() && a.pg != "default") s += " of process group " + a.pg;
  return s;
}

}  // namespace

// The ranks that timed out at another seq than the others, and where; with
// `direction`, whether each was behind or ahead of them.
std::string ranks_at_other_seqs(const Alignment& a, bool direction) {
  std::vector<std::string> at;
  for (const auto& [rank, seq] : a.other_seq)
    at.push_back("rank " + std::to_string(rank) + " at seq " + std::to_string(seq) +
                 (!direction ? "" : seq < a.seq ? " (behind)" : " (ahead)"));
  return join(at, ", ");
}

std::string summarize(const rules::Rule& rule, const Finding& f, const RuleHits& hits,
                      const JobFacts& facts, const Alignment& a) {
  std::string culprits = util::rank_ranges(f.culprit_ranks);
  std::vector<int> victims(a.victims.begin(), a.victims.end());
  const std::string& cat = rule.category;
  if (rule.builtin == "out-of-step") {
    return "The ranks were not in the same collective: rank " + util::rank_ranges(victims) +
           " timed out in " + collective_words(a) + " and " + ranks_at_other_seqs(a, false) +
           "; as many ranks are on each side, so the logs do not tell which side strayed.";
  }
  if (rule.builtin == "never-issued" && a.culprit_basis == "other_seq") {
    return "The ranks were not in the same collective: rank " + util::rank_ranges(victims) +
           " waited in " + collective_words(a) + ", while " + ranks_at_other_seqs(a, true) +
           " timed out in another. Rank " + culprits + " was out of step with the others.";
  }
  if (rule.builtin == "never-issued" || rule.builtin == "never-reached-first") {
    std::string basis =
        a.culprit_basis == "op_mismatch"       ? "at that seq it ran a different collective"
        : a.culprit_basis == "status"          ? "its last enqueued work is below that seq"
        : a.culprit_basis == "flight_recorder" ? "its Flight Recorder dump never enqueued it"
        : a.culprit_basis == "coll"            ? "it issued fewer NCCL calls than the others"
        : f.culprit_ranks.size() > 1           ? "they never reported the timeout the others hit"
                                               : "it never reported the timeout the others hit";
    std::string what = rule.builtin == "never-issued"
                           ? " never issued "
                           : " never reached the group's first collective, ";
    return "Rank " + culprits + what + collective_words(a) + " (" + basis + "); rank " +
           util::rank_ranges(victims) + " waited " + seconds(a.timeout_ms) + " s for it.";
  }
  if (rule.builtin == "all-stuck") {
    return "Every reporting rank enqueued " + collective_words(a) +
           " and none completed it: all ranks arrived, so the collective itself hung (network, "
           "NCCL or a GPU), not a missing rank.";
  }
  if (rule.builtin == "version-mismatch") {
    std::vector<std::string> versions;
    for (const auto& [v, lines] : facts.nccl_versions) {
      std::set<std::string> hosts;
      for (const auto& l : lines) hosts.insert(l.host.empty() ? l.file : l.host);
      versions.push_back(v + " on " + join(std::vector<std::string>(hosts.begin(), hosts.end()), ", "));
    }
    return "Ranks run different NCCL versions: " + join(versions, "; ") + ".";
  }
  if (rule.builtin == "uneven-batches" && facts.uneven_batches) {
    const UnevenBatches& u = *facts.uneven_batches;
    std::string loop = u.label.empty() ? "the same loop" : "'" + u.label + "'";
    std::string s = "Rank " + culprits + " had " + std::to_string(u.short_total) + " steps in " + loop +
                    " and finished them, while other ranks had " + std::to_string(u.long_total) +
                    " and steps left: the short rank went on alone to what follows the loop";
    if (a.has_timeouts) s += ", and rank " + util::rank_ranges(victims) + " waited in " + collective_words(a);
    return s + ".";
  }
  if (rule.builtin == "slow-host" && facts.slow_host) {
    const SlowHost& h = *facts.slow_host;
    char numbers[128];
    std::string who = h.host.empty() ? "Rank " + culprits : "The ranks on " + h.host + " (rank " + culprits + ")";
    if (!h.timer.empty()) {
      std::snprintf(numbers, sizeof numbers, "%.2f ms, %.0f%% slower than the other ranks' %.2f ms", h.seconds * 1000,
                    (h.seconds / h.others_seconds - 1) * 100, h.others_seconds * 1000);
      return who + " took " + numbers + " in Megatron's " + h.timer +
             " timer (its last report of every rank's times); every collective waits for the slowest.";
    }
    std::snprintf(numbers, sizeof numbers, "%.2f s per step, %.0f%% slower than the other ranks' %.2f s",
                  h.seconds, (h.seconds / h.others_seconds - 1) * 100, h.others_seconds);
    return who + " stepped at " + numbers + " (their progress bars' rates); every collective waits for the slowest.";
  }
  if (rule.builtin == "slowdown" && facts.slowdown) {
    const Slowdown& s = *facts.slowdown;
    char numbers[160];
    std::snprintf(numbers, sizeof numbers, "from %.2f s to %.2f s per step (%.1fx)", s.before_seconds,
                  s.after_seconds, s.after_seconds / s.before_seconds);
    std::string loop = s.label.empty() ? "its loop" : "'" + s.label + "'";
    std::string whose = s.rank >= 0 ? "Rank " + std::to_string(s.rank) + "'s " + loop : "The job's " + loop;
    std::string from = s.from_step >= 0 ? " from step " + std::to_string(s.from_step) : "";
    return whose + " slowed down " + numbers + from + " until the job failed: something degraded before the hang.";
  }
  if (rule.builtin == "fr-missing-ranks" && facts.fr_missing) {
    const FrMissingRanks& m = *facts.fr_missing;
    std::string op = m.op.empty() ? "" : " (" + m.op + ")";
    return "Not all ranks joined collective " + std::to_string(m.seq) + op + " of process group " + m.pg_id +
           ": rank " + culprits + " never enqueued it, rank " + util::rank_ranges(m.joined) +
           " did (their Flight Recorder dumps; PyTorch's fr_trace names the same missing ranks).";
  }
  if (rule.builtin == "fr-mismatch" && facts.fr_mismatch) {
    const FrMismatch& m = *facts.fr_mismatch;
    return "Collective " + std::to_string(m.seq) + " of process group " + m.pg_id + " differs between ranks: rank " +
           culprits + " called it with " + m.what + " " + m.found + " where rank " + std::to_string(m.reference_rank) +
           " called " + m.op + " with " + m.expected + " (their Flight Recorder dumps; PyTorch's fr_trace compares the "
           "ranks the same way).";
  }
  if (rule.builtin == "duplicate-gpu-init" && facts.duplicate_gpu) {
    const DuplicateGpu& d = *facts.duplicate_gpu;
    return "Ranks " + std::to_string(d.comm_ranks[0]) + " and " + std::to_string(d.comm_ranks[1]) +
           " of one communicator started their init on the same GPU (busId " + d.bus_id + ") of " + d.host +
           ", and neither finished it: NCCL refuses two ranks on one GPU (its own 'Duplicate GPU detected' "
           "warning is not in the logs).";
  }
  if (rule.builtin == "ignored-settings") {
    std::vector<std::string> reasons;
    for (const IgnoredSetting& s : facts.ignored_settings) reasons.push_back(s.reason);
    return "The job sets NCCL variables that its NCCL does not read: " + join(reasons, "; ") + ".";
  }
  if (cat == "collective_timeout" && a.has_timeouts && !victims.empty()) {
    std::string after = a.timeout_ms < 0 ? "" : " after " + seconds(a.timeout_ms) + " s";
    std::string s = "Rank " + util::rank_ranges(victims) + " timed out" + after + " in " + collective_words(a) + ".";
    if (!f.culprit_ranks.empty()) s += " They were waiting for rank " + culprits + ".";
    return s;
  }
  std::string where = culprits.empty() ? "" : " on rank " + culprits;
  std::string host = hosts_of(f.culprit_ranks, facts);
  if (!host.empty()) where += " (" + host + ")";
  // Every printer's rank, not only those of the first lines kept as evidence.
  std::set<int> waiters;
  for (int rank : hits.ranks)
    if (hits.waited_for.count(rank) == 0) waiters.insert(rank);
  if (!hits.waited_for.empty() && !waiters.empty())
    where = " on rank " + util::rank_ranges(std::vector<int>(waiters.begin(), waiters.end())) +
            ", which waited for rank " + culprits + (host.empty() ? "" : " (" + host + ")");
  std::string first = hits.lines.empty() ? "" : ": " + std::string(util::clip(hits.lines.front().text, 160));
  std::string s = rule.title + where + first;
  if ((cat == "save_phase_stall" || cat == "eval_generate_stall" || cat == "packing_deadlock" ||
       cat == "data_imbalance") && a.has_timeouts) {
    s += ". Meanwhile rank " + util::rank_ranges(victims) + " waited in " + collective_words(a) + " until the " +
         seconds(a.timeout_ms) + " s timeout";
  }
  return s + ".";
}

// "rank 3 on node7", "rank 3", "a rank on node7" or "a rank the logs do not
// name": the culprit as advice names it, without a placeholder's "(not in
// the logs)" in the middle of a sentence.
std::string culprit_words(const Finding& f) {
  std::string ranks = util::rank_ranges(f.culprit_ranks), hosts = join(f.culprit_hosts, ", ");
  if (!ranks.empty()) return "rank " + ranks + (hosts.empty() ? "" : " on " + hosts);
  return hosts.empty() ? "a rank the logs do not name" : "a rank on " + hosts;
}

// Rewrites the advice's phrases that name the culprit into culprit_words.
std::string name_the_culprit(std::string advice, const Finding& f) {
  std::string who = culprit_words(f), Who = who;
  Who[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(Who[0])));
  const std::pair<const char*, const std::string*> phrases[] = {
      {"Rank {culprit_ranks} on {culprit_hosts}", &Who}, {"rank {culprit_ranks} on {culprit_hosts}", &who},
      {"{culprit_hosts} (rank {culprit_ranks})", &who},  {"Rank {culprit_ranks}", &Who},
      {"rank {culprit_ranks}", &who}};
  for (const auto& [phrase, words] : phrases)
    for (size_t at = advice.find(phrase); at != std::string::npos; at = advice.find(phrase, at + words->size()))
      advice.replace(at, std::string_view(phrase).size(), *words);
  return advice;
}

std::string fill_advice(const std::string& template_advice, const Finding& f, const RuleHits& hits,
                        const JobFacts& facts, const Alignment& a) {
  const std::string advice = name_the_culprit(template_advice, f);
  auto or_unknown = [](const std::string& s) { return s.empty() ? std::string("(not in the logs)") : s; };
  std::vector<std::string> versions;
  for (const auto& [v, lines] : facts.nccl_versions) versions.push_back(v);
  int64_t timeout_s = a.timeout_ms > 0 ? a.timeout_ms / 1000 : 1800;
  std::map<std::string, std::string> values = {
      {"culprit_ranks", or_unknown(util::rank_ranges(f.culprit_ranks))},
      {"culprit_hosts", f.culprit_hosts.empty() ? "a host the logs do not name" : join(f.culprit_hosts, ", ")},
      {"victim_ranks", or_unknown(util::rank_ranges(std::vector<int>(a.victims.begin(), a.victims.end())))},
      {"seq", a.seq >= 0 ? std::to_string(a.seq) : "(not in the logs)"},
      {"op_type", or_unknown(a.op_type)},
      {"timeout_s", std::to_string(timeout_s)},
      {"suggested_timeout_s", std::to_string(std::max<int64_t>(3600, timeout_s * 2))},
      {"ifname", facts.interfaces.empty() ? "<interface>" : facts.interfaces.front()},
      {"ifnames", facts.interfaces.empty() ? "(not in the logs)" : join(facts.interfaces, ", ")},
      {"hca", facts.hcas.empty() ? "(not in the logs)" : join(facts.hcas, ",")},
      {"nccl_versions", or_unknown(join(versions, ", "))},
      {"version", or_unknown(hits.version)},
      {"job", facts.job},
      // The watchdog's own advice, whether or not another finding names whom the ranks waited for.
      {"waited_for", f.culprit_ranks.empty()
                         ? "no line says which rank the ranks in it waited for (every rank that logged was in it)"
                         : "the ranks in it waited for rank " + util::rank_ranges(f.culprit_ranks) +
                               "; fix what stopped that rank first"},
  };
  std::string out;
  for (size_t i = 0; i < advice.size(); ++i) {
    if (advice[i] == '{') {
      size_t close = advice.find('}', i);
      if (close != std::string::npos) {
        auto it = values.find(advice.substr(i + 1, close - i - 1));
        if (it != values.end()) {
          out += it->second;
          i = close;
          continue;
        }
      }
    }
    out += advice[i];
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

}  // namespace ncclpm::diagnose
