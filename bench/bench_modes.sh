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
#   sim datacenter P = 64, the same two straggler patterns (10% of the workers, 6, or one a step);
#   MPI N = 3 processes on this machine, no straggler: every mode (sync and local-sgd: 3 workers, one per
#   process; async, ssp, backup and dc-asgd: a parameter server and 2 workers).
# Every mode takes the same step per sample (pushes lr x b / B, --async-lr scaled) and the sync-like modes run on
# the same wires (--topology ps, the default: a parameter server, which backup needs). Each configuration is one
# sgdscope run with --mode LIST: the modes one after another (on the simulated cluster each in a process of its
# own, so its result is the one it gives alone), on the same data, seed, sample budget and evaluation points (every EVAL x 256 samples; a local-sgd round of H x 256 samples is
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
run sim-p64-fraction "$app" --headless --out "$work/sim-p64-fraction" "${common[@]}" --engine sim \
  --cluster datacenter --workers 64 --slow-fraction 0.1:4 --mode "$simmodes"
run sim-p64-rotating "$app" --headless --out "$work/sim-p64-rotating" "${common[@]}" --engine sim \
  --cluster datacenter --workers 64 --rotating-straggler 4 --mode "$simmodes"
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
    "sim-p64-fraction": "sim datacenter, P = 64, 10% of the workers 4x slower (virtual seconds)",
    "sim-p64-rotating": "sim datacenter, P = 64, a rotating 4x straggler (virtual seconds)",
    "mpi-n3": "MPI, 3 processes on this machine (local-sgd: 3 workers on the tree; the others, sync too (backup's wires): a server and 2 workers)",
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
            "topology": r.get("topology"),
            "learning_rate_mean": r.get("learning_rate", {}).get("mean"),
            "communication_seconds_per_sample": (r["all_workers"]["communication_seconds"] / r["samples"]
                                                 if r.get("samples") else None),
        }
    reached = {m: v["seconds_to_target"] for m, v in modes.items() if v["reached"]}
    entry = {"configuration": what, "clock": summary["runs"][0]["clock"], "modes": modes}
    if reached:
        best = min(reached, key=reached.get)
        ends = [reached.get(m) for m in ("sync", "async")]
        entry["fastest"] = best
        entry["fastest_beats_sync_and_async"] = best not in ("sync", "async") and all(
            e is None or reached[best] < e for e in ends)
    def seconds(m):
        v = modes.get(m)
        return v["seconds_to_target"] if v and v["reached"] else None
    def claim(holds, why):
        return {"holds": holds, "measured": why}
    def faster(a, b):
        """True if a beats b by more than 1%, "tie" within 1%, False if slower; None if neither reached."""
        if a is None and b is None:
            return None
        if a is None or b is None:
            return a is not None
        return True if a < 0.99 * b else ("tie" if a <= 1.01 * b else False)
    papers = {}
    if "sync" in modes and "ssp" in modes:
        a, b = seconds("ssp"), seconds("sync")
        papers["ssp_beats_bsp_under_stragglers"] = claim(faster(a, b), "ssp %s s, sync %s s to target" % (a, b))
    if "sync" in modes and "backup" in modes:
        a, b = seconds("backup"), seconds("sync")
        papers["backup_cuts_syncs_tail"] = claim(faster(a, b), "backup %s s, sync %s s to target" % (a, b))
    if all(m in modes for m in ("sync", "async", "dc-asgd")):
        s_, a, d = (modes[m]["final_test_accuracy"] for m in ("sync", "async", "dc-asgd"))
        papers["dcasgd_nearer_sync_than_async"] = claim(
            abs(d - s_) < abs(a - s_), "test accuracy sync %s, async %s, dc-asgd %s" % (s_, a, d))
    if "sync" in modes and "local-sgd" in modes:
        a, b = (modes[m]["communication_seconds_per_sample"] for m in ("local-sgd", "sync"))
        papers["local_sgd_saves_communication"] = claim(
            None if not a and not b else (a is not None and b is not None and a < b),
            "communication per sample: local-sgd %.3g us, sync %.3g us" % ((a or 0) * 1e6, (b or 0) * 1e6))
    entry["papers"] = papers
    out["results"][key] = entry
print(json.dumps(out, indent=2))
EOF
