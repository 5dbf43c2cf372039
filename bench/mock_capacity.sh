#!/usr/bin/env bash
# convoy-mock capacity, measured with wrk (see docs/mock.md for figures and how to read them).
#
#  1. Short streaming requests: chat, stream=true, include_usage, max_tokens 1, --speedup 1e6
#     (prefill and decode take ~0), keep-alive connections. Reports wrk's requests/s and the
#     mock's own CPU time per request (from /proc, independent of what else loads the machine).
#  2. Concurrent open streams: STREAMS connections each holding a long stream (one token every
#     STREAM_ITL_MS, 10 tokens, then the next stream on the same connection). Samples the
#     mock's active sequences every second while wrk holds them, and reports the peak plus how
#     late tokens went out (the mock's token_lateness_ms over the completed streams).
#
# Usage: bench/mock_capacity.sh [path/to/convoy-mock]
# Env: DURATION_S (10), CONNECTIONS (64), STREAMS (5000), STREAM_HOLD_S (20), WRK_THREADS (1),
#      STREAM_ITL_MS (1000)
set -euo pipefail

MOCK=${1:-${MOCK:-build/mock/convoy-mock}}
DURATION_S=${DURATION_S:-10}
CONNECTIONS=${CONNECTIONS:-64}
STREAMS=${STREAMS:-5000}
STREAM_HOLD_S=${STREAM_HOLD_S:-20}
WRK_THREADS=${WRK_THREADS:-1}
STREAM_ITL_MS=${STREAM_ITL_MS:-1000}

command -v wrk >/dev/null || { echo "mock_capacity: wrk not found" >&2; exit 2; }
[[ -x "$MOCK" ]] || { echo "mock_capacity: $MOCK is not executable (build convoy-mock first)" >&2; exit 2; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

tmp=$(mktemp -d)
mock_pid=""
cleanup() {
  [[ -n "$mock_pid" ]] && kill "$mock_pid" 2>/dev/null && wait "$mock_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# Starts the mock on an ephemeral port; sets mock_pid and url.
start_mock() {
  "$MOCK" --port 0 "$@" >"$tmp/mock.out" 2>"$tmp/mock.err" &
  mock_pid=$!
  for _ in $(seq 1 100); do
    if grep -q "listening on" "$tmp/mock.out" 2>/dev/null; then break; fi
    sleep 0.05
  done
  url=$(sed -n 's/^convoy-mock listening on //p' "$tmp/mock.out")
  [[ -n "$url" ]] || { echo "mock_capacity: mock did not start" >&2; cat "$tmp/mock.err" >&2; exit 3; }
}

stop_mock() {
  kill "$mock_pid" && wait "$mock_pid" || true
  mock_pid=""
}

stat_field() {  # stat_field PYTHON_EXPR  (on /mock/stats as `s`)
  curl -s "$url/mock/stats" | python3 -c "import json,sys; s=json.load(sys.stdin); print($1)"
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$mock_pid/stat"; }

write_lua() {  # write_lua FILE MAX_TOKENS
  cat >"$1" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"mock-model","messages":[{"role":"user","content":"hello"}],"max_tokens":$2,"stream":true,"stream_options":{"include_usage":true}}'
LUA
}

echo "== convoy-mock capacity ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"

# ---- 1. short streaming requests per second --------------------------------------------------
start_mock --speedup 1000000 --max-num-seqs 100000
write_lua "$tmp/short.lua" 1
wrk -t1 -c"$CONNECTIONS" -d2s -s "$tmp/short.lua" "$url/v1/chat/completions" >/dev/null  # warm-up
requests0=$(stat_field 's["requests"]')
ticks0=$(cpu_ticks)
wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${DURATION_S}s" -s "$tmp/short.lua" \
  "$url/v1/chat/completions" | tee "$tmp/wrk_short.txt"
ticks1=$(cpu_ticks)
requests1=$(stat_field 's["requests"]')
rps=$(awk '/Requests\/sec/ {print $2}' "$tmp/wrk_short.txt")
cpu_us=$(python3 -c "print(round(($ticks1 - $ticks0) * 1e6 / $(getconf CLK_TCK) / max($requests1 - $requests0, 1), 1))")
echo "RESULT short_streaming_requests_per_s=$rps mock_cpu_us_per_request=$cpu_us"
stop_mock

# ---- 2. concurrent open streams --------------------------------------------------------------
start_mock --itl-ms "$STREAM_ITL_MS" --max-num-seqs 4096 --workers 4
write_lua "$tmp/long.lua" 10
wrk -t2 -c"$STREAMS" -d"${STREAM_HOLD_S}s" --timeout 60s -s "$tmp/long.lua" \
  "$url/v1/chat/completions" >"$tmp/wrk_long.txt" 2>&1 &
wrk_pid=$!
peak=0
for _ in $(seq 1 "$STREAM_HOLD_S"); do
  sleep 1
  active=$(stat_field 'sum(w["active"] for w in s["workers"])')
  (( active > peak )) && peak=$active
done
wait "$wrk_pid" || true
lateness=$(stat_field 's["token_lateness_ms"]')
errors=$(grep -E "Socket errors" "$tmp/wrk_long.txt" || echo "Socket errors: none")
echo "RESULT open_streams_peak=$peak (target $STREAMS); wrk: $errors"
echo "token_lateness_ms (completed streams): $lateness"
stop_mock
