#!/usr/bin/env bash
# The worker's instructions and heap allocations per streamed request, by callgrind (issue 19
# item 3; docs/benchmarks.md (g)). Deterministic enough for a loaded machine, where CPU times
# are not.
#
#   bench/worker_callgrind.sh [BUILD_DIR] [N1] [N2]
#
# Runs `convoy run` twice against nginx's /stream12 (12 events 1 ms apart, bench (g)),
# single-turn, 16 connections, records on, with the worker under
# `valgrind --tool=callgrind --dump-instr=no`: N1 (500) then N2 (1500) conversations. Per
# request is the difference of the two runs over N2 - N1, so start-up and shutdown cancel out.
# Prints instructions per request and calls per request of malloc, calloc, realloc, free and
# operator new (the C++ allocations go through malloc: new is counted inside malloc's calls).
# Env: CONNECTIONS (16); WORKER (the convoy-worker to measure; default BUILD_DIR's);
# KEEP=DIR keeps the callgrind files there.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${CONVOY_BUILD_DIR:-$root/build}}
n1=${2:-500}
n2=${3:-1500}
connections=${CONNECTIONS:-16}
worker=${WORKER:-$build/worker/convoy-worker}
convoy=$build/controller/convoy
for exe in "$convoy" "$worker"; do
  [[ -x "$exe" ]] || { echo "worker_callgrind: $exe missing" >&2; exit 2; }
done
command -v valgrind >/dev/null || { echo "worker_callgrind: valgrind not found" >&2; exit 2; }

export BENCH_ROOT=$root
BENCH_TMP=$(mktemp -d /tmp/convoy-callgrind.XXXXXX)
export BENCH_TMP
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
cleanup() {
  bench_nginx_stop
  if [[ -n "${KEEP:-}" ]]; then mkdir -p "$KEEP" && cp "$BENCH_TMP"/cg.* "$KEEP"/ 2>/dev/null || true; fi
  rm -rf "$BENCH_TMP"
}
trap cleanup EXIT
bench_nginx_start "$BENCH_TMP/nginx" >/dev/null

# The controller finds convoy-worker through CONVOY_BIN_DIR: put callgrind in front of it.
mkdir -p "$BENCH_TMP/bin"
cat >"$BENCH_TMP/bin/convoy-worker" <<SH
#!/bin/sh
exec valgrind --tool=callgrind --dump-instr=no --callgrind-out-file="\$CG_OUT" "$worker" "\$@"
SH
chmod +x "$BENCH_TMP/bin/convoy-worker"

cat >"$BENCH_TMP/base.yaml" <<'YAML'
name: callgrind
target:
  url: mock
  api_key_env: null
  use_server_token_counts: false
dataset:
  type: synthetic
  conversations: 2000
  turns: {mean: 1, stddev: 0, min: 1, max: 1}
  input_tokens: {mean: 16, stddev: 0}
  output_tokens: {mean: 16, stddev: 0}
load:
  mode: concurrency
  grace_s: 60
workers:
  local: 1
output:
  records: true
  html: false
YAML

run_one() {  # run_one N: one run of N conversations; the callgrind file is $BENCH_TMP/cg.N
  CG_OUT=$BENCH_TMP/cg.$1 CONVOY_BIN_DIR=$BENCH_TMP/bin "$convoy" run "$BENCH_TMP/base.yaml" \
    -o "$BENCH_TMP/out-$1" --set "target.url=$NGINX_URL/stream12" \
    --set "load.concurrency=$connections" --set "load.sessions=$1" \
    --set "dataset.conversations=$(( $1 > 2000 ? $1 : 2000 ))" >"$BENCH_TMP/run-$1.log" 2>&1 ||
    { tail -20 "$BENCH_TMP/run-$1.log" >&2; exit 1; }
}
run_one "$n1"
run_one "$n2"

python3 - "$BENCH_TMP/cg.$n1" "$BENCH_TMP/cg.$n2" "$n1" "$n2" \
  "$BENCH_TMP/out-$n1/summary.json" "$BENCH_TMP/out-$n2/summary.json" <<'PY'
import json, re, sys

def read(path):
    """Total instructions and the call counts of the allocator entry points."""
    names = {}  # compressed id -> name, per kind (fn / cfn share one table in callgrind)
    calls = {}
    total = 0
    target = None
    for line in open(path, errors="replace"):
        if line.startswith(("summary:", "totals:")):
            total = max(total, int(line.split()[1]))
            continue
        m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3).strip()
            if m.group(1) == "cfn":
                target = names.get(m.group(2), "")
            continue
        if line.startswith("calls="):
            count = int(line[6:].split()[0])
            calls[target] = calls.get(target, 0) + count
            continue
    return total, calls

def alloc_calls(calls):
    out = {"malloc": 0, "calloc": 0, "realloc": 0, "free": 0, "operator new": 0}
    for name, n in calls.items():
        base = name.split("'")[0]
        if base in ("malloc", "calloc", "realloc", "free"):
            out[base] += n
        elif base.startswith("operator new("):
            out["operator new"] += n
    return out

(i1, c1), (i2, c2) = read(sys.argv[1]), read(sys.argv[2])
n1, n2 = int(sys.argv[3]), int(sys.argv[4])
r1 = json.load(open(sys.argv[5]))["request_count"]["avg"]
r2 = json.load(open(sys.argv[6]))["request_count"]["avg"]
extra = max(r2 - r1, 1)
a1, a2 = alloc_calls(c1), alloc_calls(c2)
print(f"requests: {r1:.0f} and {r2:.0f}")
print(f"worker instructions per request: {(i2 - i1) / extra:,.0f}")
for k in a1:
    print(f"{k} calls per request: {(a2[k] - a1[k]) / extra:.2f}")
PY
