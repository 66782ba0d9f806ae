#!/usr/bin/env bash
# What a distributed point costs rank 0: the gather of every rank's
# lossless result and the merge, for an sgpdd-survey point of 256 regions
# per rank (each region its own stream, with its own histogram and
# series), at 2, 4, 8 and 16 ranks oversubscribed on this host. Each rank
# surveys a test file of its own in /var/tmp (buffered). Prints, per rank count, the
# median over the points of `windows[].merge_ns` and the bytes gathered.
#
# Usage: bench/mpi-scale.sh [BIN]   (BIN built with --features mpi;
#        default target/release/iosurvey)
# Needs mpirun (Open MPI); as root it passes --allow-run-as-root.
set -euo pipefail
BIN=${1:-target/release/iosurvey}
RANKS=${RANKS:-"2 4 8 16"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
dir=$(mktemp -d /var/tmp/iosurvey-mpi-scale.XXXXXX)
trap 'rm -rf "$dir"' EXIT
printf '%6s %16s %14s %16s %14s\n' ranks merge_ms_median merge_ms_max gathered_bytes per_rank_bytes
for n in $RANKS; do
  json="$dir/run-$n.json"
  mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 -n "$n" \
    "$BIN" survey "$dir/f.{rank}" --size 8m --rszlo 4096 --rszhi 4096 \
    --crglo 256 --crghi 256 --thrlo 256 --thrhi 256 --actions write,read \
    --allow-destroy --buffered --json "$json" --quiet >/dev/null
  jq -r --argjson n "$n" '
    [.windows[].merge_ns] | sort as $m
    | [$n, ($m[(($m|length)/2|floor)] / 1e6), ($m[-1] / 1e6)] | @tsv' "$json" |
    while IFS=$'\t' read -r r med max; do
      g=$(jq '[.windows[].gathered_bytes] | max' "$json")
      printf '%6s %14.2f %14.2f %16s %14s\n' "$r" "$med" "$max" "$g" "$((g / n))"
    done
done
