#!/usr/bin/env bash
# A/B of two iosurvey binaries on `video --write` (300 frames of hd-422, one
# file each), alternated (before first on odd turns, after first on even
# ones); prints each one's median frames per second.
#
#   bench/video-ab.sh /dev/shm sync 10
#   BEFORE=/tmp/a AFTER=/tmp/b bench/video-ab.sh /var/tmp uring 10
set -euo pipefail
base=$1 eng=$2 n=${3:-10}
BEFORE=${BEFORE:-/tmp/iosurvey-video-before}
AFTER=${AFTER:-/tmp/iosurvey-video-after}
run() {
    local d
    d=$(mktemp -d "$base/vab.XXXXXX")
    "$1" video "$d" --write --frame-size 4149248 --frames 300 --engine "$eng" --output json --quiet |
        jq '.points[0] | (.frames.records | length) / (.elapsed_ns / 1e9)'
    rm -rf -- "$d"
}
a=() b=()
for ((i = 0; i < n; i++)); do
    if ((i % 2)); then
        a+=("$(run "$BEFORE")")
        b+=("$(run "$AFTER")")
    else
        b+=("$(run "$AFTER")")
        a+=("$(run "$BEFORE")")
    fi
done
med() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%s %s: before %.1f after %.1f fps (n=%d)\n' "$base" "$eng" "$(med "${a[@]}")" "$(med "${b[@]}")" "$n"
