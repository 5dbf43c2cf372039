"""The targets of the side-by-side bench, on loopback only: convoy-mock with exact timing,
nginx streaming a fixed body (bench/nginx, through bench/lib.sh) and the real Dynamo frontend
with mocker workers (scripts/dynamo up/down)."""

import json
import os
import re
import signal
import subprocess
import time
import urllib.request


def prefill_ms(prompt_tokens: float, speedup: float = 1.0) -> float:
    """convoy-mock's TTFT for an uncached prompt with no queue (docs/mock.md, Timing: Dynamo's
    mocker formula), in ms."""
    t = prompt_tokens
    return (4.209989e-7 * t * t + 1.518344e-2 * t + 16.50142) / speedup


class Mock:
    """convoy-mock on a free loopback port; every run of a tool gets a fresh one, so its
    /mock/stats (TTFT the mock measured, its own token lateness) and its KV cache are that
    run's alone."""

    def __init__(self, binary, itl_ms, log_path, extra=(), request_log=None):
        self.itl_ms = itl_ms
        self.request_log = request_log  # --log-requests FILE (None: off)
        self.log = open(log_path, "w")
        if request_log:
            extra = (*extra, "--log-requests", request_log)
        self.proc = subprocess.Popen(
            [binary, "--port", "0", "--itl-ms", str(itl_ms), *extra],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"listening on (\S+)", line)
        if not m:
            self.stop()
            raise RuntimeError(f"convoy-mock did not start: {line!r}")
        self.url = m.group(1)
        self.model = "mock-model"

    def stats(self) -> dict:
        with urllib.request.urlopen(self.url + "/mock/stats", timeout=10) as r:
            return json.load(r)

    def truth(self) -> dict:
        """What the mock did: its TTFT mean as it measured it (arrival to first token, every
        request of the run), its ideal TTFT for the run's prompts (prefill of the mean prompt,
        uncached), its ITL, its own token lateness."""
        s = self.stats()
        rows = s.get("ttft_by_turn") or []
        n = sum(r["ttft_count"] for r in rows)
        mean = sum(r["ttft_mean_ms"] * r["ttft_count"] for r in rows) / n if n else None
        first = rows[0] if rows else None
        ideal = None
        if first and first["requests"]:
            ideal = prefill_ms(first["prompt_tokens"] / first["requests"])
        late = s.get("token_lateness_ms") or {}
        # The ITL the mock actually emitted, per streamed request (last token's emission minus
        # the first's, over tokens - 1): what the host let it do, beside what it was told.
        emitted = s.get("emitted_itl_ms") or {}
        has = bool(emitted.get("count"))
        return {"server_ttft_mean_ms": mean, "ideal_ttft_first_turn_ms": ideal,
                "itl_ms": self.itl_ms, "requests": s.get("requests"),
                "lateness_max_ms": late.get("max"),
                "lateness_mean_of_request_max_ms": late.get("mean_of_request_max"),
                "emitted_itl_p50_ms": emitted.get("p50") if has else None,
                "emitted_itl_p99_ms": emitted.get("p99") if has else None,
                "emitted_itl_mean_ms": emitted.get("mean") if has else None}

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class Nginx:
    """nginx from bench/nginx/nginx.conf.in (bench/lib.sh's bench_nginx_start), streaming a
    fixed body: `path` picks the location (/stream12: 12 events 1 ms apart)."""

    def __init__(self, root, prefix, path="/stream12"):
        # nginx inherits the shell's stdout: /dev/null here, and its pid and url go to a file
        # (a pipe would stay open as long as nginx runs).
        started = os.path.join(prefix, "started")
        os.makedirs(prefix, exist_ok=True)
        script = (f'source "{root}/bench/lib.sh"; '
                  f'bench_nginx_start "{prefix}" >/dev/null 2>&1 && '
                  f'echo "$NGINX_PID $NGINX_URL" >"{started}"')
        out = subprocess.run(["bash", "-c", script], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60,
                             env={**os.environ, "BENCH_TMP": prefix, "BENCH_ROOT": root})
        if out.returncode != 0 or not os.path.exists(started):
            raise RuntimeError(f"nginx did not start (see {prefix}/error.log)")
        pid, base = open(started).read().split()[:2]
        self.pid = int(pid)
        self.url = base + path
        self.model = "bench"

    def truth(self) -> dict:
        return {}

    def stop(self):
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        for _ in range(50):
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


class Dynamo:
    """The real Dynamo frontend with mocker workers (scripts/dynamo up; down at stop)."""

    def __init__(self, root, workers=2):
        self.root = root
        out = subprocess.run([os.path.join(root, "scripts", "dynamo"), "up", "--workers",
                              str(workers)], capture_output=True, text=True, timeout=600)
        if out.returncode != 0:
            raise RuntimeError(f"scripts/dynamo up failed: {out.stderr[-800:]}")
        self.url = out.stdout.strip().splitlines()[-1]
        self.model = "Qwen/Qwen3-0.6B"

    def truth(self) -> dict:
        return {}

    def stop(self):
        port = self.url.rsplit(":", 1)[-1].split("/")[0]
        subprocess.run([os.path.join(self.root, "scripts", "dynamo"), "down", "--port", port],
                       capture_output=True, timeout=120)
