# shellcheck shell=bash
# Helpers sourced by scripts/bench: nginx with fixed and streamed SSE bodies, wrk, and reading
# convoy's summary.json. Not executable on its own.

# One chat completion chunk as an SSE event, escaped for an nginx double-quoted string.
bench_sse_event() {  # bench_sse_event TEXT
  printf '%s' "data: {\\\"id\\\":\\\"chatcmpl-bench\\\",\\\"object\\\":\\\"chat.completion.chunk\\\",\\\"model\\\":\\\"bench\\\",\\\"choices\\\":[{\\\"index\\\":0,\\\"delta\\\":{\\\"content\\\":\\\"$1\\\"},\\\"finish_reason\\\":null}]}\\n\\n"
}

bench_sse_body() {  # bench_sse_body EVENTS
  local body="" i
  for ((i = 0; i < $1; i++)); do body+=$(bench_sse_event " tok$i"); done
  printf '%sdata: [DONE]\\n\\n' "$body"
}

# echo-module directives: EVENTS events, each flushed, SLEEP_S apart.
bench_echo_stream() {  # bench_echo_stream EVENTS SLEEP_S
  local i
  for ((i = 0; i < $1; i++)); do
    printf '      echo -n "%s";\n      echo_flush;\n' "$(bench_sse_event " tok$i")"
    if ((i + 1 < $1)); then printf '      echo_sleep %s;\n' "$2"; fi
  done
  printf '      echo -n "data: [DONE]\\n\\n";\n'
}

# Starts nginx from bench/nginx/nginx.conf.in under $1 on a free port; sets NGINX_PID, NGINX_URL.
bench_nginx_start() {  # bench_nginx_start PREFIX
  local prefix=$1 port
  mkdir -p "$prefix"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  python3 - "$BENCH_ROOT/bench/nginx/nginx.conf.in" "$prefix/nginx.conf" "$prefix" "$port" \
    "$(bench_sse_body 1)" "$(bench_sse_body 12)" "$(bench_echo_stream "${STREAM_EVENTS:-10}" 0.001)" \
    "$(bench_echo_stream 5 1)" "$(bench_echo_stream 12 0.001)" <<'PY'
import sys
src, dst, prefix, port, sse1, sse12, stream, slow, stream12 = sys.argv[1:]
text = open(src).read()
for k, v in {"@PREFIX@": prefix, "@PORT@": port, "@SSE1@": sse1, "@SSE12@": sse12,
             "@STREAM@": stream, "@SLOW@": slow, "@STREAM12@": stream12}.items():
    text = text.replace(k, v)
open(dst, "w").write(text)
PY
  nginx -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/error.log" &
  NGINX_PID=$!
  NGINX_URL="http://127.0.0.1:$port"
  local _
  for _ in $(seq 1 100); do
    curl -s -o /dev/null "$NGINX_URL/sse1/v1/chat/completions" && return 0
    sleep 0.05
  done
  echo "bench: nginx did not start" >&2
  cat "$prefix/error.log" >&2
  return 1
}

bench_nginx_stop() {
  [[ -n "${NGINX_PID:-}" ]] || return 0
  kill "$NGINX_PID" 2>/dev/null || true
  wait "$NGINX_PID" 2>/dev/null || true
  NGINX_PID=""
}

# wrk -t1 POSTing a chat request; prints requests/s.
bench_wrk_rps() {  # bench_wrk_rps CONNECTIONS SECONDS URL
  local lua=$BENCH_TMP/post.lua
  cat >"$lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"bench","messages":[{"role":"user","content":"hello"}],"max_tokens":16,"stream":true}'
LUA
  local TIMEFORMAT='%U %S'
  { time wrk -t1 -c"$1" -d"$2s" --timeout 30s -s "$lua" "$3" >"$BENCH_TMP/wrk.txt" 2>&1 || true; } \
    2>"$BENCH_TMP/wrk.time"
  awk '/Requests\/sec/ {print $2}' "$BENCH_TMP/wrk.txt"
}

# CPU microseconds per request of the last bench_wrk_rps (user + system time / requests).
bench_wrk_cpu_us() {
  local n
  n=$(awk '/requests in/ {print $1}' "$BENCH_TMP/wrk.txt")
  awk -v n="${n:-0}" '{ if (n > 0) printf "%.1f", ($1 + $2) * 1e6 / n; else print "null" }' \
    "$BENCH_TMP/wrk.time"
}

# Reads one value from a summary.json: bench_json FILE PYTHON_EXPR (the document is `s`).
bench_json() {
  python3 -c "import json,sys; s=json.load(open(sys.argv[1])); v=($2); print('null' if v is None else v)" "$1"
}

# Per-request syscall counts of a command (perf's syscalls:sys_enter_* tracepoints, the command
# and its children): bench_syscalls OUT_TXT REQUESTS_CMD -- CMD...; REQUESTS_CMD prints the
# number of requests once CMD is done. Prints "recvfrom 13.0, poll 16.1, ..." (the top 8 and
# the total), or "perf unavailable" when perf cannot count tracepoints here.
bench_syscalls() {  # bench_syscalls OUT_TXT REQUESTS_CMD -- CMD...
  local out=$1 requests_cmd=$2
  shift 3
  if ! perf stat -x, -e 'syscalls:sys_enter_read' -o /dev/null true >/dev/null 2>&1; then
    "$@" >/dev/null 2>&1 || true
    echo "perf unavailable"
    return 0
  fi
  perf stat -x, -e 'syscalls:sys_enter_*' -o "$out" -- "$@" >/dev/null 2>&1 || true
  python3 - "$out" "$(eval "$requests_cmd")" <<'PY'
import sys
counts = {}
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    if len(f) < 3 or not f[2].startswith("syscalls:sys_enter_"):
        continue
    try:
        n = float(f[0])
    except ValueError:
        continue
    if n > 0:
        counts[f[2][len("syscalls:sys_enter_"):]] = n
n = max(float(sys.argv[2] or 0), 1)
top = sorted(counts.items(), key=lambda kv: -kv[1])[:8]
print(", ".join(f"{k} {v / n:.1f}" for k, v in top) + f"; total {sum(counts.values()) / n:.1f}")
PY
}

# The platform's own timer wake-up latency, measured beside a run as its peer: cyclictest
# (rt-tests) with one ordinary (SCHED_OTHER, nice 0) thread waking every 500 us, as convoy's
# worker does, for the given seconds. A timer that expires while the cores run something else
# fires when the kernel next schedules the thread (and, in a VM, when the host runs the vCPU);
# no client can send earlier than it wakes. bench_wakeup_start SECONDS starts it in the
# background; bench_wakeup_p99 waits for its end and prints "p99_ms p50_ms max_ms" (or "null" when
# cyclictest is missing).
bench_wakeup_start() {  # bench_wakeup_start SECONDS
  WAKEUP_PID=""
  WAKEUP_OUT=$BENCH_TMP/wakeup.$RANDOM.txt
  command -v cyclictest >/dev/null || return 0
  cyclictest -q -m -t1 --policy=other -i 500 -D "${1}s" -h 50000 >"$WAKEUP_OUT" 2>/dev/null &
  WAKEUP_PID=$!
}

bench_wakeup_wait() {  # in the shell that started it, before $(bench_wakeup_p99)
  if [[ -n "${WAKEUP_PID:-}" ]]; then wait "$WAKEUP_PID" || true; fi
}

bench_wakeup_p99() {
  if [[ -z "${WAKEUP_PID:-}" ]]; then
    echo null
    return 0
  fi
  # Called in $(...), a subshell, which cannot `wait` for the shell's child: poll until it exits
  # (cyclictest writes its histogram at exit).
  while kill -0 "$WAKEUP_PID" 2>/dev/null; do sleep 0.2; done
  python3 - "$WAKEUP_OUT" <<'PY'
import sys
hist = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 2 and f[0].isdigit() and int(f[1]) > 0:
        hist[int(f[0])] = int(f[1])
total = sum(hist.values())
def pct(q):
    acc = 0
    for us in sorted(hist):
        acc += hist[us]
        if acc >= q * total:
            return us / 1000
print("null" if not total else f"{pct(0.99):.3f} {pct(0.5):.3f} {max(hist) / 1000:.3f}")
PY
}
