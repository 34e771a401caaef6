#!/usr/bin/env bash
# Time-budgeted fuzzing of the untrusted inputs (tests/it/fuzz.rs): the FEN parser, the signature
# parser and the table reader, each for SECONDS of wall time, one after another.
#
#   scripts/fuzz.sh [SECONDS]      (default: 600 per target)
#
# Prints per target the number of cases run and how deep they got. A panic or a broken
# invariant stops that target with the minimal failing input (shrunk by proptest, seed saved in
# proptest-regressions/fuzz.txt); the script then goes on with the other targets and exits 1.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
[[ $secs =~ ^[0-9]+$ ]] || { echo "usage: scripts/fuzz.sh [SECONDS]" >&2; exit 2; }
cargo test --release --test it --no-run --quiet || exit 2
status=0
summary=()
for target in fen signature table; do
    echo "== fuzz $target: ${secs} s"
    log=$(mktemp)
    FUZZ_SECS=$secs cargo test --release --quiet --test it -- --ignored --exact "fuzz::timed_$target" \
        --nocapture --test-threads=1 2>&1 | tee "$log"
    if [[ ${PIPESTATUS[0]} -eq 0 ]] && grep -q "^fuzz $target: .* no panic found" "$log"; then
        summary+=("$(grep "^fuzz $target: .* no panic found" "$log")")
        summary+=("$(grep "^fuzz $target: of which" "$log")")
    else
        status=1
        summary+=("fuzz $target: FAILED (see the output above)")
    fi
    rm -f "$log"
done
echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
