#!/bin/bash
# The tool's own cost per I/O, free of machine noise: user-space
# instructions counted by callgrind for 20,000 and 220,000 random 4 KiB
# reads at QD 32 (io_uring) on a new zram device; the difference over
# 200,000 is the cost per I/O. It moves with the I/Os reaped per enter
# (the machine's load decides; each enter costs some 500 instructions),
# printed beside it. Usage: sudo bench/callgrind.sh BIN [BIN...]
# Needs valgrind. Creates its zram device and removes it.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 IOSURVEY_BINARY..." >&2; exit 2; }
ID=$(cat /sys/class/zram-control/hot_add); Z=/dev/zram$ID
OUT=$(mktemp -d); trap 'rm -rf "$OUT"; echo "$ID" > /sys/class/zram-control/hot_remove' EXIT
echo 512M > /sys/block/zram$ID/disksize
dd if=/dev/urandom of=$Z bs=1M count=512 oflag=direct status=none
for bin in "$@"; do
  for n in 20000 220000; do
    valgrind --tool=callgrind --callgrind-out-file=$OUT/cg.$n.out $bin run $Z --rw randread --bs 4k --qd 32 --engine uring --bytes $((n*4096)) --quiet --output json >/dev/null 2>$OUT/cg.err
    ir=$(callgrind_annotate $OUT/cg.$n.out 2>/dev/null | grep -m1 "PROGRAM TOTALS" | awk '{gsub(",","",$1); print $1}')
    # Calls to libc's syscall(): the io_uring_enter calls, one per wait
    # or submit (the clock is read through the vDSO, without one).
    sc=$(callgrind_annotate --tree=calling $OUT/cg.$n.out 2>/dev/null | grep -m1 -E '> .*syscall\.S:syscall ' | sed 's/.*(\([0-9,]*\)x).*/\1/; s/,//g')
    eval "ir_$n=$ir; sc_$n=${sc:-0}"
  done
  enters=$((sc_220000 - sc_20000))
  per=$(( enters > 0 ? 200000 / enters : 0 ))
  echo "$bin: $(( (ir_220000 - ir_20000) / 200000 )) instructions per I/O (Ir $ir_20000 / $ir_220000; $per I/Os per enter)"
done
