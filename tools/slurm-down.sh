#!/usr/bin/env bash
# Stops what tools/slurm-up.sh started (and only that): the jobs left in
# the queue, then slurmd, slurmctld and munged, each by its pid file. The
# configuration stays, so a later slurm-up.sh starts the same cluster.
set -euo pipefail

state=/run/iosurvey-slurm
stop() { # name pidfile
  [ -e "$state/$1" ] || return 0
  if [ -s "$2" ]; then
    local pid
    pid=$(cat "$2")
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
      done
    fi
  fi
  rm -f "$state/$1"
}

if [ -e "$state/slurmctld" ]; then
  scancel --quiet --full --user=root 2>/dev/null || true
fi
stop slurmd /run/slurmd.pid
stop slurmctld /run/slurmctld.pid
stop munged /run/munge/munged.pid
echo "slurm-down: stopped"
