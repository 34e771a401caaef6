# Sourced by the benchmark scripts. `runs_of SIG` prints the runs an endgame's own build
# writes: the signature and its colour swap (one run when they are the same), leaving out a
# bare white king, for signatures written `KQRvKR` or `KQRKR`.
runs_of() {
  python3 - "$1" <<'PY'
import sys
s = sys.argv[1].replace('V', 'v')
w, b = (s.split('v') if 'v' in s else (s[:s.index('K', 1)], s[s.index('K', 1):]))
print(" ".join(r for r in sorted({f"{w}v{b}", f"{b}v{w}"}) if r.split('v')[0] != 'K'))
PY
}
