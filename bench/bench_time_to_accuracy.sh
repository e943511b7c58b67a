#!/usr/bin/env bash
# Time to 0.88 Fashion-MNIST TEST accuracy: sgdscope (threads engine) side by side with the PyTorch peer
# harness (../shared/peers/torch_peer.py, Debian's OpenBLAS unpacked by its setup_openblas.sh), alternating
# within each round, REPS rounds. Prints one JSON object on stdout (progress on stderr).
#
#   bench/bench_time_to_accuracy.sh [build-dir]
#   environment: REPS=2  EPOCHS=20 (cap, both sides)  TARGET=0.88 (0.90 for fashion-cnn)  PEERS=../shared/peers
#                WORKLOAD=fashion (the MLP below) | fashion-cnn (LeNet-5, the fashion-cnn preset)
#
# WORKLOAD=fashion-cnn: LeNet-5 (conv 6@5x5 p2, relu, maxpool 2, conv 16@5x5, relu, maxpool 2, 400-120-84-10),
# the same batch, lr, momentum, data and evaluation as below, from PyTorch's default init exported by
# torch_peer.py net-oracle --net fashion-cnn --make-init (state_dict names, read by --init). Configurations:
#   sync P=1 <-> torch single process, 1 thread;  sync P=2 <-> torch single process, 2 threads and torch DDP P=2
# (torch's best configuration for LeNet-5 here is its single process on 2 threads: oneDNN convolutions).
#
# Configurations (ours <-> theirs, like for like):
#   sync P=1                      <-> torch single process, 1 thread
#   sync P=2                      <-> torch DDP (gloo, loopback) P=2
#   async P=2 --async-apply lockfree <-> torch Hogwild P=2 (split batch: 128 rows per worker step)
#   async P=2 --async-apply lock  (parameter-server style; listed beside it, no torch twin)
#   async P=1                     (reference; at P=1 async is plain sequential SGD)
#
# Same model and hyperparameters on both sides (torch_peer.py fashion defaults, passed explicitly to both):
#   MLP 784-256-128-10, ReLU, softmax cross-entropy (mean over the batch), float32, global batch 256,
#   SGD lr 0.05, momentum 0.9 (torch.optim.SGD form; async/Hogwild: one momentum buffer per worker),
#   pixels byte/255, 60,000 train / 10,000 test, the last 96 samples of each epoch dropped (234 steps).
#   Initial weights: torch's default nn.Linear init after torch.manual_seed(0), i.e. the very tensors the
#   peer starts from, exported to safetensors (torch_peer.dense_net + write_safetensors) and loaded by
#   sgdscope with --init. (Without torch, sgdscope falls back to the preset's --weight-init he.)
# Differences that remain:
#   - data order: torch shuffles with torch.randperm (seed 4321+epoch), sgdscope with its own seeded
#     Fisher-Yates (--seed 0); same batch size and drop-last, different permutations. With lr 0.05 and
#     momentum 0.9 the test-accuracy curve wobbles by about +-0.005 from epoch to epoch, so the epoch at
#     which 0.88 is first crossed varies by a few epochs with the data order (and between torch's own
#     single and DDP runs, which are the same mathematics). Compare samples_to_target and samples/s too.
#   - async: sgdscope's workers are threads in one process, torch's Hogwild workers are processes sharing
#     the model in shared memory.
# Evaluation granularity: torch_peer.py only evaluates once per epoch (--epochs E: train/test loss and
#   accuracy after every epoch; --target-acc reports the first epoch whose test accuracy reaches the
#   target, and the cumulative training seconds to it; it does not stop early). sgdscope is set to the same
#   granularity: --eval-every 234 (updates of 256 = one epoch), --epochs EPOCHS cap, --target-accuracy
#   stops at the first evaluation that reaches the target. Both figures are thus epoch-granular: the time
#   at the end of the first epoch whose model reaches the target.
# What each clock counts (training only, on both sides):
#   - ours, summary.json runs[].seconds_to_target: the mode's training clock, the sum of every sync
#     update's wall time (start of the team to its join, barrier and apply included) or of every async
#     slice's wall time; evaluations, data loading and process start are outside it.
#   - torch, record seconds_to_target: the sum of the per-epoch training times, each timed between two
#     barriers (gathering each batch's rows is inside); the per-epoch evaluation (about 0.45 s), data
#     loading and process spawn are outside it.
# samples_to_target: ours from summary.json (samples applied when the target was first seen); torch's is
#   epoch_reached_target x 234 x 256. Ratios are ours / theirs (below 1: we are faster or need fewer).
# cpu_pressure(_pct): the machine is shared (other sessions build and test on it); each run records the
#   share of its wall time during which some runnable task waited for a core (/proc/pressure/cpu). Runs
#   that use at most 2 busy threads on an idle 2-core machine show a few percent; much more means another
#   process competed for the cores, and that run's time is not comparable.
# Run time on this 2-core machine: 5 to 6 minutes (REPS=2).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
PEERS=${PEERS:-$here/../shared/peers}
REPS=${REPS:-2}
EPOCHS=${EPOCHS:-20}
WORKLOAD=${WORKLOAD:-fashion}
case "$WORKLOAD" in
  fashion) TARGET=${TARGET:-0.88} ;;
  fashion-cnn) TARGET=${TARGET:-0.90} ;;
  *) echo "bench_time_to_accuracy: WORKLOAD=$WORKLOAD: one of fashion, fashion-cnn" >&2; exit 2 ;;
esac
PY=/usr/bin/python3
DATA=/usr/share/datasets/fashion-mnist
BATCH=256 LR=0.05 MOMENTUM=0.9
PER_EPOCH=$((60000 / BATCH))

name=bench_time_to_accuracy
# shellcheck source=bench/common.sh
. "$here/bench/common.sh"

# Initial weights: the peer's own (torch default init after manual_seed(0)), when torch is there.
init=(--weight-init he)
init_desc="he (sgdscope preset; torch or the harness unavailable, so not the peer's init)"
if [ "$WORKLOAD" = fashion-cnn ] && "$PY" -c 'import torch' 2>/dev/null && [ -f "$PEERS/torch_peer.py" ]; then
  "$PY" "$PEERS/torch_peer.py" net-oracle --net fashion-cnn --make-init "$work/init.safetensors" >/dev/null \
    2>"$work/init.log" || die "could not export the peer's initial weights: $(tail -1 "$work/init.log")"
  init=(--init "$work/init.safetensors")
  init_desc="torch default init after torch.manual_seed(0), from torch_peer.py net-oracle --net fashion-cnn --make-init (--init)"
elif "$PY" -c 'import torch' 2>/dev/null && [ -f "$PEERS/torch_peer.py" ]; then
  "$PY" - "$PEERS" "$work/init.safetensors" <<'PY' || die "could not export the peer's initial weights"
import sys
sys.path.insert(0, sys.argv[1])
import torch_peer as tp
net = tp.dense_net(tp.FASHION_DIMS, "relu")
tp.write_safetensors(sys.argv[2], dict(net.state_dict()), {"format": "pt", "init": "torch default after manual_seed(0)"})
PY
  init=(--init "$work/init.safetensors")
  init_desc="torch default nn.Linear init after torch.manual_seed(0), exported from torch_peer.dense_net (--init)"
fi

model=(--preset fashion-mnist --layers 784,256,128,10 --activation relu --loss cross-entropy)
# The fashion-cnn preset decays its lr linearly over its 20 epochs; the twin keeps lr constant: so do we here.
[ "$WORKLOAD" = fashion ] || model=(--preset fashion-cnn --lr-schedule constant)
common=(--headless "${model[@]}"
        --batch "$BATCH" --lr "$LR" --momentum "$MOMENTUM" --seed 0 "${init[@]}"
        --epochs "$EPOCHS" --eval-every "$PER_EPOCH" --target-accuracy "$TARGET")

ours() { # ours NAME REP MODE P [ASYNC_APPLY]
  local name=$1 rep=$2 mode=$3 p=$4 apply=${5:-} extra=() rc=0
  [ -z "$apply" ] || extra=(--async-apply "$apply")
  echo "bench_time_to_accuracy: round $rep: ours $name" >&2
  local m0; m0=$(mark)
  "$app" "${common[@]}" --mode "$mode" --workers "$p" "${extra[@]}" --out "$work/ours-$name-$rep" \
    >"$work/ours-$name-$rep.log" 2>&1 || rc=$?
  # 3: diverged (the summary is still written and says so)
  [ "$rc" = 0 ] || [ "$rc" = 3 ] || die "our run $name failed (exit $rc): $(tail -1 "$work/ours-$name-$rep.log")"
  echo "$m0 $(mark)" > "$work/ours-$name-$rep.psi"
}
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
peer() { # peer NAME REP ARGS...
  local name=$1 rep=$2; shift 2
  [ -z "$peer_reason" ] || return 0
  echo "bench_time_to_accuracy: round $rep: torch $name" >&2
  local m0; m0=$(mark)
  LD_LIBRARY_PATH="$blas${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 280 "$PY" "$PEERS/torch_peer.py" "$WORKLOAD" "$@" \
    --batch "$BATCH" --lr "$LR" --momentum "$MOMENTUM" --epochs "$EPOCHS" --target-acc "$TARGET" --port "$port" \
    --tag "$name" --rep "$rep" --out "$work/peer.jsonl" >/dev/null 2>"$work/peer-$name-$rep.log" ||
    echo "bench_time_to_accuracy: torch $name failed: $(tail -1 "$work/peer-$name-$rep.log")" >&2
  echo "$m0 $(mark)" > "$work/peer-$name-$rep.psi"
}

start=$(date +%s)
for rep in $(seq 1 "$REPS"); do
  if [ "$WORKLOAD" = fashion-cnn ]; then
    ours sync_P1 "$rep" sync 1
    peer torch_single "$rep" --mode single --threads 1
    ours sync_P2 "$rep" sync 2
    peer torch_single_t2 "$rep" --mode single --threads 2
    peer torch_ddp_P2 "$rep" --mode ddp --P 2
    continue
  fi
  ours sync_P1 "$rep" sync 1
  peer torch_single "$rep" --mode single --threads 1
  ours sync_P2 "$rep" sync 2
  peer torch_ddp_P2 "$rep" --mode ddp --P 2
  ours async_lockfree_P2 "$rep" async 2 lockfree
  peer torch_hogwild_P2 "$rep" --mode hogwild --P 2
  ours async_lock_P2 "$rep" async 2 lock
  ours async_P1 "$rep" async 1
done
elapsed=$(( $(date +%s) - start ))

"$PY" - "$work" "$REPS" "$EPOCHS" "$TARGET" "$PER_EPOCH" "$BATCH" "$elapsed" "$peer_reason" "$init_desc" "$WORKLOAD" <<'PY'
import glob, json, os, statistics, sys
def binary_info(path):
    info = dict(line.rstrip("\n").split("=", 1) for line in open(path) if "=" in line)
    info["git_uncommitted"] = info.get("git_uncommitted", "").split()
    return info
work, reps, epochs, target, per_epoch, batch, elapsed, peer_reason, init_desc, workload = sys.argv[1:]
reps, epochs, target, per_epoch, batch = int(reps), int(epochs), float(target), int(per_epoch), int(batch)
epoch_samples = per_epoch * batch

def pressure(text):
    """Percent of the run's wall time during which some runnable task waited for a CPU (PSI), or None."""
    v = text.split()
    if len(v) != 4:
        return None
    p0, t0, p1, t1 = (int(x) for x in v)
    return round(100 * (p1 - p0) / max(1, (t1 - t0) / 1000), 1)

def stats(values):
    v = sorted(x for x in values if x is not None)
    if not v:
        return None
    return {"median": round(statistics.median(v), 4), "min": round(v[0], 4), "max": round(v[-1], 4)}

def summarize(runs):
    """runs: one dict per rep with seconds, samples, epochs, samples_per_s, final_test_acc, best_test_acc."""
    reached = [r for r in runs if r["seconds"] is not None]
    return {
        "reached": f"{len(reached)}/{len(runs)}",
        "seconds_to_target": stats(r["seconds"] for r in runs),
        "samples_to_target": stats(r["samples"] for r in runs),
        "epochs_to_target": stats(r["epochs"] for r in runs),
        "training_samples_per_s": stats(r["samples_per_s"] for r in runs),
        "best_test_acc": stats(r["best_test_acc"] for r in runs),
        "per_rep": runs,
    }

ours = {}
for d in sorted(glob.glob(os.path.join(work, "ours-*"))):
    if not os.path.isdir(d):
        continue
    name, rep = os.path.basename(d)[5:].rsplit("-", 1)
    s = json.load(open(os.path.join(d, "summary.json")))
    r = s["runs"][0]
    best = None
    with open(os.path.join(d, "metrics.csv")) as f:
        head = f.readline().strip().split(",")
        col = head.index("test_accuracy")
        for line in f:
            cells = line.strip().split(",")
            if cells[col]:
                best = max(best or 0.0, float(cells[col]))
    ours.setdefault(name, []).append({
        "rep": int(rep),
        "seconds": r["seconds_to_target"] and round(r["seconds_to_target"], 4),
        "samples": r["samples_to_target"],
        "epochs": r["samples_to_target"] and round(r["samples_to_target"] / epoch_samples, 3),
        "samples_per_s": round(r["samples"] / r["seconds"], 1),
        "trained_seconds": round(r["seconds"], 4),
        "final_test_acc": r.get("test_accuracy"),
        "best_test_acc": best,
        "diverged": r["diverged"],
        "mean_staleness": round(r["staleness"]["mean"], 3),
        "cpu_pressure_pct": pressure(open(d + ".psi").read()),
    })
    ours[name].sort(key=lambda x: x["rep"])
    # The settings every run shares (mode, workers and async-apply differ; the init file is a temp path).
    config = {k: v for k, v in s["config"].items() if k not in ("mode", "workers", "async-apply")}
    if "init" in config:
        config["init"] = "peer's init exported to safetensors (see init)"

peer = {}
peer_path = os.path.join(work, "peer.jsonl")
if os.path.exists(peer_path):
    for line in open(peer_path):
        r = json.loads(line)
        ep = r["epochs"]
        trained = sum(e["seconds"] for e in ep[1:])
        peer.setdefault(r["tag"], []).append({
            "rep": r["rep"],
            "seconds": r["seconds_to_target"] and round(r["seconds_to_target"], 4),
            "samples": r["epoch_reached_target"] and r["epoch_reached_target"] * epoch_samples,
            "epochs": r["epoch_reached_target"],
            "samples_per_s": round(r["samples_per_s"], 1),
            "trained_seconds": round(trained, 4),
            "epochs_done": r["epochs_done"],
            "final_test_acc": round(r["final_test_acc"], 4),
            "best_test_acc": round(max(e["test_acc"] for e in ep), 4),
            "diverged": r["diverged"],
            "blas": r.get("blas"),
            "cpu_pressure_pct": pressure(open(os.path.join(work, f"peer-{r['tag']}-{r['rep']}.psi")).read()),
        })

out = {
    "benchmark": f"time to {target} Fashion-MNIST test accuracy ({workload}): sgdscope threads engine vs PyTorch peer",
    "settings": {
        "model": "MLP 784-256-128-10 ReLU, softmax cross-entropy, float32" if workload == "fashion" else
                 "LeNet-5 (conv 6@5x5 p2, relu, maxpool 2, conv 16@5x5, relu, maxpool 2, 400-120-84-10 relu), softmax cross-entropy, float32",
        "batch": batch, "lr": 0.05, "momentum": 0.9, "init": init_desc,
        "evaluation": f"test accuracy once per epoch ({per_epoch} updates of {batch}) on both sides; times are epoch-granular",
        "cap_epochs": epochs, "rounds": reps,
        "clock": "training time only on both sides (evaluation, data loading and process start excluded)",
        "remaining_differences": "data order (torch.randperm vs sgdscope's seeded shuffle); async workers are threads (ours) vs processes (torch Hogwild)",
        "sgdscope_config": config,
    },
    "sgdscope_binary": binary_info(os.path.join(work, "binary.txt")),
    "ours": {k: summarize(v) for k, v in sorted(ours.items())},
    "torch": {k: summarize(v) for k, v in sorted(peer.items())} if not peer_reason else None,
    "torch_skipped": peer_reason or None,
    "torch_reference_from_issue_seconds": {"torch_single": 10.7, "torch_ddp_P2": 17.9, "torch_hogwild_P2": 7.6}
        if workload == "fashion" else {"torch_single": 43.0},
    "ratios_ours_over_torch": {},
    "script_seconds": int(elapsed),
}

def med(group, name, field):
    g = group.get(name)
    s = g and g.get(field)
    return s and s["median"]

def ratio(a, b):
    return round(a / b, 3) if a and b else None

if not peer_reason:
    o = out["ours"]
    t = out["torch"]
    pairs = ((("sync_P1", "torch_single"), ("sync_P2", "torch_ddp_P2"), ("async_lockfree_P2", "torch_hogwild_P2"),
              ("async_lock_P2", "torch_hogwild_P2")) if workload == "fashion" else
             (("sync_P1", "torch_single"), ("sync_P2", "torch_single_t2"), ("sync_P2", "torch_ddp_P2")))
    # against torch's best configuration: the one with the fewest seconds to the target
    reached = {k: med(t, k, "seconds_to_target") for k in t}
    reached = {k: v for k, v in reached.items() if v}
    if reached:
        best = min(reached, key=reached.get)
        out["torch_best_configuration"] = best
        for ours_name in o:
            out["ratios_ours_over_torch"][f"{ours_name} / best torch ({best}): seconds_to_target"] = ratio(
                med(o, ours_name, "seconds_to_target"), reached[best])
    for ours_name, torch_name in pairs:
        out["ratios_ours_over_torch"][f"{ours_name} / {torch_name}"] = {
            field: ratio(med(o, ours_name, field), med(t, torch_name, field))
            for field in ("seconds_to_target", "samples_to_target", "training_samples_per_s")
        }
print(json.dumps(out, indent=2))
PY
