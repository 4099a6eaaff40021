// src/plan/replay_store.cc
#include "ncclpm/plan/replay_store.h"

#include <ctime>

namespace ncclpm::plan {

Result<FindingRef> load_finding(store::Connection& db, int64_t finding_id) {
  auto q = db.prepare(
      "SELECT f.job_id, f.json, j.name FROM findings f LEFT JOIN jobs j USING (job_id) WHERE "
      "f.finding_id = ?");
  if (!q) return q.take_error();
  if (Status s = q->bind_all({finding_id}); !s) return s.take_error();
  std::optional<Error> err;
  if (!q->step(&err)) {
    if (err) return *err;
    return Error::at(db.path(), "no finding " + std::to_string(finding_id),
                     "`ncclpm diagnose --db " + db.path() + "` lists the findings with their ids");
  }
  if (q->column_is_null(1)) {
    return Error::at(db.path(), "finding " + std::to_string(finding_id) + " has no stored JSON",
                     "run `ncclpm diagnose` again with this version of ncclpm");
  }
  auto f = parse_finding_json(q->column_text(1));
  if (!f) {
    Error e = f.take_error();
    return Error::at(db.path(), "finding " + std::to_string(finding_id) + ": " + e.message, e.hint);
  }
  f->finding_id = finding_id;
  f->job_id = q->column_int(0);
  if (!q->column_is_null(2)) f->job = q->column_text(2);
  return f;
}

Result<int64_t> store_replay(store::Connection& db, const ReplayRecord& r) {
  auto ins = db.prepare(
      "INSERT INTO replays(finding_id, job_id, created_at, plan, environment, devices, "
      "nccl_version, results,"
      " verdict, confirms, exit_code) VALUES(?,?,?,?,?,?,?,?,?,?,?)");
  if (!ins) return ins.take_error();
  std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  store::Value confirms;
  if (r.confirms) confirms = int64_t{*r.confirms ? 1 : 0};
  Status s =
      ins->run({r.finding_id > 0 ? store::Value(r.finding_id) : store::Value(),
                r.job_id > 0 ? store::Value(r.job_id) : store::Value(), std::string(when),
                r.plan_json, r.environment_json, r.devices_json, store::opt_text(r.nccl_version),
                r.results_json, r.verdict, confirms, int64_t{r.exit_code}});
  if (!s) return s.take_error();
  return db.last_insert_id();
}

}  // namespace ncclpm::plan
