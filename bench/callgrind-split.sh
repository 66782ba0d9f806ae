#!/bin/bash
# Splits the worker thread's instructions into a part per I/O and a part
# per reap from one profile, instruction by instruction: unlike
# bench/callgrind-fit.sh, whose least squares trade one part for the other
# when the runs reap about as many I/Os per enter, this needs no spread.
# It profiles 220k random 4 KiB reads at QD 32 on zram under callgrind
# (--dump-instr=yes) and sorts each instruction by how often it ran: at
# least once per two I/Os (the per-I/O part, summed per I/O), or at least
# once per three reaps (the per-reap part, summed per reap; branches taken
# once per run of a reap land here). Reaps are counted as clock reads over
# two (each pass of the loop reads the clock twice; valgrind hides the
# vDSO, so each read is a system call callgrind counts).
# Usage: sudo bench/callgrind-split.sh BIN. Needs valgrind and python3.
# Creates its zram device and removes it.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 IOSURVEY_BINARY" >&2; exit 2; }
BIN=$1
N=220000
ID=$(cat /sys/class/zram-control/hot_add); Z=/dev/zram$ID
OUT=$(mktemp -d); trap 'rm -rf "$OUT"; echo "$ID" > /sys/class/zram-control/hot_remove' EXIT
echo 512M > /sys/block/zram$ID/disksize
dd if=/dev/urandom of=$Z bs=1M count=512 oflag=direct status=none
valgrind --tool=callgrind --separate-threads=yes --collect-systime=yes --dump-instr=yes \
  --callgrind-out-file=$OUT/cg $BIN run $Z --rw randread --bs 4k --qd 32 --engine uring \
  --bytes $((N * 4096)) --quiet --output json >/dev/null 2>&1
# The worker is the last thread started.
w=$(ls $OUT/cg-* | sort -V | tail -1)
clock=$(callgrind_annotate --threshold=100 $w 2>/dev/null | awk '
  /clock_gettime\.c:clock_gettime/ && !/=>/ { gsub(/,|\([^)]*\)/, ""); print $2; exit }')
python3 - "$w" "$N" "$clock" <<'PY'
import sys
path, n, clock = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
reaps = clock // 2
# Exclusive cost per instruction address: cost lines are "addr line Ir
# sysCount sysTime" (addresses and lines absolute, +n/-n relative or * the
# same as the last); the line after a calls= line is a call's inclusive
# cost, not the instruction's own.
cost, last, after_call = {}, [0, 0], False
def pos(tok, i):
    if tok[0] in "+-":
        return last[i] + int(tok, 0)
    return last[i] if tok == "*" else int(tok, 0)
for line in open(path):
    if line.startswith("calls="):
        after_call = True
        continue
    if not line or not (line[0].isdigit() or line[0] in "+-*"):
        continue
    t = line.split()
    if len(t) < 3:
        continue
    last = [pos(t[0], 0), pos(t[1], 1)]
    if after_call:
        after_call = False
        continue
    cost[last[0]] = cost.get(last[0], 0) + int(t[2])
per_io = sum(c for c in cost.values() if c >= n / 2) / n
per_reap = sum(c for c in cost.values() if reaps * 0.3 <= c < n / 2) / reaps
print("%d I/Os, %d reaps (%.1f I/Os per enter)" % (n, reaps, n / reaps))
print("worker thread: %.1f instructions per I/O + %.1f per reap" % (per_io, per_reap))
PY
