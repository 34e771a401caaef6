#!/usr/bin/env bash
# Kill-and-resume check: builds SIGNATURE uninterrupted, then again while sending SIGKILL
# at KILLS random moments (each time resuming with the same command), and compares the
# two output folders byte for byte.
#
#   scripts/kill-resume.sh [SIGNATURE] [MEM] [KILLS]     (default: KQRvKR 16MiB 20)
set -euo pipefail
cd "$(dirname "$0")/.."
sig=${1:-KQRvKR}
mem=${2:-16MiB}
kills=${3:-20}
cargo build --release --quiet
bin=$PWD/target/release/tbstream
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
ref=$root/ref
test=$root/test
# Reference run (also builds the sub-endgames), timed to spread the kills over a run.
start=$(date +%s.%N)
"$bin" gen "$sig" --out "$ref" --mem "$mem" >/dev/null 2>&1
secs=$(echo "$(date +%s.%N) - $start" | bc)
echo "uninterrupted run: ${secs}s"
# The endgame's own runs (the signature and its colour swap); the test folder starts with
# the reference's sub-endgames only.
runs=$(python3 -c "
s='$sig'.replace('V','v'); w,b = s.split('v') if 'v' in s else (s[:s.index('K',1)], s[s.index('K',1):])
print(' '.join({w+'v'+b, b+'v'+w}))")
remove_runs() { for r in $runs; do rm -f "$test/$r.tbs"; done; }
mkdir -p "$test"
cp "$ref"/*.tbs "$test"/
remove_runs
done_kills=0
resumes=0
attempt=0
while [ "$done_kills" -lt "$kills" ]; do
  attempt=$((attempt + 1))
  delay=$(python3 -c "import random; print(round(random.uniform(0.05, $secs), 3))")
  "$bin" gen "$sig" --out "$test" --mem "$mem" >"$root/log" 2>&1 &
  pid=$!
  sleep "$delay"
  if kill -9 "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null || true
    done_kills=$((done_kills + 1))
    grep -q "resuming after" "$root/log" && resumes=$((resumes + 1))
    echo "kill $done_kills at ${delay}s: $(grep -E 'step|init|merge' "$root/log" | tail -1 | cut -c1-60)"
  else
    wait "$pid" || true
    echo "run finished before the kill at ${delay}s; comparing, then building the endgame's runs again"
    for f in "$test"/*.tbs; do cmp -s "$f" "$ref/$(basename "$f")" || { echo "DIFFERENT: $f"; exit 1; }; done
    remove_runs
  fi
done
"$bin" gen "$sig" --out "$test" --mem "$mem" >"$root/log" 2>&1
grep -q "resuming after" "$root/log" && resumes=$((resumes + 1))
status=0
for f in "$ref"/*.tbs; do
  if cmp -s "$f" "$test/$(basename "$f")"; then echo "identical: $(basename "$f")"; else echo "DIFFERENT: $(basename "$f")"; status=1; fi
done
echo "$done_kills kills, $resumes resumed runs, $attempt attempts"
[ -d "$test/.work" ] && { echo "work folder left behind"; status=1; }
exit $status
