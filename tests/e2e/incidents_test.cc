// tests/e2e/incidents_test.cc
//
// End to end on every bundled incident (fixtures/incidents/<what-happened>/):
// ingest the logs, check exact row counts against the facts in the fixture's
// README, diagnose, check the first finding against the ground truth, and
// compare the whole diagnosis with expected/findings.json and
// expected/report.txt. `scripts/update-goldens.sh` rewrites the goldens; the
// reviewer reads the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "ncclpm/diagnose/diagnose.h"
#include "ncclpm/ingest/ingest.h"
#include "ncclpm/report/report.h"
#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace ncclpm {
namespace {

struct Incident {
  const char* name;
  int64_t files;              ///< files found (README table)
  int64_t lines_read;         ///< log lines, all files: physical lines, plus one per progress bar with a line glued to it
  std::set<int> watchdog_ranks;  ///< ranks with a watchdog timeout record
  int64_t seq;                ///< the timed-out collective's seq (-1: none)
  const char* op_type;
  int64_t ranks_in_other_op;  ///< ranks whose record at that seq names another op (the diverged ones)
  int64_t collectives;        ///< NCCL COLL lines
  // Ground truth of the first finding:
  const char* category;       ///< "" for a healthy job: no root cause; "-": not a story, not checked
  std::vector<int> culprits;
  friend void PrintTo(const Incident& i, std::ostream* os) { *os << i.name; }
};

const Incident kIncidents[] = {
    {"save-phase-stall-torchrun-logdir", 20, 1122, {1, 2, 3, 4, 5, 6, 7}, 59709, "_ALLGATHER_BASE", 0, 0,
     "save_phase_stall", {0}},
    // 629 physical lines; four are read as two: a progress bar and the line glued to it (three coloured).
    {"fsdp-lora-allgather-timeout-console", 1, 633, {0, 1, 2, 3, 4, 6, 7}, 9713, "_ALLGATHER_BASE", 0, 0,
     "desync", {5}},
    {"oom-cascade-slurm", 2, 890, {0, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15}, 1204, "ALLREDUCE", 0, 0,
     "rank_crash_oom", {9}},
    {"ib-retry-exceeded-nccl-debug-file", 8, 360, {2}, 8841, "ALLREDUCE", 0, 0, "network_ib", {0, 1}},
    {"ray-zero3-generate-stall", 1, 166, {0, 2, 5}, 271845, "_ALLGATHER_BASE", 1, 0, "eval_generate_stall", {5}},
    {"openmpi-socket-error", 1, 126, {0, 1, 3}, 88, "BROADCAST", 0, 0, "network_socket", {1}},
    {"version-mismatch-pdsh", 1, 477, {}, -1, "", 0, 0, "version_mismatch", {}},
    {"healthy-run", 1, 536, {}, -1, "", 0, 416, "", {}},
    {"collective-mismatch-desync", 1, 1391, {0, 1, 2, 3}, 241, "ALLREDUCE", 1, 964, "desync", {2}},
    {"trl-packing-deadlock", 1, 193, {1, 2, 3}, 7, "_ALLGATHER_BASE", 0, 0, "packing_deadlock", {0}},
    {"ugly-input", 10, 1032, {0, 3, 9}, -1, "", 0, 260, "-", {}},
};

int64_t scalar(store::Connection& db, const std::string& sql) {
  auto v = db.scalar_int(sql);
  EXPECT_TRUE(v) << sql;
  return v ? *v : -1;
}

bool updating_goldens() {
  const char* env = std::getenv("NCCLPM_UPDATE_GOLDENS");
  return env != nullptr && std::string(env) == "1";
}

void compare_golden(const fs::path& path, const std::string& actual) {
  if (updating_goldens()) {
    testing::write_file(path, actual);
    return;
  }
  ASSERT_TRUE(fs::exists(path)) << path << " is missing: run scripts/update-goldens.sh";
  EXPECT_EQ(testing::read_file(path), actual) << "golden " << path << " differs; if the change is "
                                              << "intended, run scripts/update-goldens.sh and read the diff";
}

class Incidents : public ::testing::TestWithParam<Incident> {};

TEST_P(Incidents, IngestCountsDiagnosisAndGoldens) {
  const Incident& inc = GetParam();
  fs::path dir = testing::source_path(std::string("fixtures/incidents/") + inc.name);
  testing::TempDir t;
  ingest::Options o;
  o.paths = {dir / "logs"};
  o.db_path = t / "incidents.db";
  o.threads = 2;
  auto report = ingest::run(o);
  ASSERT_TRUE(report) << report.error().to_string();
  EXPECT_EQ(report->files_found, inc.files);
  EXPECT_EQ(report->totals.read, inc.lines_read);
  EXPECT_EQ(report->totals.read, report->totals.blank + report->totals.recognized + report->totals.unparsed);

  auto db = store::open_for_update(o.db_path);
  ASSERT_TRUE(db);
  EXPECT_EQ(scalar(*db, "SELECT sum(lines_read) FROM files"), inc.lines_read);
  EXPECT_EQ(scalar(*db, "SELECT count(*) FROM file_accounting WHERE NOT adds_up"), 0);
  EXPECT_EQ(scalar(*db, "SELECT count(*) FROM collectives"), inc.collectives);
  // Every unparsed line is kept: the table holds exactly the lines counted as unparsed.
  EXPECT_EQ(scalar(*db, "SELECT count(*) FROM unparsed_lines"), scalar(*db, "SELECT sum(lines_unparsed) FROM files"));

  std::set<int> ranks;
  auto stmt = db->prepare("SELECT rank, seq, op_type, timeout_ms FROM watchdog_timeouts");
  ASSERT_TRUE(stmt);
  while (stmt->step()) {
    ranks.insert(static_cast<int>(stmt->column_int(0)));
    EXPECT_FALSE(stmt->column_is_null(3)) << "every watchdog record has its timeout";
  }
  EXPECT_EQ(ranks, inc.watchdog_ranks);
  if (inc.seq >= 0) {
    EXPECT_EQ(scalar(*db, "SELECT count(DISTINCT rank) FROM watchdog_timeouts WHERE seq = " +
                              std::to_string(inc.seq) + " AND op_type = '" + inc.op_type + "'"),
              static_cast<int64_t>(inc.watchdog_ranks.size()) - inc.ranks_in_other_op);
  }

  auto rules = rules::RuleSet::load({rules::RuleSet::default_dir()});
  ASSERT_TRUE(rules);
  std::string job;
  auto job_id = diagnose::resolve_job(*db, "", &job);
  ASSERT_TRUE(job_id);
  auto d = diagnose::run(*db, *job_id, *rules);
  ASSERT_TRUE(d) << d.error().to_string();
  d->job = job;
  ASSERT_TRUE(diagnose::store_findings(*db, *d));

  if (std::string(inc.category) == "-") {
    // robustness input without an incident story: the goldens still pin its diagnosis
  } else if (std::string(inc.category).empty()) {
    EXPECT_FALSE(d->has_root_cause());
  } else {
    ASSERT_FALSE(d->findings.empty());
    const diagnose::Finding& top = d->findings.front();
    EXPECT_TRUE(top.root_cause);
    EXPECT_EQ(top.category, inc.category);
    EXPECT_EQ(top.culprit_ranks, inc.culprits);
    if (inc.seq >= 0 && top.collective) {
      EXPECT_EQ(top.collective->seq, inc.seq);
      EXPECT_EQ(top.collective->op_type, inc.op_type);
    }
  }
  report::RenderOptions ro{"incidents.db", true};
  compare_golden(dir / "expected/findings.json", report::render_json(*d, ro));
  compare_golden(dir / "expected/report.txt", report::render_text(*d, ro));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Incidents, ::testing::ValuesIn(kIncidents),
                         [](const ::testing::TestParamInfo<Incident>& info) {
                           std::string n = info.param.name;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(Incidents, SeveralJobsShareOneDatabase) {
  testing::TempDir t;
  for (const char* name : {"oom-cascade-slurm", "healthy-run"}) {
    ingest::Options o;
    o.paths = {testing::source_path(std::string("fixtures/incidents/") + name + "/logs")};
    o.db_path = t / "team.db";
    o.job_name = name;
    ASSERT_TRUE(ingest::run(o));
  }
  auto db = store::open_for_reading(t / "team.db");
  ASSERT_TRUE(db);
  EXPECT_EQ(*db->scalar_int("SELECT count(*) FROM jobs"), 2);
  EXPECT_EQ(*db->scalar_int("SELECT count(DISTINCT job_id) FROM files"), 2);
}

}  // namespace
}  // namespace ncclpm
