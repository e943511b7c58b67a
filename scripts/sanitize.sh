#!/usr/bin/env bash
# Sanitizer builds and runs.
#   scripts/sanitize.sh address   AddressSanitizer + UndefinedBehaviorSanitizer (GCC), the whole test suite
#   scripts/sanitize.sh thread    ThreadSanitizer (clang), the threaded tests (CTest label "threads")
# ThreadSanitizer only understands OpenMP's synchronisation when the runtime tells it: the thread build uses
# LLVM's OpenMP runtime (libomp, from Debian's libomp-dev) with its Archer tool (libarcher.so), which
# annotates libomp's barriers and locks for TSan.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:-}
shift || true
"$here/scripts/setup.sh" >/dev/null  # packages (and the normal build)
case $kind in
  address)
    build=$here/build-asan
    cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSGDSCOPE_SANITIZE=address,undefined >/dev/null
    cmake --build "$build" -j2
    cd "$build"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      LSAN_OPTIONS=suppressions=$here/scripts/lsan-suppressions.txt \
      exec ctest --output-on-failure -E fuzz_smoke "$@" ;;
  thread)
    archer=$(ls /usr/lib/llvm-*/lib/libarcher.so 2>/dev/null | sort -V | tail -1)
    [ -n "$archer" ] || { echo "sanitize.sh: libarcher.so (LLVM OpenMP's TSan support) not found" >&2; exit 2; }
    build=$here/build-tsan
    CC=clang CXX=clang++ cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DSGDSCOPE_SANITIZE=thread >/dev/null
    cmake --build "$build" -j2
    cd "$build"
    OMP_TOOL_LIBRARIES=$archer TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ignore_noninstrumented_modules=1" \
      exec ctest --output-on-failure -L threads "$@" ;;
  *) echo "usage: scripts/sanitize.sh address|thread [ctest options]" >&2; exit 2 ;;
esac
