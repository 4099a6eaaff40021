// tests/robustness/read_only_test.cc
//
// An archived incident on a read-only file or filesystem can still be
// diagnosed: the findings are shown, not stored, and the database is not touched.
#include <sys/mount.h>

#include <gtest/gtest.h>

#include "ncclpm/diagnose/diagnose.h"
#include "ncclpm/rules/rule_set.h"
#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace ncclpm {
namespace {

using testing::read_file;
using testing::run_ncclpm;
using testing::TempDir;
using testing::write_file;

const std::string& kWatchdog = testing::kWatchdogLine;

TEST(ReadOnly, FindingsAreShownNotStoredOnAConnectionThatCannotWrite) {
  TempDir t;
  write_file(t / "logs/rank1.log", kWatchdog);
  ASSERT_EQ(run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()}).exit_code, 0);
  std::string before = read_file(t / "x.db");
  auto db = store::Connection::open(t / "x.db", true);  // what SQLite gives a read-only file or filesystem
  ASSERT_TRUE(db);
  auto rules = rules::RuleSet::load({rules::RuleSet::default_dir()});
  ASSERT_TRUE(rules);
  auto d = diagnose::run(*db, 1, *rules);
  ASSERT_TRUE(d) << d.error().to_string();
  ASSERT_TRUE(d->has_root_cause());
  auto stored = diagnose::store_findings_if_writable(*db, *d);
  ASSERT_TRUE(stored) << stored.error().to_string();
  EXPECT_FALSE(*stored);
  EXPECT_EQ(d->findings.front().finding_id, 0);
  db->close();
  EXPECT_EQ(read_file(t / "x.db"), before);
}

// The same through the command line, on a real read-only bind mount where the
// machine allows one (root in a VM or container with mount rights).
TEST(ReadOnly, DiagnoseOnAReadOnlyFilesystemShowsFindingsAndSaysSo) {
  TempDir t;
  write_file(t / "logs/rank1.log", kWatchdog);
  fs::create_directories(t / "archive");
  ASSERT_EQ(run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "archive/x.db").string()}).exit_code, 0);
  fs::create_directories(t / "ro");
  if (mount((t / "archive").c_str(), (t / "ro").c_str(), nullptr, MS_BIND, nullptr) != 0)
    GTEST_SKIP() << "no mount rights here";
  bool ro = mount(nullptr, (t / "ro").c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) == 0;
  auto r = ro ? run_ncclpm({"diagnose", "--db", (t / "ro/x.db").string()}) : testing::RunResult{};
  umount((t / "ro").c_str());
  if (!ro) GTEST_SKIP() << "no read-only remount here";
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ROOT CAUSE"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("the database is read-only: the findings are shown, not stored"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("ncclpm replay --op allreduce --count 1024"), std::string::npos)
      << "no stored finding to name: the collective is spelled out\n" << r.out;
}

}  // namespace
}  // namespace ncclpm
