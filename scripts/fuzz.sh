#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang, AddressSanitizer and UBSan
# into build-fuzz/ and runs each for SECONDS (default 30), starting from the
# fixtures as seeds and the corpus earlier runs grew (build-fuzz/corpus/).
# A crash, leak, timeout, memory blow-up or UB report fails the run; its input
# is kept under build-fuzz/artifacts/TARGET/: copy it to
# tests/fuzz-inputs/TARGET/ and the ordinary test suite replays it forever.
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]
# Targets: text_log elastic_error flight_recorder flight_recorder_pickle rules_file framer_lines.
# NCCLPM_FUZZ_SEED=N fixes libFuzzer's random seed (scripts/test.sh uses 1, so
# CI explores the same inputs on every run); by default each run differs.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(text_log elastic_error flight_recorder flight_recorder_pickle rules_file framer_lines)

bash scripts/install-deps.sh --fuzz
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNCCLPM_FUZZ=ON -DNCCLPM_TESTS=OFF -DNCCLPM_REPLAY=OFF >/dev/null
cmake --build build-fuzz --target "${targets[@]/#/fuzz_}"

# Seeds: what each target reads in real life, from the repository's fixtures
# (small files only; the fuzzer mutates inputs of up to 32 KiB, where the
# framing and parsing bugs show, faster than long ones).
seed_files() {
  case "$1" in
    text_log|framer_lines)
      find fixtures/incidents fixtures/field -type f -path '*/logs/*' -size -256k ! -name '*.json' ;;
    elastic_error) find fixtures tests -type f -name 'error*.json' -size -256k ;;
    flight_recorder) find fixtures tests -type f -name '*trace*.json' -size -256k ;;
    flight_recorder_pickle) find fixtures/flight-recorder -type f -name 'nccl_trace_rank_*' ! -name '*.json' ;;
    rules_file) find rules fixtures/bad_rules -type f -name '*.toml' ;;
  esac
}

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
printf '%-16s %12s %10s %s\n' target executions exec/s result >build-fuzz/fuzz-summary.txt
for t in "${targets[@]}"; do
  seeds=build-fuzz/seeds/$t corpus=build-fuzz/corpus/$t artifacts=build-fuzz/artifacts/$t
  rm -rf "$seeds"
  mkdir -p "$seeds" "$corpus" "$artifacts" tests/fuzz-inputs/"$t"
  n=0
  while IFS= read -r f; do
    n=$((n + 1))
    cp "$f" "$seeds/$n-$(basename "$f")"
  done < <(seed_files "$t")
  log=build-fuzz/$t.log
  result=ok
  if ! build-fuzz/fuzz/fuzz_"$t" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -max_len=32768 \
      -print_final_stats=1 -seed="${NCCLPM_FUZZ_SEED:-0}" -artifact_prefix="$artifacts/" "$corpus" "$seeds" tests/fuzz-inputs/"$t" >"$log" 2>&1; then
    result="FAILED: see $log and $artifacts/"
    status=1
  fi
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
  printf '%-16s %12s %10s %s\n' "$t" "$execs" "$rate" "$result" | tee -a build-fuzz/fuzz-summary.txt
done
exit $status
