"""convoy and AIPerf on one small workload against convoy-mock with exact timing (CTest, label
peers). Fails when convoy's TTFT or ITL p50 is more than 0.5 ms from the mock's truth (TTFT:
plus the host's median wake-up latency, measured beside the run), or when
convoy and AIPerf disagree on the request count, ISL or OSL.

The truth: ITL is the mock's --itl-ms (its token times are absolute: admitted + prefill +
i * itl). TTFT is the mock's prefill time for the prompt (docs/mock.md, Timing); when the host
made the mock itself late (its own TTFT mean over the same requests above that by more than the
bound), convoy's TTFT mean is held to the mock's own mean instead (the same requests, so the
difference is what the client added), and the message says so.

Usage: aiperf_agreement.py SOURCE_DIR CONVOY_BIN_DIR WORKER_BIN_DIR MOCK_BIN
Exit 77 (CTest: skipped) when PyPI cannot be reached to install AIPerf, unless
CONVOY_PEERS_REQUIRED=1 (CI), which makes that a failure.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile

BOUND_MS = 0.5  # the agreement bound for TTFT and ITL p50 (ms)
ATTEMPTS = 3  # convoy runs at most this many times (host noise, below)
REQUESTS = 30  # bounded: the test must pass on a loaded 2-core host
CONCURRENCY = 4
ITL_MS = 10.0  # the mock's decode step
OUTPUT_TOKENS = 16
PROMPT_BYTES = 512  # 128 tokens of content at the mock's 4 bytes a token


def main() -> int:
    source, convoy_dir, worker_dir, mock_bin = sys.argv[1:5]
    sys.path.insert(0, os.path.join(source, "bench", "side_by_side"))
    import dataset  # noqa: E402  (the bench's own modules, from the source tree)

    install = subprocess.run([os.path.join(source, "scripts", "lib", "peers.sh"), "install",
                              "aiperf"], capture_output=True, text=True)
    if install.returncode != 0:
        sys.stderr.write(install.stderr)
        if "PyPI cannot be reached" in install.stderr and \
                os.environ.get("CONVOY_PEERS_REQUIRED") != "1":
            print("peers test skipped: PyPI cannot be reached to install AIPerf")
            return 77
        return 1
    venv = install.stdout.strip().splitlines()[-1]
    tok = subprocess.run([os.path.join(source, "scripts", "tokenizers"), "qwen3"],
                         capture_output=True, text=True, check=True).stdout.strip()

    work = tempfile.mkdtemp(prefix="convoy-peers-")
    paths = dataset.write_all(os.path.join(work, "data"), REQUESTS, 1, PROMPT_BYTES,
                              OUTPUT_TOKENS)
    cell = {"name": "peers", "mode": "concurrency", "concurrency": CONCURRENCY, "rate": None,
            "duration_s": None, "requests": REQUESTS, "turns": 1,
            "output_tokens": OUTPUT_TOKENS}
    env = dict(os.environ)
    env["PATH"] = f"{convoy_dir}:{worker_dir}:{env['PATH']}"
    env["CONVOY_BIN"] = os.path.join(convoy_dir, "convoy")
    env.pop("HF_HUB_OFFLINE", None)  # AIPerf reads a local tokenizer folder only when online

    # Host noise only ever adds delay (a thread woken late), so a correct client shows its true
    # error in a quiet moment and a wrong one in none: convoy gets up to ATTEMPTS runs, each on a
    # fresh mock, and its timing passes when one of them does. AIPerf runs once, for its counts.
    attempts = []
    for attempt in range(ATTEMPTS):
        got = run_one("convoy", attempt, work, mock_bin, cell, paths, env, venv, tok)
        if got is None:
            return 1
        attempts.append(got)
        if not timing_failures(*got):
            break
    aiperf = run_one("aiperf", 0, work, mock_bin, cell, paths, env, venv, tok)
    if aiperf is None:
        return 1
    rc = verdict(attempts, aiperf[0])
    if rc == 0:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"the runs' folders and logs: {work}")
    return rc


def run_one(name, attempt, work, mock_bin, cell, paths, env, venv, tok):
    """One tool on a fresh mock: (figures, the mock's truth), or None when the tool failed."""
    import measure  # noqa: E402
    import servers  # noqa: E402
    import tools  # noqa: E402

    out = os.path.join(work, f"{name}-{attempt}")
    mock = servers.Mock(mock_bin, ITL_MS, out + "-mock.log")
    try:
        if name == "convoy":
            argv = tools.convoy_command(env["CONVOY_BIN"], cell, mock.url, mock.model,
                                        paths["convoy"], out)
        else:
            argv = tools.aiperf_command(venv, cell, mock.url, mock.model,
                                        paths["aiperf_single_turn"], out, tok)
        noise = start_wakeup(out + "-wakeup.txt") if name == "convoy" else None
        usage = measure.run_measured(argv, out + ".log", env=env, timeout_s=400)
        wake_p50 = stop_wakeup(noise, out + "-wakeup.txt")
        if usage.returncode != 0:
            print(f"{name} exited {usage.returncode}; its log:")
            print(open(out + ".log", errors="replace").read()[-3000:])
            return None
        figs = (tools.convoy_figures if name == "convoy" else tools.aiperf_figures)(out)
        truth = mock.truth()
        truth["host_wakeup_p50_ms"] = wake_p50
        return figs, truth
    finally:
        mock.stop()


def start_wakeup(path):
    """cyclictest beside convoy's run (one ordinary thread woken every 500 us): the host's own
    wake-up latency, which no client can beat. None when rt-tests is not installed."""
    if not shutil.which("cyclictest"):
        return None
    return subprocess.Popen(["cyclictest", "-q", "-m", "-t1", "--policy=other", "-i", "500",
                             "-D", "600s", "-h", "50000"], stdout=open(path, "w"),
                            stderr=subprocess.DEVNULL)


def stop_wakeup(proc, path):
    """Stops cyclictest (SIGINT: it writes its histogram); its wake-up p50 in ms, or 0."""
    if proc is None:
        return 0.0
    proc.send_signal(signal.SIGINT)
    proc.wait(30)
    hist = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 2 and f[0].isdigit() and f[1].isdigit() and int(f[1]) > 0:
            hist[int(f[0])] = int(f[1])
    total, seen = sum(hist.values()), 0
    for us in sorted(hist):
        seen += hist[us]
        if seen >= total / 2:
            return us / 1000.0
    return 0.0


def timing_failures(c, truth) -> list:
    """convoy's TTFT and ITL p50 against the mock's truth: the failures, each a sentence."""
    failures = []
    itl_err = abs(c["itl_p50"] - truth["itl_ms"])
    print(f"ITL p50 {c['itl_p50']:.3f} ms, truth {truth['itl_ms']:.3f} ms: error {itl_err:.3f} ms")
    if itl_err > BOUND_MS:
        failures.append(f"ITL p50 off the truth by {itl_err:.3f} ms (> {BOUND_MS})")
    ideal = truth["ideal_ttft_first_turn_ms"]
    ttft_err = abs(c["ttft_p50"] - ideal)
    # The first token is seen when the host runs the client's thread: the host's median wake-up
    # latency (cyclictest during the run) is added to the bound; on a quiet host it is ~0.05 ms.
    bound = BOUND_MS + truth.get("host_wakeup_p50_ms", 0.0)
    client_added = c["ttft_mean"] - truth["server_ttft_mean_ms"]
    print(f"TTFT p50 {c['ttft_p50']:.3f} ms, the mock's prefill {ideal:.3f} ms: error "
          f"{ttft_err:.3f} ms; convoy's mean minus the mock's own mean {client_added:.3f} ms; "
          f"the mock's token lateness max {truth['lateness_max_ms']} ms; bound {bound:.3f} ms "
          f"(0.5 + the host's wake-up p50 {truth.get('host_wakeup_p50_ms', 0.0):.3f} ms)")
    if ttft_err > bound:
        server_late = truth["server_ttft_mean_ms"] - ideal
        if server_late > BOUND_MS and abs(client_added) <= BOUND_MS:
            print(f"the host made the mock late (its own TTFT mean {server_late:.3f} ms over its "
                  f"prefill): convoy's TTFT mean is within {BOUND_MS} ms of the mock's own")
        else:
            failures.append(f"TTFT p50 off the truth by {ttft_err:.3f} ms (> {bound:.3f})")
    return failures


def verdict(attempts, a) -> int:
    c, truth = attempts[-1]
    print(f"convoy: {c}\naiperf: {a}\nmock during convoy's last run: {truth}")
    failures = timing_failures(c, truth)
    if failures and len(attempts) > 1:
        failures = [f"{f} (in each of {len(attempts)} runs)" for f in failures]
    for key in ("requests", "isl", "osl"):
        if c[key] is None or a[key] is None or abs(c[key] - a[key]) > 1e-6:
            failures.append(f"{key}: convoy {c[key]} vs AIPerf {a[key]}")
    if c["requests"] != REQUESTS or c["errors"]:
        failures.append(f"convoy ran {c['requests']} requests ({c['errors']} errors), "
                        f"not {REQUESTS}")
    for f in failures:
        print("FAIL:", f)
    print("PASS" if not failures else f"{len(failures)} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
