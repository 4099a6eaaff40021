// src/report/json_report.cc
//
// `diagnose --format json`: the public contract (shared/DESIGN.md). Field
// names and category values change only with a version bump of "schema".
#include <ctime>

#include "ncclpm/vocab/nccl_enums.h"
#include "ncclpm/report/report.h"
#include "ncclpm/util/text.h"

namespace ncclpm::report {

std::string format_time(int64_t ts_us) {
  if (ts_us == 0) return {};
  std::time_t t = static_cast<std::time_t>(ts_us / 1000000);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::gmtime(&t));
  return buf;
}

std::string format_time(int64_t ts_us, bool year_known) {
  std::string s = format_time(ts_us);
  return year_known || s.size() < 5 ? s : s.substr(5);
}

std::string phase_at_hang_words(const diagnose::Diagnosis& d) {
  if (!d.phase_at_hang) return {};
  const diagnose::JobPhase& p = *d.phase_at_hang;
  int64_t hang = 0;
  for (const auto& f : d.findings)
    if (f.collective && f.collective->hang_start_us != 0) {
      hang = f.collective->hang_start_us;
      break;
    }
  std::string who = p.marker.rank >= 0 ? "rank " + std::to_string(p.marker.rank) : "the main process";
  return "When the collective began to hang" + (hang != 0 ? " (" + format_time(hang, d.years_known) + ")" : std::string()) +
         ", the job was in " + p.phase + ": " + who + " printed '" +
         std::string(util::clip(util::trim(p.marker.text), 120)) + "' at " + format_time(p.from_us, d.years_known) +
         " (" + p.marker.file + ":" + std::to_string(p.marker.line) + ").";
}

std::string replay_command(const diagnose::Finding& f, const RenderOptions& o) {
  if (f.finding_id <= 0 && f.replay) {
    // Not stored (a read-only database): the collective spelled out.
    const plan::CollectivePlan& p = *f.replay;
    std::string cmd = std::string("ncclpm replay --op ") + plan::op_name(p.op) + " --count " + std::to_string(p.count) +
                      " --dtype " + vocab::datatype_name(p.datatype);
    if (plan::op_has_root(p.op)) cmd += " --root " + std::to_string(p.root);
    return cmd;
  }
  std::string cmd = "ncclpm replay --finding " + std::to_string(f.finding_id);
  if (!o.db_path.empty() && o.db_path != "incidents.db") cmd += " --db " + o.db_path;
  return cmd;
}

namespace {

void write_plan(util::JsonWriter& w, const plan::CollectivePlan& p, const diagnose::Finding& f,
                const RenderOptions& o) {
  w.begin_object();
  w.key("op").value(plan::op_name(p.op));
  w.key("count").value(p.count);
  w.key("dtype").value(vocab::datatype_name(p.datatype));
  if (!p.dtype_note.empty()) w.key("dtype_note").value(p.dtype_note);
  w.key("redop").value(vocab::redop_name(p.redop));
  w.key("nranks").value(p.nranks);
  w.key("bytes_per_rank").value(p.bytes_per_rank());
  w.key("env").begin_object();
  for (const auto& [k, v] : p.env) w.key(k).value(v);
  w.end_object();
  w.key("command").value(replay_command(f, o));
  w.key("nccl_tests_command").value(p.nccl_tests_command());
  w.end_object();
}

}  // namespace

void write_finding_json(util::JsonWriter& w, const diagnose::Finding& f, const RenderOptions& o) {
  w.begin_object();
  if (f.finding_id > 0) w.key("id").value(f.finding_id);
  w.key("rule").value(f.rule);
  w.key("category").value(f.category);
  w.key("title").value(f.title);
  w.key("severity").value(f.severity);
  w.key("confidence").value(f.confidence);
  w.key("root_cause").value(f.root_cause);
  w.key("summary").value(f.summary);
  w.key("culprit_ranks").begin_array();
  for (int r : f.culprit_ranks) w.value(r);
  w.end_array();
  w.key("culprit_hosts").begin_array();
  for (const auto& h : f.culprit_hosts) w.value(h);
  w.end_array();
  w.key("collective");
  if (f.collective) {
    const diagnose::CollectiveRef& c = *f.collective;
    w.begin_object();
    w.key("pg").value(c.pg);
    w.key("seq").value_or_null(c.seq);
    w.key("op").value(c.op_type);
    w.key("numel_in").value_or_null(c.numel_in);
    w.key("numel_out").value_or_null(c.numel_out);
    if (c.dtype.empty()) w.key("dtype").null(); else w.key("dtype").value(c.dtype);
    w.key("bytes").value_or_null(c.bytes);
    w.key("timeout_ms").value_or_null(c.timeout_ms);
    if (c.hang_start_us != 0) w.key("hang_start").value(format_time(c.hang_start_us));
    else w.key("hang_start").null();
    w.end_object();
  } else {
    w.null();
  }
  w.key("evidence").begin_array();
  for (const auto& e : f.evidence) {
    w.begin_object();
    w.key("file").value(e.file);
    w.key("line").value(e.line);
    w.key("rank").value_or_null(e.rank);
    if (e.ts_us != 0) w.key("time").value(format_time(e.ts_us));
    w.key("text").value(e.text);
    w.end_object();
  }
  w.end_array();
  w.key("advice").value(f.advice);
  w.key("replay");
  if (f.replay) write_plan(w, *f.replay, f, o); else w.null();
  w.end_object();
}

static void write_phase_json(util::JsonWriter& w, const diagnose::JobPhase& p) {
  w.begin_object();
  w.key("phase").value(p.phase);
  w.key("from").value(format_time(p.from_us));
  w.key("to");
  if (p.to_us != 0) w.value(format_time(p.to_us)); else w.null();
  w.key("marker").begin_object();
  w.key("file").value(p.marker.file);
  w.key("line").value(p.marker.line);
  w.key("rank").value_or_null(p.marker.rank);
  w.key("text").value(p.marker.text);
  w.end_object();
  w.end_object();
}

std::string render_json(const diagnose::Diagnosis& d, const RenderOptions& o) {
  util::JsonWriter w;
  w.begin_object();
  w.key("schema").value("ncclpm.diagnosis/1");
  w.key("job").value(d.job);
  w.key("world_size").value(d.world_size);
  w.key("root_cause_found").value(d.has_root_cause());
  w.key("findings").begin_array();
  for (const auto& f : d.findings) write_finding_json(w, f, o);
  w.end_array();
  w.key("ranks").begin_array();
  for (const auto& r : d.ranks) {
    w.begin_object();
    w.key("rank").value(r.rank);
    w.key("host").value(r.host);
    w.key("role").value(r.role);
    w.key("phase").value(r.phase);
    w.key("last_enqueued").value_or_null(r.last_enqueued);
    w.key("last_completed").value_or_null(r.last_completed);
    w.end_object();
  }
  w.end_array();
  w.key("phases").begin_array();
  for (const auto& p : d.phases) write_phase_json(w, p);
  w.end_array();
  w.key("phase_at_hang");
  if (d.phase_at_hang) write_phase_json(w, *d.phase_at_hang); else w.null();
  w.key("clock_skews").begin_array();
  for (const auto& c : d.clock_skews) {
    w.begin_object();
    w.key("host").value(c.host);
    w.key("reference").value(c.reference);
    w.key("offset_s").value(c.offset_s);
    w.key("moments").value(c.moments);
    w.key("basis").value(c.basis);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.str() + "\n";
}

}  // namespace ncclpm::report
