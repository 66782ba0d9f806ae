#!/usr/bin/env bash
# iosurvey video against fio on the same frames: one file per frame, each
# created, written whole with O_DIRECT in one I/O, and closed, in turn.
# Alternating pairs; prints frames per second and the per-pair ratios.
#
#   bench/video.sh                       # PAIRS=5 FRAMES=300, hd-422 frames
#   PAIRS=1 FRAMES=50 bench/video.sh     # smoke test
#   CASES="/dev/shm sync psync" PAIRS=15 bench/video.sh   # one case
#
# fio's closest shape: --nrfiles=N --filesize=FRAME --bs=FRAME --openfiles=1
# --file_service_type=sequential --create_on_open=1 --fallocate=none. Both
# sides' rate is bytes over their own measured run time; neither counts the
# removal of the files afterwards.
set -euo pipefail

PAIRS=${PAIRS:-5}
FRAMES=${FRAMES:-300}
FRAME=${FRAME:-4149248} # hd-422: 1920x1080x2, rounded up to 4 KiB

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$SCRIPT_DIR/.." && pwd)
log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || die "PAIRS must be a positive integer (got '$PAIRS')"
[[ $FRAMES =~ ^[1-9][0-9]*$ ]] || die "FRAMES must be a positive integer (got '$FRAMES')"
((FRAME % 4096 == 0)) || die "FRAME must be a multiple of 4096 (got $FRAME)"
command -v fio >/dev/null || die "fio is missing: apt-get install -y fio"
command -v jq >/dev/null || die "jq is missing: apt-get install -y jq"
if [[ -z ${IOSURVEY:-} ]]; then
    (cd "$REPO_DIR" && cargo build --release --quiet) || die "cargo build --release failed"
    IOSURVEY=$REPO_DIR/target/release/iosurvey
fi

WORK=()
cleanup() {
    local d
    for d in "${WORK[@]}"; do rm -rf -- "$d"; done
}
trap cleanup EXIT

# Frames per second of one run in a fresh directory under $1.
run_iosurvey() { # base engine
    local d
    d=$(mktemp -d "$1/iosurvey-vbench.XXXXXX")
    WORK+=("$d")
    "$IOSURVEY" video "$d" --write --frame-size "$FRAME" --frames "$FRAMES" \
        --engine "$2" --output json --quiet |
        jq '.points[0] | (.frames.records | length) / (.elapsed_ns / 1e9)'
    rm -rf -- "$d"
}

run_fio() { # base ioengine
    local d
    d=$(mktemp -d "$1/fio-vbench.XXXXXX")
    WORK+=("$d")
    fio --name=frames --directory="$d" --rw=write --bs="$FRAME" --filesize="$FRAME" \
        --nrfiles="$FRAMES" --openfiles=1 --file_service_type=sequential \
        --create_on_open=1 --fallocate=none --direct=1 --ioengine="$2" \
        --output-format=json |
        jq --argjson fb "$FRAME" '.jobs[0].write | (.io_bytes / $fb) / (.runtime / 1000)'
    rm -rf -- "$d"
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "## iosurvey video vs fio: $FRAMES files of $FRAME bytes, one per frame"
echo
echo "$(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs, fio $(fio --version), iosurvey $(git -C "$REPO_DIR" rev-parse --short HEAD)"
echo
echo "| case | iosurvey fps | fio fps | median per-pair ratio | pairs |"
echo "|---|---|---|---|---|"
# CASES: "dir iosurvey-engine fio-ioengine" triples, separated by commas.
CASES=${CASES:-/dev/shm sync psync,/dev/shm uring io_uring,/var/tmp sync psync,/var/tmp uring io_uring}
IFS=, read -r -a case_list <<<"$CASES"
for case in "${case_list[@]}"; do
    read -r base ours theirs <<<"$case"
    a=() b=() r=()
    for ((i = 1; i <= PAIRS; i++)); do
        x=$(run_iosurvey "$base" "$ours")
        y=$(run_fio "$base" "$theirs")
        a+=("$x") b+=("$y")
        r+=("$(awk -v x="$x" -v y="$y" 'BEGIN { printf "%.3f", x / y }')")
        log "$base $ours/$theirs pair $i: $x vs $y fps"
    done
    printf '| %s %s vs %s | %.1f | %.1f | **%.3f** | %s |\n' "$base" "$ours" "$theirs" \
        "$(median "${a[@]}")" "$(median "${b[@]}")" "$(median "${r[@]}")" "${r[*]}"
done
