// src/diagnose/silent_hang.cc
#include "silent_hang.h"

#include <algorithm>
#include <limits>

#include "job_facts.h"
#include "ncclpm/util/text.h"

namespace ncclpm::diagnose {
namespace {

// The rules that name what a rank printed last before it stalled a phase:
// those of the phase categories (start-up too: waiting for the other ranks to
// join) read from a culprit's tail. A rule that needs
// more of the job (`also`) or gives way to another (`absent`, such as "the
// job hung after training had finished", which a job that simply ended also
// prints last) is left out: the last line alone must say it.
bool names_a_stalled_phase(const rules::Rule& r) {
  return (r.category == "eval_generate_stall" || r.category == "save_phase_stall" || r.category == "init_failure") &&
         r.scope == rules::Scope::kCulpritTail && r.builtin.empty() && r.also.empty() && r.absent_fired.empty();
}

// The last physical line of a stored line (a traceback is stored whole), trimmed.
std::string last_physical_line(std::string_view text) {
  if (size_t nl = text.rfind('\n'); nl != std::string_view::npos) text.remove_prefix(nl + 1);
  return std::string(util::trim(text));
}

// A last line that is no message of its own but the start of one cut off:
// the start of the line before ("[rank3]: Waiting for" under "[rank3]:
// Waiting for the others"), or a word cut short ("INFO:r", "[rank7]:", "Fil").
bool is_cut_short(std::string_view last, std::string_view before) {
  constexpr size_t kLongestCutWord = 20;
  bool start_of_before = last.size() < before.size() && before.starts_with(last);
  bool cut_word = last.size() <= kLongestCutWord && last.find_first_of(" \t") == std::string_view::npos;
  return start_of_before || cut_word;
}

// What to change, by phase: the stall rule's own advice says it for start-up.
std::string phase_advice(const rules::Rule& rule) {
  if (rule.category == "save_phase_stall")
    return "Make every rank take part in the save (the state-dict gather is a collective), and write the file from "
           "rank 0 only.";
  if (rule.category == "init_failure") return std::string(util::trim(rule.advice));
  return "Keep the ranks in step while they evaluate or generate: the same number of batches and of generated tokens "
         "on every rank (generate(synced_gpus=True) under ZeRO-3 or FSDP), or generate with an inference engine "
         "outside the training process group.";
}

// `interrupt`: the line where the user stopped the job, when the file was
// read up to it.
Finding describe(const rules::Rule& rule, Evidence at, const Evidence* interrupt) {
  Finding f;
  f.rule = "logs-end-in-phase";
  f.category = rule.category;
  f.title = "The logs stop inside an unfinished phase, with no error";
  f.severity = "warning";
  f.confidence = 0.3;
  f.root_cause = true;
  if (at.rank >= 0) f.culprit_ranks = {at.rank};
  if (!at.host.empty()) f.culprit_hosts = {at.host};
  f.first_ts_us = at.ts_us;
  std::string where = interrupt == nullptr
                          ? "No error and no timeout were logged, and " + at.file + " ends at line " +
                                std::to_string(at.line)
                          : "The job was interrupted at the terminal (" + at.file + ":" +
                                std::to_string(interrupt->line) + ") with no error or timeout logged before, and " +
                                "the last line before the interrupt is line " + std::to_string(at.line);
  f.summary = where + ", inside a phase that was never finished: \"" + std::string(util::clip(at.text, 160)) +
              "\". If the job hung there, this is the stall " + rule.id + " names: " + rule.title + ".";
  f.advice =
      "Nothing in the logs reports the hang itself: no collective timed out (the timeout may be longer than the "
      "job ran, or the job was killed first). While it hangs, `py-spy dump --pid PID` on each rank shows where it "
      "waits. For the next run set TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 and a process-group "
      "timeout shorter than the run, so the hang is reported with the collective each rank waited in.\n" +
      phase_advice(rule);
  f.evidence.push_back(std::move(at));
  return f;
}

}  // namespace

Result<std::optional<Finding>> logs_end_in_stall_phase(store::Connection& db, int64_t job_id,
                                                       const rules::RuleSet& rules,
                                                       const std::vector<Evidence>& interrupts) {
  std::vector<size_t> candidates;
  for (size_t i = 0; i < rules.rules().size(); ++i)
    if (names_a_stalled_phase(rules.rules()[i])) candidates.push_back(i);
  if (candidates.empty()) return std::optional<Finding>();
  // Each file's last stored line before `before`, found through the
  // (file_id, line_no) indexes: a few rows per file, however many lines the
  // job stored.
  auto last_event = db.prepare(
      "SELECT end_line, coalesce(rank, -1), coalesce(host, ''), coalesce(ts_us, 0), text FROM events"
      " WHERE file_id = ?1 AND line_no < ?2 ORDER BY line_no DESC LIMIT 1");
  if (!last_event) return last_event.take_error();
  // The stored lines' last one before is in the last block that holds a
  // line before: the file's other blocks are not decoded.
  auto last_stored = [&](const char* table, const char* kind) {
    return db.prepare(std::string("SELECT line_no, coalesce(rank, -1), coalesce(host, ''), coalesce(ts_us, 0), text"
                                  " FROM ") + table + " WHERE file_id = ?1 AND line_no < ?2 AND line_no >= " +
                      last_blocks_bound_sql(kind, "?1", "?2 - 1", "1") + " ORDER BY line_no DESC LIMIT 1");
  };
  auto last_unparsed = last_stored("unparsed_lines", "unparsed");
  if (!last_unparsed) return last_unparsed.take_error();
  auto last_progress = last_stored("training_progress", "training_progress");
  if (!last_progress) return last_progress.take_error();
  auto last_channel = last_stored("nccl_channel_lines", "nccl_channel");
  if (!last_channel) return last_channel.take_error();
  auto last_network = last_stored("nccl_network_lines", "nccl_network");
  if (!last_network) return last_network.take_error();
  auto last_line = [&](int64_t file_id, const std::string& rel_path,
                       int64_t before) -> Result<std::optional<Evidence>> {
    std::optional<Evidence> last;
    for (store::Statement* stmt : {&*last_event, &*last_unparsed, &*last_progress, &*last_channel,
                                   &*last_network}) {
      stmt->reset();
      if (Status b = stmt->bind_all({file_id, before}); !b) return b.take_error();
      std::optional<Error> err;
      if (stmt->step(&err) && (!last || stmt->column_int(0) > last->line))
        last = Evidence{rel_path, stmt->column_int(0), stmt->column_text(4), static_cast<int>(stmt->column_int(1)),
                        stmt->column_text(2), stmt->column_int(3)};
      if (err) return *err;
    }
    return last;
  };
  std::optional<Finding> found;
  std::vector<std::pair<int64_t, std::string>> files;
  Status s = db.each_row("SELECT file_id, rel_path FROM files WHERE job_id = ?1 ORDER BY rel_path", {job_id},
                         [&](const store::Statement& row) { files.emplace_back(row.column_int(0), row.column_text(1)); });
  for (size_t k = 0; s && !found && k < files.size(); ++k) {
    // A file the user interrupted is read up to its first interrupt: what a
    // process printed after Ctrl-C is its shutdown, not where it hung.
    const Evidence* interrupt = nullptr;
    for (const Evidence& e : interrupts)
      if (e.file == files[k].second && (interrupt == nullptr || e.line < interrupt->line)) interrupt = &e;
    auto last = last_line(files[k].first, files[k].second,
                          interrupt != nullptr ? interrupt->line : std::numeric_limits<int64_t>::max());
    if (!last) return last.take_error();
    if (!*last) continue;
    Evidence at = std::move(**last);
    at.text = last_physical_line(at.text);
    // A file cut inside its last line (a paste's or a killed writer's end)
    // ends, whole, at the line before.
    auto before = last_line(files[k].first, files[k].second, at.line);
    if (!before) return before.take_error();
    if (*before) {
      std::string whole = last_physical_line((*before)->text);
      if (is_cut_short(at.text, whole)) {
        at = std::move(**before);
        at.text = std::move(whole);
      }
    }
    for (size_t i : candidates) {
      if (!rules.rule_matches(i, at.text) || rules.rule_excludes(i, at.text)) continue;
      found = describe(rules.rules()[i], std::move(at), interrupt);
      break;
    }
  }
  if (!s) return s.take_error();
  return found;
}

}  // namespace ncclpm::diagnose
