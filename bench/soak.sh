#!/usr/bin/env bash
# Soak: memory over a long run (docs/benchmarks.md, "(g) soak").
#
# convoy-mock is started on its own (--speedup 1e6: prefill and decode take ~0), then `convoy run`
# sends SOAK_REQUESTS single-turn streamed requests to it at concurrency SOAK_CONCURRENCY from
# one local worker. Every SOAK_SAMPLE_S seconds the script reads VmRSS of the controller, the
# worker and the mock from /proc and the mock's request count from its /metrics. At the end it
# prints, per process, RSS at the first sample, after warm-up (the first sample once
# SOAK_WARMUP_REQUESTS requests were served), at the end (the last sample while requests
# were still being served) and the growth from warm-up to the end and to the peak. Memory is
# "flat" when both growths are within SOAK_FLAT_KIB for the controller and the mock.
#
# Every synthetic conversation is a new session with its own X-Correlation-ID, so whatever the
# mock or the controller keeps per conversation shows up as growth here.
#
# Usage: bench/soak.sh [BIN]   BIN: a build folder (controller/convoy, worker/convoy-worker,
#                              mock/convoy-mock) or one folder holding all three (default build/)
# Env: SOAK_REQUESTS (1000000), SOAK_CONCURRENCY (64), SOAK_SAMPLE_S (2), SOAK_WARMUP_REQUESTS
#      (100000: past the mock's 65,536 tracked sessions), SOAK_FLAT_KIB (1024), SOAK_RECORDS (false: records.jsonl), SOAK_OUT (a folder
#      kept for the samples, rss.csv, and the run's outputs; default a temporary one, removed)
# Prints `RESULT soak ...` lines; exits 0 when flat, 1 when not, 2/3 when it could not run.
set -euo pipefail

BIN=${1:-build}
REQUESTS=${SOAK_REQUESTS:-1000000}
CONCURRENCY=${SOAK_CONCURRENCY:-64}
SAMPLE_S=${SOAK_SAMPLE_S:-2}
WARMUP_REQUESTS=${SOAK_WARMUP_REQUESTS:-100000}
FLAT_KIB=${SOAK_FLAT_KIB:-1024}
RECORDS=${SOAK_RECORDS:-false}

exe() {  # exe SUBDIR NAME: the executable in a build folder or a flat one
  if [[ -x "$BIN/$1/$2" ]]; then echo "$BIN/$1/$2"; else echo "$BIN/$2"; fi
}
CONVOY=$(exe controller convoy)
MOCK=$(exe mock convoy-mock)
WORKER=$(exe worker convoy-worker)
for x in "$CONVOY" "$MOCK" "$WORKER"; do
  [[ -x "$x" ]] || { echo "soak: $x is not executable (build first)" >&2; exit 2; }
done
export CONVOY_BIN_DIR
CONVOY_BIN_DIR=$(cd "$(dirname "$WORKER")" && pwd)
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

if [[ -n "${SOAK_OUT:-}" ]]; then
  out=$SOAK_OUT
  mkdir -p "$out"
  keep=1
else
  out=$(mktemp -d /tmp/convoy-soak.XXXXXX)
  keep=0
fi
mock_pid=""
convoy_pid=""
cleanup() {
  [[ -n "$convoy_pid" ]] && kill "$convoy_pid" 2>/dev/null && wait "$convoy_pid" 2>/dev/null
  [[ -n "$mock_pid" ]] && kill "$mock_pid" 2>/dev/null && wait "$mock_pid" 2>/dev/null
  ((keep)) || rm -rf "$out"
}
trap cleanup EXIT

"$MOCK" --port 0 --speedup 1000000 --max-num-seqs 100000 --workers 4 \
  >"$out/mock.out" 2>"$out/mock.err" &
mock_pid=$!
url=""
for _ in $(seq 1 200); do
  url=$(sed -n 's/^convoy-mock listening on //p' "$out/mock.out" 2>/dev/null || true)
  [[ -n "$url" ]] && break
  sleep 0.05
done
[[ -n "$url" ]] || { echo "soak: convoy-mock did not start" >&2; cat "$out/mock.err" >&2; exit 3; }

cat >"$out/soak.yaml" <<YAML
name: soak
target:
  url: $url
  api_key_env: null
  use_server_token_counts: false
dataset:
  type: synthetic
  conversations: 1000
  turns: {mean: 1, stddev: 0, min: 1, max: 1}
  input_tokens: {mean: 16, stddev: 0}
  output_tokens: {mean: 4, stddev: 0}
load:
  mode: concurrency
  concurrency: $CONCURRENCY
  requests: $REQUESTS
  grace_s: 30
workers:
  local: 1
output:
  records: $RECORDS
  html: false
YAML

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo ""; }
served() {
  curl -s --max-time 2 "$url/metrics" |
    awk '/^convoy_mock_requests_total/ {n += $NF} END {printf "%d\n", n}'
}

echo "== soak: $REQUESTS requests, concurrency $CONCURRENCY, $(nproc) cores," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$CONVOY" run "$out/soak.yaml" -o "$out/run" >"$out/convoy.log" 2>&1 &
convoy_pid=$!
echo "t_s,requests,controller_kib,worker_kib,mock_kib" >"$out/rss.csv"
start=$(date +%s.%N)
worker_pid=""
while kill -0 "$convoy_pid" 2>/dev/null; do
  [[ -z "$worker_pid" ]] && worker_pid=$(pgrep -P "$convoy_pid" convoy-worker | head -1 || true)
  t=$(awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN {printf "%.1f", n - s}')
  c=$(rss_kib "$convoy_pid")
  w=""
  [[ -n "$worker_pid" ]] && w=$(rss_kib "$worker_pid")
  echo "$t,$(served),$c,$w,$(rss_kib "$mock_pid")" >>"$out/rss.csv"
  sleep "$SAMPLE_S"
done
rc=0
wait "$convoy_pid" || rc=$?
convoy_pid=""
elapsed=$(awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN {printf "%.1f", n - s}')
echo "soak: convoy run exited with $rc after ${elapsed}s" >&2
[[ $rc -le 1 ]] || { tail -20 "$out/convoy.log" >&2; exit 3; }

python3 - "$out/rss.csv" "$REQUESTS" "$WARMUP_REQUESTS" "$FLAT_KIB" "$elapsed" \
  "$out/run/summary.json" <<'PY'
import csv, json, sys
path, total, warm_requests, flat_kib, elapsed = sys.argv[1], int(sys.argv[2]), \
    int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
try:
    s = json.load(open(sys.argv[6]))
    measured = int(s["request_count"]["avg"])
    errors = int(s.get("error_request_count", {}).get("avg", 0))
except (OSError, ValueError, KeyError):
    measured, errors = -1, -1
rows = []
for r in csv.DictReader(open(path)):
    if not all(r[k] for k in ("requests", "controller_kib", "worker_kib", "mock_kib")):
        continue
    rows.append({k: float(v) for k, v in r.items()})
# The measured stretch: samples while requests were still being served (the controller's final
# report writing is not part of the steady state).
serving = [r for i, r in enumerate(rows) if i == 0 or r["requests"] > rows[i - 1]["requests"]]
warm = next((r for r in serving if r["requests"] >= warm_requests), None)
if warm is None or len(serving) < 3:
    print("soak: too few samples to judge (run longer or sample more often)", file=sys.stderr)
    sys.exit(3)
end = serving[-1]
after = [r for r in serving if r["t_s"] >= warm["t_s"]]
rate = (end["requests"] - serving[0]["requests"]) / max(end["t_s"] - serving[0]["t_s"], 1e-9)
print(f"RESULT soak requests={measured} errors={errors} elapsed_s={elapsed:.0f} "
      f"requests_per_s={rate:.0f} warmup_at_s={warm['t_s']:.0f} "
      f"warmup_requests={int(warm['requests'])} samples={len(after)}")
flat = True
for name in ("controller", "worker", "mock"):
    k = name + "_kib"
    growth = end[k] - warm[k]
    peak = max(r[k] for r in after) - warm[k]
    judged = name != "worker"  # the worker is reported, not judged (it is not in the item)
    ok = abs(growth) <= flat_kib and peak <= flat_kib
    flat = flat and (ok or not judged)
    print(f"RESULT soak {name}_rss_kib start={rows[0][k]:.0f} warm={warm[k]:.0f} "
          f"end={end[k]:.0f} growth={growth:+.0f} peak_over_warm={peak:+.0f}"
          + (f" flat={'yes' if ok else 'no'}" if judged else ""))
print(f"RESULT soak flat={'yes' if flat else 'no'} (controller and mock within {flat_kib} KiB "
      "of their RSS after warm-up)")
sys.exit(0 if flat else 1)
PY
