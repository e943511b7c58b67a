#!/usr/bin/env bash
# Sets up (packages, Release build) and starts sgdscope; arguments go to the program.
# Without a display, run it under xvfb-run, or use --headless --out DIR.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/setup.sh" >&2
exec "${BUILD_DIR:-$here/build}/app/sgdscope" "$@"
