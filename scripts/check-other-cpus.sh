#!/usr/bin/env bash
# The recorded digests on CPUs unlike this one, under QEMU's user-mode emulation: a Nehalem (no AVX, no FMA:
# the scalar path with the C library's software fma) and a Haswell (AVX2 with FMA). Runs tests/test_digests'
# rows of the parabola, blobs and CSV data on the path such a CPU takes (fashion-mnist's are too slow under
# emulation). Installs Debian's qemu-user if it is missing (a check for developers; the test suite does not
# need it). Exit 0 when every row holds.
#   scripts/check-other-cpus.sh [build-dir]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
test=$build/tests/test_digests
[ -x "$test" ] || { echo "check-other-cpus: build first ($test missing)" >&2; exit 2; }
if ! command -v qemu-x86_64 >/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends qemu-user >/dev/null
fi
# The emulated Nehalem computes its fused multiply-adds in software, emulated: a few minutes for these rows.
nehalem=("parabola sync P1" "parabola sync P4 K3" "parabola async P1 lock" "blobs sync P2" "csv relu sync"
         "csv relu async")
haswell=("parabola sync P1" "parabola sync P4 K3" "parabola sync P2 chunk 10" "parabola sync P3 K2 momentum"
         "parabola async P1 lock" "blobs sync P2" "blobs sync P3 K2" "blobs async P1" "csv relu sync" "csv relu async")
status=0
for cpu in Nehalem:scalar Haswell:avx2; do
  model=${cpu%%:*} path=${cpu##*:}
  args=()
  if [ "$model" = Nehalem ]; then rows=("${nehalem[@]}"); else rows=("${haswell[@]}"); fi
  for r in "${rows[@]}"; do args+=("digestsAreThoseOfTheRecordedRuns:$r, $path"); done
  # the program sets OMP_WAIT_POLICY and starts itself again when it is unset: set it, so that it stays emulated
  if out=$(OMP_WAIT_POLICY=passive QT_QPA_PLATFORM=offscreen QTEST_FUNCTION_TIMEOUT=1800000 qemu-x86_64 -cpu "$model" "$test" "${args[@]}" 2>&1); then
    echo "$model ($path path): $(echo "$out" | grep -E '^Totals')"
  else
    status=1
    echo "$model ($path path): FAILED"; echo "$out" | grep -E '^(FAIL|   Loc|Totals)' | sed 's/^/    /'
  fi
done
exit $status
