#!/usr/bin/env bash
# A/B of two iosurvey binaries on one case of bench/run.sh, alternated pair
# by pair (A first in odd pairs, B first in even ones), every run under GNU
# time. Per pair: each binary's IOPS and CPU time (user + system) per I/O,
# and B/A of both; then the median of the per-pair ratios and their spread
# (min..max). A hot-path change lands on a paired effect, one whose spread
# leaves out 1 (see README.md), not on instruction counts alone.
#
#   sudo PAIRS=7 DURATION=5 bench/ab.sh /path/to/A /path/to/B 1   # or 8a, 8c
#
# Cases (as in run.sh): 1 zram 4 KiB randread QD 32 io_uring; 8a tmpfs file
# 4 KiB randwrite QD 1 sync; 8c zram 4 KiB randwrite QD 32 io_uring. The
# script makes its own zram device (1 GiB) or tmpfs file and removes it.
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: $0 IOSURVEY_A IOSURVEY_B 1|8a|8c" >&2; exit 2; }
A=$1 B=$2 CASE=$3
PAIRS=${PAIRS:-7}
DURATION=${DURATION:-5}
[[ $(id -u) -eq 0 ]] || { echo "needs root (zram device, writes)" >&2; exit 2; }
command -v jq >/dev/null && [[ -x /usr/bin/time ]] || { echo "needs jq and GNU time" >&2; exit 2; }

OUT=$(mktemp -d)
ZRAM_ID="" SHM_DIR=""
cleanup() {
    rm -rf -- "$OUT"
    [[ -n $SHM_DIR ]] && rm -rf -- "$SHM_DIR"
    [[ -n $ZRAM_ID ]] && echo "$ZRAM_ID" >/sys/class/zram-control/hot_remove
    return 0
}
trap cleanup EXIT

# Sets ZRAM_ID and T in this shell (not in a $(...) subshell, whose ZRAM_ID
# the clean-up would never see: that leaked 1 GiB of RAM per run).
new_zram() {
    ZRAM_ID=$(cat /sys/class/zram-control/hot_add)
    echo 1G >"/sys/block/zram$ZRAM_ID/disksize"
    for _ in 1 2 3 4 5 6 7 8 9 10; do [[ -b /dev/zram$ZRAM_ID ]] && break; sleep 0.2; done
    dd if=/dev/urandom of="/dev/zram$ZRAM_ID" bs=1M count=1024 oflag=direct status=none
    T=/dev/zram$ZRAM_ID
}

case $CASE in
1) new_zram; ARGS=("$T" --rw randread --bs 4k --qd 32 --engine uring) ;;
8c) new_zram; ARGS=("$T" --rw randwrite --bs 4k --qd 32 --engine uring --allow-destroy) ;;
8a)
    SHM_DIR=$(mktemp -d /dev/shm/iosurvey-ab.XXXXXX)
    T=$SHM_DIR/data
    dd if=/dev/urandom of="$T" bs=1M count=1024 status=none
    ARGS=("$T" --rw randwrite --bs 4k --qd 1 --engine sync --allow-destroy)
    ;;
*) echo "case must be 1, 8a or 8c" >&2; exit 2 ;;
esac

# one BIN -> "iops cpu_us_per_io"
one() {
    "/usr/bin/time" -f "%U %S" -o "$OUT/t" "$1" run "${ARGS[@]}" --time "${DURATION}s" \
        --output json --quiet >"$OUT/j"
    local iops ios
    read -r iops ios < <(jq -r '.points[0].total as $t | [$t.read.iops + $t.write.iops, $t.read.ops + $t.write.ops] | @tsv' "$OUT/j")
    awk -v i="$iops" -v n="$ios" 'END { printf "%.1f %.4f\n", i, ($1 + $2) * 1e6 / n }' "$OUT/t"
}

med() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "case $CASE: ${ARGS[*]} --time ${DURATION}s; A=$A B=$B; $(uptime)"
echo "| pair | A k IOPS | B k IOPS | IOPS B/A | A CPU µs/IO | B CPU µs/IO | CPU/IO B/A |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
: >"$OUT/r_iops"; : >"$OUT/r_cpu"
for ((p = 1; p <= PAIRS; p++)); do
    if ((p % 2)); then ra=$(one "$A"); rb=$(one "$B"); else rb=$(one "$B"); ra=$(one "$A"); fi
    read -r ia ca <<<"$ra"
    read -r ib cb <<<"$rb"
    ri=$(awk -v a="$ia" -v b="$ib" 'BEGIN { printf "%.3f", b / a }')
    rc=$(awk -v a="$ca" -v b="$cb" 'BEGIN { printf "%.3f", b / a }')
    echo "$ri" >>"$OUT/r_iops"; echo "$rc" >>"$OUT/r_cpu"
    awk -v p="$p" -v ia="$ia" -v ib="$ib" -v ca="$ca" -v cb="$cb" -v ri="$ri" -v rc="$rc" \
        'BEGIN { printf "| %d | %.1f | %.1f | %s | %.2f | %.2f | %s |\n", p, ia / 1000, ib / 1000, ri, ca, cb, rc }'
done
spread() { sort -g "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s..%s", lo, hi }'; }
echo
echo "case $CASE, $PAIRS pairs: IOPS B/A median $(med <"$OUT/r_iops") (pairs $(spread "$OUT/r_iops")); CPU/IO B/A median $(med <"$OUT/r_cpu") (pairs $(spread "$OUT/r_cpu")); $(uptime)"
