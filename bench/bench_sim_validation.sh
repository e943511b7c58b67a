#!/usr/bin/env bash
# The simulated clusters of this machine against it: the same settings run for real (threads engine, P = 1
# and 2; MPI processes, N = 2 and 3) and simulated, the threads rows on `--cluster local` (calibrated on this
# machine at its start), the MPI rows on `--cluster local-mpi` (local's hosts, and messages timed as this
# machine's Open MPI carries them: measured at its start by a ping-pong under mpirun), side by side. Prints one JSON object with, per configuration and for both: the median time of an
# update (sync) or between two pushes (async) over the second half of the run (the first half is the cores'
# climb to their working speed), the idle fraction of the whole run, the mean staleness (async), and the
# simulated / real ratio of the update time. Goal: within 15% on a quiet machine. The simulation's calibration
# says whether the machine was busy (local_calibration.busy); so does the kernel's CPU pressure over each run.
#   bench/bench_sim_validation.sh [build-dir] [steps]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
steps=${2:-400}
name=bench_sim_validation
die() { echo "$name: $*" >&2; exit 2; }
[ -x "$build/app/sgdscope" ] || die "build first ($build/app/sgdscope missing)"
command -v mpirun >/dev/null || die "mpirun missing (install Debian's openmpi-bin)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -x "$build/app/sgdscope-mpi-probe" ] || die "build first ($build/app/sgdscope-mpi-probe missing: --cluster local-mpi needs it)"
cp "$build/app/sgdscope" "$work/sgdscope" # a rebuild during the run cannot swap it
cp "$build/app/sgdscope-mpi-probe" "$work/sgdscope-mpi-probe" # local-mpi looks for it beside sgdscope
app=$work/sgdscope
# OpenMP's spinning wait, as the MPI ranks' and the calibration's: a passive team takes a futex wake-up per
# barrier, the operating system's time, which the model leaves out.
export OMP_WAIT_POLICY=active QT_QPA_PLATFORM=offscreen
common=(--headless --preset fashion-mnist --steps "$steps" --eval-every 0)
psi() { awk '/^some/ { sub("total=", "", $5); print $5 }' /proc/pressure/cpu 2>/dev/null || echo 0; }

run() { # run NAME ARGS...: one headless run in $work/NAME, with the CPU pressure over it
  local out=$1; shift
  local before; before=$(psi); local start; start=$(date +%s%N)
  "$app" "${common[@]}" --out "$work/$out" "$@" >/dev/null 2>"$work/$out.log" \
    || die "run $out failed: $(tail -1 "$work/$out.log")"
  echo "$(( $(psi) - before )) $(( ($(date +%s%N) - start) / 1000 ))" > "$work/$out.psi"
}
mpi() { # mpi NAME N ARGS...
  local out=$1 n=$2; shift 2
  local before; before=$(psi); local start; start=$(date +%s%N)
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 600 mpirun --allow-run-as-root \
    --oversubscribe --bind-to none -np "$n" "$app" "${common[@]}" --out "$work/$out" --engine mpi "$@" \
    >/dev/null 2>"$work/$out.log" || die "mpirun $out failed: $(tail -1 "$work/$out.log")"
  echo "$(( $(psi) - before )) $(( ($(date +%s%N) - start) / 1000 ))" > "$work/$out.psi"
}

configs=()
add() { configs+=("$1"); }
for mode in sync async; do
  # The wires of what is modelled: the threads engine's workers add their chunks in shared memory, MPI's sync
  # reduces on a binomial tree; neither has a parameter server (the clusters' default for sync).
  wires=(); [ "$mode" = sync ] && wires=(--topology tree)
  for p in 1 2; do
    echo "$name: threads $mode P=$p" >&2
    run "threads-$mode-p$p" --mode "$mode" --workers "$p"
    run "sim-threads-$mode-p$p" --mode "$mode" --workers "$p" --engine sim --cluster local "${wires[@]}"
    add "threads-$mode-p$p"
  done
  for n in 2 3; do
    echo "$name: mpi $mode N=$n" >&2
    mpi "mpi-$mode-n$n" "$n" --mode "$mode"
    workers=$n; [ "$mode" = async ] && workers=$((n - 1)) # async: rank 0 is the server
    run "sim-mpi-$mode-n$n" --mode "$mode" --workers "$workers" --engine sim --cluster local-mpi "${wires[@]}"
    add "mpi-$mode-n$n"
  done
done

/usr/bin/python3 - "$work" "${configs[@]}" <<'PY'
import csv, json, os, statistics, sys
work, configs = sys.argv[1], sys.argv[2:]
def summary(name):
    return json.load(open(os.path.join(work, name, "summary.json")))["runs"][0]
def step(name):
    """Median seconds between consecutive updates (sync) or pushes (async) in the second half of the run."""
    with open(os.path.join(work, name, "metrics.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["kind"] == "update"]
    clock = "virtual_seconds" if "virtual_seconds" in rows[0] else "seconds"
    t = [float(r[clock]) for r in rows]
    gaps = [b - a for a, b in zip(t, t[1:])]
    return statistics.median(gaps[len(gaps) // 2:])
def pressure(name):
    stalled, wall = (int(x) for x in open(os.path.join(work, name + ".psi")).read().split())
    return round(100.0 * stalled / max(wall, 1), 1)
rows = []
for c in configs:
    real, sim = summary(c), summary("sim-" + c)
    row = {"config": c, "mode": real["mode"], "workers": real["workers"]}
    row["real_ms_per_update"] = round(step(c) * 1e3, 4)
    row["sim_ms_per_update"] = round(step("sim-" + c) * 1e3, 4)
    row["sim_over_real"] = round(step("sim-" + c) / step(c), 3)
    row["real_idle_fraction"] = round(real["idle_fraction"], 4)
    row["sim_idle_fraction"] = round(sim["idle_fraction"], 4)
    if real["mode"] == "async":
        row["real_mean_staleness"] = round(real["staleness"]["mean"], 3)
        row["sim_mean_staleness"] = round(sim["staleness"]["mean"], 3)
    cal = sim.get("local_calibration", {})
    row["calibration_busy"] = cal.get("busy")
    row["calibration_waited_for_a_core_share"] = cal.get("waited_for_a_core_share")
    link = sim.get("mpi_link_calibration")
    if link:
        row["mpi_latency_us"] = round(link["latency_seconds"] * 1e6, 2)
        row["mpi_bandwidth_gb_per_s"] = round(link["bandwidth_bytes_per_second"] / 1e9, 3)
        row["mpi_core_share"] = round(link["core_share"], 3)
    row["real_cpu_pressure_pct"] = pressure(c)
    row["within_15pct"] = abs(row["sim_over_real"] - 1) <= 0.15
    rows.append(row)
print(json.dumps({"benchmark": "the simulated local and local-mpi clusters against this machine (fashion-mnist)",
                  "goal": "sim_over_real within 15% on a quiet machine", "rows": rows}, indent=2))
PY
