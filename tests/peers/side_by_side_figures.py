"""The side-by-side bench's own figures, without a peer (CTest peers_side_by_side_figures): a real
convoy-mock logging its requests serves a few streamed chat requests sent from here, and

- the mock's /mock/stats `emitted_itl_ms` counts every streamed request, with a p50 within the
  host's lateness of the configured step;
- the bench's traffic window reads the arrivals from the mock's log and the CPU spent between
  the first and the last from a timeline;
- the bench's ISL count by the Qwen3 tokenizer (isl_count.py) gives every request's message
  tokens (skipped, with a line, when the tokenizer files or the reference `tokenizers` cannot
  be installed);
- the derived figures hold ITL to both truths and take CPU per request from the window.

Usage: side_by_side_figures.py SOURCE_DIR MOCK_BIN
"""

import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

ITL_MS = 5.0
TOKENS = 12
REQUESTS = 8  # bounded: one thread each, each request about 100 ms


def stream_one(port, text, errors):
    """One streamed chat request, read to [DONE]."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        body = json.dumps({"model": "mock-model", "stream": True, "max_tokens": TOKENS,
                           "messages": [{"role": "user", "content": text}]})
        conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        data = conn.getresponse().read().decode()
        if "[DONE]" not in data:
            errors.append(f"no [DONE] in {data[:200]!r}")
        conn.close()
    except OSError as e:
        errors.append(str(e))


def main() -> int:
    source, mock_bin = sys.argv[1:3]
    sys.path.insert(0, os.path.join(source, "bench", "side_by_side"))
    import report  # noqa: E402
    import run  # noqa: E402

    work = tempfile.mkdtemp(prefix="convoy-side-")
    log = os.path.join(work, "requests.jsonl")
    mock = run.servers.Mock(mock_bin, ITL_MS, os.path.join(work, "mock.log"), request_log=log)
    try:
        port = int(mock.url.rsplit(":", 1)[1])
        errors = []
        texts = [f"request {i} " + "alpha bravo " * 20 for i in range(REQUESTS)]
        threads = [threading.Thread(target=stream_one, args=(port, t, errors)) for t in texts]
        t0 = time.time()
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        t1 = time.time()
        truth = mock.truth()
        emitted_count = mock.stats()["emitted_itl_ms"]["count"]
    finally:
        mock.stop()
    failures = list(errors)
    p50 = truth["emitted_itl_p50_ms"]
    # Token times are absolute: a late first token shortens the emitted ITL, a late last one
    # lengthens it; either way within the host's lateness of the step.
    if emitted_count != REQUESTS or p50 is None or abs(p50 - ITL_MS) > 2.0:
        failures.append(f"emitted ITL p50 {p50} ms over {emitted_count} requests, configured "
                        f"{ITL_MS} ms, {REQUESTS} requests")
    if truth["emitted_itl_p99_ms"] is None or truth["emitted_itl_p99_ms"] < p50:
        failures.append(f"emitted ITL p99 {truth['emitted_itl_p99_ms']} below p50 {p50}")

    # A timeline of 1 CPU second per wall second over the run: the window's CPU is its length.
    timeline = [(t0 - 1 + i * 0.05, i * 0.05) for i in range(int((t1 - t0 + 2) / 0.05) + 2)]
    window = run.traffic_window(log, timeline)
    if not window or window["requests"] != REQUESTS - 1 or \
            abs(window["cpu_s"] - window["seconds"]) > 0.01:
        failures.append(f"traffic window {window} ({REQUESTS} requests sent)")

    row = {"target": "mock", "cell": "c16", "tool": "convoy", "window": window,
           "usage": {"cpu_s": 2.0, "peak_rss_bytes": 0}, "truth": truth,
           "figures": {"requests": REQUESTS, "itl_p50": ITL_MS + 1, "itl_p99": ITL_MS + 2,
                       "osl": TOKENS, "ttft_mean": None}}
    nginx = {"target": "nginx", "cell": "c16", "tool": "convoy", "usage": {
        "cpu_s": 3.0, "peak_rss_bytes": 0}, "figures": {"requests": 100}}
    doc = {"rows": [row, nginx]}
    report.derive(doc)
    d = row["derived"]
    emitted_error = d.get("itl_p50_error_emitted_ms")
    if d["cpu_from"] != "window" or d["itl_p50_error_ms"] != 1.0 or emitted_error is None or \
            abs(emitted_error - abs(ITL_MS + 1 - p50)) > 1e-3:
        failures.append(f"derived {d}")
    overhead = 2.0 - window["cpu_s"] / window["requests"] * REQUESTS
    if nginx["derived"]["cpu_from"] != "overhead" or \
            abs(nginx["derived"]["cpu_us_per_request"] - (3.0 - overhead) * 1e4) > 1.0:
        failures.append(f"nginx row, the mock's overhead {overhead}: {nginx['derived']}")

    isl = counted_isl(source, log)
    if isl is not None and (isl["requests"] != REQUESTS or isl["isl_max"] <= 40):
        failures.append(f"ISL by the tokenizer {isl}")
    for f in failures:
        print(f"FAIL {f}")
    print(f"emitted ITL p50 {p50} ms p99 {truth['emitted_itl_p99_ms']} ms; window {window}; "
          f"ISL by Qwen3 {isl}")
    return 1 if failures else 0


def counted_isl(source, log):
    tok = os.path.join(source, "scripts", "tokenizers")
    try:
        py = subprocess.run([tok, "--reference"], capture_output=True, text=True,
                            check=True).stdout.strip()
        folder = subprocess.run([tok, "qwen3"], capture_output=True, text=True,
                                check=True).stdout.strip()
    except subprocess.CalledProcessError as e:
        print(f"ISL count skipped: scripts/tokenizers failed: {e.stderr.strip()}")
        return None
    out = subprocess.run([py, os.path.join(source, "bench", "side_by_side", "isl_count.py"),
                          folder, log], capture_output=True, text=True, check=True).stdout
    return json.loads(out)[log]


if __name__ == "__main__":
    sys.exit(main())
