#!/usr/bin/env bash
# Fuzzes every parser of outside input with libFuzzer (clang, Debian's libclang-rt-14-dev), each for a
# bounded time, under AddressSanitizer + UndefinedBehaviorSanitizer. Findings are left in
# build-fuzz/artifacts/TARGET/; turn each into a regression input under tests/fuzz/regressions/TARGET/.
#   scripts/fuzz.sh [SECONDS_PER_TARGET (default 60)] [TARGET...]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_csv fuzz_idx fuzz_safetensors fuzz_config fuzz_cli)

"$here/scripts/install-packages.sh"

build=${FUZZ_BUILD_DIR:-$here/build-fuzz}
CC=clang CXX=clang++ cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSGDSCOPE_FUZZ=ON \
  -DSGDSCOPE_BUILD_UI=OFF -DSGDSCOPE_SANITIZE=address,undefined >/dev/null
cmake --build "$build" -j2 --target "${targets[@]}" >/dev/null

status=0
summary=()
for t in "${targets[@]}"; do
  corpus=$build/corpus/$t
  artifacts=$build/artifacts/$t
  mkdir -p "$corpus" "$artifacts"
  cp -n "$here"/tests/fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null || true
  log=$build/$t.log
  set +e
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    "$build/tests/fuzz/$t" "$corpus" "$here/tests/fuzz/regressions/$t" -max_total_time="$seconds" -max_len=65536 \
      -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo "?")
  found=$(find "$artifacts" -type f | wc -l)
  summary+=("$t: ${seconds}s, $execs executions, coverage $cov edges, $found findings (exit $rc)")
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then status=1; echo "fuzz.sh: $t found a problem; see $log and $artifacts" >&2; fi
done
printf '%s\n' "${summary[@]}"
exit $status
