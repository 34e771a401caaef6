#!/usr/bin/env bash
# Benchmark: builds an endgame's sub-endgames first, then times the endgame's own runs.
# Runs with pawns are reported per level (`KRPvKR/5` is level 5 of KRPvKR).
# Prints wall time, CPU time, peak RSS, positions per second, where the time goes, the bytes
# read and written, MB/s and the reader's, workers' and writer's busy shares per pass kind,
# the delta streams' size, and the disk's own speed.
#
#   scripts/bench.sh [SIGNATURE] [THREADS] [EXTRA GEN OPTIONS...]   (default: KQRvKR 2)
#   BENCH_DIR=... (default target/bench-tables), BENCH_DISK=0 skips the dd measurement,
#   BENCH_BIN=path times another build of tbstream (e.g. a saved binary of an earlier commit).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/runs-of.sh
sig=${1:-KQRvKR}
threads=${2:-2}
shift $(( $# > 2 ? 2 : $# ))
extra=("$@")
dir=${BENCH_DIR:-target/bench-tables}
if [ -n "${BENCH_BIN:-}" ]; then
  bin=$BENCH_BIN
else
  cargo build --release --quiet
  bin=target/release/tbstream
fi
mkdir -p "$dir"
# Sub-endgames (the closure) are built once and kept between benchmark runs.
"$bin" gen "$sig" --out "$dir" --threads "$threads" >/dev/null 2>&1
# The endgame's own runs: the signature and its colour swap.
runs=$(runs_of "$sig")
for r in $runs; do rm -f "$dir/$r.tbs"; done
sync
log=$(mktemp)
/usr/bin/time -v "$bin" gen "$sig" --out "$dir" --threads "$threads" "${extra[@]}" 2>"$log" >/dev/null
wall=$(grep 'Elapsed (wall clock)' "$log" | awk '{print $NF}')
user=$(grep 'User time' "$log" | awk '{print $NF}')
sys=$(grep 'System time' "$log" | awk '{print $NF}')
rss=$(grep 'Maximum resident' "$log" | awk '{print $NF}')
# Positions per side of each run, as `plan` gives them (pawn runs count their slices).
positions=0
for r in $runs; do
  n=$("$bin" plan "$r" --out "$dir" 2>/dev/null | grep -E "^$r: " | sed -E 's/.* ([0-9]+) positions\/side.*/\1/')
  positions=$(( positions + 2 * n ))
done
secs=$(python3 -c "
t='$wall'.split(':'); s=0.0
for x in t: s = s*60 + float(x)
print(s)")
echo "endgame:        $sig (runs: $runs; threads: $threads; options: ${extra[*]:-none})"
echo "wall time:      ${secs} s"
echo "cpu time:       $(python3 -c "print(round($user + $sys, 2))") s (user $user, sys $sys)"
echo "peak RSS:       $(( rss / 1024 )) MiB"
echo "positions:      $positions (both runs, both sides to move)"
echo "positions/s:    $(python3 -c "print(f'{$positions / $secs / 1e6:.1f} M')")"
echo "runs:"
grep -E '^(K[A-Z]*v[A-Z]*): built' "$log" | sed 's/^/  /'
# Per pass kind: time, bytes moved and throughput, from the passes' log lines.
python3 - "$log" <<'PY'
import re, sys
units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
size = lambda n, u: float(n) * units[u]
kinds = {}
pat = re.compile(r"^(\S+) (init white|init black|step +\d+ (white|black)): .*read ([\d.]+) (\w+), written ([\d.]+) (\w+), .*\(([\d.]+)s\)$")
merge = re.compile(r"^(\S+) merge: .*\(([\d.]+)s\)$")
merges = {}
busy_pat = re.compile(r"busy: reader (\d+)%, workers (\d+)%, writer (\d+)%.*\(([\d.]+)s\)$")
busy = {}
for line in open(sys.argv[1]):
    mm = merge.match(line.strip())
    if mm:
        merges[mm.group(1)] = merges.get(mm.group(1), 0.0) + float(mm.group(2))
    m = pat.match(line.strip())
    if m:
        kind = "init" if m.group(2).startswith("init") else f"{m.group(3)} steps"
        k = kinds.setdefault((m.group(1), kind), [0, 0.0, 0.0, 0.0])
        k[0] += 1; k[1] += size(m.group(4), m.group(5)); k[2] += size(m.group(6), m.group(7)); k[3] += float(m.group(8))
        b = busy_pat.search(line.strip())
        if b:
            # Busy shares weighted by the pass's seconds.
            t = float(b.group(4))
            acc = busy.setdefault((m.group(1), kind), [0.0, 0.0, 0.0, 0.0])
            for j in range(3):
                acc[j] += float(b.group(j + 1)) * t
            acc[3] += t
print("passes (per run and kind: count, seconds, read, written, MB/s):")
for (run, kind), (n, r, w, s) in sorted(kinds.items()):
    print(f"  {run:8} {kind:12} {n:3} passes {s:7.2f} s  read {r/2**20:8.1f} MiB  written {w/2**20:8.1f} MiB  {(r+w)/1e6/max(s,1e-9):7.0f} MB/s")
if busy:
    print("busy shares (per run and kind, weighted by time: reader, workers per thread, writer):")
    for (run, kind), (r, w, c, t) in sorted(busy.items()):
        t = max(t, 1e-9)
        print(f"  {run:8} {kind:12} reader {r/t:3.0f}%  workers {w/t:3.0f}%  writer {c/t:3.0f}%")
print("merges (per run, or per run and level with pawns: seconds):")
for run, s in sorted(merges.items()):
    print(f"  {run:10} {s:7.2f} s")
PY
rm -f "$log"
# The disk's own streaming speed (1 GiB, direct I/O) in the bench folder, for comparison.
if [ "${BENCH_DISK:-1}" != 0 ]; then
  f="$dir/dd-test.bin"
  w=$(dd if=/dev/zero of="$f" bs=4M count=256 oflag=direct 2>&1 | tail -1 | awk -F', ' '{print $NF}')
  r=$(dd if="$f" of=/dev/null bs=4M iflag=direct 2>&1 | tail -1 | awk -F', ' '{print $NF}')
  rm -f "$f"
  echo "disk (dd, 1 GiB, direct I/O): write $w, read $r"
fi
