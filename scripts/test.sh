#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs every test
# and then every fuzz target briefly (scripts/fuzz.sh, clang + libFuzzer).
#   bash scripts/test.sh             Release with debug info, in build/
#   bash scripts/test.sh --sanitize  AddressSanitizer + UBSan, in build-asan/ (slower)
#   bash scripts/test.sh --tsan [CTEST ARGS]  ThreadSanitizer, in build-tsan/ (e.g. -R Ingest)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --browser
if [[ "${1:-}" == "--tsan" ]]; then
  # ThreadSanitizer over the tests that ingest (the parallel parsing threads,
  # the writer, two ingests into one database).
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNCCLPM_TSAN=ON -DNCCLPM_REPLAY=OFF >/dev/null
  cmake --build build-tsan
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
  ctest --test-dir build-tsan --output-on-failure -j 2 --timeout 900 "${@:2}"
  exit
fi
if [[ "${1:-}" == "--sanitize" ]]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNCCLPM_SANITIZE=ON >/dev/null
  cmake --build build-asan
  export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  ctest --test-dir build-asan --output-on-failure -j 2 --timeout 900
  exit
fi
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j 2
# Then each fuzz target for 30 s under ASan+UBSan, with a fixed seed so that
# every run explores the same inputs (longer runs: bash scripts/fuzz.sh 3600).
NCCLPM_FUZZ_SEED=1 bash scripts/fuzz.sh 30
