// src/diagnose/store_findings.cc
#include <ctime>

#include "ncclpm/diagnose/diagnose.h"
#include "ncclpm/report/report.h"

namespace ncclpm::diagnose {

Result<bool> store_findings_if_writable(store::Connection& db, Diagnosis& d) {
  if (sqlite3_db_readonly(db.raw(), "main") == 1) return false;
  Status s = store_findings(db, d);
  if (s) return true;
  // A writable file in a directory where the journal cannot be created.
  int code = sqlite3_errcode(db.raw()) & 0xff;
  if (code == SQLITE_READONLY || code == SQLITE_CANTOPEN) {
    for (Finding& f : d.findings) f.finding_id = 0;
    return false;
  }
  return s.take_error();
}

namespace {

// What each rank that matters was doing when the job hung, replaced with the findings.
Status store_rank_states(store::Connection& db, const Diagnosis& d) {
  auto del = db.prepare("DELETE FROM rank_states WHERE job_id = ?");
  if (!del) return del.take_error();
  if (Status s = del->run({d.job_id}); !s) return s;
  auto ins = db.prepare("INSERT INTO rank_states VALUES(?,?,?,?,?,?,?)");
  if (!ins) return ins.take_error();
  for (const RankState& r : d.ranks) {
    Status s = ins->run({d.job_id, int64_t{r.rank}, store::opt_text(r.host), store::opt_text(r.role),
                         store::opt_text(r.phase), store::opt_int(r.last_enqueued), store::opt_int(r.last_completed)});
    if (!s) return s;
  }
  return Ok{};
}

// The job's phases as the main process's markers lay them out, replaced with the findings.
Status store_job_phases(store::Connection& db, const Diagnosis& d) {
  auto del = db.prepare("DELETE FROM job_phases WHERE job_id = ?");
  if (!del) return del.take_error();
  if (Status s = del->run({d.job_id}); !s) return s;
  auto ins = db.prepare("INSERT INTO job_phases VALUES(?,?,?,?,?,?,?,?,?)");
  if (!ins) return ins.take_error();
  for (const JobPhase& p : d.phases) {
    bool at_hang = d.phase_at_hang && d.phase_at_hang->from_us == p.from_us && d.phase_at_hang->phase == p.phase;
    Status s = ins->run({d.job_id, p.phase, p.from_us, store::opt_int(p.to_us == 0 ? -1 : p.to_us), p.marker.file,
                         p.marker.line, store::opt_int(p.marker.rank), p.marker.text, int64_t{at_hang ? 1 : 0}});
    if (!s) return s;
  }
  return Ok{};
}

}  // namespace

Status store_findings(store::Connection& db, Diagnosis& d) {
  if (Status s = db.exec("BEGIN IMMEDIATE"); !s) return s;
  auto fail = [&](Status s) {
    (void)db.exec("ROLLBACK");
    return s;
  };
  // Replays of the old findings keep their plan and verdict but no longer
  // point at a finding: the new findings get new ids.
  auto detach = db.prepare(
      "UPDATE replays SET finding_id = NULL WHERE finding_id IN (SELECT finding_id FROM findings WHERE job_id = ?)");
  if (!detach) return fail(detach.take_error());
  if (Status s = detach->run({d.job_id}); !s) return fail(std::move(s));
  auto del = db.prepare("DELETE FROM findings WHERE job_id = ?");
  if (!del) return fail(del.take_error());
  if (Status s = del->run({d.job_id}); !s) return fail(std::move(s));
  auto ins = db.prepare(
      "INSERT INTO findings(job_id, position, rule, category, title, severity, confidence, root_cause,"
      " culprit_ranks, culprit_hosts, collective, evidence, advice, replay, json, created_at)"
      " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!ins) return fail(ins.take_error());
  std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  int position = 0;
  for (Finding& f : d.findings) {
    auto part = [&](auto write) {
      util::JsonWriter w(false);
      write(w);
      return w.str();
    };
    std::string ranks = part([&](util::JsonWriter& w) {
      w.begin_array();
      for (int r : f.culprit_ranks) w.value(r);
      w.end_array();
    });
    std::string hosts = part([&](util::JsonWriter& w) {
      w.begin_array();
      for (const auto& h : f.culprit_hosts) w.value(h);
      w.end_array();
    });
    Status s = ins->run({d.job_id, int64_t{++position}, f.rule, f.category, f.title, f.severity, f.confidence,
                         int64_t{f.root_cause}, ranks, hosts, store::Value(), store::Value(), f.advice,
                         store::Value(), store::Value(), std::string(when)});
    if (!s) return fail(std::move(s));
    f.finding_id = db.last_insert_id();
  }
  // With ids known, store each finding's full JSON (its replay command names the id).
  auto upd = db.prepare("UPDATE findings SET collective = ?, evidence = ?, replay = ?, json = ? WHERE finding_id = ?");
  if (!upd) return fail(upd.take_error());
  report::RenderOptions o;
  for (const Finding& f : d.findings) {
    util::JsonWriter w(false);
    report::write_finding_json(w, f, o);
    std::string json = w.str();
    Status s = upd->run({store::Value(), store::Value(), store::Value(), json, f.finding_id});
    if (!s) return fail(std::move(s));
  }
  auto fill = db.prepare(
      "UPDATE findings SET collective = json_extract(json, '$.collective'), evidence = json_extract(json, '$.evidence'),"
      " replay = json_extract(json, '$.replay') WHERE job_id = ?");
  if (!fill) return fail(fill.take_error());
  if (Status s = fill->run({d.job_id}); !s) return fail(std::move(s));
  if (Status s = store_rank_states(db, d); !s) return fail(std::move(s));
  if (Status s = store_job_phases(db, d); !s) return fail(std::move(s));
  return db.exec("COMMIT");
}

}  // namespace ncclpm::diagnose
