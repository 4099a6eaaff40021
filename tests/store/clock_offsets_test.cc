// tests/store/clock_offsets_test.cc
//
// One time axis across hosts (src/store/clock_offsets.cc): the estimate from
// shared moments, and a two-host job whose second host's clock is set off by
// up to ten minutes either way, diagnosed the same as with true clocks.
#include "ncclpm/store/clock_offsets.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "ncclpm/ingest/ingest.h"
#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace ncclpm::store {
namespace {

TEST(ClockOffsetEstimate, EachHostAgainstTheReferenceOverTheirSharedMoments) {
  // b reads every moment 600 s late; c shares a moment with b only.
  std::vector<ClockSample> samples = {
      {"a", "watchdog pg 0 seq 7", 1'000'000'000}, {"a", "watchdog pg 0 seq 7", 1'000'300'000},
      {"b", "watchdog pg 0 seq 7", 1'600'100'000}, {"a", "init 0x1", 5'000'000},
      {"b", "init 0x1", 605'000'000},              {"b", "init 0x2", 700'000'000},
      {"c", "init 0x2", 690'000'000},
  };
  auto offsets = estimate_clock_offsets(samples, "a");
  ASSERT_EQ(offsets.size(), 2u);
  EXPECT_EQ(offsets[0].host, "b");
  EXPECT_EQ(offsets[0].reference, "a");
  // a's reading of seq 7 is the median of its two ranks (1000.15 s): 599.95 s; init: 600 s.
  EXPECT_EQ(offsets[0].offset_us, (599'950'000 + 600'000'000) / 2);
  EXPECT_EQ(offsets[0].moments, 2);
  EXPECT_EQ(offsets[0].basis, "communicator inits and watchdog timeouts");
  EXPECT_TRUE(offsets[0].corrected);
  EXPECT_EQ(offsets[1].host, "c");  // through b: b's offset, then c is 10 s behind b
  EXPECT_EQ(offsets[1].offset_us, offsets[0].offset_us - 10'000'000);
  EXPECT_EQ(offsets[1].basis, "communicator inits");
}

TEST(ClockOffsetEstimate, RoundingIsNotASkewAndOneHostHasNoOffset) {
  auto offsets = estimate_clock_offsets({{"a", "m", 10'000'000}, {"b", "m", 11'000'000}}, "a");
  ASSERT_EQ(offsets.size(), 1u);
  EXPECT_EQ(offsets[0].offset_us, 1'000'000);
  EXPECT_FALSE(offsets[0].corrected);  // second-resolution timestamps round by up to a second
  EXPECT_TRUE(estimate_clock_offsets({{"a", "m", 1}, {"a", "n", 2}}, "a").empty());
}

TEST(ClockOffsetEstimate, WithoutThePreferredHostTheBusiestHostIsTheReference) {
  auto offsets = estimate_clock_offsets(
      {{"a", "m", 0}, {"b", "m", 5'000'000}, {"b", "n", 5'000'000}, {"c", "n", 0}}, "rank0-host");
  ASSERT_EQ(offsets.size(), 2u);
  EXPECT_EQ(offsets[0].reference, "b");
  EXPECT_EQ(offsets[0].host, "a");
  EXPECT_EQ(offsets[0].offset_us, -5'000'000);
  EXPECT_EQ(offsets[1].host, "c");
}

// 2025-07-09 10:00:00 plus `s` seconds, as "HH:MM:SS" (the job stays in that day).
std::string clock_at(int s) {
  int t = 10 * 3600 + s;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", t / 3600, t / 60 % 60, t % 60);
  return buf;
}

// Eight ranks, node-a (ranks 0-3) and node-b (4-7), node-b's clock `skew_s`
// off. In true time: rank 6 hits an illegal memory access at 10:00:00, rank 1
// loses its connection to it at 10:00:04, and the other six time out in
// ALLREDUCE seq 42 ten minutes after entering it at about 10:00:02. Times are
// printed as NCCL 2.26+ (WARN lines) and c10 print them.
std::map<std::string, std::string> two_host_job(int skew_s) {
  std::map<std::string, std::string> files;
  for (int r = 0; r < 8; ++r) {
    bool b = r >= 4;
    int shift = b ? skew_s : 0;
    std::string host = b ? "node-b" : "node-a", pid = std::to_string(4100 + r), dev = std::to_string(r % 4);
    std::string prefix = host + ":" + pid + ":" + pid + " [" + dev + "] ";
    std::string text = prefix + "NCCL INFO comm 0x55d0c0de000" + std::to_string(r) + " rank " + std::to_string(r) +
                       " nranks 8 cudaDev " + dev + " nvmlDev " + dev + " busId 1b000 commId 0x9e3779b97f4a7c15"
                       " - Init COMPLETE\n";
    if (r == 6)
      text += "[2025-07-09 " + clock_at(shift) + "] " + prefix +
              "enqueue.cc:1637 NCCL WARN Cuda failure 'an illegal memory access was encountered'\n";
    if (r == 1)
      text += "[2025-07-09 " + clock_at(4) + "] " + prefix +
              "misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer node-b<45678>\n";
    if (r != 6) text += testing::watchdog_line(r, 42, clock_at(602 + shift) + ".250000000");
    files["rank" + std::to_string(r) + ".log"] = text;
  }
  return files;
}

// What a user reads first: each root cause's rule and culprits.
std::vector<std::string> root_causes(const diagnose::Diagnosis& d) {
  std::vector<std::string> out;
  for (const auto& f : d.findings) {
    if (!f.root_cause) continue;
    std::string s = f.rule + " ranks";
    for (int r : f.culprit_ranks) s += " " + std::to_string(r);
    for (const std::string& h : f.culprit_hosts) s += " " + h;
    out.push_back(s);
  }
  return out;
}

TEST(ClockSkew, UpToTenMinutesEitherWayIsEstimatedWithinASecondAndChangesNoFinding) {
  diagnose::Diagnosis truth = testing::diagnose_files(two_host_job(0));
  ASSERT_FALSE(truth.findings.empty());
  EXPECT_EQ(truth.findings.front().category, "cuda_error");
  EXPECT_EQ(truth.findings.front().culprit_ranks, std::vector<int>{6});
  EXPECT_TRUE(truth.clock_skews.empty());
  for (int skew : {-600, -37, 90, 600}) {
    SCOPED_TRACE("node-b's clock off by " + std::to_string(skew) + " s");
    diagnose::Diagnosis d = testing::diagnose_files(two_host_job(skew));
    // Uncorrected, node-b's crash would print after rank 1 lost its connection
    // to it (skew > 4 s), and the lost connection would read as a second cause.
    EXPECT_EQ(root_causes(d), root_causes(truth));
    ASSERT_FALSE(d.timeline.empty());
    EXPECT_EQ(d.timeline.front().rank, 6);  // the first failure, on one clock
    if (d.clock_skews.size() != 1) {
      ADD_FAILURE() << d.clock_skews.size() << " skewed hosts";
      continue;
    }
    EXPECT_EQ(d.clock_skews[0].host, "node-b");
    EXPECT_EQ(d.clock_skews[0].reference, "node-a");
    EXPECT_NEAR(d.clock_skews[0].offset_s, skew, 1.0);
  }
}

TEST(ClockSkew, ASecondIngestIntoTheJobShiftsFromThePrintedTimesNotTwice) {
  testing::TempDir t;
  std::map<std::string, std::string> files = two_host_job(600);
  for (const auto& [name, text] : files)
    testing::write_file(t / ((name == "rank7.log" ? "later/" : "first/") + name), text);
  for (const char* part : {"first", "later"}) {
    ingest::Options o;
    o.paths = {t / part};
    o.db_path = t / "j.db";
    o.job_name = "job";
    auto r = ingest::run(o);
    ASSERT_TRUE(r) << r.error().to_string();
  }
  auto db = open_for_reading(t / "j.db");
  ASSERT_TRUE(db) << db.error().to_string();
  auto offset = db->scalar_int("SELECT offset_us FROM clock_offsets WHERE host = 'node-b' AND corrected = 1");
  ASSERT_TRUE(offset);
  EXPECT_NEAR(static_cast<double>(*offset), 600e6, 1e6);
  // Rank 6's illegal memory access, printed at 10:10:00 on node-b, happened at 10:00:00.
  auto shown = db->scalar_int(
      "SELECT count(*) FROM events WHERE rank = 6 AND kind = 'nccl_warn'"
      " AND strftime('%H:%M:%S', ts_us / 1000000, 'unixepoch') = '10:00:00'");
  ASSERT_TRUE(shown);
  EXPECT_EQ(*shown, 1);
}

}  // namespace
}  // namespace ncclpm::store
