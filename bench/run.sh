#!/usr/bin/env bash
# bench/run.sh -- times `ncclpm ingest` and `ncclpm diagnose` on synthetic
# corpora against ripgrep reading and matching the same files.
#
#   bash bench/run.sh            # coll-512, ranks-4096, nccl-info-1g(-gz), hang-1024, app-4096, ranks-16384
#   bash bench/run.sh --quick    # small stand-ins, a smoke test of a minute or two
#
# Builds build-bench/ (Release, -DNCCLPM_BENCH=ON, -j1), generates the corpora
# once into bench/.corpus/ (regenerated when the generator or its arguments
# change), then measures --runs times, alternating ingest / ripgrep / diagnose,
# with a warm page cache. Prints a table and writes it to
# bench/results/<date>[-quick].md with the raw runs in a .tsv beside it.
# See bench/README.md for how to read it.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bash bench/run.sh [--quick] [--runs N] [--only NAMES] [--cache DIR] [--no-build] [--tag TAG]
                         [--ncclpm PATH] [--baseline PATH]

  --quick       small corpora (64 ranks with COLL lines, about 100 MB; 256 ranks)
  --runs N      measurements per tool and corpus (default 3); the median is reported
  --only NAMES  just these corpora, comma-separated (coll-512, ranks-4096, nccl-info-1g,
                nccl-info-1g-gz, hang-1024, app-4096, ranks-16384, quick-coll-64,
                quick-ranks-256, quick-app-256): ratios between corpora come from one run
  --cache DIR   where corpora are kept (default bench/.corpus)
  --no-build    use build-bench/ as it is
  --tag TAG     results file name: bench/results/<date>-TAG.md (default: date, -quick)
  --ncclpm PATH time this ncclpm binary instead of build-bench/ncclpm (e.g. a build of
                another commit); gen_corpus is still built in build-bench/
  --baseline PATH  also time this ncclpm binary, alternating with the one under test in
                the same runs (rows "ingest@baseline", "diagnose@baseline"): the fair
                way to compare two versions on a machine whose speed drifts
EOF
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
QUICK=0 RUNS=3 ONLY="" CACHE="bench/.corpus" BUILD=1 TAG="" NCCLPM="" BASELINE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --runs) RUNS=${2:?--runs needs a number}; shift ;;
    --only) ONLY=${2:?--only needs a corpus name}; shift ;;
    --cache) CACHE=${2:?--cache needs a folder}; shift ;;
    --no-build) BUILD=0 ;;
    --tag) TAG=${2:?--tag needs a word}; shift ;;
    --ncclpm) NCCLPM=$(realpath "${2:?--ncclpm needs a path}"); shift ;;
    --baseline) BASELINE=$(realpath "${2:?--baseline needs a path}"); shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: error: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
case "$RUNS" in ''|*[!0-9]*|0) echo "run.sh: error: --runs wants a whole number >= 1, not '$RUNS'" >&2; exit 2 ;; esac

say() { printf '%s\n' "$*" >&2; }
die() { printf 'run.sh: error: %s\n' "$*" >&2; exit 1; }

# ---- corpora: name and generator arguments ---------------------------------
# The pattern ripgrep counts: lines a postmortem tool must at least look at.
PATTERN='NCCL INFO|NCCL WARN|Watchdog caught|Traceback'
if [ "$QUICK" = 1 ]; then
  CORPORA=(
    "quick-coll-64|--ranks 64 --ranks-per-host 8 --coll --layout nccl-debug-file --target-bytes 100M --seed 1"
    "quick-ranks-256|--ranks 256 --ranks-per-host 8 --steps 300 --layout torchrun-logdir --seed 1"
    "quick-app-256|--ranks 256 --ranks-per-host 8 --steps 100 --app-lines 3 --layout node-console --seed 1"
  )
  DIAG_TARGET_CORPUS=quick-ranks-256
else
  CORPORA=(
    "coll-512|--ranks 512 --ranks-per-host 8 --coll --layout nccl-debug-file --target-bytes 2G --seed 1"
    "ranks-4096|--ranks 4096 --ranks-per-host 8 --steps 300 --layout torchrun-logdir --seed 1"
    "nccl-info-1g|--ranks 64 --ranks-per-host 8 --layout nccl-info-node --target-bytes 1G --seed 1"
    "nccl-info-1g-gz|--ranks 64 --ranks-per-host 8 --layout nccl-info-node --target-bytes 1G --compress gzip --seed 1"
    "hang-1024|--ranks 1024 --ranks-per-host 8 --steps 100 --fail hang --layout torchrun-logdir --seed 1"
    "app-4096|--ranks 4096 --ranks-per-host 8 --steps 300 --app-lines 3 --layout node-console --seed 1"
    "ranks-16384|--ranks 16384 --ranks-per-host 8 --steps 100 --layout torchrun-logdir --seed 1"
  )
  DIAG_TARGET_CORPUS=ranks-4096
fi
if [ -n "$ONLY" ]; then
  kept=()
  IFS=',' read -r -a wanted <<<"$ONLY"
  for name in "${wanted[@]}"; do
    found=0
    for c in "${CORPORA[@]}"; do [ "${c%%|*}" = "$name" ] && kept+=("$c") && found=1; done
    [ "$found" = 1 ] || die "no corpus named '$name' in this mode (see --help)"
  done
  CORPORA=("${kept[@]}")
fi

# ---- tools ----------------------------------------------------------------
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
apt_install() {
  say "installing $* with apt-get"
  $SUDO apt-get install -y -q "$@" >/dev/null 2>&1 ||
    { $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y -q "$@" >/dev/null; } ||
    die "could not install $*; install them by hand (Debian packages: $*)"
}
command -v rg >/dev/null 2>&1 || apt_install ripgrep
# GNU time gives the peak RSS (%M); the shell keyword does not.
/usr/bin/time -f '%M' true >/dev/null 2>&1 || apt_install time
[ -n "${EPOCHREALTIME:-}" ] || die "bash 5 or newer is needed (EPOCHREALTIME)"
for t in cmake ninja; do command -v $t >/dev/null 2>&1 || die "$t not found (Debian packages: cmake ninja-build)"; done

# ---- build -------------------------------------------------------------------
BUILD_DIR=build-bench
TARGETS=(gen_corpus)
[ -n "$NCCLPM" ] || TARGETS+=(ncclpm)
if [ "$BUILD" = 1 ]; then
  say "building ${TARGETS[*]} in $BUILD_DIR (Release, -j1)"
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNCCLPM_BENCH=ON -DNCCLPM_TESTS=OFF >/dev/null ||
    die "cmake configure failed (run it by hand to see why)"
  cmake --build "$BUILD_DIR" -j1 --target "${TARGETS[@]}" >/dev/null ||
    die "build failed: cmake --build $BUILD_DIR -j1 --target ${TARGETS[*]} shows the errors"
fi
[ -n "$NCCLPM" ] || NCCLPM="$ROOT/$BUILD_DIR/ncclpm"
GEN="$ROOT/$BUILD_DIR/bench/gen_corpus"
if [ ! -x "$NCCLPM" ] || [ ! -x "$GEN" ]; then die "$NCCLPM or $GEN missing; run without --no-build"; fi
if [ -n "$BASELINE" ] && [ ! -x "$BASELINE" ]; then die "baseline '$BASELINE' is not an executable"; fi
TOOLS=(ingest ripgrep diagnose report)
[ -z "$BASELINE" ] || TOOLS=(ingest ingest@baseline ripgrep diagnose diagnose@baseline report)

# ---- corpora, generated once ---------------------------------------------------
mkdir -p "$CACHE"
GEN_HASH=$(cat bench/gen_corpus.cc bench/gen/*.h bench/gen/*.cc | sha256sum | cut -c1-16)
declare -A BYTES LINES FILES DIR
for c in "${CORPORA[@]}"; do
  name=${c%%|*} args=${c#*|}
  dir="$CACHE/$name" key="$GEN_HASH $args"
  if [ ! -d "$dir" ] || [ "$(cat "$dir.key" 2>/dev/null)" != "$key" ]; then
    say "generating $name: gen_corpus $args"
    # shellcheck disable=SC2086
    "$GEN" --out "$dir" --force $args >"$dir.summary" || die "gen_corpus failed for $name"
    printf '%s\n' "$key" >"$dir.key"
  fi
  summary=$(cat "$dir.summary")
  say "$summary"
  FILES[$name]=$(sed -E 's/^gen_corpus: ([0-9]+) files.*/\1/' <<<"$summary")
  BYTES[$name]=$(sed -E 's/^gen_corpus: [0-9]+ files, ([0-9]+) bytes.*/\1/' <<<"$summary")
  LINES[$name]=$(sed -E 's/.* ([0-9]+) lines,.*/\1/' <<<"$summary")
  DIR[$name]=$dir
done

# ---- measurements ----------------------------------------------------------------
WORK=$(mktemp -d "$CACHE/work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
RAW="$WORK/raw.tsv"
printf 'corpus\trun\ttool\twall_s\tpeak_rss_kb\tcompilers_running\n' >"$RAW"

# Runs a command under GNU time; prints "wall_s peak_kb". The wall time is
# taken by the shell (EPOCHREALTIME, microseconds; GNU time's %e has 10 ms
# steps), the peak RSS by GNU time. Exit status 0, or 1 for ripgrep finding
# nothing, counts as success.
timed() {
  local out=$1; shift
  local tf="$WORK/time.txt" rc=0 t0 t1
  t0=$EPOCHREALTIME
  /usr/bin/time -f '%M' -o "$tf" "$@" >"$out" 2>>"$WORK/stderr.txt" || rc=$?
  t1=$EPOCHREALTIME
  if [ "$rc" -gt 1 ] || { [ "$rc" = 1 ] && [ "$1" != rg ]; }; then
    tail -5 "$WORK/stderr.txt" >&2
    die "'$*' failed with status $rc"
  fi
  awk -v a="$t0" -v b="$t1" -v k="$(tail -1 "$tf")" 'BEGIN {printf "%.3f %d\n", b - a, k}'
}
compilers() { pgrep -c -x 'cc1plus' 2>/dev/null || true; }
# measure CORPUS RUN TOOL OUTFILE COMMAND...: one timed run, appended to $RAW.
measure() {
  local name=$1 run=$2 tool=$3 out=$4 n r
  shift 4
  n=$(compilers)
  r=$(timed "$out" "$@")
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$run" "$tool" "${r% *}" "${r#* }" "$n" >>"$RAW"
  say "  $name run $run: $tool $r"
}

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
for c in "${CORPORA[@]}"; do
  name=${c%%|*} dir=${DIR[$name]}
  zflag=()
  if find "$dir" -type f \( -name '*.gz' -o -name '*.zst' \) -print -quit | grep -q .; then zflag=(-z); fi
  say "warming the page cache: $name"
  find "$dir" -type f -exec cat {} + >/dev/null
  rg -c -a --no-ignore --hidden "${zflag[@]}" -g '*' -e "$PATTERN" "$dir" >/dev/null || true
  for run in $(seq 1 "$RUNS"); do
    db="$WORK/$name.db" dbb="$WORK/$name.baseline.db"
    rm -f "$db" "$db"-* "$dbb" "$dbb"-*
    measure "$name" "$run" ingest "$WORK/ingest.out" "$NCCLPM" ingest "$dir" --db "$db" --quiet
    grep -E '^ingested' "$WORK/stderr.txt" | tail -1 >"$WORK/$name.ingested" || true
    if [ -n "$BASELINE" ]; then
      measure "$name" "$run" ingest@baseline "$WORK/ingest.baseline.out" "$BASELINE" ingest "$dir" --db "$dbb" --quiet
    fi
    measure "$name" "$run" ripgrep "$WORK/rg.out" rg -c -a --no-ignore --hidden "${zflag[@]}" -g '*' -e "$PATTERN" "$dir"
    measure "$name" "$run" diagnose "$WORK/diagnose.out" "$NCCLPM" diagnose --db "$db"
    if [ -n "$BASELINE" ]; then
      measure "$name" "$run" diagnose@baseline "$WORK/diagnose.baseline.out" "$BASELINE" diagnose --db "$dbb"
    fi
    measure "$name" "$run" report "$WORK/report.out" "$NCCLPM" report --db "$db" --html "$WORK/$name.html"
  done
  stat -c %s "$WORK/$name.html" >"$WORK/$name.htmlbytes"
  # How long the page's script takes to draw it in a real browser, when one is here.
  render_ms=-
  for b in chromium chromium-browser google-chrome; do
    command -v "$b" >/dev/null 2>&1 || continue
    # file:// needs an absolute path; a browser that fails leaves "-", not a failed run.
    render_ms=$( (timeout 120 "$b" --headless --no-sandbox --disable-gpu --user-data-dir="$WORK/chromium" \
      --virtual-time-budget=20000 --dump-dom "file://$(realpath "$WORK/$name.html")" 2>/dev/null || true) |
      grep -o 'data-render-ms="[0-9]*"' | head -1 | tr -dc 0-9 || true)
    break
  done
  echo "${render_ms:--}" >"$WORK/$name.renderms"
  # What the tools found, for the record (from the last run).
  awk -F: '{s += $NF} END {print s + 0}' "$WORK/rg.out" >"$WORK/$name.rgcount"
  head -12 "$WORK/diagnose.out" >"$WORK/$name.diagnosis"
  stat -c %s "$db" >"$WORK/$name.dbbytes"
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- report ----------------------------------------------------------------------
median() { sort -g | awk '{v[NR] = $1} END {printf "%.3f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
maxof() { sort -g | tail -1; }
col() { awk -F'\t' -v c="$1" -v t="$2" -v k="$3" 'NR > 1 && $1 == c && $3 == t {print $k}' "$RAW"; }

DATE=$(date +%F)
STAMP=$(date '+%F %T %Z')
SUFFIX=${TAG:+-$TAG}
[ -z "$TAG" ] && [ "$QUICK" = 1 ] && SUFFIX=-quick
mkdir -p bench/results
MD="bench/results/$DATE$SUFFIX.md" TSV="bench/results/$DATE$SUFFIX.tsv"
REPORT="$WORK/report.md" SUMMARY="$WORK/summary.tsv"
printf 'corpus\tbytes\tlines\tfiles\ttool\tmedian_wall_s\tmb_per_s\tlines_per_s\tpeak_rss_mb\tratio_to_ripgrep\truns\n' >"$SUMMARY"

{
  echo "# ncclpm benchmark, $STAMP"
  echo
  if [ "$NCCLPM" = "$ROOT/$BUILD_DIR/ncclpm" ]; then
    echo "- ncclpm: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- src include 2>/dev/null || echo ' + uncommitted changes in src/ or include/'), $BUILD_DIR (Release)"
  else
    echo "- ncclpm: $NCCLPM (given with --ncclpm)"
  fi
  [ -z "$BASELINE" ] || echo "- baseline (rows @baseline): $BASELINE, timed in the same runs"
  echo "- machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(free -g | awk '/^Mem:/ {print $2}') GiB memory; $(rg --version | sed -n 1p)"
  echo "- runs: $RUNS per tool, alternating ingest / ripgrep / diagnose; median wall time, largest peak RSS; page cache warm"
  echo "- load average: $LOAD_START at the start, $LOAD_END at the end; compiler processes seen at measurement starts: $(awk -F'\t' 'NR > 1 {s += $6} END {print s + 0}' "$RAW")"
  echo "- ripgrep: \`rg -c -a --no-ignore --hidden -g '*' -e '$PATTERN' CORPUS\` (reads and matches every file: the floor)"
  echo
  echo "| corpus | size | lines | files | tool | median wall s | MB/s | lines/s | peak RSS MB | vs ripgrep |"
  echo "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|"
} >"$REPORT"

declare -A MED RSS
for c in "${CORPORA[@]}"; do
  name=${c%%|*}
  for tool in "${TOOLS[@]}"; do
    MED[$name.$tool]=$(col "$name" "$tool" 4 | median)
    RSS[$name.$tool]=$(col "$name" "$tool" 5 | maxof)
  done
  for tool in "${TOOLS[@]}"; do
    m=${MED[$name.$tool]} rss_mb=$(awk -v k="${RSS[$name.$tool]}" 'BEGIN {printf "%.0f", k / 1024}')
    if [ "${tool%@*}" = diagnose ] || [ "$tool" = report ]; then
      mbs="-" lps="-" ratio="-"
    else
      mbs=$(awk -v b="${BYTES[$name]}" -v s="$m" 'BEGIN {printf "%.1f", (s > 0 ? b / 1e6 / s : 0)}')
      lps=$(awk -v l="${LINES[$name]}" -v s="$m" 'BEGIN {printf "%.0f", (s > 0 ? l / s : 0)}')
      ratio=$(awk -v a="$m" -v b="${MED[$name.ripgrep]}" 'BEGIN {printf "%.1fx", (b > 0 ? a / b : 0)}')
    fi
    mb=$(awk -v b="${BYTES[$name]}" 'BEGIN {printf "%.1f MB", b / 1e6}')
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$mb" "${LINES[$name]}" \
      "${FILES[$name]}" "$tool" "$m" "$mbs" "$lps" "$rss_mb" "$ratio" >>"$REPORT"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "${BYTES[$name]}" "${LINES[$name]}" "${FILES[$name]}" \
      "$tool" "$m" "$mbs" "$lps" "$rss_mb" "$ratio" "$RUNS" >>"$SUMMARY"
  done
done

verdict() { if awk "BEGIN {exit !($1)}"; then echo "met"; else echo "**not met**"; fi; }
{
  echo
  echo "## Targets (issue 5)"
  echo
  echo "| target | corpus | measured | verdict |"
  echo "|---|---|---:|---|"
  for c in "${CORPORA[@]}"; do
    name=${c%%|*}
    mbs=$(awk -v b="${BYTES[$name]}" -v s="${MED[$name.ingest]}" 'BEGIN {printf "%.1f", b / 1e6 / s}')
    echo "| ingest >= 300 MB/s end to end | $name | $mbs MB/s | $(verdict "$mbs >= 300") |"
  done
  for c in "${CORPORA[@]}"; do
    name=${c%%|*}
    for tool in ingest diagnose; do
      mb=$(awk -v k="${RSS[$name.$tool]}" 'BEGIN {printf "%.0f", k / 1024}')
      echo "| $tool peak RSS <= 512 MB | $name | $mb MB | $(verdict "$mb <= 512") |"
    done
  done
  if [ -n "${MED[$DIAG_TARGET_CORPUS.diagnose]:-}" ]; then
    d=${MED[$DIAG_TARGET_CORPUS.diagnose]}
    note=""
    [ "$QUICK" = 1 ] && note=" (stand-in for ranks-4096)"
    echo "| diagnose <= 2 s on the 4096-rank database | $DIAG_TARGET_CORPUS$note | $d s | $(verdict "$d <= 2") |"
  fi
  for c in "${CORPORA[@]}"; do
    name=${c%%|*}
    kb=$(awk '{printf "%.0f", $1 / 1024}' "$WORK/$name.htmlbytes")
    echo "| HTML report <= 5 MB (issue 13) | $name | $kb KiB, written in ${MED[$name.report]} s | $(verdict "$kb <= 5120") |"
    ms=$(cat "$WORK/$name.renderms")
    if [ "$ms" = - ]; then
      echo "| HTML report drawn in < 1 s in a browser (issue 13) | $name | no browser here | - |"
    else
      echo "| HTML report drawn in < 1 s in a browser (issue 13) | $name | $ms ms (headless Chromium) | $(verdict "$ms < 1000") |"
    fi
  done
  for c in "${CORPORA[@]}"; do
    name=${c%%|*}
    r=$(awk -v a="${MED[$name.ingest]}" -v b="${MED[$name.ripgrep]}" 'BEGIN {printf "%.1f", a / b}')
    echo "| goal: ingest within 5x of ripgrep | $name | ${r}x | $(verdict "$r <= 5") |"
  done
  echo
  echo "## What the tools reported (last run)"
  for c in "${CORPORA[@]}"; do
    name=${c%%|*}
    echo
    echo "**$name** (gen_corpus ${c#*|}): ripgrep counted $(cat "$WORK/$name.rgcount") matching lines;"
    echo "ncclpm: \`$(cat "$WORK/$name.ingested")\`; database $(awk '{printf "%.1f", $1 / 1e6}' "$WORK/$name.dbbytes") MB; diagnose begins:"
    echo
    echo '```'
    cat "$WORK/$name.diagnosis"
    echo '```'
  done
} >>"$REPORT"

cat "$REPORT"
# Results appear whole or not at all.
cp "$REPORT" "$MD.tmp" && mv "$MD.tmp" "$MD"
{ cat "$SUMMARY"; echo; cat "$RAW"; } >"$TSV.tmp" && mv "$TSV.tmp" "$TSV"
say "wrote $MD and $TSV"
