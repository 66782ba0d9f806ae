#!/usr/bin/env bash
# What a distributed point costs rank 0: the gather of every rank's
# lossless result and the merge, for an sgpdd-survey point of 256 regions
# per rank (each region its own stream, with its own histogram and
# series), at 2, 4, 8 and 16 ranks (RANKS to change) oversubscribed on
# this host. Each rank surveys a test file of its own in /var/tmp
# (buffered). Prints one line per rank count: the job's streams per
# point, the smallest and largest over the (two) points of
# `points[].windows.merge_ns`,
# the bytes gathered, rank 0's peak resident memory (`/usr/bin/time`'s
# maximum RSS around rank 0's process alone) and the report's size. With
# OUT=FILE, the lines also go to FILE as TSV for bench/mpi-fit.py.
# EXTRA="..." adds flags to every run (e.g. EXTRA="--stream-detail full";
# by default a job of more than 1,024 streams, 5 ranks on, is summarised).
#
# Usage: bench/mpi-scale.sh [BIN]   (BIN built with --features mpi;
#        default target/release/iosurvey)
# Needs mpirun (Open MPI); as root it passes --allow-run-as-root.
set -euo pipefail
BIN=$(readlink -f "${1:-target/release/iosurvey}")
RANKS=${RANKS:-"2 4 8 16"}
OUT=${OUT:-}
read -r -a extra <<<"${EXTRA:-}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
dir=$(mktemp -d /var/tmp/iosurvey-mpi-scale.XXXXXX)
trap 'rm -rf "$dir"' EXIT
# Rank 0 runs under /usr/bin/time (its own peak RSS, in KiB), the others
# as they are.
cat >"$dir/wrap.sh" <<'WRAP'
#!/bin/sh
if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then
  exec /usr/bin/time -f '%M' -o "$RSS_FILE" "$@"
fi
exec "$@"
WRAP
chmod +x "$dir/wrap.sh"
printf '%6s %8s %14s %12s %14s %12s %12s\n' ranks streams merge_ms_min merge_ms_max gathered_bytes rank0_rss_mb report_bytes
if [ -n "$OUT" ]; then printf 'ranks\tstreams\tmerge_ms_min\tmerge_ms_max\tgathered_bytes\trank0_rss_kib\treport_bytes\n' >"$OUT"; fi
for n in $RANKS; do
  json="$dir/run-$n.json"
  RSS_FILE="$dir/rss-$n" mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 \
    -x RSS_FILE -n "$n" "$dir/wrap.sh" \
    "$BIN" survey "$dir/f.{rank}" --size 8m --rszlo 4096 --rszhi 4096 \
    --crglo 256 --crghi 256 --thrlo 256 --thrhi 256 --actions write,read \
    --allow-destroy --buffered --json "$json" --quiet "${extra[@]}" >/dev/null
  rss=$(tail -1 "$dir/rss-$n")
  size=$(stat -c %s "$json")
  jq -r --argjson n "$n" '
    ([.points[].windows.merge_ns? // empty] + [.windows[]?.merge_ns]) | sort as $m
    | [$n, ($m[0] / 1e6), ($m[-1] / 1e6)] | @tsv' "$json" |
    while IFS=$'\t' read -r r med max; do
      g=$(jq '[.points[].windows.gathered_bytes? // empty] + [.windows[]?.gathered_bytes] | max' "$json")
      s=$(jq '[.points[].streams | length] | max' "$json")
      printf '%6s %8s %14.2f %12.2f %14s %12.1f %12s\n' "$r" "$s" "$med" "$max" "$g" "$(echo "$rss/1024" | bc -l)" "$size"
      if [ -n "$OUT" ]; then
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$s" "$med" "$max" "$g" "$rss" "$size" >>"$OUT"
      fi
    done
done
