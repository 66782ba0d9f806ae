#!/bin/bash
# Splits the worker thread's cost into a part per I/O and a part per
# io_uring_enter, which bench/callgrind.sh cannot: its one difference of
# two runs mixes them, and the I/Os reaped per enter (the machine's timing
# decides) move its figure by 10 or more. This runs 8 sizes (20k to 220k
# random 4 KiB reads, QD 32, zram) under callgrind with the threads apart,
# and fits the worker thread's instructions = c + a * I/Os + b * enters by
# least squares. Compare two builds by "at 14 I/Os per enter".
# Usage: sudo bench/callgrind-fit.sh BIN. Needs valgrind and python3.
# Creates its zram device and removes it.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 IOSURVEY_BINARY" >&2; exit 2; }
BIN=$1
ID=$(cat /sys/class/zram-control/hot_add); Z=/dev/zram$ID
OUT=$(mktemp -d); trap 'rm -rf "$OUT"; echo "$ID" > /sys/class/zram-control/hot_remove' EXIT
echo 512M > /sys/block/zram$ID/disksize
dd if=/dev/urandom of=$Z bs=1M count=512 oflag=direct status=none
for n in 20000 70000 120000 170000 220000 20000 120000 220000; do
  f=$OUT/cg.out
  valgrind --tool=callgrind --separate-threads=yes --collect-systime=yes --dump-instr=no --callgrind-out-file=$f \
    $BIN run $Z --rw randread --bs 4k --qd 32 --engine uring --bytes $((n * 4096)) --quiet --output json >/dev/null 2>&1
  # The worker is the last thread started. Its enters: the system calls
  # callgrind counted, less the clock's (valgrind hides the vDSO, so each
  # clock read is one); the enter is made with the syscall instruction
  # itself, not through a function one could count.
  w=$(ls $f-* | sort -V | tail -1)
  read -r ir sc < <(callgrind_annotate --threshold=100 $w 2>/dev/null | awk '
    /PROGRAM TOTALS/ { gsub(/,|\([^)]*\)/, ""); ir = $1; sys = $2 }
    /clock_gettime\.c:clock_gettime/ && !/=>/ && !seen { gsub(/,|\([^)]*\)/, ""); clk = $2; seen = 1 }
    END { print ir, sys - clk }')
  echo "$n $ir $sc" >>$OUT/fit
  rm -f $f-*
done
python3 - $OUT/fit <<'PY'
import sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
X = [[1.0, r[0], r[2]] for r in rows]
y = [r[1] for r in rows]
# Normal equations, solved by elimination (3 unknowns).
k = 3
m = [[sum(x[i] * x[j] for x in X) for j in range(k)] + [sum(x[i] * v for x, v in zip(X, y))] for i in range(k)]
for i in range(k):
    for j in range(i + 1, k):
        f = m[j][i] / m[i][i]
        m[j] = [a - f * b for a, b in zip(m[j], m[i])]
sol = [0.0] * k
for i in reversed(range(k)):
    sol[i] = (m[i][k] - sum(m[i][l] * sol[l] for l in range(i + 1, k))) / m[i][i]
_, a, b = sol
print("I/Os per enter in the runs: " + ", ".join("%.1f" % (r[0] / r[2]) for r in rows))
print("worker thread: %.1f instructions per I/O + %.0f per enter" % (a, b))
print("worker thread at 14 I/Os per enter: %.1f per I/O" % (a + b / 14))
PY
