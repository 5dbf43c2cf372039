#!/usr/bin/env bash
# Timed soak: controller memory over a 10-minute run at a fixed rate with server telemetry and
# live metrics on (docs/benchmarks.md, "(k) Timed soak"; issue 37 item 5).
#
# convoy-mock is started on its own (--speedup 1e6), then `convoy run` sends single-turn streamed
# conversations at SOAK_RATE per second (poisson) for SOAK_DURATION_S seconds from one local
# worker, scraping the mock's /metrics every second (telemetry) and serving its own live
# /metrics on a free loopback port, which the script also reads every sample (as Prometheus
# would). Every SOAK_SAMPLE_S seconds it reads VmRSS of the controller from /proc. Warm-up is
# the first SOAK_WARMUP_S seconds; the controller is "flat" when its RSS at the end and at its
# peak are within SOAK_FLAT_KIB of its RSS at the end of warm-up.
#
# Usage: bench/soak_timed.sh [BIN]   BIN: a build folder (default build/)
# Env: SOAK_RATE (300), SOAK_DURATION_S (600), SOAK_SAMPLE_S (5), SOAK_WARMUP_S (60),
#      SOAK_FLAT_KIB (256), SOAK_OUT (a folder kept for rss.csv and the run; default temporary),
#      SOAK_INTERVAL_S (1: telemetry.interval_s; the server timelines hold 600 points and fill
#      in 600 scrapes, so a shorter interval shows the controller past that fill sooner)
# Prints `RESULT soak_timed ...` lines; exits 0 when flat, 1 when not, 2/3 when it could not run.
set -euo pipefail

BIN=${1:-build}
RATE=${SOAK_RATE:-300}
DURATION_S=${SOAK_DURATION_S:-600}
SAMPLE_S=${SOAK_SAMPLE_S:-5}
WARMUP_S=${SOAK_WARMUP_S:-60}
FLAT_KIB=${SOAK_FLAT_KIB:-256}
INTERVAL_S=${SOAK_INTERVAL_S:-1}

exe() {  # exe SUBDIR NAME: the executable in a build folder or a flat one
  if [[ -x "$BIN/$1/$2" ]]; then echo "$BIN/$1/$2"; else echo "$BIN/$2"; fi
}
CONVOY=$(exe controller convoy)
MOCK=$(exe mock convoy-mock)
WORKER=$(exe worker convoy-worker)
for x in "$CONVOY" "$MOCK" "$WORKER"; do
  [[ -x "$x" ]] || { echo "soak_timed: $x is not executable (build first)" >&2; exit 2; }
done
export CONVOY_BIN_DIR
CONVOY_BIN_DIR=$(cd "$(dirname "$WORKER")" && pwd)

if [[ -n "${SOAK_OUT:-}" ]]; then
  out=$SOAK_OUT
  mkdir -p "$out"
  keep=1
else
  out=$(mktemp -d /tmp/convoy-soak-timed.XXXXXX)
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
[[ -n "$url" ]] || { echo "soak_timed: convoy-mock did not start" >&2; exit 3; }
live_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

cat >"$out/soak.yaml" <<YAML
name: soak-timed
target:
  url: $url
  api_key_env: null
dataset:
  type: synthetic
  conversations: 1000
  turns: {mean: 1, stddev: 0, min: 1, max: 1}
  input_tokens: {mean: 16, stddev: 0}
  output_tokens: {mean: 4, stddev: 0}
load:
  mode: rate
  rate: $RATE
  arrival: poisson
  concurrency: 10000
  duration_s: $DURATION_S
  grace_s: 10
telemetry:
  interval_s: $INTERVAL_S
  endpoints:
    - {name: mock, url: "$url/metrics"}
workers:
  local: 1
output:
  records: false
  html: false
  metrics_listen: 127.0.0.1:$live_port
YAML

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo ""; }
echo "== soak_timed: ${RATE}/s for ${DURATION_S}s, telemetry ${INTERVAL_S} s, live metrics on :$live_port," \
  "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$CONVOY" run "$out/soak.yaml" -o "$out/run" >"$out/convoy.log" 2>&1 &
convoy_pid=$!
echo "t_s,controller_kib,live_bytes" >"$out/rss.csv"
start=$(date +%s.%N)
while kill -0 "$convoy_pid" 2>/dev/null; do
  t=$(awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN {printf "%.1f", n - s}')
  live=$(curl -s --max-time 2 "http://127.0.0.1:$live_port/metrics" | wc -c || echo 0)
  echo "$t,$(rss_kib "$convoy_pid"),$live" >>"$out/rss.csv"
  sleep "$SAMPLE_S"
done
rc=0
wait "$convoy_pid" || rc=$?
convoy_pid=""
echo "soak_timed: convoy run exited with $rc" >&2
[[ $rc -le 1 ]] || { tail -20 "$out/convoy.log" >&2; exit 3; }

python3 - "$out/rss.csv" "$WARMUP_S" "$DURATION_S" "$FLAT_KIB" "$out/run/summary.json" <<'PY'
import csv, json, sys
path, warm_s, duration_s, flat_kib = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), \
    int(sys.argv[4])
s = json.load(open(sys.argv[5]))
requests = int(s["request_count"]["avg"])
rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(open(path))
        if r["controller_kib"]]
# The steady state: from the end of warm-up to the end of the measure (not the final report).
run = [r for r in rows if r["t_s"] <= duration_s + 5]
warm = next((r for r in run if r["t_s"] >= warm_s), None)
if warm is None or len(run) < 3:
    print("soak_timed: too few samples", file=sys.stderr)
    sys.exit(3)
end = run[-1]
after = [r for r in run if r["t_s"] >= warm["t_s"]]
growth = end["controller_kib"] - warm["controller_kib"]
peak = max(r["controller_kib"] for r in after) - warm["controller_kib"]
flat = abs(growth) <= flat_kib and peak <= flat_kib
per_request = growth * 1024 / max(requests * (end["t_s"] - warm["t_s"]) / end["t_s"], 1)
print(f"RESULT soak_timed requests={requests} samples={len(after)} "
      f"live_metrics_bytes={int(end['live_bytes'])}")
print(f"RESULT soak_timed controller_rss_kib start={rows[0]['controller_kib']:.0f} "
      f"warm={warm['controller_kib']:.0f} end={end['controller_kib']:.0f} "
      f"growth={growth:+.0f} peak_over_warm={peak:+.0f} bytes_per_request={per_request:.2f} "
      f"flat={'yes' if flat else 'no'} (within {flat_kib} KiB after {warm_s:.0f} s)")
sys.exit(0 if flat else 1)
PY
