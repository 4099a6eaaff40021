// tests/support/query.cc
//
// Reading a test's incident database back (gtest binary only: it reports
// failures as test failures).
#include <gtest/gtest.h>

#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace ncclpm::testing {

int64_t query_int(const std::filesystem::path& db, const std::string& sql) {
  auto c = store::open_for_reading(db);
  EXPECT_TRUE(c) << db << ": " << (c ? "" : c.error().to_string());
  if (!c) return -1;
  auto n = c->scalar_int(sql);
  EXPECT_TRUE(n) << sql << ": " << (n ? "" : n.error().to_string());
  return n ? *n : -1;
}

}  // namespace ncclpm::testing
