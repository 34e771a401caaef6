#!/usr/bin/env bash
# Disk-bound benchmark: builds an endgame's own runs inside a memory cgroup that limits RAM
# and page cache together, so that what the build reads beyond the limit comes from the
# device. The sub-endgames are built first, outside the cgroup (and kept between runs).
# Prints wall time, peak RSS, the cgroup's peak (RAM + page cache), the bytes read from and
# written to the device (the block layer's counts for the process tree), and the bytes the
# build itself read and wrote (its log lines: most of them hit the page cache when it fits).
#
#   scripts/bench-diskbound.sh SIGNATURE LIMIT [THREADS] [EXTRA GEN OPTIONS...]
#   e.g. scripts/bench-diskbound.sh KQRvKR 128MiB 2 --mem 64MiB
#   LIMIT: bytes, or with a K/M/G/KiB/MiB/GiB suffix (powers of two); `none` runs without a
#   cgroup (the unconstrained figure to compare with, same output).
#   BENCH_DIR=... (default target/bench-tables), BENCH_BIN=path times another build,
#   BENCH_LOG=path keeps the build's log (its pass lines give each pass's busy shares).
#
# Needs root and cgroup v1 (the memory controller under /sys/fs/cgroup/memory) or v2 (a
# unified /sys/fs/cgroup with the memory controller). Caches are dropped before the run
# where the kernel lets us (`/proc/sys/vm/drop_caches`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/runs-of.sh
[ $# -ge 2 ] || { sed -n '2,18p' "$0"; exit 2; }
sig=$1
limit_arg=$2
threads=${3:-2}
shift $(( $# > 3 ? 3 : $# ))
extra=("$@")
dir=${BENCH_DIR:-target/bench-tables}

to_bytes() {
  python3 - "$1" <<'PY'
import re, sys
m = re.fullmatch(r"(\d+)\s*([KMGT]?)(i?B)?", sys.argv[1].strip(), re.I)
if not m:
    sys.exit(f"bench-diskbound: cannot read the limit {sys.argv[1]!r} (e.g. 128MiB, 4GiB)")
print(int(m.group(1)) << (10 * " KMGT".index((m.group(2) or " ").upper())))
PY
}

if [ -n "${BENCH_BIN:-}" ]; then
  bin=$(realpath "$BENCH_BIN")
else
  cargo build --release --quiet
  bin=$(realpath target/release/tbstream)
fi
mkdir -p "$dir"
runs=$(runs_of "$sig")
for r in $runs; do rm -f "$dir/$r.tbs"; done
# Sub-endgames (the closure) are built once, outside the cgroup, and kept: the runs `plan`
# lists as still to build, but the endgame's own.
subs=$("$bin" plan "$sig" --out "$dir" 2>/dev/null | grep -E '^K[A-Z]*v[A-Z]*: ' | cut -d: -f1 \
  | grep -vxF $(for r in $runs; do printf -- '-e %s ' "$r"; done) || true)
if [ -n "$subs" ]; then
  "$bin" gen $subs --out "$dir" --threads "$threads" >/dev/null 2>&1
fi
rm -rf "$dir/.work"
sync
echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || echo "(could not drop the page cache: not allowed here)"

cg=""
cleanup() {
  if [ -n "$cg" ] && [ -d "$cg" ]; then rmdir "$cg" 2>/dev/null || true; fi
}
trap cleanup EXIT
peak_file=""
if [ "$limit_arg" != none ]; then
  limit=$(to_bytes "$limit_arg")
  name="tbstream-bench-$$"
  if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
    cg=/sys/fs/cgroup/$name
    mkdir "$cg"
    echo "$limit" > "$cg/memory.max"
    echo 0 > "$cg/memory.swap.max" 2>/dev/null || true
    peak_file=$cg/memory.peak
  elif [ -d /sys/fs/cgroup/memory ]; then
    cg=/sys/fs/cgroup/memory/$name
    mkdir "$cg"
    echo "$limit" > "$cg/memory.limit_in_bytes"
    peak_file=$cg/memory.max_usage_in_bytes
  else
    echo "bench-diskbound: no memory cgroup here (neither v1 nor v2)" >&2
    exit 1
  fi
  procs=$cg/cgroup.procs
fi

log=$(mktemp)
start=$(date +%s.%N)
if [ -n "$cg" ]; then
  # The shell enters the cgroup, then becomes the timed build: everything it maps, reads
  # and writes is charged to the cgroup's limit.
  sh -c 'echo $$ > "$1"; shift; exec "$@"' sh "$procs" \
    /usr/bin/time -v "$bin" gen "$sig" --out "$dir" --threads "$threads" "${extra[@]}" 2>"$log" >/dev/null
else
  /usr/bin/time -v "$bin" gen "$sig" --out "$dir" --threads "$threads" "${extra[@]}" 2>"$log" >/dev/null
fi
end=$(date +%s.%N)
cg_peak=""
[ -n "$peak_file" ] && [ -f "$peak_file" ] && cg_peak=$(cat "$peak_file")

python3 - "$log" "$sig" "$limit_arg" "$threads" "$(python3 -c "print($end - $start)")" "${cg_peak:-}" "${extra[*]:-none}" <<'PY'
import re, sys
log, sig, limit, threads, wall, cg_peak, extra = sys.argv[1:8]
text = open(log).read()
def field(name):
    m = re.search(rf"{re.escape(name)}: (\S+)", text)
    return m.group(1) if m else "0"
units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
read = written = 0.0
for m in re.finditer(r"^(\S+): built in .*?read ([\d.]+) (\w+), written ([\d.]+) (\w+)", text, re.M):
    read += float(m.group(2)) * units[m.group(3)]
    written += float(m.group(4)) * units[m.group(5)]
gib = lambda b: f"{b / 2**30:.2f} GiB"
print(f"endgame:         {sig} (threads {threads}; options: {extra})")
print(f"limit:           {limit} (RAM + page cache)" if limit != "none" else "limit:           none")
print(f"wall time:       {float(wall):.1f} s")
print(f"peak RSS:        {int(field('Maximum resident set size (kbytes)')) // 1024} MiB")
if cg_peak:
    print(f"cgroup peak:     {int(cg_peak) / 2**20:.0f} MiB")
print(f"device read:     {gib(int(field('File system inputs')) * 512)}")
print(f"device written:  {gib(int(field('File system outputs')) * 512)}")
print(f"build read:      {gib(read)} (the passes, merge and compaction, through the page cache)")
print(f"build written:   {gib(written)}")
status = field("Exit status")
if status != "0":
    print(f"gen exited with status {status}:")
    print("\n".join(text.splitlines()[-15:]))
    sys.exit(1)
PY
if [ -n "${BENCH_LOG:-}" ]; then mv "$log" "$BENCH_LOG"; else rm -f "$log"; fi
