// tests/robustness/damaged_db_test.cc
//
// A truncated or overwritten database is called damaged, by every command,
// with what to do; it is never written to.
#include <gtest/gtest.h>

#include <fstream>

#include "support/test_support.h"

namespace fs = std::filesystem;

namespace ncclpm {
namespace {

using testing::read_file;
using testing::run_ncclpm;
using testing::TempDir;
using testing::write_file;

class Damaged : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(t_ / "logs/rank1.log",
               testing::kWatchdogLine);
    ASSERT_EQ(run_ncclpm({"ingest", (t_ / "logs").string(), "--db", (t_ / "good.db").string()}).exit_code, 0);
    good_ = read_file(t_ / "good.db");
    ASSERT_GT(good_.size(), 4u * 4096);
  }
  fs::path with(const std::string& name, const std::string& bytes) {
    write_file(t_ / name, bytes);
    return t_ / name;
  }
  TempDir t_;
  std::string good_;
};

TEST_F(Damaged, ATruncatedDatabaseIsCalledDamagedByEveryCommand) {
  fs::path db = with("cut.db", good_.substr(0, 8192));
  std::string before = read_file(db);
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"diagnose", "--db", db.string()},
           {"query", "SELECT count(*) FROM events", "--db", db.string()},
           {"ingest", (t_ / "logs").string(), "--db", db.string(), "--job", "again"}}) {
    auto r = run_ncclpm(args);
    EXPECT_EQ(r.exit_code, 1) << args[0];
    EXPECT_NE(r.err.find("the database is damaged"), std::string::npos) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("new database"), std::string::npos) << args[0] << ": " << r.err;
  }
  EXPECT_EQ(read_file(db), before);
}

TEST_F(Damaged, AnOverwrittenPageIsCalledDamagedNotAnEmptyDatabase) {
  std::string bytes = good_;
  bytes.replace(3 * 4096, 4096, std::string(4096, '\xff'));
  fs::path db = with("hit.db", bytes);
  auto r = run_ncclpm({"diagnose", "--db", db.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the database is damaged"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("no job in this database"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ncclpm
