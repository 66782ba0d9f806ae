#!/usr/bin/env bash
# Many targets: iosurvey run over N zram devices against fio with one job
# (one thread) per device, alternating, same settings per target (issue 30
# item 3). See bench/README.md.
#
#   sudo bench/targets.sh                                   # 64 x 64 MiB, 5 pairs of 5 s
#   sudo PAIRS=1 DURATION=1 TARGETS=4 bench/targets.sh      # smoke test
#   sudo VARIANTS='default;--workers 1' bench/targets.sh    # the default against the old one
#   sudo IOSURVEY_B=/path/to/old/iosurvey bench/targets.sh  # this build and another, same flags
#
# Every pair runs each iosurvey variant, then fio; each variant's ratio is
# taken against the fio run of its own pair. Markdown goes to stdout (and
# to $OUT_DIR/results.md); progress to stderr; raw JSON of every run to
# $OUT_DIR.
set -euo pipefail

PAIRS=${PAIRS:-5}
DURATION=${DURATION:-5}     # seconds per run, time-based
TARGETS=${TARGETS:-64}      # zram devices made for the run
SIZE_MIB=${SIZE_MIB:-64}    # each one's size, filled with random data
QD=${QD:-32}                # outstanding I/Os per target (fio: iodepth per job)
BS=${BS:-4k}
# iosurvey flag sets, separated by ';': "default" is no extra flag; NAME=VALUE
# words at the start of a set go to iosurvey's environment.
VARIANTS=${VARIANTS:-default}

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$SCRIPT_DIR/.." && pwd)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT_DIR=${OUT_DIR:-$SCRIPT_DIR/out/targets-$STAMP}

log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || die "PAIRS must be a positive integer (got '$PAIRS')"
[[ $DURATION =~ ^[1-9][0-9]*$ ]] || die "DURATION must be a whole number of seconds (got '$DURATION')"
[[ $TARGETS =~ ^[1-9][0-9]*$ ]] || die "TARGETS must be a positive integer (got '$TARGETS')"
[[ $SIZE_MIB =~ ^[1-9][0-9]*$ ]] || die "SIZE_MIB must be a positive integer (got '$SIZE_MIB')"
[[ $QD =~ ^[1-9][0-9]*$ ]] || die "QD must be a positive integer (got '$QD')"

missing=()
[[ $(id -u) -eq 0 ]] || missing+=("root: zram devices can only be created as root; run with sudo")
command -v fio >/dev/null || missing+=("fio: apt-get install -y fio")
command -v jq >/dev/null || missing+=("jq: apt-get install -y jq")
[[ -x /usr/bin/time && $(/usr/bin/time -f %M true 2>&1) =~ ^[0-9]+$ ]] ||
    missing+=("GNU time at /usr/bin/time: apt-get install -y time (peak RSS and CPU of each run)")
if [[ ! -d /sys/class/zram-control ]]; then
    modprobe zram 2>/dev/null || true
    [[ -d /sys/class/zram-control ]] || missing+=("zram: /sys/class/zram-control is missing")
fi
if ((${#missing[@]})); then
    printf 'bench: missing requirements (nothing was installed):\n' >&2
    printf '  - %s\n' "${missing[@]}" >&2
    exit 1
fi
mem_avail_kib=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
((mem_avail_kib > (TARGETS * SIZE_MIB + 1024) * 1024)) ||
    die "need about $((TARGETS * SIZE_MIB + 1024)) MiB of available memory, have $((mem_avail_kib / 1024)) MiB"

IOSURVEY_GIVEN=${IOSURVEY:-}
if [[ -n ${IOSURVEY:-} ]]; then
    [[ -x $IOSURVEY ]] || die "IOSURVEY=$IOSURVEY is not an executable"
else
    log "cargo build --release (no-op when up to date)"
    (cd "$REPO_DIR" && cargo build --release --quiet -p iosurvey) || die "cargo build --release failed"
    IOSURVEY=${CARGO_TARGET_DIR:-$REPO_DIR/target}/release/iosurvey
fi
IOSURVEY_B=${IOSURVEY_B:-}
[[ -z $IOSURVEY_B || -x $IOSURVEY_B ]] || die "IOSURVEY_B=$IOSURVEY_B is not an executable"

# ---------------------------------------------------------------- devices
ZRAM_IDS=()
cleanup() {
    local rc=$? id i
    set +e
    trap - EXIT INT TERM
    for id in "${ZRAM_IDS[@]}"; do
        for i in 1 2 3 4 5 6 7 8 9 10; do
            { echo "$id" >/sys/class/zram-control/hot_remove; } 2>/dev/null && break
            sleep 0.5
        done
        [[ -e /sys/block/zram$id ]] && log "could not remove /dev/zram$id: echo $id > /sys/class/zram-control/hot_remove"
    done
    ((${#ZRAM_IDS[@]})) && log "removed ${#ZRAM_IDS[@]} zram devices"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$OUT_DIR"
log "raw outputs in $OUT_DIR"
DEVS=()
log "making $TARGETS zram devices of $SIZE_MIB MiB, filled from /dev/urandom"
for ((t = 0; t < TARGETS; t++)); do
    id=$(cat /sys/class/zram-control/hot_add)
    ZRAM_IDS+=("$id")
    echo "$((SIZE_MIB << 20))" >"/sys/block/zram$id/disksize"
    for _ in 1 2 3 4 5 6 7 8 9 10; do [[ -b /dev/zram$id ]] && break; sleep 0.2; done
    [[ -b /dev/zram$id ]] || die "/dev/zram$id did not appear"
    dd if=/dev/urandom of="/dev/zram$id" bs=1M count="$SIZE_MIB" oflag=direct status=none
    DEVS+=("/dev/zram$id")
done

# ---------------------------------------------------------------- helpers
num() { awk -v x="$1" -v f="$2" 'BEGIN { if (x == "" || x == "FAIL") print "FAIL"; else printf f, x }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "FAIL" || b == "FAIL" || a == "" || b == "" || b + 0 == 0) print "FAIL"; else printf "%.6f", a / b }'; }
median() {
    printf '%s\n' "$@" | { grep -v -e '^FAIL$' -e '^$' || true; } | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) print "FAIL"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
spread() {
    printf '%s\n' "$@" | { grep -v -e '^FAIL$' -e '^$' || true; } | sort -g |
        awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR == 0) print "FAIL"; else printf "%.3f..%.3f\n", lo, hi }'
}
# A time file of "%e %U %S %M": -> "cpu_us_per_io peak_rss_mib"
costs() {
    awk -v n="$2" 'END { if (NF < 4 || n + 0 == 0) { print "FAIL\tFAIL"; exit }
        printf "%.4f\t%.1f\n", ($2 + $3) * 1e6 / n, $4 / 1024 }' "$1"
}

FAILED=0
# run_iosurvey NAME BIN FLAGS -> "iops cpu_us_per_io rss_mib workers"
run_iosurvey() {
    local name=$1 bin=$2 flags=$3
    local json=$OUT_DIR/$name.json err=$OUT_DIR/$name.err tf=$OUT_DIR/$name.time words=() envs=() extra=() w
    [[ $flags == default ]] || read -r -a words <<<"$flags"
    # NAME=VALUE words go to the environment, the rest are flags.
    for w in "${words[@]}"; do
        if ((${#extra[@]} == 0)) && [[ $w =~ ^[A-Z_][A-Z0-9_]*= ]]; then envs+=("$w"); else extra+=("$w"); fi
    done
    local cmd=(env "${envs[@]}" "$bin" run "${DEVS[@]}" --rw randread --bs "$BS" --qd "$QD" "${extra[@]}"
        --time "${DURATION}s" --output json --quiet)
    printf '%q ' "${cmd[@]}" >>"$OUT_DIR/commands.txt"
    echo >>"$OUT_DIR/commands.txt"
    if /usr/bin/time -f "%e %U %S %M" -o "$tf" "${cmd[@]}" >"$json" 2>"$err" &&
        jq -e '.points[0].failure == null and (.points[0].interrupted | not)' "$json" >/dev/null; then
        local v ios w
        IFS=$'\t' read -r v ios w < <(jq -r '.points[0] | [.total.read.iops, .total.read.ops, (.settings.workers // "?")] | @tsv' "$json")
        printf '%s\t%s\t%s\n' "$v" "$(costs "$tf" "$ios")" "$w"
    else
        log "iosurvey failed ($name): $(head -c 500 "$err")"
        FAILED=1
        printf 'FAIL\tFAIL\tFAIL\t?\n'
    fi
}

# run_fio NAME -> "iops cpu_us_per_io rss_mib jobs"
FIO_COMMON=(--thread --group_reporting --ioengine=io_uring --fixedbufs --registerfiles
    --rw=randread --bs="$BS" --iodepth="$QD" --direct=1 --norandommap
    --time_based --runtime="$DURATION")
run_fio() {
    local name=$1 json=$OUT_DIR/$1.json err=$OUT_DIR/$1.err tf=$OUT_DIR/$1.time jobs=() t
    for ((t = 0; t < TARGETS; t++)); do jobs+=(--name="t$t" --filename="${DEVS[t]}"); done
    local cmd=(fio "${FIO_COMMON[@]}" --output-format=json --output="$json" "${jobs[@]}")
    printf '%q ' "${cmd[@]}" >>"$OUT_DIR/commands.txt"
    echo >>"$OUT_DIR/commands.txt"
    if /usr/bin/time -f "%e %U %S %M" -o "$tf" "${cmd[@]}" >"$err" 2>&1 && jq -e '.jobs[0].error == 0' "$json" >/dev/null 2>&1; then
        local v ios
        IFS=$'\t' read -r v ios < <(jq -r '.jobs[0] | [.read.iops, .read.total_ios] | @tsv' "$json")
        printf '%s\t%s\t%s\n' "$v" "$(costs "$tf" "$ios")" "$TARGETS"
    else
        log "fio failed ($name): $(head -c 500 "$err")"
        FAILED=1
        printf 'FAIL\tFAIL\tFAIL\t%s\n' "$TARGETS"
    fi
}

# The iosurvey runs of a pair: every variant, with IOSURVEY and then (when
# given) IOSURVEY_B.
IFS=';' read -r -a FLAGSETS <<<"$VARIANTS"
LABELS=() BINS=() FLAGS=()
for f in "${FLAGSETS[@]}"; do
    f=$(echo "$f" | sed 's/^ *//; s/ *$//')
    LABELS+=("iosurvey $f") BINS+=("$IOSURVEY") FLAGS+=("$f")
    if [[ -n $IOSURVEY_B ]]; then
        LABELS+=("B: iosurvey $f") BINS+=("$IOSURVEY_B") FLAGS+=("$f")
    fi
done
NV=${#LABELS[@]}

# ---------------------------------------------------------------- runs
declare -A IOPS CPU RSS WORKERS
FIO_IOPS=() FIO_CPU=() FIO_RSS=()
for ((p = 1; p <= PAIRS; p++)); do
    for ((v = 0; v < NV; v++)); do
        log "pair $p/$PAIRS: ${LABELS[v]}"
        IFS=$'\t' read -r a b c d < <(run_iosurvey "p$p-v$v" "${BINS[v]}" "${FLAGS[v]}")
        IOPS[$p,$v]=$a CPU[$p,$v]=$b RSS[$p,$v]=$c WORKERS[$v]=$d
    done
    log "pair $p/$PAIRS: fio"
    IFS=$'\t' read -r a b c d < <(run_fio "p$p-fio")
    FIO_IOPS+=("$a") FIO_CPU+=("$b") FIO_RSS+=("$c")
done

# ---------------------------------------------------------------- report
COMMIT=$(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ $COMMIT != unknown && -n $(git -C "$REPO_DIR" status --porcelain --untracked-files=no 2>/dev/null) ]]; then
    COMMIT="$COMMIT-dirty"
fi
{
    echo "## Many targets: iosurvey vs fio, one job per target ($(date -u '+%Y-%m-%d %H:%M:%S UTC'))"
    echo
    echo "| | |"
    echo "|---|---|"
    echo "| kernel | $(uname -r) |"
    echo "| CPU | $(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo) |"
    echo "| nproc | $(nproc) |"
    echo "| load average at the end | $(cut -d' ' -f1-3 /proc/loadavg) |"
    echo "| fio | $(fio --version) |"
    echo "| iosurvey | ${IOSURVEY_GIVEN:-built at $COMMIT}${IOSURVEY_B:+; B: $IOSURVEY_B} |"
    echo "| targets | $TARGETS zram devices of $SIZE_MIB MiB, random data |"
    echo "| workload | $BS random reads, QD $QD per target, O_DIRECT, io_uring, ${DURATION}s, $PAIRS pairs (each iosurvey variant, then fio) |"
    echo
    echo "- iosurvey: \`iosurvey run DEV0 .. DEV$((TARGETS - 1)) --rw randread --bs $BS --qd $QD [variant flags] --time ${DURATION}s --output json\`"
    echo "- fio: \`fio ${FIO_COMMON[*]} --name=t0 --filename=DEV0 ... --name=t$((TARGETS - 1)) --filename=DEV$((TARGETS - 1))\`"
    echo "- RSS: peak resident set (GNU time %M); CPU: user + system per I/O"
    echo
    echo "| pair | run | k IOPS | /fio | CPU µs/IO | peak RSS MiB |"
    echo "|---:|---|---:|---:|---:|---:|"
    for ((p = 1; p <= PAIRS; p++)); do
        for ((v = 0; v < NV; v++)); do
            echo "| $p | ${LABELS[v]} | $(num "${IOPS[$p,$v]}" "%.1f" | awk '$1 != "FAIL" { $1 = sprintf("%.1f", $1 / 1000) } 1') | $(num "$(ratio "${IOPS[$p,$v]}" "${FIO_IOPS[p - 1]}")" "%.3f") | $(num "${CPU[$p,$v]}" "%.2f") | $(num "${RSS[$p,$v]}" "%.1f") |"
        done
        echo "| $p | fio ($TARGETS jobs) | $(num "${FIO_IOPS[p - 1]}" "%.1f" | awk '$1 != "FAIL" { $1 = sprintf("%.1f", $1 / 1000) } 1') | 1 | $(num "${FIO_CPU[p - 1]}" "%.2f") | $(num "${FIO_RSS[p - 1]}" "%.1f") |"
    done
    echo
    echo "| run | workers | k IOPS median | IOPS/fio per pair: median (min..max) | CPU/IO / fio: median | peak RSS MiB median | RSS/fio per pair: median (min..max) |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for ((v = 0; v < NV; v++)); do
        iv=() rv=() cv=() mv=() qv=()
        for ((p = 1; p <= PAIRS; p++)); do
            iv+=("${IOPS[$p,$v]}") mv+=("${RSS[$p,$v]}")
            rv+=("$(ratio "${IOPS[$p,$v]}" "${FIO_IOPS[p - 1]}")")
            cv+=("$(ratio "${CPU[$p,$v]}" "${FIO_CPU[p - 1]}")")
            qv+=("$(ratio "${RSS[$p,$v]}" "${FIO_RSS[p - 1]}")")
        done
        echo "| ${LABELS[v]} | ${WORKERS[$v]} | $(num "$(median "${iv[@]}")" "%.0f" | awk '$1 != "FAIL" { $1 = sprintf("%.1f", $1 / 1000) } 1') | $(num "$(median "${rv[@]}")" "%.3f") ($(spread "${rv[@]}")) | $(num "$(median "${cv[@]}")" "%.3f") | $(num "$(median "${mv[@]}")" "%.1f") | $(num "$(median "${qv[@]}")" "%.3f") ($(spread "${qv[@]}")) |"
    done
    echo "| fio | $TARGETS jobs | $(num "$(median "${FIO_IOPS[@]}")" "%.0f" | awk '$1 != "FAIL" { $1 = sprintf("%.1f", $1 / 1000) } 1') | 1 | 1 | $(num "$(median "${FIO_RSS[@]}")" "%.1f") | 1 |"
    echo
} | tee "$OUT_DIR/results.md"
((FAILED == 0)) || die "some runs failed; see $OUT_DIR"
