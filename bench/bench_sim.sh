#!/usr/bin/env bash
# The simulated cluster's own cost, measured by running sgdscope --headless --engine sim (one process per
# run: SimGrid allows one platform per process). Prints one JSON object:
#  - simulated async pushes per wall second on the parabola (4096 points, batch 4096) at P = 64 and 1024,
#    ideal cluster (target at P = 1024: 30,000 per second);
#  - fashion-mnist samples per wall second, sync, batch 4096 in chunks of 64: sim at P = 64 (every worker a
#    chunk) against the threads engine at P = 2 on the same batch (target: at least 0.8x), and the same sim
#    run on one OpenMP thread;
#  - resident memory of the P = 1024 run;
#  - the datacenter cluster with 10% of the workers 4x slower and a jitter of 0.2 (parabola, batch 4096, 100 steps
#    of each mode): pushes per wall second at P = 1024 and 4096 (target: 40,000), wall seconds of each mode at
#    4096 (target: both within 120 s), resident memory;
#  - blobs at P = 512 and 4096, batch 16384 in chunks of 1, 4 and 32: peak resident memory against the estimate
#    summary.json gives (target: within 25%);
#  - mean staleness and sync idle on the datacenter cluster for P = 2 to 1024, with and without a 10% slow
#    fraction (4x), on the blobs workload (--table).
#   bench/bench_sim.sh [build-dir] [--table]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
table=${2:-}
app=$build/app/sgdscope
[ -x "$app" ] || { echo "bench_sim: build first ($app missing)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() { # run NAME ARGS...: one headless run, its summary and its peak memory kept under NAME
  local name=$1; shift
  QT_QPA_PLATFORM=offscreen /usr/bin/time -f "%M" -o "$work/$name.rss" "$app" --headless --out "$work/$name" "$@" \
    >/dev/null 2>"$work/$name.log" || { echo "bench_sim: run $name failed: $(tail -1 "$work/$name.log")" >&2; exit 1; }
}

echo "bench_sim: parabola pushes" >&2
for p in 64 1024; do
  run "parabola-p$p" --preset parabola --samples 4096 --batch 4096 --lr 0.0001 --mode async --workers "$p" \
    --engine sim --cluster ideal --steps $((p == 64 ? 400 : 100)) --eval-every 0
done
echo "bench_sim: datacenter pushes (10% of workers 4x slower, jitter 0.2)" >&2
for p in 1024 4096; do
  run "dc-parabola-p$p" --preset parabola --samples 4096 --batch 4096 --lr 0.0001 --mode both --workers "$p" \
    --engine sim --cluster datacenter --slow-fraction 0.1:4 --jitter 0.2 --steps 100 --eval-every 0
done
echo "bench_sim: memory against the estimate (blobs, batch 16384, both modes)" >&2
for p in 512 4096; do
  for c in 1 4 32; do
    run "mem-p$p-c$c" --preset blobs --batch 16384 --chunk "$c" --mode both --workers "$p" --engine sim \
      --cluster datacenter --steps 4 --eval-every 0
  done
done
echo "bench_sim: fashion-mnist" >&2
fashion=(--preset fashion-mnist --mode sync --batch 4096 --chunk 64 --steps 20 --eval-every 0)
run fashion-threads-p2 "${fashion[@]}" --workers 2
run fashion-sim-p64 "${fashion[@]}" --workers 64 --engine sim --cluster local
OMP_NUM_THREADS=1 run fashion-sim-p64-1thread "${fashion[@]}" --workers 64 --engine sim --cluster local
if [ "$table" = "--table" ]; then
  echo "bench_sim: datacenter table" >&2
  for p in 2 4 8 16 32 64 128 256 512 1024; do
    for slow in none 0.1:4; do
      extra=(); [ "$slow" = none ] || extra=(--slow-fraction "$slow")
      run "dc-p$p-$slow" --preset blobs --samples 65536 --batch 4096 --chunk 4 --lr 0.01 --steps 20 --eval-every 0 \
        --workers "$p" --engine sim --cluster datacenter "${extra[@]}"
    done
  done
fi

/usr/bin/python3 - "$work" "$table" <<'PY'
import json, os, sys
work, table = sys.argv[1], sys.argv[2]
def summary(name):
    return json.load(open(os.path.join(work, name, "summary.json")))
def run_of(name, mode):
    return next(r for r in summary(name)["runs"] if r["mode"] == mode)
def rss_mb(name):
    return round(int(open(os.path.join(work, name + ".rss")).read().split()[-1]) * 1024 / 1e6, 1)  # time -f %M gives KiB
out = {"benchmark": "simulated cluster (SimGrid): cost of the simulation", "results": {}}
res = out["results"]
for p in (64, 1024):
    r = run_of(f"parabola-p{p}", "async")
    res[f"parabola_async_P{p}_pushes_per_wall_second"] = round(r["updates"] / r["wall_clock_seconds"])
    res[f"parabola_async_P{p}_pushes"] = r["updates"]
res["parabola_async_P1024_pushes_per_wall_second (target >= 30000)"] = res.pop("parabola_async_P1024_pushes_per_wall_second")
res["parabola_P1024_resident_MB"] = rss_mb("parabola-p1024")
for p in (1024, 4096):
    for mode in ("async", "sync"):
        r = run_of(f"dc-parabola-p{p}", mode)
        # A sync update is P workers' pushes: one gradient each.
        pushes = r["updates"] * (p if mode == "sync" else 1)
        res[f"datacenter_{mode}_P{p}_pushes_per_wall_second (target >= 40000)"] = round(pushes / r["wall_clock_seconds"])
        res[f"datacenter_{mode}_P{p}_wall_seconds"] = round(r["wall_clock_seconds"], 2)
res["datacenter_both_P4096_resident_MB"] = rss_mb("dc-parabola-p4096")
for p in (512, 4096):
    for c in (1, 4, 32):
        m = summary(f"mem-p{p}-c{c}")["memory"]
        res[f"blobs_P{p}_chunk{c}_peak_resident_MB"] = round(m["peak_resident_bytes"] / 1e6, 1)
        res[f"blobs_P{p}_chunk{c}_estimate_MB"] = round(m["estimate_bytes"] / 1e6, 1)
        res[f"blobs_P{p}_chunk{c}_resident_over_estimate (target 0.75 to 1.25)"] = round(
            m["peak_resident_bytes"] / m["estimate_bytes"], 3)
threads = run_of("fashion-threads-p2", "sync")
sim = run_of("fashion-sim-p64", "sync")
sim1 = run_of("fashion-sim-p64-1thread", "sync")
wall = lambda r: r["samples"] / r["wall_clock_seconds"]
res["fashion_threads_P2_samples_per_wall_second"] = round(wall(threads))
res["fashion_sim_P64_samples_per_wall_second"] = round(wall(sim))
res["fashion_sim_P64_one_thread_samples_per_wall_second"] = round(wall(sim1))
res["fashion_sim_P64_vs_threads_P2 (target >= 0.8)"] = round(wall(sim) / wall(threads), 3)
res["fashion_sim_P64_resident_MB"] = rss_mb("fashion-sim-p64")
res["fashion_sim_P64_virtual_samples_per_second"] = round(sim["samples_per_second"])
if table == "--table":
    rows = []
    for p in (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024):
        row = {"workers": p}
        for slow in ("none", "0.1:4"):
            s = summary(f"dc-p{p}-{slow}")
            sync = next(r for r in s["runs"] if r["mode"] == "sync")
            asyn = next(r for r in s["runs"] if r["mode"] == "async")
            key = "" if slow == "none" else "_slow10pct_x4"
            if slow != "none":
                row["slow_workers"] = round(0.1 * p)  # --slow-fraction rounds F x P to the nearest worker
            row["sync_idle" + key] = round(sync["idle_fraction"], 4)
            # The mean is P - 1 whatever the speeds (every push is stale by the pushes of the others in
            # flight); a slow worker shows in the tail.
            row["async_mean_staleness" + key] = round(asyn["staleness"]["mean"], 2)
            row["async_p99_staleness" + key] = asyn["staleness"]["p99"]
            row["async_max_staleness" + key] = asyn["staleness"]["max"]
            row["sync_virtual_samples_per_s" + key] = round(sync["samples_per_second"])
            row["async_virtual_samples_per_s" + key] = round(asyn["samples_per_second"])
        rows.append(row)
    out["datacenter_table (blobs 64-256-256-10, batch 4096 in chunks of 4, 20 sync updates' samples)"] = rows
print(json.dumps(out, indent=2))
PY
