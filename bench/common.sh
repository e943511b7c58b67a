# Sourced by the benchmarks that run the sgdscope binary beside the PyTorch peer (bench_mpi.sh,
# bench_time_to_accuracy.sh). Needs: name, here, build, PY, DATA, PEERS. Sets: die, now, psi, mark, work (a temporary folder,
# removed on exit), app (a private copy of the binary), work/binary.txt (which binary was measured), blas and
# peer_reason (empty when the peer can run, else why not).

die() { echo "$name: $*" >&2; exit 2; }
[ -x "$build/app/sgdscope" ] || die "build first ($build/app/sgdscope missing)"
[ -x "$PY" ] || die "$PY missing (needed for the JSON and the peer)"
[ -e "$DATA/train-images-idx3-ubyte.gz" ] || die "no Fashion-MNIST in $DATA; install Debian's dataset-fashion-mnist"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A private copy of the binary (presets are built in), so that a rebuild during the run cannot swap it.
cp "$build/app/sgdscope" "$work/sgdscope"
app=$work/sgdscope
# Which binary was measured (the repository moves while other sessions work on it): version, build time,
# checksum, and the commit and uncommitted source files of the tree it was (presumably) built from.
{
  echo "version=$("$app" --version 2>/dev/null | head -1)"
  echo "built=$(date -u -r "$build/app/sgdscope" +%Y-%m-%dT%H:%M:%SZ)"
  echo "sha256=$(sha256sum "$app" | cut -c1-16)"
  echo "git_head=$(git -C "$here" log -1 --format='%h %s' 2>/dev/null | cut -c1-100 || true)"
  echo "git_uncommitted=$(git -C "$here" status --short --untracked-files=no 2>/dev/null | awk '{print $2}' | tr '\n' ' ' || true)"
} > "$work/binary.txt"

# The peer: torch importable, the harness present, and its OpenBLAS (else the comparison is meaningless:
# the reference BLAS is about 25x slower). Any of them missing: our side only, and the JSON says why.
peer_reason=""
blas=""
if [ ! -f "$PEERS/torch_peer.py" ]; then
  peer_reason="no PyTorch harness at $PEERS (set PEERS)"
elif ! "$PY" -c 'import torch, numpy' 2>/dev/null; then
  peer_reason="$PY cannot import torch and numpy (install python3-torch)"
elif ! blas=$("$PEERS/setup_openblas.sh" 2>"$work/openblas.log" | tail -1) || [ ! -e "$blas/libblas.so.3" ]; then
  peer_reason="the peers' OpenBLAS is not available ($PEERS/setup_openblas.sh failed: $(tail -1 "$work/openblas.log"))"
fi
[ -z "$peer_reason" ] || echo "$name: PyTorch side skipped: $peer_reason" >&2

now() { date +%s%N; }  # nanoseconds
# The machine is shared: each run records the kernel's CPU pressure (PSI, /proc/pressure/cpu "some" total, in
# microseconds) before and after, i.e. how much of the run's wall time some runnable task waited for a core.
psi() { awk '/^some/ { sub("total=", "", $5); print $5 }' /proc/pressure/cpu 2>/dev/null || true; }
mark() { echo "$(psi) $(now)"; }
