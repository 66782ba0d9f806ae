#!/usr/bin/env bash
# iosurvey vs fio, alternating pairs on identical settings. See bench/README.md.
#
#   sudo bench/run.sh                      # full run: PAIRS=5 DURATION=5
#   sudo PAIRS=1 DURATION=1 bench/run.sh   # smoke test
#   sudo CASES="1 6 7" FIO_SRC=~/fio bench/run.sh   # issue 11: CPU, throttled, instructions
#
# Markdown goes to stdout (and to $OUT_DIR/results.md); progress goes to
# stderr; raw JSON of every run goes to $OUT_DIR.
set -euo pipefail

PAIRS=${PAIRS:-5}
CASES=${CASES:-1 2 3a 3b 4 5 6 7 8a 8b 8c}
THROTTLE_IOPS=${THROTTLE_IOPS:-2000}
DURATION=${DURATION:-5}          # seconds per run, time-based
SIZE_BYTES=$((1024 * 1024 * 1024))  # every target is 1 GiB
RSS_BUDGET_MIB=64

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$SCRIPT_DIR/.." && pwd)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT_DIR=${OUT_DIR:-$SCRIPT_DIR/out/$STAMP}

log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- checks
[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || die "PAIRS must be a positive integer (got '$PAIRS')"
[[ $DURATION =~ ^[1-9][0-9]*$ ]] || die "DURATION must be a whole number of seconds (got '$DURATION')"

missing=()
[[ $(id -u) -eq 0 ]] || missing+=("root: zram devices can only be created as root; run with sudo")
command -v fio >/dev/null || missing+=("fio: apt-get install -y fio (Debian's fio package, 3.33 here)")
command -v jq >/dev/null || missing+=("jq: apt-get install -y jq")
command -v dd >/dev/null || missing+=("dd: coreutils")
command -v git >/dev/null || missing+=("git: apt-get install -y git (for the commit in the header)")
[[ -x /usr/bin/time && $(/usr/bin/time -f %w true 2>&1) =~ ^[0-9]+$ ]] ||
    missing+=("GNU time at /usr/bin/time: apt-get install -y time (CPU time and context switches of each run)")
want() { [[ " $CASES " == *" $1 "* ]]; }
if want 6; then
    command -v losetup >/dev/null || missing+=("losetup: apt-get install -y util-linux (case 6)")
    [[ -d /sys/fs/cgroup/blkio || -e /sys/fs/cgroup/cgroup.controllers ]] ||
        missing+=("a blkio cgroup (v1 /sys/fs/cgroup/blkio or v2 io controller) for case 6")
fi
if want 7; then
    command -v valgrind >/dev/null || missing+=("valgrind: apt-get install -y valgrind (case 7)")
fi
if [[ ! -d /sys/class/zram-control ]]; then
    modprobe zram 2>/dev/null || true
    [[ -d /sys/class/zram-control ]] || missing+=("zram: /sys/class/zram-control is missing (kernel module zram not loaded)")
fi
if [[ -r /proc/sys/kernel/io_uring_disabled && $(cat /proc/sys/kernel/io_uring_disabled) != 0 ]]; then
    missing+=("io_uring: disabled by /proc/sys/kernel/io_uring_disabled")
fi
if ((${#missing[@]})); then
    printf 'bench: missing requirements (nothing was installed):\n' >&2
    printf '  - %s\n' "${missing[@]}" >&2
    exit 1
fi

# The release binary. IOSURVEY=/path/to/iosurvey skips the build.
IOSURVEY_GIVEN=${IOSURVEY:-}
if [[ -n ${IOSURVEY:-} ]]; then
    [[ -x $IOSURVEY ]] || die "IOSURVEY=$IOSURVEY is not an executable"
elif command -v cargo >/dev/null; then
    log "cargo build --release (no-op when up to date)"
    (cd "$REPO_DIR" && cargo build --release --quiet) || die "cargo build --release failed"
    IOSURVEY=$REPO_DIR/target/release/iosurvey
else
    IOSURVEY=$REPO_DIR/target/release/iosurvey
    [[ -x $IOSURVEY ]] || die "no cargo and no $IOSURVEY: install Rust (rustup) or set IOSURVEY=/path/to/iosurvey"
    log "cargo not found: using the existing $IOSURVEY, which may not match HEAD"
fi

# Peak RSS for case 5: GNU time when present (RSS_METHOD=auto), else polling
# VmHWM in /proc/PID/status (RSS_METHOD=poll forces it).
RSS_METHOD=${RSS_METHOD:-auto}
TIME_BIN=""
case $RSS_METHOD in
auto | time)
    if [[ -x /usr/bin/time && $(/usr/bin/time -v true 2>&1) == *"Maximum resident set size"* ]]; then
        TIME_BIN=/usr/bin/time
    elif [[ $RSS_METHOD == time ]]; then
        die "RSS_METHOD=time needs GNU time at /usr/bin/time (apt-get install -y time), or use RSS_METHOD=poll"
    fi
    ;;
poll) ;;
*) die "RSS_METHOD must be auto, time or poll (got '$RSS_METHOD')" ;;
esac

avail_bytes() { df -P -B1 "$1" | awk 'NR == 2 { print $4 }'; }
if want 4; then
    (($(avail_bytes /var/tmp) > SIZE_BYTES + (256 << 20))) || die "/var/tmp needs more than 1.25 GiB free (case 4)"
fi
if want 2 || want 3a || want 3b || want 6 || want 8a || want 8b; then
    (($(avail_bytes /dev/shm) > SIZE_BYTES + (256 << 20))) || die "/dev/shm needs more than 1.25 GiB free (cases 2, 3, 6, 8)"
fi
mem_avail_kib=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
((mem_avail_kib > 3 * 1024 * 1024)) || die "need about 3 GiB of available memory (zram + tmpfs file), have $((mem_avail_kib / 1024)) MiB"

# ---------------------------------------------------------------- targets
ZRAM_ID=""
SHM_DIR=""
DISK_DIR=""
POLL_PID=""
LOOP_DEV=""
CG_DIR=""
WORK_DIR=""

cleanup() {
    local rc=$?
    set +e
    trap - EXIT INT TERM
    if [[ -n $POLL_PID ]]; then
        kill "$POLL_PID" 2>/dev/null
        wait "$POLL_PID" 2>/dev/null
    fi
    if [[ -n $CG_DIR && -d $CG_DIR ]]; then
        rmdir "$CG_DIR" 2>/dev/null && log "removed cgroup $CG_DIR" || log "could not remove cgroup $CG_DIR"
    fi
    if [[ -n $LOOP_DEV ]]; then
        losetup -d "$LOOP_DEV" && log "detached $LOOP_DEV"
    fi
    if [[ -n $ZRAM_ID ]]; then
        local i
        for i in 1 2 3 4 5 6 7 8 9 10; do
            { echo "$ZRAM_ID" >/sys/class/zram-control/hot_remove; } 2>/dev/null && break
            sleep 0.5
        done
        if [[ -e /sys/block/zram$ZRAM_ID ]]; then
            log "could not remove /dev/zram$ZRAM_ID: echo $ZRAM_ID > /sys/class/zram-control/hot_remove"
        else
            log "removed /dev/zram$ZRAM_ID"
        fi
    fi
    [[ -n $SHM_DIR && -d $SHM_DIR ]] && rm -rf -- "$SHM_DIR" && log "removed $SHM_DIR"
    [[ -n $DISK_DIR && -d $DISK_DIR ]] && rm -rf -- "$DISK_DIR" && log "removed $DISK_DIR"
    [[ -n $WORK_DIR && -d $WORK_DIR ]] && rm -rf -- "$WORK_DIR" && log "removed $WORK_DIR"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$OUT_DIR"
log "raw outputs in $OUT_DIR"

if want 1 || want 5 || want 7 || want 8c; then
    ZRAM_ID=$(cat /sys/class/zram-control/hot_add)
    ZRAM=/dev/zram$ZRAM_ID
    [[ $(cat "/sys/block/zram$ZRAM_ID/disksize") == 0 ]] || die "new zram$ZRAM_ID is not empty?"
    echo "$SIZE_BYTES" >"/sys/block/zram$ZRAM_ID/disksize"
    for _ in 1 2 3 4 5 6 7 8 9 10; do [[ -b $ZRAM ]] && break; sleep 0.2; done
    [[ -b $ZRAM ]] || die "$ZRAM did not appear"
    log "filling $ZRAM (1 GiB from /dev/urandom, O_DIRECT)"
    dd if=/dev/urandom of="$ZRAM" bs=1M count=1024 oflag=direct status=none
fi

if want 2 || want 3a || want 3b || want 6 || want 8a || want 8b; then
    SHM_DIR=$(mktemp -d /dev/shm/iosurvey-bench.XXXXXX)
    SHM_FILE=$SHM_DIR/data
    log "filling $SHM_FILE (1 GiB from /dev/urandom)"
    dd if=/dev/urandom of="$SHM_FILE" bs=1M count=1024 status=none
fi

if want 4; then
    DISK_DIR=$(mktemp -d /var/tmp/iosurvey-bench.XXXXXX)
    DISK_FILE=$DISK_DIR/data
    log "filling $DISK_FILE (1 GiB from /dev/urandom, O_DIRECT, fsync)"
    dd if=/dev/urandom of="$DISK_FILE" bs=1M count=1024 oflag=direct conv=fsync status=none
fi

# ---------------------------------------------------------------- helpers
num() { awk -v x="$1" -v f="$2" 'BEGIN { if (x == "" || x == "FAIL") print "FAIL"; else printf f, x }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "FAIL" || b == "FAIL" || a == "" || b == "" || b + 0 == 0) print "FAIL"; else printf "%.6f", a / b }'; }
diff_of() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "FAIL" || b == "FAIL" || a == "" || b == "") print "FAIL"; else printf "%.6f", a - b }'; }
median() {
    printf '%s\n' "$@" | { grep -v -e '^FAIL$' -e '^$' || true; } | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) print "FAIL"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# Display a raw figure: IOPS as k IOPS, bytes/s as MiB/s.
show() {
    case $1 in
    iops | wiops) num "$2" "%.1f" | awk '$1 == "FAIL" { print; next } { printf "%.1f\n", $1 / 1000 }' ;;
    bw | wbw) num "$2" "%.1f" | awk '$1 == "FAIL" { print; next } { printf "%.1f\n", $1 / 1048576 }' ;;
    esac
}
unit() { [[ $1 == iops || $1 == wiops ]] && echo "k IOPS" || echo "MiB/s"; }

FAILED=0
# The cgroup every measured process joins (case 6), empty: none.
RUN_CG=""

# measured TIMEFILE CMD... : runs CMD under GNU time (wall, user, system
# seconds, voluntary and involuntary context switches of the process and
# the children it waited for), inside $RUN_CG when set.
measured() {
    local tf=$1
    shift
    if [[ -n $RUN_CG ]]; then
        sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$RUN_CG" /usr/bin/time -f "%e %U %S %w %c" -o "$tf" "$@"
    else
        /usr/bin/time -f "%e %U %S %w %c" -o "$tf" "$@"
    fi
}

# costs TIMEFILE IOS -> "cpu_us_per_io vcsw_per_io cpu_pct_of_core"
costs() {
    awk -v n="$2" 'END {
        if (NF < 5 || n + 0 == 0) { print "FAIL\tFAIL\tFAIL"; exit }
        cpu = $2 + $3
        printf "%.4f\t%.4f\t%.3f\n", cpu * 1e6 / n, $4 / n, ($1 > 0 ? cpu / $1 * 100 : 0) }' "$1"
}

# run_iosurvey NAME METRIC ARGS...
#   -> "value elapsed_s cpu_us_per_io vcsw_per_io cpu_pct"
run_iosurvey() {
    local name=$1 metric=$2
    shift 2
    local json=$OUT_DIR/$name-iosurvey.json err=$OUT_DIR/$name-iosurvey.err tf=$OUT_DIR/$name-iosurvey.time
    printf '%q ' "$IOSURVEY" run "$@" --time "${DURATION}s" --output json --quiet >>"$OUT_DIR/commands.txt"
    echo >>"$OUT_DIR/commands.txt"
    if measured "$tf" "$IOSURVEY" run "$@" --time "${DURATION}s" --output json --quiet >"$json" 2>"$err" &&
        jq -e '.points[0].failure == null and (.points[0].interrupted | not)' "$json" >/dev/null; then
        local v e ios
        IFS=$'\t' read -r v e ios < <(jq -r --arg m "$metric" '.points[0] | [(if $m == "iops" then .total.read.iops elif $m == "wiops" then .total.write.iops elif $m == "wbw" then .total.write.bytes_per_sec else .total.read.bytes_per_sec end), .elapsed_ns / 1e9, .total.read.ops + .total.write.ops] | @tsv' "$json")
        printf '%s\t%s\t%s\n' "$v" "$e" "$(costs "$tf" "$ios")"
    else
        log "iosurvey failed ($name): $(head -c 500 "$err")"
        FAILED=1
        printf 'FAIL\t\tFAIL\tFAIL\tFAIL\n'
    fi
}

# run_fio NAME METRIC ARGS...
#   -> "value elapsed_s cpu_us_per_io vcsw_per_io cpu_pct"
run_fio() {
    local name=$1 metric=$2
    shift 2
    local json=$OUT_DIR/$name-fio.json err=$OUT_DIR/$name-fio.err tf=$OUT_DIR/$name-fio.time
    local args=(--name="$name" "$@" --direct=1 --numjobs=1 --time_based --runtime="$DURATION"
        --output-format=json --output="$json")
    printf '%q ' fio "${args[@]}" >>"$OUT_DIR/commands.txt"
    echo >>"$OUT_DIR/commands.txt"
    if measured "$tf" fio "${args[@]}" >"$err" 2>&1 && jq -e '.jobs[0].error == 0' "$json" >/dev/null 2>&1; then
        local v e ios
        IFS=$'\t' read -r v e ios < <(jq -r --arg m "$metric" '.jobs[0] | [(if $m == "iops" then .read.iops elif $m == "wiops" then .write.iops elif $m == "wbw" then .write.bw_bytes else .read.bw_bytes end), ([.read.runtime, .write.runtime] | max) / 1000, .read.total_ios + .write.total_ios] | @tsv' "$json")
        printf '%s\t%s\t%s\n' "$v" "$e" "$(costs "$tf" "$ios")"
    else
        log "fio failed ($name): $(head -c 500 "$err")"
        FAILED=1
        printf 'FAIL\t\tFAIL\tFAIL\tFAIL\n'
    fi
}

SUMMARY=()
COST_SUMMARY=()

# compare ID TITLE METRIC -- uses the arrays ISV (iosurvey args) and FIO (fio args).
compare() {
    local id=$1 title=$2 metric=$3
    local p iv ie icpu icsw ipct fv fe fcpu fcsw fpct r
    local ivals=() fvals=() ratios=() rows=() icpus=() fcpus=() icsws=() fcsws=() ipcts=() fpcts=() cratios=() pdiffs=()
    for ((p = 1; p <= PAIRS; p++)); do
        log "case $id: pair $p/$PAIRS iosurvey"
        IFS=$'\t' read -r iv ie icpu icsw ipct < <(run_iosurvey "c$id-p$p" "$metric" "${ISV[@]}")
        log "case $id: pair $p/$PAIRS fio"
        IFS=$'\t' read -r fv fe fcpu fcsw fpct < <(run_fio "c$id-p$p" "$metric" "${FIO[@]}")
        [[ $iv != FAIL && $fv != FAIL ]] || FAILED=1
        r=$(ratio "$iv" "$fv")
        ivals+=("$iv") fvals+=("$fv") ratios+=("$r")
        icpus+=("$icpu") fcpus+=("$fcpu") icsws+=("$icsw") fcsws+=("$fcsw") ipcts+=("$ipct") fpcts+=("$fpct")
        cratios+=("$(ratio "$icpu" "$fcpu")") pdiffs+=("$(diff_of "$ipct" "$fpct")")
        rows+=("| $p | $(show "$metric" "$iv") | $(show "$metric" "$fv") | $(num "$r" "%.3f") | $(num "$icpu" "%.2f") | $(num "$fcpu" "%.2f") | $(num "$icsw" "%.3f") | $(num "$fcsw" "%.3f") | $(num "$ipct" "%.1f") | $(num "$fpct" "%.1f") | $(num "$ie" "%.2f") | $(num "$fe" "%.2f") |")
    done
    local im fm rm icm fcm crm iwm fwm ipm fpm pdm
    im=$(median "${ivals[@]}") fm=$(median "${fvals[@]}") rm=$(median "${ratios[@]}")
    icm=$(median "${icpus[@]}") fcm=$(median "${fcpus[@]}") crm=$(median "${cratios[@]}")
    iwm=$(median "${icsws[@]}") fwm=$(median "${fcsws[@]}")
    ipm=$(median "${ipcts[@]}") fpm=$(median "${fpcts[@]}") pdm=$(median "${pdiffs[@]}")
    {
        echo "### $id. $title"
        echo
        echo "- iosurvey: \`iosurvey run ${ISV[*]} --time ${DURATION}s\`"
        echo "- fio: \`fio --name=c$id ${FIO[*]} --direct=1 --numjobs=1 --time_based --runtime=$DURATION --output-format=json\`"
        [[ -z $RUN_CG ]] || echo "- both run inside the cgroup $RUN_CG ($CG_RULE)"
        echo "- CPU: user + system time of the whole process (GNU time), per I/O the tool completed and as % of one core over the process's wall time; csw: voluntary context switches"
        echo
        echo "| pair | iosurvey $(unit "$metric") | fio $(unit "$metric") | iosurvey/fio | iosurvey CPU µs/IO | fio CPU µs/IO | iosurvey csw/IO | fio csw/IO | iosurvey CPU % | fio CPU % | iosurvey s | fio s |"
        echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        printf '%s\n' "${rows[@]}"
        echo "| **median** | **$(show "$metric" "$im")** | **$(show "$metric" "$fm")** | **$(num "$rm" "%.3f")** | **$(num "$icm" "%.2f")** | **$(num "$fcm" "%.2f")** | **$(num "$iwm" "%.3f")** | **$(num "$fwm" "%.3f")** | **$(num "$ipm" "%.1f")** | **$(num "$fpm" "%.1f")** | | |"
        echo
        echo "Median per-pair CPU per I/O, iosurvey/fio: $(num "$crm" "%.3f"); median per-pair CPU % of a core, iosurvey - fio: $(num "$pdm" "%+.2f") points."
        echo
        if [[ -n $RUN_CG ]]; then
            awk -v d="$pdm" 'BEGIN { if (d == "FAIL") print "Target (iosurvey at most 1 point of a core above fio): not measured."
                else printf "Target (iosurvey at most 1 point of a core above fio): %s.\n", (d <= 1 ? "met" : "NOT met") }'
            echo
        fi
    } | tee -a "$OUT_DIR/results.md"
    SUMMARY+=("| $id. $title | $(unit "$metric") | $(show "$metric" "$im") | $(show "$metric" "$fm") | $(num "$rm" "%.3f") |")
    COST_SUMMARY+=("| $id | $(num "$icm" "%.2f") | $(num "$fcm" "%.2f") | $(num "$crm" "%.3f") | $(num "$iwm" "%.3f") | $(num "$fwm" "%.3f") | $(num "$ipm" "%.1f") | $(num "$fpm" "%.1f") | $(num "$pdm" "%+.2f") |")
    LAST_IOSURVEY_MEDIAN=$im
}

# ---------------------------------------------------------------- header
COMMIT=$(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ $COMMIT != unknown && -n $(git -C "$REPO_DIR" status --porcelain --untracked-files=no 2>/dev/null) ]]; then
    COMMIT="$COMMIT-dirty"
fi
{
    echo "## iosurvey vs fio ($(date -u '+%Y-%m-%d %H:%M:%S UTC'))"
    echo
    echo "| | |"
    echo "|---|---|"
    echo "| kernel | $(uname -r) |"
    echo "| CPU | $(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo) |"
    echo "| nproc | $(nproc) |"
    echo "| load average at start | $(cut -d' ' -f1-3 /proc/loadavg) |"
    echo "| fio | $(fio --version) |"
    if [[ -n $IOSURVEY_GIVEN ]]; then
        echo "| iosurvey binary | $IOSURVEY_GIVEN (given by IOSURVEY; the checkout is at $COMMIT) |"
    else
        echo "| iosurvey commit | $COMMIT |"
    fi
    echo "| pairs x duration | $PAIRS x ${DURATION}s, alternating iosurvey then fio, one job/worker, O_DIRECT |"
    echo "| cases | $CASES |"
    echo "| targets | zram (1 GiB, random data), 1 GiB file on tmpfs (/dev/shm), 1 GiB file on $(df -P /var/tmp | awk 'NR == 2 { print $1 }') under /var/tmp |"
    echo
    echo "Ratios are iosurvey/fio per pair (above 1: iosurvey measured more); the median ratio is the median of the per-pair ratios, not the ratio of the medians."
    echo
} | tee "$OUT_DIR/results.md"


# ---------------------------------------------------------------- cases
# fio: --norandommap because iosurvey draws random offsets with replacement
# (fio's default random map would visit each block once per pass).
FIO_URING=(--ioengine=io_uring --fixedbufs --registerfiles)
C1_MEDIAN=FAIL

if want 1; then
    ISV=("$ZRAM" --rw randread --bs 4k --qd 32 --engine uring)
    FIO=(--filename="$ZRAM" --rw=randread --bs=4k --iodepth=32 "${FIO_URING[@]}" --norandommap)
    compare 1 "zram, 4 KiB random read, QD 32, io_uring" iops
    C1_MEDIAN=$LAST_IOSURVEY_MEDIAN
fi

if want 2; then
    ISV=("$SHM_FILE" --rw randread --bs 4k --qd 1 --engine sync)
    FIO=(--filename="$SHM_FILE" --size="$SIZE_BYTES" --rw=randread --bs=4k --iodepth=1 --ioengine=psync --norandommap)
    compare 2 "tmpfs file, 4 KiB random read, QD 1, sync (fio psync)" iops
fi

if want 3a; then
    ISV=("$SHM_FILE" --rw read --bs 1m --qd 1 --engine uring)
    FIO=(--filename="$SHM_FILE" --size="$SIZE_BYTES" --rw=read --bs=1M --iodepth=1 "${FIO_URING[@]}")
    compare 3a "tmpfs file, 1 MiB sequential read, QD 1, io_uring" bw
fi

if want 3b; then
    ISV=("$SHM_FILE" --rw read --bs 1m --qd 1 --engine sync)
    FIO=(--filename="$SHM_FILE" --size="$SIZE_BYTES" --rw=read --bs=1M --iodepth=1 --ioengine=psync)
    compare 3b "tmpfs file, 1 MiB sequential read, QD 1, sync (fio psync)" bw
fi

if want 4; then
    ISV=("$DISK_FILE" --rw randread --bs 4k --qd 32 --engine uring)
    FIO=(--filename="$DISK_FILE" --size="$SIZE_BYTES" --rw=randread --bs=4k --iodepth=32 "${FIO_URING[@]}" --norandommap)
    compare 4 "disk file (/var/tmp), 4 KiB random read, QD 32, io_uring" iops
fi

# Cases 8a and 8b: writes, whose every 512-byte sector iosurvey generates
# as it is written (issue 27); fio's default scramble_buffers varies its
# buffers per I/O too (cheaper, and compressible). The bench made the file, so iosurvey is allowed to overwrite it.
if want 8a; then
    ISV=("$SHM_FILE" --rw randwrite --bs 4k --qd 1 --engine sync --allow-destroy)
    FIO=(--filename="$SHM_FILE" --size="$SIZE_BYTES" --rw=randwrite --bs=4k --iodepth=1 --ioengine=psync --norandommap)
    compare 8a "tmpfs file, 4 KiB random write, QD 1, sync (fio psync)" wiops
fi

if want 8b; then
    ISV=("$SHM_FILE" --rw write --bs 1m --qd 1 --engine uring --allow-destroy)
    FIO=(--filename="$SHM_FILE" --size="$SIZE_BYTES" --rw=write --bs=1M --iodepth=1 "${FIO_URING[@]}")
    compare 8b "tmpfs file, 1 MiB sequential write, QD 1, io_uring" wbw
fi

# Case 8c: one stream of writes on zram, where the
# device costs least and the data generated per write weighs most.
if want 8c; then
    ISV=("$ZRAM" --rw randwrite --bs 4k --qd 32 --engine uring --allow-destroy)
    FIO=(--filename="$ZRAM" --rw=randwrite --bs=4k --iodepth=32 "${FIO_URING[@]}" --norandommap)
    compare 8c "zram, 4 KiB random write, QD 32, io_uring" wiops
fi

if want 5; then
# Case 5: iosurvey alone, 2 workers x QD 2048 on zram: IOPS and peak RSS.
C5_WORKERS=2 C5_QD=2048 C5_BS=4096
BUF_BYTES=$((C5_WORKERS * C5_QD * C5_BS))
C5_ARGS=("$ZRAM" --rw randread --bs 4k --qd "$C5_QD" --workers "$C5_WORKERS" --engine uring)

# peak_rss NAME ARGS... -> prints "iops elapsed_s peak_rss_kib"
peak_rss() {
    local name=$1
    shift
    local json=$OUT_DIR/$name-iosurvey.json err=$OUT_DIR/$name-iosurvey.err
    local cmd=("$IOSURVEY" run "$@" --time "${DURATION}s" --output json --quiet)
    printf '%q ' "${cmd[@]}" >>"$OUT_DIR/commands.txt"
    echo >>"$OUT_DIR/commands.txt"
    local rc=0 rss=""
    if [[ -n $TIME_BIN ]]; then
        "$TIME_BIN" -v -o "$OUT_DIR/$name.time" "${cmd[@]}" >"$json" 2>"$err" || rc=$?
        rss=$(awk -F': *' '/Maximum resident set size/ { print $2 }' "$OUT_DIR/$name.time")
    else
        # No GNU time: poll VmHWM (the kernel's peak RSS) until the process exits.
        "${cmd[@]}" >"$json" 2>"$err" &
        POLL_PID=$!
        local hwm
        while hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$POLL_PID/status" 2>/dev/null) && [[ -n $hwm ]]; do
            rss=$hwm
            sleep 0.05
        done
        wait "$POLL_PID" || rc=$?
        POLL_PID=""
    fi
    if ((rc == 0)) && jq -e '.points[0].failure == null and (.points[0].interrupted | not)' "$json" >/dev/null; then
        jq -r --arg rss "${rss:-FAIL}" '.points[0] | [.total.read.iops, .elapsed_ns / 1e9, $rss] | @tsv' "$json"
    else
        log "iosurvey failed ($name): $(head -c 500 "$err")"
        FAILED=1
        printf 'FAIL\t\tFAIL\n'
    fi
}

C5_IOPS=() C5_RSS=() C5_ROWS=()
for ((p = 1; p <= PAIRS; p++)); do
    log "case 5: run $p/$PAIRS iosurvey"
    IFS=$'\t' read -r iv ie rss < <(peak_rss "c5-p$p" "${C5_ARGS[@]}")
    [[ $iv != FAIL ]] || FAILED=1
    C5_IOPS+=("$iv") C5_RSS+=("$rss")
    rss_mib=$(awk -v k="$rss" 'BEGIN { if (k == "FAIL" || k == "") print "FAIL"; else printf "%.1f", k / 1024 }')
    net_mib=$(awk -v k="$rss" -v b="$BUF_BYTES" 'BEGIN { if (k == "FAIL" || k == "") print "FAIL"; else printf "%.1f", (k * 1024 - b) / 1048576 }')
    C5_ROWS+=("| $p | $(show iops "$iv") | $(num "$ie" "%.2f") | $rss_mib | $net_mib |")
done
log "case 5: baseline, 2 workers x QD 1"
IFS=$'\t' read -r bv _ brss < <(peak_rss "c5-baseline" "$ZRAM" --rw randread --bs 4k --qd 1 --workers "$C5_WORKERS" --engine uring)

im=$(median "${C5_IOPS[@]}")
rss_med=$(median "${C5_RSS[@]}")
rss_max=$(printf '%s\n' "${C5_RSS[@]}" | { grep -v -e FAIL -e '^$' || true; } | sort -g | tail -n1)
rss_max=${rss_max:-FAIL}
{
    echo "### 5. zram, 4 KiB random read, $C5_WORKERS workers x QD $C5_QD ($((C5_WORKERS * C5_QD)) outstanding), io_uring, iosurvey only"
    echo
    echo "- iosurvey: \`iosurvey run ${C5_ARGS[*]} --time ${DURATION}s\`"
    echo "- peak RSS from $([[ -n $TIME_BIN ]] && echo "\`/usr/bin/time -v\` (Maximum resident set size)" || echo "VmHWM in /proc/PID/status, polled every 50 ms")"
    echo "- I/O buffers: $C5_WORKERS x $C5_QD x $C5_BS B = $(awk -v b="$BUF_BYTES" 'BEGIN { printf "%.1f", b / 1048576 }') MiB; budget for everything else: $RSS_BUDGET_MIB MiB"
    echo
    echo "| run | iosurvey k IOPS | iosurvey s | peak RSS MiB | RSS - buffers MiB |"
    echo "|---:|---:|---:|---:|---:|"
    printf '%s\n' "${C5_ROWS[@]}"
    awk -v i="$im" -v k="$rss_med" -v b="$BUF_BYTES" 'BEGIN {
        ik = (i == "FAIL") ? "FAIL" : sprintf("%.1f", i / 1000)
        if (k == "FAIL") { r = "FAIL"; n = "FAIL" } else { r = sprintf("%.1f", k / 1024); n = sprintf("%.1f", (k * 1024 - b) / 1048576) }
        printf "| **median** | **%s** | | **%s** | **%s** |\n", ik, r, n }'
    echo
    awk -v k="$rss_max" -v b="$BUF_BYTES" -v budget="$RSS_BUDGET_MIB" 'BEGIN {
        if (k == "FAIL") { print "Peak RSS: not measured."; exit }
        n = (k * 1024 - b) / 1048576
        printf "Highest peak RSS %.1f MiB, minus %.1f MiB of I/O buffers = %.1f MiB: %s the %d MiB budget.\n",
            k / 1024, b / 1048576, n, (n <= budget ? "within" : "OVER"), budget }'
    awk -v k="$brss" -v v="$bv" 'BEGIN {
        if (k == "FAIL" || k == "") print "Baseline (same, QD 1): failed."
        else printf "Baseline (same, QD 1, 8 KiB of buffers): peak RSS %.1f MiB, %.1f k IOPS.\n", k / 1024, v / 1000 }'
    awk -v a="$im" -v c="$C1_MEDIAN" 'BEGIN {
        if (a != "FAIL" && c != "FAIL" && c > 0) printf "Median IOPS vs case 1 (1 worker, QD 32): %.3f.\n", a / c }'
    echo
} | tee -a "$OUT_DIR/results.md"

fi

# Case 6: a loop device throttled to THROTTLE_IOPS reads/s for the
# processes of a cgroup, each tool run inside it: on a slow device a tool
# that wakes with nothing to do burns CPU that fio does not.
if want 6; then
    LOOP_DEV=$(losetup -f --show --direct-io=on "$SHM_FILE")
    mm=$(($(stat -c '0x%t' "$LOOP_DEV"))):$(($(stat -c '0x%T' "$LOOP_DEV")))
    v2=""
    for root in /sys/fs/cgroup /sys/fs/cgroup/unified; do
        if [[ -r $root/cgroup.controllers && " $(cat "$root/cgroup.controllers") " == *" io "* ]]; then
            v2=$root
            break
        fi
    done
    if [[ -n $v2 ]]; then
        echo +io >"$v2/cgroup.subtree_control"
        CG_DIR=$v2/iosurvey-bench-$$
        mkdir "$CG_DIR"
        echo "$mm riops=$THROTTLE_IOPS" >"$CG_DIR/io.max"
        CG_RULE="cgroup v2 io.max: $mm riops=$THROTTLE_IOPS"
    elif [[ -e /sys/fs/cgroup/blkio/blkio.throttle.read_iops_device ]]; then
        CG_DIR=/sys/fs/cgroup/blkio/iosurvey-bench-$$
        mkdir "$CG_DIR"
        echo "$mm $THROTTLE_IOPS" >"$CG_DIR/blkio.throttle.read_iops_device"
        CG_RULE="cgroup v1 (no v2 io controller here) blkio.throttle.read_iops_device: $mm $THROTTLE_IOPS"
    else
        die "case 6: no cgroup v2 io controller and no v1 blkio throttling"
    fi
    log "case 6: $LOOP_DEV over $SHM_FILE, $CG_RULE"
    RUN_CG=$CG_DIR
    ISV=("$LOOP_DEV" --rw randread --bs 4k --qd 32 --engine uring)
    FIO=(--filename="$LOOP_DEV" --rw=randread --bs=4k --iodepth=32 "${FIO_URING[@]}" --norandommap)
    compare 6 "loop device throttled to $THROTTLE_IOPS read IOPS, 4 KiB random read, QD 32, io_uring" iops
    RUN_CG=""
    rmdir "$CG_DIR" && CG_DIR=""
    losetup -d "$LOOP_DEV" && LOOP_DEV=""
fi

# Case 7: user-space instructions per I/O, counted by callgrind (free of
# machine noise): the same zram workload at two lengths; the I/Os are the
# reads the kernel completed on the device during each run
# (/sys/block/zramN/stat), so every tool is counted the same way.
CG_SHORT=20000 CG_LONG=220000
TIOU_SHORT_S=2 TIOU_LONG_S=8
CG_ROWS=()
zram_reads() { awk '{ print $1 }' "/sys/block/zram$ZRAM_ID/stat"; }

# callgrind_count NAME CMD... -> "instructions ios" (FAIL on failure)
callgrind_count() {
    local name=$1
    shift
    local before after ir f total=0
    echo "valgrind --tool=callgrind $*" >>"$OUT_DIR/commands.txt"
    before=$(zram_reads)
    if ! valgrind --tool=callgrind --callgrind-out-file="$OUT_DIR/$name.callgrind.%p" "$@" \
        >"$OUT_DIR/$name.out" 2>"$OUT_DIR/$name.err"; then
        log "callgrind run failed ($name): $(tail -c 300 "$OUT_DIR/$name.err")"
        FAILED=1
        printf 'FAIL\tFAIL\n'
        return
    fi
    after=$(zram_reads)
    # fio may fork: every process's file counts.
    for f in "$OUT_DIR/$name.callgrind".*; do
        # (awk reads to the end: an early exit would fail the pipe under pipefail)
        ir=$(callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ && !n++ { gsub(",", "", $1); print $1 }')
        [[ -n $ir ]] || { printf 'FAIL\tFAIL\n'; return; }
        total=$((total + ir))
    done
    printf '%s\t%s\n' "$total" "$((after - before))"
}

# per_io_row TOOL IR_SHORT IOS_SHORT IR_LONG IOS_LONG: adds a row to CG_ROWS
# and sets PER to the instructions per I/O.
per_io_row() {
    local tool=$1 s_ir=$2 s_ios=$3 l_ir=$4 l_ios=$5
    local per
    per=$(awk -v a="$s_ir" -v b="$l_ir" -v c="$s_ios" -v d="$l_ios" 'BEGIN {
        if (a == "FAIL" || b == "FAIL" || d - c <= 0) print "FAIL"; else printf "%.1f", (b - a) / (d - c) }')
    CG_ROWS+=("| $tool | $s_ios | $l_ios | $s_ir | $l_ir | **$per** |")
    PER=$per
}

if want 7; then
    # fio's t/io_uring: from FIO_SRC, else a clone of the installed
    # version, else Debian's source package; built in a scratch directory
    # that is removed at the end (nothing of it is kept).
    WORK_DIR=$(mktemp -d /var/tmp/iosurvey-bench-fio.XXXXXX)
    FIO_VER=$(fio --version)
    TIOU="" TIOU_NOTE=""
    src=${FIO_SRC:-}
    if [[ -z $src ]]; then
        log "case 7: fetching fio's source ($FIO_VER) for t/io_uring"
        if timeout 120 git clone -q --depth 1 --branch "$FIO_VER" https://github.com/axboe/fio "$WORK_DIR/src" \
            >"$OUT_DIR/fio-source.err" 2>&1; then
            src=$WORK_DIR/src
        elif (cd "$WORK_DIR" && timeout 300 apt-get source -qq fio) >>"$OUT_DIR/fio-source.err" 2>&1; then
            src=$(find "$WORK_DIR" -maxdepth 1 -type d -name 'fio-*' | head -n1)
        else
            TIOU_NOTE="fio's source could not be obtained here (git clone of $FIO_VER and apt-get source fio both failed: $(grep -v '^$' "$OUT_DIR/fio-source.err" | tail -n1)); give FIO_SRC=/path/to/fio-source"
        fi
    fi
    if [[ -n $src ]]; then
        [[ -f $src/t/io_uring.c ]] || die "FIO_SRC=$src has no t/io_uring.c"
        log "case 7: building t/io_uring from $src"
        cp -a "$src" "$WORK_DIR/build"
        if (cd "$WORK_DIR/build" && ./configure --disable-native && make -j"$(nproc)" t/io_uring) >"$OUT_DIR/t-io_uring-build.log" 2>&1; then
            TIOU=$WORK_DIR/build/t/io_uring
            TIOU_VER=$(cd "$WORK_DIR/build" && cat FIO-VERSION-FILE 2>/dev/null | sed 's/.*= *//')
        else
            TIOU_NOTE="t/io_uring did not build from $src (see t-io_uring-build.log)"
        fi
    fi

    log "case 7: callgrind, iosurvey"
    IFS=$'\t' read -r a b < <(callgrind_count c7-iosurvey-short "$IOSURVEY" run "$ZRAM" --rw randread --bs 4k --qd 32 --engine uring --bytes $((CG_SHORT * 4096)) --quiet --output json)
    IFS=$'\t' read -r c d < <(callgrind_count c7-iosurvey-long "$IOSURVEY" run "$ZRAM" --rw randread --bs 4k --qd 32 --engine uring --bytes $((CG_LONG * 4096)) --quiet --output json)
    per_io_row iosurvey "$a" "$b" "$c" "$d"
    CG_ISV=$PER
    log "case 7: callgrind, fio"
    cg_fio() {
        callgrind_count "$1" fio --name=cg --filename="$ZRAM" --rw=randread --bs=4k --iodepth=32 "${FIO_URING[@]}" \
            --norandommap --direct=1 --numjobs=1 --thread --io_size=$(($2 * 4096)) --output-format=json --output="$OUT_DIR/$1.json"
    }
    IFS=$'\t' read -r a b < <(cg_fio c7-fio-short "$CG_SHORT")
    IFS=$'\t' read -r c d < <(cg_fio c7-fio-long "$CG_LONG")
    per_io_row "fio $FIO_VER" "$a" "$b" "$c" "$d"
    CG_FIO=$PER
    CG_TIOU=FAIL CG_TIOU_T=FAIL
    if [[ -n $TIOU ]]; then
        for t in 0 1; do
            log "case 7: callgrind, t/io_uring -t$t"
            tiou=("$TIOU" -d32 -s32 -c32 -b4096 -p0 -B1 -F1 -O1 -R1 -n1 -t"$t")
            IFS=$'\t' read -r a b < <(callgrind_count "c7-tiou-t$t-short" "${tiou[@]}" -r"$TIOU_SHORT_S" "$ZRAM")
            IFS=$'\t' read -r c d < <(callgrind_count "c7-tiou-t$t-long" "${tiou[@]}" -r"$TIOU_LONG_S" "$ZRAM")
            per_io_row "t/io_uring ($TIOU_VER) -t$t$([[ $t == 1 ]] && echo ", timing per batch" || echo ", no timing")" "$a" "$b" "$c" "$d"
            if [[ $t == 0 ]]; then CG_TIOU=$PER; else CG_TIOU_T=$PER; fi
        done
    fi
    {
        echo "### 7. Instructions per I/O (callgrind), zram, 4 KiB random read, QD 32, io_uring"
        echo
        echo "- user-space instructions (callgrind's Ir, every process) of a short and a long run; I/Os are the reads the kernel completed on the device during the run (\`/sys/block/zram$ZRAM_ID/stat\`); per I/O = difference of instructions / difference of I/Os"
        echo "- iosurvey: \`iosurvey run $ZRAM --rw randread --bs 4k --qd 32 --engine uring --bytes N*4096\`, N = $CG_SHORT and $CG_LONG"
        echo "- fio: \`fio --filename=$ZRAM --rw=randread --bs=4k --iodepth=32 ${FIO_URING[*]} --norandommap --direct=1 --thread --io_size=N*4096\`"
        if [[ -n $TIOU ]]; then
            echo "- t/io_uring: \`t/io_uring -d32 -s32 -c32 -b4096 -p0 -B1 -F1 -O1 -R1 -n1 -t0|1 -rS $ZRAM\`, S = $TIOU_SHORT_S and $TIOU_LONG_S s"
        else
            echo "- t/io_uring: not measured: $TIOU_NOTE"
        fi
        echo
        echo "| tool | I/Os short | I/Os long | instructions short | instructions long | instructions per I/O |"
        echo "|---|---:|---:|---:|---:|---:|"
        printf '%s\n' "${CG_ROWS[@]}"
        echo
        echo "iosurvey/fio: $(num "$(ratio "$CG_ISV" "$CG_FIO")" "%.3f"); iosurvey/t_io_uring (no timing): $(num "$(ratio "$CG_ISV" "$CG_TIOU")" "%.2f"); iosurvey/t_io_uring (timing): $(num "$(ratio "$CG_ISV" "$CG_TIOU_T")" "%.2f")."
        echo
    } | tee -a "$OUT_DIR/results.md"
fi

# ---------------------------------------------------------------- summary
{
    echo "### Summary (medians)"
    echo
    echo "| case | unit | iosurvey | fio | iosurvey/fio |"
    echo "|---|---|---:|---:|---:|"
    printf '%s\n' "${SUMMARY[@]}"
    echo
    echo "| case | iosurvey CPU µs/IO | fio CPU µs/IO | CPU/IO iosurvey/fio | iosurvey csw/IO | fio csw/IO | iosurvey CPU % | fio CPU % | CPU % iosurvey - fio |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    printf '%s\n' "${COST_SUMMARY[@]}"
    echo
    echo "Raw JSON: \`${OUT_DIR#"$REPO_DIR"/}/\` (every command in commands.txt)."
} | tee -a "$OUT_DIR/results.md"

if ((FAILED)); then
    log "some runs failed; see the .err files in $OUT_DIR"
    exit 1
fi
