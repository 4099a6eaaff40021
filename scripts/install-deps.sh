#!/usr/bin/env bash
# Installs the Debian 12 packages ncclpm builds with (root, or sudo available).
# Only what is missing is installed, so a second run is quick.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libre2-dev libsimdjson-dev libboost-program-options-dev libsqlite3-dev
  zlib1g-dev libzstd-dev libtomlplusplus-dev libgtest-dev
  sqlite3 gzip zstd
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "installing: ${missing[*]}" >&2
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
