#!/usr/bin/env bash
# What live metrics cost (issue 31 §4), on a zram device of its own (1 GiB,
# random data, removed at the end), 4 KiB random reads at QD 32 with
# io_uring, 1 s intervals:
#  1. PAIRS pairs of DURATION-second runs, metrics off and on (--metrics-file,
#     and --metrics-push when prometheus-pushgateway is installed: one is
#     started on 127.0.0.1 for the run), alternated (off first in odd pairs,
#     on first in even ones); per pair the IOPS on/off, then their median,
#     spread and mean with a 95% interval.
#  2. One SOAK-second run with both on, the file read every second:
#     how many times a counter went down (must be 0), how many distinct
#     snapshots were seen, and the process's RSS at the start, its smallest,
#     largest and last (flat: no growth with time).
#
#   sudo PAIRS=10 DURATION=30 SOAK=600 bench/metrics_soak.sh /path/to/iosurvey
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 IOSURVEY" >&2; exit 2; }
BIN=$1
PAIRS=${PAIRS:-10}
DURATION=${DURATION:-30}
SOAK=${SOAK:-600}
[[ $(id -u) -eq 0 ]] || { echo "needs root (zram device)" >&2; exit 2; }
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }

OUT=$(mktemp -d)
ZRAM_ID="" GW_PID=""
cleanup() {
    [[ -n $GW_PID ]] && kill "$GW_PID" 2>/dev/null && wait "$GW_PID" 2>/dev/null
    rm -rf -- "$OUT"
    [[ -n $ZRAM_ID ]] && echo "$ZRAM_ID" >/sys/class/zram-control/hot_remove
    return 0
}
trap cleanup EXIT

ZRAM_ID=$(cat /sys/class/zram-control/hot_add)
echo 1G >"/sys/block/zram$ZRAM_ID/disksize"
for _ in 1 2 3 4 5 6 7 8 9 10; do [[ -b /dev/zram$ZRAM_ID ]] && break; sleep 0.2; done
dd if=/dev/urandom of="/dev/zram$ZRAM_ID" bs=1M count=1024 oflag=direct status=none
T=/dev/zram$ZRAM_ID
ARGS=("$T" --rw randread --bs 4k --qd 32 --engine uring --interval 1s --quiet --output json)

ON=(--metrics-file "$OUT/io.prom")
if command -v prometheus-pushgateway >/dev/null; then
    PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    (cd "$OUT" && exec prometheus-pushgateway --web.listen-address="127.0.0.1:$PORT" --persistence.file= >/dev/null 2>&1) &
    GW_PID=$!
    for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/-/ready" >/dev/null && break; sleep 0.2; done
    ON+=(--metrics-push "http://127.0.0.1:$PORT")
fi

iops() { "$BIN" run "${ARGS[@]}" --time "${DURATION}s" "$@" | jq -r '.points[0].total.read.iops'; }

echo "metrics off/on: ${ARGS[*]} --time ${DURATION}s; on adds ${ON[*]}; $(uptime)"
echo "| pair | off k IOPS | on k IOPS | on/off |"
echo "|---:|---:|---:|---:|"
: >"$OUT/r"
for ((p = 1; p <= PAIRS; p++)); do
    if ((p % 2)); then a=$(iops); b=$(iops "${ON[@]}"); else b=$(iops "${ON[@]}"); a=$(iops); fi
    r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", b / a }')
    echo "$r" >>"$OUT/r"
    awk -v p="$p" -v a="$a" -v b="$b" -v r="$r" 'BEGIN { printf "| %d | %.1f | %.1f | %s |\n", p, a / 1000, b / 1000, r }'
done
sort -g "$OUT/r" | awk '{ v[NR] = $1; s += $1; q += $1 * $1 } END {
    split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093", t, " ")
    m = s / NR; sd = sqrt((q - NR * m * m) / (NR - 1)); tq = (NR - 1 <= 19) ? t[NR - 1] : 1.96; h = tq * sd / sqrt(NR)
    med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "on/off IOPS: median %.4f, spread %.4f..%.4f, mean %.4f +/- %.4f (95%%, t with %d df)\n", med, v[1], v[NR], m, h, NR - 1 }'

# The soak's file is its own: the pairs' last one would read as a counter
# going down at its first sample.
rm -f -- "$OUT/io.prom"
echo
echo "soak: ${ARGS[*]} --time ${SOAK}s ${ON[*]}; $(uptime)"
"$BIN" run "${ARGS[@]}" --time "${SOAK}s" "${ON[@]}" >"$OUT/soak.json" &
PID=$!
: >"$OUT/ops"; : >"$OUT/rss"
while kill -0 "$PID" 2>/dev/null; do
    awk '/^VmRSS/ { print $2 }' "/proc/$PID/status" 2>/dev/null >>"$OUT/rss" || true
    grep -m1 '^iosurvey_io_ops_total{' "$OUT/io.prom" 2>/dev/null | awk '{ print $NF }' >>"$OUT/ops" || true
    sleep 1
done
wait "$PID"
awk 'NR > 1 && $1 < last { down++ } { if ($1 != last) seen++; last = $1 } END {
    printf "counter samples %d, distinct %d, decreases %d, last %s\n", NR, seen, down + 0, last }' "$OUT/ops"
awk 'NR == 1 { first = $1; lo = $1; hi = $1 } { if ($1 < lo) lo = $1; if ($1 > hi) hi = $1; last = $1 }
    NR == 11 { at10 = $1 } END {
    printf "RSS KiB: first %d, at 10 s %d, min %d, max %d, last %d (%d samples)\n", first, at10, lo, hi, last, NR }' "$OUT/rss"
echo "report: $(jq -r '.points[0].total.read | "\(.ops) reads, \(.iops | floor) IOPS"' "$OUT/soak.json")"
