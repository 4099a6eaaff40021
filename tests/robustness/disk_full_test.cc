// tests/robustness/disk_full_test.cc
//
// A disk that fills up during an ingest: one clear line, exit 1, the previous
// database as it was, and no journal or temporary file left filling the disk.
// Needs a small tmpfs; skipped where the machine gives no mount rights.
#include <sys/mount.h>

#include <gtest/gtest.h>

#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace ncclpm {
namespace {

using testing::run_ncclpm;
using testing::TempDir;
using testing::write_file;

const std::string& kWatchdog = testing::kWatchdogLine;

class DiskFull : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(t_ / "disk");
    if (mount("tmpfs", (t_ / "disk").c_str(), "tmpfs", 0, "size=2m") != 0) GTEST_SKIP() << "no mount rights here";
    mounted_ = true;
    write_file(t_ / "small/rank1.log", kWatchdog);
    std::string big;
    for (int i = 0; i < 30000; ++i) big += kWatchdog;
    write_file(t_ / "big/rank1.log", big);  // ~8 MB of events: more than the disk holds
  }
  void TearDown() override {
    if (mounted_) umount((t_ / "disk").c_str());
  }
  std::vector<std::string> leftovers() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(t_ / "disk")) out.push_back(e.path().filename().string());
    return out;
  }
  TempDir t_;
  bool mounted_ = false;
};

TEST_F(DiskFull, AnIngestIntoAnExistingDatabaseLeavesItAsItWas) {
  fs::path db = t_ / "disk/x.db";
  ASSERT_EQ(run_ncclpm({"ingest", (t_ / "small").string(), "--db", db.string()}).exit_code, 0);
  auto r = run_ncclpm({"ingest", (t_ / "big").string(), "--db", db.string(), "--job", "big"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the disk is full"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("an existing database is as it was"), std::string::npos) << r.err;
  EXPECT_EQ(leftovers(), std::vector<std::string>{"x.db"}) << "no journal left filling the disk";
  auto c = store::open_for_reading(db);
  ASSERT_TRUE(c);
  EXPECT_EQ(*c->scalar_int("SELECT count(*) FROM events"), 1);
  EXPECT_EQ(*c->scalar_int("SELECT count(*) FROM jobs"), 1);
}

TEST_F(DiskFull, ANewDatabaseIsNotLeftHalfWritten) {
  auto r = run_ncclpm({"ingest", (t_ / "big").string(), "--db", (t_ / "disk/new.db").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the disk is full"), std::string::npos) << r.err;
  EXPECT_TRUE(leftovers().empty()) << "neither the database nor its temporary file";
}

}  // namespace
}  // namespace ncclpm
