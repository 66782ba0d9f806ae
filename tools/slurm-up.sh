#!/usr/bin/env bash
# A one-node Slurm on this machine, for the MPI tests under srun (.ci/run):
# munged with a key, slurmctld and slurmd, all as root, started directly
# (no systemd needed), then waits until the node is idle. Idempotent: what
# already runs is left running. Needs Debian's slurmctld, slurmd,
# slurm-client and munge packages. tools/slurm-down.sh stops what this
# started.
#
# It writes /etc/slurm/slurm.conf only when there is none, or when the one
# there is its own (its first line says so): a real cluster's file is never
# touched, and then this script refuses instead.
set -euo pipefail

conf=/etc/slurm/slurm.conf
mark="# written by iosurvey's tools/slurm-up.sh (a one-node test cluster)"
state=/run/iosurvey-slurm   # which daemons this script started
host=$(hostname -s)
cpus=$(nproc)
# Slurm refuses a node with less memory than its RealMemory: say a little less.
mem_mib=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024 * 9 / 10))

for cmd in munged slurmctld slurmd sinfo srun; do
  command -v "$cmd" >/dev/null || {
    echo "slurm-up: $cmd is missing: apt-get install slurmctld slurmd slurm-client munge" >&2
    exit 2
  }
done
if [ -e "$conf" ] && [ "$(head -n1 "$conf")" != "$mark" ]; then
  echo "slurm-up: $conf exists and is not this script's; leaving it (and this machine's Slurm) alone" >&2
  exit 2
fi

mkdir -p "$state" /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
cat >"$conf.new" <<EOF
$mark
ClusterName=iosurvey
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
# No cgroups: processes are tracked by their parent, tasks not bound.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
# Open MPI 4.1 finds its ranks through Slurm's PMIx plugin.
MpiDefault=pmix
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mib State=UNKNOWN
# OverSubscribe lets jobs share the node's CPUs; a job of more tasks than
# CPUs asks for it with srun --overcommit.
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
EOF
mv "$conf.new" "$conf"

running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# munge: a key if there is none, then the daemon as its own user.
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge:munge /etc/munge /etc/munge/munge.key
chmod 0700 /etc/munge
chmod 0400 /etc/munge/munge.key
mkdir -p /run/munge /var/lib/munge /var/log/munge
chown munge:munge /run/munge /var/lib/munge /var/log/munge
chmod 0755 /run/munge
if ! running /run/munge/munged.pid; then
  runuser -u munge -- munged
  touch "$state/munged"
fi
munge -n | unmunge >/dev/null || {
  echo "slurm-up: munge does not work (see /var/log/munge/munged.log)" >&2
  exit 1
}

if ! running /run/slurmctld.pid; then
  slurmctld
  touch "$state/slurmctld"
else
  scontrol reconfigure
fi
if ! running /run/slurmd.pid; then
  slurmd
  touch "$state/slurmd"
fi

# Wait (30 s at most) for the node to be idle; a node left down by an
# earlier run is resumed.
for _ in $(seq 60); do
  st=$(sinfo -h -n "$host" -o %t 2>/dev/null || true)
  case "$st" in
    idle) echo "slurm-up: node $host idle ($cpus CPUs, MpiDefault=pmix)"; exit 0 ;;
    down* | drain*) scontrol update nodename="$host" state=resume 2>/dev/null || true ;;
  esac
  sleep 0.5
done
echo "slurm-up: node $host not idle after 30 s (sinfo says '${st:-nothing}'); see /var/log/slurm/" >&2
exit 1
