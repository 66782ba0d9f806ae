#!/bin/bash
# The tool's own cost per I/O, free of machine noise: user-space
# instructions counted by callgrind for 20,000 and 220,000 I/Os on a new
# zram device; the difference over 200,000 is the cost per I/O. By default
# the I/Os are random 4 KiB reads at QD 32 (io_uring), issue 30's "4 KiB
# read path". It moves with the I/Os reaped per enter (the machine's timing
# decides; each enter costs some 300 to 500 instructions), printed beside
# it (with ENGINE=sync, one I/O per system call). RUNS=N (default 1)
# measures each binary N times, alternating the binaries, and prints each
# run and the median: compare medians of at least 5 runs, never single runs.
# The paths issue 30 §4 names:
#   RW=randwrite           4 KiB random writes, every 512-byte sector
#                          generated as it is written
#   RW=randrw              the 70/30 mix (--mix 70: 70% reads)
#   RW=read BS=128k        128 KiB sequential reads
#   ENGINE=sync            pread/pwrite at QD 1 (with any RW)
# Writes go to the script's own device (--allow-destroy).
# Usage: sudo [RUNS=5] [RW=randread|randwrite|randrw|read|write]
#   [BS=4k|128k] [ENGINE=uring|sync] bench/callgrind.sh BIN [BIN...]
# Needs valgrind. Creates its zram device and removes it.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 IOSURVEY_BINARY..." >&2; exit 2; }
RUNS=${RUNS:-1}
RW=${RW:-randread}
BS=${BS:-4k}
ENGINE=${ENGINE:-uring}
case $RW in
randread | read) EXTRA=() ;;
randwrite | write) EXTRA=(--allow-destroy) ;;
randrw) EXTRA=(--allow-destroy --mix 70) ;;
*) echo "RW must be randread, randwrite, randrw, read or write" >&2; exit 2 ;;
esac
case $BS in
4k) BYTES=4096 ;;
128k) BYTES=131072 ;;
*) echo "BS must be 4k or 128k" >&2; exit 2 ;;
esac
case $ENGINE in
uring) QD=32 ;;
sync) QD=1 ;;
*) echo "ENGINE must be uring or sync" >&2; exit 2 ;;
esac
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "RUNS must be a positive integer" >&2; exit 2; }
ID=$(cat /sys/class/zram-control/hot_add); Z=/dev/zram$ID
OUT=$(mktemp -d); trap 'rm -rf "$OUT"; echo "$ID" > /sys/class/zram-control/hot_remove' EXIT
echo 512M > /sys/block/zram$ID/disksize
dd if=/dev/urandom of=$Z bs=1M count=512 oflag=direct status=none

# Instructions and io_uring_enter calls in a callgrind profile: the system
# calls callgrind counted (--collect-systime), less the clock's (valgrind
# hides the vDSO, so each clock read is one); the enter is made with the
# syscall instruction itself, not through a function one could count.
totals() {
  callgrind_annotate --threshold=100 "$1" 2>/dev/null | awk '
    /PROGRAM TOTALS/ { gsub(/,|\([^)]*\)/, ""); ir = $1; sys = $2 }
    /clock_gettime\.c:clock_gettime/ && !/=>/ && !seen { gsub(/,|\([^)]*\)/, ""); clk = $2; seen = 1 }
    END { print ir, sys - clk }'
}

# One measurement of $1: prints "instructions-per-I/O I/Os-per-enter" (per
# system call other than the clock's: with sync, one per pread or pwrite).
measure() {
  local bin=$1 n ir sc
  for n in 20000 220000; do
    valgrind --tool=callgrind --collect-systime=yes --callgrind-out-file=$OUT/cg.$n.out $bin run $Z --rw $RW "${EXTRA[@]}" --bs $BS --qd $QD --engine $ENGINE --bytes $((n * BYTES)) --quiet --output json >/dev/null 2>$OUT/cg.err
    read -r ir sc < <(totals $OUT/cg.$n.out)
    eval "ir_$n=$ir; sc_$n=${sc:-0}"
  done
  local enters=$((sc_220000 - sc_20000))
  echo "$(( (ir_220000 - ir_20000) / 200000 )) $(awk -v e=$enters 'BEGIN { printf "%.1f", (e > 0 ? 200000 / e : 0) }')"
}

echo "$RW $BS QD $QD $ENGINE on $Z"
declare -A runs
for ((r = 1; r <= RUNS; r++)); do
  for bin in "$@"; do
    read -r per enter < <(measure "$bin")
    echo "$bin: run $r: $per instructions per I/O ($enter I/Os per enter)"
    runs[$bin]+="$per "
  done
done
if ((RUNS > 1)); then
  for bin in "$@"; do
    median=$(tr ' ' '\n' <<<"${runs[$bin]}" | grep . | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}')
    echo "$bin: median of $RUNS: $median instructions per I/O (runs: ${runs[$bin]% })"
  done
fi
