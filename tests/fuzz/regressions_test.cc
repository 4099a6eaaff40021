// tests/fuzz/regressions_test.cc
//
// Every input under tests/fuzz-inputs/TARGET/ through the fuzz target of that
// name (fuzz/targets.h), in the ordinary suite: the hostile inputs written by
// hand and every input a fuzzer ever crashed on. Under `scripts/test.sh
// --sanitize` a leak or undefined behaviour fails it too; here it must not
// crash and must finish.
#include <gtest/gtest.h>

#include <filesystem>

#include "fuzz/targets.h"
#include "support/test_support.h"

namespace ncclpm {
namespace {

namespace fs = std::filesystem;

TEST(FuzzRegressions, EveryKeptInputRunsThroughItsTarget) {
  fs::path root = testing::source_path("tests/fuzz-inputs");
  size_t inputs = 0;
  for (const fuzz::Target& target : fuzz::targets()) {
    fs::path dir = root / target.name;
    ASSERT_TRUE(fs::is_directory(dir)) << dir << ": every target keeps its inputs here";
    for (const auto& entry : fs::directory_iterator(dir)) {
      SCOPED_TRACE(entry.path().string());
      std::string bytes = testing::read_file(entry.path());
      target.run(bytes);
      ++inputs;
    }
  }
  EXPECT_GE(inputs, fuzz::targets().size()) << "at least one input per target";
}

TEST(FuzzRegressions, EveryTargetHasADirectoryOfInputs) {
  for (const auto& entry : fs::directory_iterator(testing::source_path("tests/fuzz-inputs"))) {
    bool known = false;
    for (const fuzz::Target& target : fuzz::targets()) known = known || entry.path().filename() == target.name;
    EXPECT_TRUE(known) << entry.path() << " is no fuzz target's";
  }
}

}  // namespace
}  // namespace ncclpm
