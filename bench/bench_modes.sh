#!/usr/bin/env bash
# Time to 0.88 Fashion-MNIST test accuracy for every mode between sync and async, on the straggler
# configurations where they matter. Prints one JSON object on stdout (progress on stderr).
#
#   bench/bench_modes.sh [build-dir]
#   environment: TARGET=0.88  EPOCHS=20 (cap)  EVAL=50 (updates of 256 samples between evaluations)
#
# Configurations (the fashion-mnist preset: MLP 784-256-128-10, batch 256, lr 0.05, momentum 0.9, seed 0):
#   threads P = 2, worker 1 four times slower (--slow 1:4): sync, async, ssp, backup, local-sgd, dc-asgd;
#   sim datacenter P = 16, 10% of the workers (2) four times slower (--slow-fraction 0.1:4): every mode;
#   sim datacenter P = 16, each step one worker four times slower (--rotating-straggler 4): the same modes;
#   MPI N = 3 processes on this machine, no straggler: every mode (sync and local-sgd: 3 workers, one per
#   process; async, ssp, backup and dc-asgd: a parameter server and 2 workers).
# Each configuration is one sgdscope run with --mode LIST: the modes one after another, on the same data, seed,
# sample budget and evaluation points (every EVAL x 256 samples; a local-sgd round of H x 256 samples is
# evaluated at the end of the round that crosses one). For each mode: seconds_to_target (its own clock: real
# seconds on threads and MPI, virtual seconds on the simulated cluster; training only, evaluations outside),
# samples_to_target, updates_to_target, the final test accuracy (at the end of the run: the run stops at the
# target) and reached. "fastest" names the mode with the fewest seconds to the target and says whether it beat
# both sync and async.
# Run time on this 2-core machine: about 8 minutes.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
TARGET=${TARGET:-0.88}
EPOCHS=${EPOCHS:-20}
EVAL=${EVAL:-50}
PY=/usr/bin/python3
DATA=/usr/share/datasets/fashion-mnist
name=bench_modes
[ -x "$build/app/sgdscope" ] || { echo "$name: build first ($build/app/sgdscope missing)" >&2; exit 2; }
[ -e "$DATA/train-images-idx3-ubyte.gz" ] || { echo "$name: no Fashion-MNIST in $DATA; install Debian's dataset-fashion-mnist" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$build/app/sgdscope" "$work/sgdscope" # a rebuild during the run cannot swap it
app=$work/sgdscope
common=(--preset fashion-mnist --target-accuracy "$TARGET" --epochs "$EPOCHS" --eval-every "$EVAL")

run() { # run NAME ARGS...: one headless run into work/NAME (exit 3: a mode diverged, which is a result)
  local run_name=$1; shift
  echo "$name: $run_name" >&2
  local code=0
  QT_QPA_PLATFORM=offscreen "$@" >"$work/$run_name.log" 2>&1 || code=$?
  if [ "$code" != 0 ] && [ "$code" != 3 ]; then
    echo "$name: $run_name failed (exit $code): $(tail -2 "$work/$run_name.log")" >&2; exit 1
  fi
}

run threads-p2-slow "$app" --headless --out "$work/threads-p2-slow" "${common[@]}" --workers 2 --slow 1:4 \
  --mode sync,async,ssp,backup,local-sgd,dc-asgd
simmodes=sync,async,ssp,backup,local-sgd,dc-asgd
run sim-p16-fraction "$app" --headless --out "$work/sim-p16-fraction" "${common[@]}" --engine sim \
  --cluster datacenter --workers 16 --slow-fraction 0.1:4 --mode "$simmodes"
run sim-p16-rotating "$app" --headless --out "$work/sim-p16-rotating" "${common[@]}" --engine sim \
  --cluster datacenter --workers 16 --rotating-straggler 4 --mode "$simmodes"
mpi_reason=""
if command -v mpirun >/dev/null; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 run mpi-n3 mpirun --allow-run-as-root --oversubscribe \
    --bind-to none -np 3 "$app" --headless --engine mpi --out "$work/mpi-n3" "${common[@]}" --mode "$simmodes"
else
  mpi_reason="mpirun not found (Debian's openmpi-bin)"
fi

"$PY" - "$work" "$TARGET" "$mpi_reason" <<'EOF'
import json, os, sys
work, target, mpi_reason = sys.argv[1], float(sys.argv[2]), sys.argv[3]
described = {
    "threads-p2-slow": "threads, P = 2, worker 1 4x slower",
    "sim-p16-fraction": "sim datacenter, P = 16, 10% of the workers 4x slower (virtual seconds)",
    "sim-p16-rotating": "sim datacenter, P = 16, a rotating 4x straggler (virtual seconds)",
    "mpi-n3": "MPI, 3 processes on this machine (sync, local-sgd: 3 workers; the others: a server and 2 workers)",
}
out = {"benchmark": "time to %.2f fashion-mnist test accuracy, every mode" % target, "results": {}}
for key, what in described.items():
    path = os.path.join(work, key, "summary.json")
    if not os.path.exists(path):
        out["results"][key] = {"configuration": what, "skipped": mpi_reason or "no summary"}
        continue
    summary = json.load(open(path))
    modes = {}
    for r in summary["runs"]:
        modes[r["mode"]] = {
            "reached": r.get("target_reached", False),
            "seconds_to_target": r.get("seconds_to_target"),
            "samples_to_target": r.get("samples_to_target"),
            "updates_to_target": r.get("updates_to_target"),
            "final_test_accuracy": round(r.get("test_accuracy", float("nan")), 4),
            "diverged": r["diverged"],
            "idle_fraction": round(r["idle_fraction"], 3),
        }
    reached = {m: v["seconds_to_target"] for m, v in modes.items() if v["reached"]}
    entry = {"configuration": what, "clock": summary["runs"][0]["clock"], "modes": modes}
    if reached:
        best = min(reached, key=reached.get)
        ends = [reached.get(m) for m in ("sync", "async")]
        entry["fastest"] = best
        entry["fastest_beats_sync_and_async"] = best not in ("sync", "async") and all(
            e is None or reached[best] < e for e in ends)
    out["results"][key] = entry
print(json.dumps(out, indent=2))
EOF
