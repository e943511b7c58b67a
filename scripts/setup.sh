#!/usr/bin/env bash
# Installs the Debian packages sgdscope needs (scripts/debian-packages.txt; only those missing), then
# configures and builds it (Release) in build/. Usage: scripts/setup.sh [extra cmake options...]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

"$here/scripts/install-packages.sh"

build=${BUILD_DIR:-$here/build}
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" -j2
