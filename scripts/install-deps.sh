#!/usr/bin/env bash
# Installs the Debian 12 packages ncclpm builds with (root, or sudo available).
# Only what is missing is installed, so a second run is quick.
#   bash scripts/install-deps.sh            to build and run ncclpm
#   bash scripts/install-deps.sh --browser  and Chromium, which the tests load
#                                           the HTML report in (tests/report/browser_test.cc)
#   bash scripts/install-deps.sh --fuzz     and clang with libFuzzer (scripts/fuzz.sh)
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libre2-dev libsimdjson-dev libboost-program-options-dev libsqlite3-dev
  zlib1g-dev libzstd-dev libtomlplusplus-dev libgtest-dev
  sqlite3 gzip zstd
)
# Chromium comes with its recommended packages (fonts among them): that is
# how the browser tests were verified to run.
browser_packages=(chromium)
fuzz_packages=(clang libclang-rt-14-dev)

missing() {
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
build_missing=($(missing "${packages[@]}"))
browser_missing=()
if [[ "${1:-}" == "--browser" ]]; then browser_missing=($(missing "${browser_packages[@]}")); fi
if [[ "${1:-}" == "--fuzz" ]]; then build_missing+=($(missing "${fuzz_packages[@]}")); fi
if ((${#build_missing[@]} + ${#browser_missing[@]} == 0)); then
  exit 0
fi
echo "installing: ${build_missing[*]} ${browser_missing[*]}" >&2
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
if ((${#build_missing[@]})); then
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${build_missing[@]}" >/dev/null
fi
if ((${#browser_missing[@]})); then
  "${sudo_cmd[@]}" apt-get install -y -qq "${browser_missing[@]}" >/dev/null
fi
