#!/usr/bin/env bash
# Sets up (packages, Release build) and runs the whole test suite through CTest; the log ends on CTest's
# summary. Extra arguments go to ctest (e.g. -L core, -R test_sync).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/setup.sh"
cd "${BUILD_DIR:-$here/build}"
exec ctest --output-on-failure -j2 "$@"
