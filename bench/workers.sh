#!/usr/bin/env bash
# Many workers, and one worker on a loaded machine: iosurvey vs fio in
# alternating pairs (iosurvey first in odd pairs, fio first in even ones),
# every run under GNU time. See bench/README.md (cases w2..c1).
#
#   sudo PAIRS=5 DURATION=5 bench/workers.sh                 # every case
#   sudo CASES="w2 c1" IOSURVEY=/path/to/iosurvey bench/workers.sh
#
# Cases, all 4 KiB random reads at QD 32 per worker, io_uring, O_DIRECT:
#   w2 w4 w8     2, 4, 8 workers on one zram device (fio: numjobs=N)
#   w2m w4m w8m  2, 4, 8 workers over N zram devices: every worker reads
#                all of them, QD 32/N on each (iosurvey --qd is per target;
#                fio: filename=A:B:..., iodepth=32, files served round-robin)
#   c1           1 worker on one zram device while two busy loops (one per
#                CPU, nice 0, started before the case and killed after it)
#                load both CPUs, the same for both tools
# Per pair: IOPS, CPU µs per I/O (user + system of the whole process / I/Os),
# voluntary context switches per I/O; then the median of the per-pair
# ratios iosurvey/fio and their spread (min..max).
set -euo pipefail
PAIRS=${PAIRS:-5}
DURATION=${DURATION:-5}
CASES=${CASES:-w2 w4 w8 w2m w4m w8m c1}
[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || { echo "PAIRS must be a positive integer" >&2; exit 2; }
[[ $DURATION =~ ^[1-9][0-9]*$ ]] || { echo "DURATION must be whole seconds" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "needs root (zram devices)" >&2; exit 2; }
for c in fio jq; do command -v $c >/dev/null || { echo "needs $c (apt-get install -y $c)" >&2; exit 2; }; done
[[ -x /usr/bin/time ]] || { echo "needs GNU time (apt-get install -y time)" >&2; exit 2; }
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$SCRIPT_DIR/.." && pwd)
if [[ -z ${IOSURVEY:-} ]]; then
    (cd "$REPO_DIR" && cargo build --release --quiet -p iosurvey) >&2
    IOSURVEY=${CARGO_TARGET_DIR:-$REPO_DIR/target}/release/iosurvey
fi
[[ -x $IOSURVEY ]] || { echo "IOSURVEY=$IOSURVEY is not an executable" >&2; exit 2; }
for c in $CASES; do
    [[ $c =~ ^(w[248]m?|c1)$ ]] || { echo "unknown case '$c' (w2 w4 w8 w2m w4m w8m c1)" >&2; exit 2; }
done

OUT=$(mktemp -d)
ZRAM_IDS=() LOAD_PIDS=()
stop_load() {
    local p
    for p in "${LOAD_PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    LOAD_PIDS=()
}
cleanup() {
    set +e
    stop_load
    local id
    for id in "${ZRAM_IDS[@]}"; do
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            { echo "$id" >/sys/class/zram-control/hot_remove; } 2>/dev/null && break
            sleep 0.5
        done
    done
    rm -rf -- "$OUT"
    return 0
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Adds a zram device of SIZE (in this shell, so that the clean-up sees it),
# filled with random data; its path goes to DEVS.
DEVS=()
new_zram() {
    local id
    id=$(cat /sys/class/zram-control/hot_add)
    ZRAM_IDS+=("$id")
    echo "$1" >"/sys/block/zram$id/disksize"
    for _ in 1 2 3 4 5 6 7 8 9 10; do [[ -b /dev/zram$id ]] && break; sleep 0.2; done
    dd if=/dev/urandom of="/dev/zram$id" bs=1M count=$(($1 >> 20)) oflag=direct status=none
    DEVS+=("/dev/zram$id")
}
new_zram $((1 << 30))
ONE=${DEVS[0]}
need_multi=0
for c in $CASES; do [[ $c == *m ]] && need_multi=1; done
if ((need_multi)); then
    for _ in 1 2 3 4 5 6 7 8; do new_zram $((256 << 20)); done
fi
MULTI=("${DEVS[@]:1}")

# measure KIND -> "iops cpu_us_per_io vcsw_per_io" (ISV and FIO hold the args)
measure() {
    local j=$OUT/j t=$OUT/t iops ios
    if [[ $1 == iosurvey ]]; then
        /usr/bin/time -f "%U %S %w" -o "$t" "$IOSURVEY" run "${ISV[@]}" --time "${DURATION}s" \
            --output json --quiet >"$j" 2>"$OUT/e" || { cat "$OUT/e" >&2; exit 1; }
        read -r iops ios < <(jq -r '.points[0].total.read | [.iops, .ops] | @tsv' "$j")
    else
        /usr/bin/time -f "%U %S %w" -o "$t" fio "${FIO[@]}" --direct=1 --thread --group_reporting \
            --time_based --runtime="$DURATION" --output-format=json --output="$j" >"$OUT/e" 2>&1 ||
            { cat "$OUT/e" >&2; exit 1; }
        read -r iops ios < <(jq -r '.jobs[0].read | [.iops, .total_ios] | @tsv' "$j")
    fi
    awk -v i="$iops" -v n="$ios" 'END { printf "%.1f %.4f %.4f\n", i, ($1 + $2) * 1e6 / n, $3 / n }' "$t"
}

med() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
spread() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s..%s", lo, hi }'; }

echo "## workers.sh $(date -u '+%Y-%m-%d %H:%M:%S UTC'): $PAIRS pairs x ${DURATION}s; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg); $IOSURVEY; $(fio --version)"
SUMMARY=()
for c in $CASES; do
    n=${c//[!0-9]/}
    FIO_URING=(--ioengine=io_uring --fixedbufs --registerfiles --norandommap --rw=randread --bs=4k)
    case $c in
    w?)
        ISV=("$ONE" --rw randread --bs 4k --qd 32 --engine uring --workers "$n")
        FIO=(--name="$c" --filename="$ONE" "${FIO_URING[@]}" --iodepth=32 --numjobs="$n")
        ;;
    w?m)
        devs=("${MULTI[@]:0:n}")
        ISV=("${devs[@]}" --rw randread --bs 4k --qd $((32 / n)) --engine uring --workers "$n")
        FIO=(--name="$c" --filename="$(IFS=:; echo "${devs[*]}")" "${FIO_URING[@]}" --iodepth=32 --numjobs="$n")
        ;;
    c1)
        ISV=("$ONE" --rw randread --bs 4k --qd 32 --engine uring)
        FIO=(--name="$c" --filename="$ONE" "${FIO_URING[@]}" --iodepth=32 --numjobs=1)
        for _ in $(seq "$(nproc)"); do
            nice -n 0 sh -c 'while :; do :; done' &
            LOAD_PIDS+=($!)
        done
        ;;
    esac
    echo
    echo "### $c: iosurvey run ${ISV[*]} | fio ${FIO[*]} --direct=1 --thread --group_reporting"
    echo
    echo "| pair | iosurvey k IOPS | fio k IOPS | IOPS i/f | iosurvey CPU µs/IO | fio CPU µs/IO | CPU/IO i/f | iosurvey csw/IO | fio csw/IO |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    : >"$OUT/ri"; : >"$OUT/rc"; : >"$OUT/wi"; : >"$OUT/wf"
    for ((p = 1; p <= PAIRS; p++)); do
        if ((p % 2)); then ri=$(measure iosurvey); rf=$(measure fio); else rf=$(measure fio); ri=$(measure iosurvey); fi
        read -r ii ci wi <<<"$ri"
        read -r jf cf wf <<<"$rf"
        awk -v a="$ii" -v b="$jf" 'BEGIN { printf "%.4f\n", a / b }' >>"$OUT/ri"
        awk -v a="$ci" -v b="$cf" 'BEGIN { printf "%.4f\n", a / b }' >>"$OUT/rc"
        echo "$wi" >>"$OUT/wi"; echo "$wf" >>"$OUT/wf"
        awk -v p="$p" -v ii="$ii" -v jf="$jf" -v ci="$ci" -v cf="$cf" -v wi="$wi" -v wf="$wf" \
            'BEGIN { printf "| %d | %.1f | %.1f | %.3f | %.2f | %.2f | %.3f | %.3f | %.3f |\n", p, ii / 1000, jf / 1000, ii / jf, ci, cf, ci / cf, wi, wf }'
    done
    [[ $c != c1 ]] || stop_load
    line="| $c | $(med <"$OUT/ri") ($(spread <"$OUT/ri")) | $(med <"$OUT/rc") ($(spread <"$OUT/rc")) | $(med <"$OUT/wi") | $(med <"$OUT/wf") |"
    SUMMARY+=("$line")
    echo
    echo "$c medians of per-pair ratios iosurvey/fio: IOPS $(med <"$OUT/ri") ($(spread <"$OUT/ri")), CPU per I/O $(med <"$OUT/rc") ($(spread <"$OUT/rc")); load $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo
echo "| case | IOPS iosurvey/fio, median (min..max) | CPU per I/O iosurvey/fio, median (min..max) | iosurvey csw/IO | fio csw/IO |"
echo "|---|---:|---:|---:|---:|"
printf '%s\n' "${SUMMARY[@]}"
echo
echo "end $(date -u '+%H:%M:%S UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
