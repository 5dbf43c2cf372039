#!/usr/bin/env bash
# Runs scripts/slurm/convoy.sbatch for real on a one-node Slurm cluster made on this machine from
# Debian's slurm-wlm and munge: installs them if missing (apt-get, idempotent), starts munged,
# slurmctld and slurmd with a private configuration under a temporary folder (own ports, own
# munge socket and key: a system Slurm, if any, is left alone), submits the batch script against
# the bundled mock, waits (bounded), shows the job's output, and tears everything down.
# Needs root (the daemons, apt-get).
#
#   bench/slurm-single-node.sh [BUILD_DIR]      (default: build; needs convoy, convoy-worker,
#                                                convoy-mock built there)
# Environment: TASKS (worker tasks, default 2), TIMEOUT_S (job wait, default 300), CURVE=1 runs
# with CurveZMQ keys from `convoy keygen`, KEEP=1 keeps the temporary folder,
# SLURMCTLD_PORT / SLURMD_PORT (default 16817 / 16818).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
tasks=${TASKS:-2}
timeout_s=${TIMEOUT_S:-300}
ctld_port=${SLURMCTLD_PORT:-16817}
slurmd_port=${SLURMD_PORT:-16818}

say() { echo "== $*"; }

if [[ $(id -u) -ne 0 ]]; then
  echo "slurm-single-node: needs root (starts slurmctld, slurmd and munged)" >&2
  exit 2
fi
for exe in controller/convoy worker/convoy-worker mock/convoy-mock; do
  [[ -x "$build/$exe" ]] || { echo "slurm-single-node: $build/$exe is not built" >&2; exit 2; }
done

# 1. Packages.
missing=()
for p in slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
say "$(slurmctld -V), $(munged -V 2>&1 | head -n 1)"

# 2. A private cluster under $work.
work=$(mktemp -d /tmp/convoy-slurm.XXXXXX)
chmod 755 "$work"
pids=()
job=""
teardown() {
  set +e
  [[ -n "$job" ]] && scancel "$job" 2>/dev/null
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[$i]}" 2>/dev/null
    for _ in $(seq 50); do kill -0 "${pids[$i]}" 2>/dev/null || break; sleep 0.1; done
    kill -9 "${pids[$i]}" 2>/dev/null
  done
  if [[ "${KEEP:-0}" == 1 ]]; then echo "kept $work"; else rm -rf "$work"; fi
  say "torn down"
}
trap teardown EXIT

mkdir -p "$work/munge" "$work/state" "$work/spool" "$work/log" "$work/job"
chown munge:munge "$work/munge"
chmod 755 "$work/munge"   # munged wants its socket folder searchable by all
mungekey --create --keyfile="$work/munge/munge.key"
chown munge:munge "$work/munge/munge.key"
runuser -u munge -- munged --foreground --socket="$work/munge/munge.socket" \
  --key-file="$work/munge/munge.key" --pid-file="$work/munge/munged.pid" \
  --log-file="$work/munge/munged.log" --seed-file="$work/munge/munged.seed" \
  >"$work/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [[ -S "$work/munge/munge.socket" ]] && break; sleep 0.1; done
[[ -S "$work/munge/munge.socket" ]] || { echo "munged did not start" >&2; exit 3; }

node=$(hostname -s)
node_line=$(slurmd -C | head -n 1)                   # NodeName=... CPUs=... RealMemory=...
cpus=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$node_line")
(( tasks <= cpus )) || { echo "TASKS=$tasks exceeds this node's $cpus CPUs" >&2; exit 2; }
cat >"$work/slurm.conf" <<EOF
ClusterName=convoy-bench
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
$node_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=convoy Nodes=$node Default=YES MaxTime=60 State=UP
EOF
export SLURM_CONF="$work/slurm.conf"
slurmctld -D -i -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/log/slurmd.out" 2>&1 &
pids+=($!)

say "waiting for node $node to be idle"
state=""
for _ in $(seq 300); do
  state=$(sinfo -h -n "$node" -o %T 2>/dev/null || true)
  [[ "$state" == idle ]] && break
  sleep 0.2
done
sinfo
if [[ "$state" != idle ]]; then
  echo "slurm-single-node: node state '$state' after 60 s" >&2
  tail -n 20 "$work/log/slurmctld.log" "$work/log/slurmd.log" >&2 || true
  exit 3
fi

# 3. The job: the bundled mock, multi-turn conversations kept on their worker (bind).
cat >"$work/job/convoy.yaml" <<EOF
name: slurm-single-node
target:
  url: mock
mock:
  workers: 4
  contract: bind
  itl_ms: 2
dataset:
  type: synthetic
  conversations: 32
  turns: {mean: 3, stddev: 0, min: 3, max: 3}
  input_tokens: {mean: 128, stddev: 16}
  output_tokens: {mean: 16, stddev: 2}
load:
  mode: concurrency
  concurrency: 8
session_routing:
  mode: bind
workers:
  ready_timeout_s: 60
output:
  html: false
EOF
say "sbatch --nodes=1 --ntasks-per-node=$tasks scripts/slurm/convoy.sbatch"
# One folder with the three executables, as an installed convoy has them (CONVOY_BIN_DIR).
mkdir -p "$work/bin"
ln -s "$build/controller/convoy" "$build/worker/convoy-worker" "$build/mock/convoy-mock" "$work/bin/"
curve_keys=""
if [[ "${CURVE:-0}" == 1 ]]; then
  "$work/bin/convoy" keygen "$work/keys" --workers "$tasks"
  curve_keys="$work/keys"
fi
job=$(cd "$work/job" && CONVOY_BIN_DIR="$work/bin" CONVOY_OUTPUT="$work/job/out" \
  CONVOY_CURVE_KEYS="$curve_keys" \
  sbatch --parsable --nodes=1 --ntasks-per-node="$tasks" --output="$work/job/convoy-%j.out" \
  "$repo/scripts/slurm/convoy.sbatch" "$work/job/convoy.yaml")
say "submitted job $job; waiting up to $timeout_s s"
deadline=$((SECONDS + timeout_s))
while squeue -h -j "$job" 2>/dev/null | grep -q .; do
  if ((SECONDS > deadline)); then
    echo "slurm-single-node: job $job still running after $timeout_s s" >&2
    exit 3
  fi
  sleep 1
done
done_job=$job
job=""

job_info=$(scontrol show job "$done_job" 2>/dev/null || true)
exit_code=$(grep -o 'ExitCode=[0-9:]*' <<<"$job_info" | head -n 1)
say "job $done_job: $(grep -o 'JobState=[A-Z_]*' <<<"$job_info") $exit_code"
say "job output ($work/job/convoy-$done_job.out)"
cat "$work/job/convoy-$done_job.out"
out="$work/job/out"
if [[ -f "$out/records.jsonl" ]]; then
  say "records per worker_id (host)"
  python3 - "$out" <<'EOF'
import collections, json, sys
out = sys.argv[1]
per_worker = collections.Counter()
workers_of = collections.defaultdict(set)
for line in open(out + "/records.jsonl"):
    r = json.loads(line)
    per_worker[(r["worker_id"], r["host"])] += 1
    workers_of[r["x_correlation_id"]].add(r["worker_id"])
for (w, h), n in sorted(per_worker.items()):
    print(f"  {w} ({h}): {n} records")
split = [c for c, ws in workers_of.items() if len(ws) > 1]
print(f"  {len(workers_of)} conversations, {len(split)} split across workers")
s = json.load(open(out + "/summary.json"))
ttft = s["time_to_first_token"]
verdict = s["verdict"]["status"] if isinstance(s["verdict"], dict) else s["verdict"]
print(f"  requests {s['request_count']['avg']:.0f}, errors {s['error_request_count']['avg']:.0f}, "
      f"TTFT p50 {ttft['p50']:.2f} {ttft['unit']}, verdict {verdict}")
for w in s["workers"]:
    print(f"  summary.json worker {w['worker_id']}: host {w['host']}, state {w['state']}")
EOF
fi
[[ "$exit_code" == "ExitCode=0:0" ]]
