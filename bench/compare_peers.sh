#!/usr/bin/env bash
# Side by side, in one run: our trainers (bench_trainer, on every kernel path this CPU has), our kernels
# (bench_kernels: the square product's Gflop/s, the kernels' own peak here) and the PyTorch peer harness
# (../shared/peers, its OpenBLAS build), alternating, REPS times each; prints one JSON object with the medians
# and the ratios the issues set as targets. Needs python3-torch and the peers' OpenBLAS (peers/setup_openblas.sh).
# LeNet-5 (fashion-cnn) is measured the same way: our sync P = 1, 2 against torch's single process on 1 and 2
# threads (its oneDNN convolutions). ONLY=fashion-cnn (or fashion, parabola) runs that workload alone on both sides.
#   bench/compare_peers.sh [build-dir]      REPS=3 PEERS=../shared/peers SECONDS_PER=3 ONLY=
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
PEERS=${PEERS:-$here/../shared/peers}
REPS=${REPS:-3}
SECONDS_PER=${SECONDS_PER:-3}
ONLY=${ONLY:-}
case "$ONLY" in ""|parabola|fashion|fashion-cnn) ;; *) echo "compare_peers: ONLY=$ONLY: one of parabola, fashion, fashion-cnn" >&2; exit 2 ;; esac
wants() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }
for b in bench_trainer bench_kernels; do
  [ -x "$build/bench/$b" ] || { echo "compare_peers: build first ($build/bench/$b missing)" >&2; exit 2; }
done
[ -f "$PEERS/torch_peer.py" ] || { echo "compare_peers: no PyTorch harness at $PEERS (set PEERS)" >&2; exit 2; }
blas=$("$PEERS/setup_openblas.sh" 2>/dev/null | tail -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

peer() { LD_LIBRARY_PATH="$blas" timeout 280 /usr/bin/python3 "$PEERS/torch_peer.py" "$@" --out "$work/peer.jsonl" >/dev/null 2>>"$work/peer.log"; }
for rep in $(seq 1 "$REPS"); do
  echo "compare_peers: round $rep of $REPS" >&2
  "$build/bench/bench_trainer" --seconds "$SECONDS_PER" --reps 1 ${ONLY:+--only "$ONLY"} 2>/dev/null > "$work/ours-$rep.json"
  "$build/bench/bench_kernels" --seconds 1 --reps 1 2>/dev/null > "$work/kernels-$rep.json"
  if wants parabola; then
    peer seed --N 50 --mode single --threads 1 --rep "$rep" --tag seed
  fi
  if wants fashion; then
    peer fashion --mode single --threads 1 --seconds "$SECONDS_PER" --rep "$rep" --tag fashion
    peer fashion --mode single --threads 2 --seconds "$SECONDS_PER" --rep "$rep" --tag fashion
    peer fashion --mode hogwild --P 2 --seconds "$SECONDS_PER" --rep "$rep" --tag fashion
    peer fashion --mode accum --P 1 --k 3 --seconds "$SECONDS_PER" --rep "$rep" --tag fashion
    peer peak --seconds 2 --rep "$rep" --tag peak  # the GEMM bound: fashion's products alone, torch.mm, one thread
  fi
  if wants fashion-cnn; then
    peer fashion-cnn --mode single --threads 1 --seconds "$SECONDS_PER" --rep "$rep" --tag fashion-cnn
    peer fashion-cnn --mode single --threads 2 --seconds "$SECONDS_PER" --rep "$rep" --tag fashion-cnn
  fi
done

ONLY="$ONLY" /usr/bin/python3 - "$work" "$REPS" <<'PY'
import json, statistics, sys, glob, os
work, reps = sys.argv[1], int(sys.argv[2])
ours = {}
for f in sorted(glob.glob(os.path.join(work, "ours-*.json"))):
    for r in json.load(open(f))["results"]:
        key = (r["workload"], r["mode"], r["workers"], r["accum"], r["kernels"], r.get("chunk", 0), r.get("async_apply", ""))
        ours.setdefault(key, []).append(r)
peer = {}
for line in open(os.path.join(work, "peer.jsonl")):
    r = json.loads(line)
    key = (r["workload"], r.get("mode"), r.get("threads"), r.get("P"), r.get("k"))
    peer.setdefault(key, []).append(r)

def med(rs, field):
    v = sorted(x[field] for x in rs)
    return {"median": round(statistics.median(v), 1), "min": round(v[0], 1), "max": round(v[-1], 1)}

out = {"benchmark": "sgdscope vs PyTorch peer (OpenBLAS), alternating", "rounds": reps, "ours": [], "peer": [], "ratios": {}}
for key, rs in sorted(ours.items()):
    out["ours"].append({"workload": key[0], "mode": key[1], "workers": key[2], "accum": key[3], "kernels": key[4],
                        "chunk": key[5], "async_apply": key[6] or None,
                        "samples_per_s": med(rs, "samples_per_s"), "updates_per_s": med(rs, "updates_per_s"),
                        "ms_per_update": med(rs, "ms_per_update")})
for key, rs in sorted(peer.items(), key=str):
    if key[0] == "peak":
        continue  # reported as the GEMM bound below
    e = {"workload": key[0], "mode": key[1], "threads": key[2], "P": key[3], "k": key[4], "samples_per_s": med(rs, "samples_per_s"),
         "blas": rs[0].get("blas")}
    if "steps_per_s" in rs[0]:
        e["updates_per_s"] = med(rs, "steps_per_s")
    out["peer"].append(e)

paths = sorted({key[4] for key in ours}, key=["avx512", "avx2", "scalar"].index)
fastest = paths[0] if paths else None
def ours_med(workload, mode, workers, accum, field="samples_per_s", path=None, chunk=0, apply=""):
    rs = ours.get((workload, mode, workers, accum, path or fastest, chunk, apply))
    return statistics.median(r[field] for r in rs) if rs else None
def peer_med(workload, mode, threads, P, k, field="samples_per_s"):
    rs = peer.get((workload, mode, threads, P, k))
    return statistics.median(r[field] for r in rs) if rs else None
def ratio(a, b):
    return round(a / b, 3) if a and b else None

# The GEMM bound, measured in the same rounds: samples/s of fashion's matrix products alone (forward and
# backward of a 256-sample batch) with torch.mm on one thread (the peers' `peak` workload).
peaks = [r["fashion_gemm_only_samples_per_s_t1"] for r in peer.get(("peak", None, None, None, None), [])]
gemm_bound = statistics.median(peaks) if peaks else None
out["gemm_bound_samples_per_s (peak, fashion products alone, 1 thread)"] = round(gemm_bound) if gemm_bound else None
# The kernels' own peak on this machine, per path: a 1024^3 product through the forward kernel.
square = {}
for f in sorted(glob.glob(os.path.join(work, "kernels-*.json"))):
    for p in json.load(open(f))["paths"]:
        square.setdefault(p["path"], []).append(p["square_1024"]["forward_gflops"])
out["square_1024_forward_gflops"] = {p: round(statistics.median(v), 1) for p, v in square.items()}
# fashion's training step: 2 x 503,552 flops a sample (forward; weight gradients; input gradients below the
# first layer), as bench_kernels counts them
flops_per_sample = 2.0 * ((784 * 256 + 256 * 128 + 128 * 10) * 3 - 784 * 256)
def step_share(path):
    sps = ours_med("fashion", "sync", 1, 1, path=path)
    peak = statistics.median(square[path]) if path in square else None
    return round(sps * flops_per_sample / 1e9 / peak, 3) if sps and peak else None

out["ratios"] = {
    "kernels_path": fastest,
    "parabola_sync_P1_updates_vs_torch_single (target >= 100)": ratio(ours_med("parabola", "sync", 1, 1, "updates_per_s"), peer_med("seed", "single", 1, 1, 1, "steps_per_s")),
    "fashion_sync_P1_vs_torch_1_thread (target >= 1.6 on avx512)": ratio(ours_med("fashion", "sync", 1, 1), peer_med("fashion", "single", 1, 1, 1)),
    "fashion_sync_P2_vs_torch_2_threads (target >= 1.5 on avx512)": ratio(ours_med("fashion", "sync", 2, 1), peer_med("fashion", "single", 2, 1, 1)),
    "fashion_sync_P1_vs_torch_1_thread_avx2 (target >= 1.2)": ratio(ours_med("fashion", "sync", 1, 1, path="avx2"), peer_med("fashion", "single", 1, 1, 1)),
    "fashion_sync_P2_vs_torch_2_threads_avx2 (target >= 1.2)": ratio(ours_med("fashion", "sync", 2, 1, path="avx2"), peer_med("fashion", "single", 2, 1, 1)),
    "fashion_sync_P1_K3_vs_torch_accum_P1_k3": ratio(ours_med("fashion", "sync", 1, 3), peer_med("fashion", "accum", 1, 1, 3)),
    # Like against like: our lock-free async (Hogwild!) against PyTorch's Hogwild; our lock (parameter
    # server) variant is listed beside it.
    "fashion_async_lockfree_P2_vs_torch_hogwild_P2 (target >= 1.0)": ratio(ours_med("fashion", "async", 2, 1, apply="lockfree"), peer_med("fashion", "hogwild", 1, 2, 1)),
    "fashion_async_lock_P2_vs_torch_hogwild_P2": ratio(ours_med("fashion", "async", 2, 1, apply="lock"), peer_med("fashion", "hogwild", 1, 2, 1)),
    # The automatic chunks (8 samples at batch 256) against chunks of 64: what the fixed tree costs.
    "fashion_sync_P1_chunk8_vs_chunk64 (target >= 0.9)": ratio(ours_med("fashion", "sync", 1, 1), ours_med("fashion", "sync", 1, 1, chunk=64)),
    "fashion_sync_P2_chunk8_vs_chunk64 (target >= 0.9)": ratio(ours_med("fashion", "sync", 2, 1), ours_med("fashion", "sync", 2, 1, chunk=64)),
    # Gflop/s inside the training step (sync P = 1, the whole trainer) against the kernels' square product.
    "fashion_sync_P1_step_gflops_share_of_square (target >= 0.75)": step_share(fastest),
    "fashion_sync_P1_step_gflops_share_of_square_avx2": step_share("avx2"),
    "fashion_sync_P1_share_of_torch_gemm_bound": ratio(ours_med("fashion", "sync", 1, 1), gemm_bound),
    # LeNet-5: our sync (chunks of 8, the fixed tree) against torch's single process (oneDNN convolutions).
    "fashion_cnn_sync_P1_vs_torch_1_thread (target >= 1.5 on avx512)": ratio(ours_med("fashion-cnn", "sync", 1, 1), peer_med("fashion-cnn", "single", 1, 1, 1)),
    "fashion_cnn_sync_P2_vs_torch_2_threads (target >= 1.5 on avx512)": ratio(ours_med("fashion-cnn", "sync", 2, 1), peer_med("fashion-cnn", "single", 2, 1, 1)),
    "fashion_cnn_sync_P1_vs_torch_1_thread_avx2": ratio(ours_med("fashion-cnn", "sync", 1, 1, path="avx2"), peer_med("fashion-cnn", "single", 1, 1, 1)),
    "fashion_cnn_sync_P2_vs_torch_2_threads_avx2": ratio(ours_med("fashion-cnn", "sync", 2, 1, path="avx2"), peer_med("fashion-cnn", "single", 2, 1, 1)),
}
if os.environ.get("ONLY"):  # one workload: the others' ratios have nothing to compare
    out["ratios"] = {k: v for k, v in out["ratios"].items() if v is not None or k == "kernels_path"}
print(json.dumps(out, indent=2))
PY
