#!/usr/bin/env bash
# What saving the JSON report after every point costs rank 0, over a
# survey of many points: 256 regions per rank, threads 1 to 256 (9
# steps), write and read (18 points), on RANKS ranks (default 16)
# oversubscribed on this host, each rank a test file of its own in
# /var/tmp (buffered). Rank 0 runs under /usr/bin/time (its wall time
# and peak RSS) and strace, which counts the bytes it hands to write(2)
# and pwrite(2) (the reports; its I/O to its test file goes through
# io_uring, not these calls) and the time spent in them. Also the
# report's size and the sum of the points' merge_ns. A report rewritten
# whole after each point writes the sum of its sizes so far (quadratic in
# points); appended, about its final size.
#
# With ALL=1, the CSV (--csv) and survey's own files (--out: .summary
# and .detail, a line a region) are asked for too, and written_mb counts
# every byte rank 0 hands to write(2)/pwrite(2) for any file in the run's
# directory but the test files (strace -y names each call's file).
#
# Usage: [ALL=1] [RANKS=N] bench/report-append.sh BIN...   (each built
# with --features mpi)
set -euo pipefail
RANKS=${RANKS:-16}
ALL=${ALL:-0}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Resolved: strace -y names files by their real path.
dir=$(readlink -f "$(mktemp -d /var/tmp/iosurvey-report-append.XXXXXX)")
trap 'rm -rf "$dir"' EXIT
cat >"$dir/wrap.sh" <<'WRAP'
#!/bin/sh
if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then
  exec /usr/bin/time -f '%e %M' -o "$TIME_FILE" strace -ff -qq -y -e trace=write,pwrite64 -e signal=none -T -o "$TIME_FILE.strace" "$@"
fi
exec "$@"
WRAP
chmod +x "$dir/wrap.sh"
printf '%-40s %6s %7s %9s %11s %9s %8s %10s %9s\n' bin ranks points wall_s written_mb write_s rss_mb report_mb merge_ms
for bin in "$@"; do
  bin=$(readlink -f "$bin")
  json="$dir/r.json"
  rm -f "$json" "$dir"/r.csv "$dir"/sv.* "$dir"/time.strace.*
  more=(--quiet)
  [ "$ALL" = 1 ] && more+=(--csv "$dir/r.csv" --out "$dir/sv")
  TIME_FILE="$dir/time" mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 \
    -x TIME_FILE -n "$RANKS" "$dir/wrap.sh" \
    "$bin" survey "$dir/f.{rank}" --size 16m --rszlo 4096 --rszhi 65536 \
    --crglo 256 --crghi 256 --thrlo 256 --thrhi 256 --actions write,read \
    --allow-destroy --buffered --json "$json" "${more[@]}" >/dev/null
  read -r wall rss < <(tail -1 "$dir/time")
  # Bytes of the report handed to write(2)/pwrite(2) and the seconds in
  # those calls, from strace's lines `... write(6, "{\"schema_version\"...",
  # 100) = 100 <0.000012>` (a whole report) or `",{\"index\"..."` (a point
  # appended); the test file's lay-out writes are other data.
  read -r written secs < <(awk -v all="$ALL" -v dir="$dir/" '
      (all == 1 && index($0, "(") && index($0, "<" dir) && !index($0, "<" dir "f.")) ||
      (all != 1 && (index($0, "\"{\\\"schema_version") || index($0, "\",{\\\"index"))) {
        n = $0; sub(/.*\) = /, "", n); split(n, a, " "); if (a[1] > 0) b += a[1];
        t = $NF; gsub(/[<>]/, "", t); s += t }
      END { printf "%d %.3f\n", b, s }' "$dir"/time.strace.*)
  [ "$written" -gt 0 ] || { echo "no report bytes found in strace's output" >&2; exit 1; }
  points=$(jq '.points | length' "$json")
  merge=$(jq '[(.points[].windows.merge_ns? // empty), (.windows[]?.merge_ns)] | add / 1e6' "$json")
  printf '%-40s %6s %7s %9s %11.1f %9s %8.1f %10.1f %9.1f\n' "$bin" "$RANKS" "$points" "$wall" \
    "$(echo "$written/1000000" | bc -l)" "$secs" "$(echo "$rss/1024" | bc -l)" \
    "$(echo "$(stat -c %s "$json")/1000000" | bc -l)" "$merge"
done
