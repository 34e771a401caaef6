#!/usr/bin/env bash
# Benchmark: builds an endgame's sub-endgames first, then times the endgame's own runs.
# Prints wall time, CPU time, peak RSS, positions per second and where the time goes.
#
#   scripts/bench.sh [SIGNATURE] [THREADS]      (default: KQRvKR 2)
set -euo pipefail
cd "$(dirname "$0")/.."
sig=${1:-KQRvKR}
threads=${2:-2}
dir=${BENCH_DIR:-target/bench-tables}
cargo build --release --quiet
bin=target/release/tbstream
mkdir -p "$dir"
# Sub-endgames (the closure) are built once and kept between benchmark runs.
"$bin" gen "$sig" --out "$dir" --threads "$threads" >/dev/null 2>&1
# The endgame's own runs: the signature and its colour swap.
runs=$(python3 - "$sig" <<'PY'
import sys
s = sys.argv[1].replace('V', 'v')
w, b = (s.split('v') if 'v' in s else (s[:s.index('K', 1)], s[s.index('K', 1):]))
runs = {f"{w}v{b}", f"{b}v{w}"}
print(" ".join(r for r in runs if r.split('v')[0] != 'K'))
PY
)
for r in $runs; do rm -f "$dir/$r.tbs"; done
log=$(mktemp)
/usr/bin/time -v "$bin" gen "$sig" --out "$dir" --threads "$threads" 2>"$log" >/dev/null
wall=$(grep 'Elapsed (wall clock)' "$log" | awk '{print $NF}')
user=$(grep 'User time' "$log" | awk '{print $NF}')
sys=$(grep 'System time' "$log" | awk '{print $NF}')
rss=$(grep 'Maximum resident' "$log" | awk '{print $NF}')
men=$(( $(echo "$sig" | tr -cd 'KQRBN' | wc -c) ))
positions=0
for r in $runs; do positions=$(( positions + 2 * 10 * (64 ** (men - 1)) )); done
secs=$(python3 -c "
t='$wall'.split(':'); s=0.0
for x in t: s = s*60 + float(x)
print(s)")
echo "endgame:        $sig (runs: $runs; threads: $threads)"
echo "wall time:      ${secs} s"
echo "cpu time:       $(python3 -c "print(round($user + $sys, 2))") s (user $user, sys $sys)"
echo "peak RSS:       $(( rss / 1024 )) MiB"
echo "positions:      $positions (both runs, both sides to move)"
echo "positions/s:    $(python3 -c "print(f'{$positions / $secs / 1e6:.1f} M')")"
echo "stages:"
grep -E '^(K[A-Z]*v[A-Z]*): built' "$log" | sed 's/^/  /'
rm -f "$log"
