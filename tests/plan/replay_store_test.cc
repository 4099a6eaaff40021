// tests/plan/replay_store_test.cc
#include "ncclpm/plan/replay_store.h"

#include <gtest/gtest.h>

#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace ncclpm::plan {
namespace {

store::Connection fresh_db(const testing::TempDir& dir) {
  auto db = store::Connection::open(dir / "incidents.db", false);
  EXPECT_TRUE(db);
  EXPECT_TRUE(store::check_or_create_schema(*db, true));
  EXPECT_TRUE(db->exec(
      "INSERT INTO jobs(job_id, name, created_at, updated_at) VALUES(4, 'run-8812', 'x', 'x')"));
  EXPECT_TRUE(
      db->exec("INSERT INTO findings(finding_id, job_id, position, rule, category, json) VALUES(9, "
               "4, 1, 'ib-retry', "
               "'network_ib', '{\"id\": 9, \"rule\": \"ib-retry\", \"category\": \"network_ib\", "
               "\"collective\": "
               "{\"op\": \"ALLREDUCE\", \"numel_in\": 26214400, \"timeout_ms\": 600000}, "
               "\"replay\": {\"op\": "
               "\"allreduce\", \"count\": 26214400, \"dtype\": \"bfloat16\", \"redop\": \"sum\", "
               "\"nranks\": 16}}')"));
  return std::move(db).value();
}

TEST(ReplayStore, LoadsAFindingWithItsJob) {
  testing::TempDir dir;
  store::Connection db = fresh_db(dir);
  auto f = load_finding(db, 9);
  ASSERT_TRUE(f) << f.error().to_string();
  EXPECT_EQ(f->finding_id, 9);
  EXPECT_EQ(f->job_id, 4);
  EXPECT_EQ(f->job, "run-8812");
  EXPECT_EQ(f->category, "network_ib");
  ASSERT_TRUE(f->plan);
  EXPECT_EQ(f->plan->nranks, 16);
  EXPECT_EQ(f->plan->timeout_ms, 600000);
  auto missing = load_finding(db, 10);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "no finding 10");
}

TEST(ReplayStore, StoresAVerdictLinkedToTheFinding) {
  testing::TempDir dir;
  store::Connection db = fresh_db(dir);
  ReplayRecord r;
  r.finding_id = 9;
  r.job_id = 4;
  r.plan_json = "{\"op\":\"allreduce\"}";
  r.environment_json = "{}";
  r.devices_json = "[]";
  r.results_json = "{\"outcome\":\"timed_out\"}";
  r.nccl_version = "2.28.9";
  r.verdict =
      "does not complete within the 120 s deadline: the fabric fails by itself, as the finding "
      "says";
  r.confirms = true;
  r.exit_code = 3;
  auto id = store_replay(db, r);
  ASSERT_TRUE(id) << id.error().to_string();
  r.confirms.reset();
  auto second = store_replay(db, r);
  ASSERT_TRUE(second);
  auto q = db.prepare(
      "SELECT finding_id, job_id, json_extract(results, '$.outcome'), confirms, exit_code, "
      "nccl_version, created_at"
      " FROM replays ORDER BY replay_id");
  ASSERT_TRUE(q);
  ASSERT_TRUE(q->step());
  EXPECT_EQ(q->column_int(0), 9);
  EXPECT_EQ(q->column_int(1), 4);
  EXPECT_EQ(q->column_text(2), "timed_out");
  EXPECT_EQ(q->column_int(3), 1);
  EXPECT_EQ(q->column_int(4), 3);
  EXPECT_EQ(q->column_text(5), "2.28.9");
  EXPECT_EQ(q->column_text(6).size(), 20u);  // 2025-01-01T00:00:00Z
  ASSERT_TRUE(q->step());
  EXPECT_TRUE(q->column_is_null(3));
}

}  // namespace
}  // namespace ncclpm::plan
