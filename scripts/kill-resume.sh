#!/usr/bin/env bash
# Kill-and-resume campaign: builds SIGNATURE uninterrupted, then again while sending SIGKILL
# at KILLS random moments, each time resuming with the same command. Every finished build
# is compared byte for byte with the uninterrupted one.
#
#   scripts/kill-resume.sh N                          N kills of KQRvKR with --mem 16MiB
#   scripts/kill-resume.sh [SIGNATURE] [MEM] [KILLS]  (default: KQRvKR 16MiB 20)
#
# Prints each kill, then: kills, finished runs (builds that reached the end and were
# compared), runs that resumed an interrupted job, and mismatches. Exits 1 on any mismatch
# or a work folder left behind. KILL_RESUME_BIN=path runs another build of tbstream.
#
# KILL_FROM=S KILL_TO=T: each kill instead hits a fresh build at a random moment between S and
# T seconds, which then resumes to the end and is compared (KQRvKR's sparse steps, from
# step 12 on, run between about 1.2 and 1.7 s of a fresh build on 2 cores).
#
# KILL_RESUME_RANKS="0 2 3": each launch (killed or resuming) picks one of these rank counts,
# 0 meaning a plain process, others `mpirun --bind-to none -np N` (the build gets the `mpi`
# feature); a kill hits one of the ranks at random (docs/DISTRIBUTED.md).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  sig=KQRvKR mem=16MiB kills=$1
else
  sig=${1:-KQRvKR} mem=${2:-16MiB} kills=${3:-20}
fi
if [ -n "${KILL_RESUME_BIN:-}" ]; then
  bin=$KILL_RESUME_BIN
elif [ -n "${KILL_RESUME_RANKS:-}" ]; then
  cargo build --release --quiet --features mpi
  bin=$PWD/target/release/tbstream
else
  cargo build --release --quiet
  bin=$PWD/target/release/tbstream
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# `gen` of the endgame on a rank count drawn from KILL_RESUME_RANKS (none: a plain process).
launch() {
  local n
  n=$(python3 -c "import random; print(random.choice('${KILL_RESUME_RANKS:-0}'.split()))")
  if [ "$n" = 0 ]; then
    "$bin" gen "$sig" --out "$test" --mem "$mem"
  else
    echo "($n ranks)"
    mpirun --bind-to none -np "$n" "$bin" gen "$sig" --out "$test" --mem "$mem" --threads 1
  fi
}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
ref=$root/ref
test=$root/test
# Reference run (also builds the sub-endgames).
start=$(date +%s.%N)
"$bin" gen "$sig" --out "$ref" --mem "$mem" >/dev/null 2>&1
echo "uninterrupted run with the sub-endgames: $(echo "$(date +%s.%N) - $start" | bc)s"
# The endgame's own runs (the signature and its colour swap); the test folder starts with
# the reference's sub-endgames only.
runs=$(python3 -c "
s='$sig'.replace('V','v'); w,b = s.split('v') if 'v' in s else (s[:s.index('K',1)], s[s.index('K',1):])
print(' '.join({w+'v'+b, b+'v'+w}))")
remove_runs() { for r in $runs; do rm -f "$test/$r.tbs"; done; }
mkdir -p "$test"
cp "$ref"/*.tbs "$test"/
remove_runs
done_kills=0 resumes=0 finished=0 mismatches=0
compare() {
  finished=$((finished + 1))
  for f in "$ref"/*.tbs; do
    if ! cmp -s "$f" "$test/$(basename "$f")"; then
      echo "MISMATCH: $(basename "$f") (finished run $finished)"
      mismatches=$((mismatches + 1))
    fi
  done
}
# The endgame's own runs uninterrupted, timed to spread the kills over them.
start=$(date +%s.%N)
"$bin" gen "$sig" --out "$test" --mem "$mem" >/dev/null 2>&1
secs=$(echo "$(date +%s.%N) - $start" | bc)
echo "uninterrupted build of the endgame's own runs: ${secs}s"
compare
remove_runs
# Starts a build and SIGKILLs it (one of its ranks) after $1 seconds; returns 1 if it
# finished first.
build_and_kill() {
  launch >"$root/log" 2>&1 &
  local pid=$! victim
  sleep "$1"
  victim=$(pgrep -f -- "$bin gen $sig" | grep -vx "$pid" | grep -vx "$(pgrep -P "$pid" mpirun || true)" | shuf -n 1 || true)
  victim=${victim:-$pid}
  if kill -9 "$victim" 2>/dev/null; then
    wait "$pid" 2>/dev/null || true
    done_kills=$((done_kills + 1))
    echo "kill $done_kills at ${1}s$(head -1 "$root/log" | grep -o '([0-9]* ranks)' | sed 's/^/ /' || true): $(grep -E 'step|init|merge' "$root/log" | tail -1 | cut -c1-60)"
    return 0
  fi
  wait "$pid" || { echo "a run failed:"; tail -3 "$root/log"; exit 1; }
  return 1
}
resumed_at='pass [0-9]*: resuming after [0-9]* of [0-9]* finished chunks|[A-Za-z]*: compaction resumes after [0-9]* of [0-9]* blocks|resuming after [0-9]* finished passes'
while [ -n "${KILL_FROM:-}" ] && [ "$done_kills" -lt "$kills" ]; do
  delay=$(python3 -c "import random; print(round(random.uniform(${KILL_FROM}, ${KILL_TO:-$secs}), 3))")
  build_and_kill "$delay" || echo "run finished before the kill at ${delay}s"
  launch >"$root/log" 2>&1
  if grep -qE "resuming after|resumes after" "$root/log"; then
    resumes=$((resumes + 1))
    # Where it went on: inside a pass, in the compaction, or after the last finished pass.
    echo "  resumed: $(grep -oE "$resumed_at" "$root/log" | paste -sd ";" -)"
  fi
  compare
  remove_runs
done
while [ "$done_kills" -lt "$kills" ]; do
  delay=$(python3 -c "import random; print(round(random.uniform(0.05, $secs), 3))")
  if build_and_kill "$delay"; then finished_first=0; else finished_first=1; fi
  grep -qE "resuming after|resumes after" "$root/log" && resumes=$((resumes + 1))
  if [ "$finished_first" -eq 1 ]; then
    echo "run finished before the kill at ${delay}s; comparing, then building the endgame's runs again"
    compare
    remove_runs
  fi
done
launch >"$root/log" 2>&1
grep -qE "resuming after|resumes after" "$root/log" && resumes=$((resumes + 1))
compare
echo "kills: $done_kills, finished runs: $finished, resumed runs: $resumes, mismatches: $mismatches"
status=0
[ "$mismatches" -eq 0 ] || status=1
[ -d "$test/.work" ] && { echo "work folder left behind"; status=1; }
exit $status
