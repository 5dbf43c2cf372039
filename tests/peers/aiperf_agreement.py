"""convoy and AIPerf on one small workload against convoy-mock with exact timing (CTest, label
peers). Fails when convoy's TTFT or ITL p50 is more than 0.5 ms from the mock's truth, or when
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
import subprocess
import sys
import tempfile

BOUND_MS = 0.5  # the agreement bound for TTFT and ITL p50 (ms)
REQUESTS = 30  # bounded: the test must pass on a loaded 2-core host
CONCURRENCY = 4
ITL_MS = 10.0  # the mock's decode step
OUTPUT_TOKENS = 16
PROMPT_BYTES = 512  # 128 tokens of content at the mock's 4 bytes a token


def main() -> int:
    source, convoy_dir, worker_dir, mock_bin = sys.argv[1:5]
    sys.path.insert(0, os.path.join(source, "bench", "side_by_side"))
    import dataset  # noqa: E402  (the bench's own modules, from the source tree)
    import measure  # noqa: E402
    import servers  # noqa: E402
    import tools  # noqa: E402

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
    env.pop("HF_HUB_OFFLINE", None)  # AIPerf reads a local tokenizer folder only when online

    runs = {}
    for name in ("convoy", "aiperf"):
        mock = servers.Mock(mock_bin, ITL_MS, os.path.join(work, f"{name}-mock.log"))
        try:
            out = os.path.join(work, name)
            if name == "convoy":
                argv = tools.convoy_command(os.path.join(convoy_dir, "convoy"), cell, mock.url,
                                            mock.model, paths["convoy"], out)
            else:
                argv = tools.aiperf_command(venv, cell, mock.url, mock.model,
                                            paths["aiperf_single_turn"], out, tok)
            usage = measure.run_measured(argv, out + ".log", env=env, timeout_s=400)
            if usage.returncode != 0:
                print(f"{name} exited {usage.returncode}; its log:")
                print(open(out + ".log", errors="replace").read()[-3000:])
                return 1
            figs = (tools.convoy_figures if name == "convoy" else tools.aiperf_figures)(out)
            runs[name] = (figs, mock.truth())
        finally:
            mock.stop()
    return verdict(runs)


def verdict(runs) -> int:
    (c, truth), (a, _) = runs["convoy"], runs["aiperf"]
    failures = []
    print(f"convoy: {c}\naiperf: {a}\nmock during convoy's run: {truth}")
    itl_err = abs(c["itl_p50"] - truth["itl_ms"])
    print(f"ITL p50 {c['itl_p50']:.3f} ms, truth {truth['itl_ms']:.3f} ms: error {itl_err:.3f} ms")
    if itl_err > BOUND_MS:
        failures.append(f"ITL p50 off the truth by {itl_err:.3f} ms (> {BOUND_MS})")
    ideal = truth["ideal_ttft_first_turn_ms"]
    ttft_err = abs(c["ttft_p50"] - ideal)
    print(f"TTFT p50 {c['ttft_p50']:.3f} ms, the mock's prefill {ideal:.3f} ms: "
          f"error {ttft_err:.3f} ms")
    if ttft_err > BOUND_MS:
        server_late = truth["server_ttft_mean_ms"] - ideal
        client_added = c["ttft_mean"] - truth["server_ttft_mean_ms"]
        if server_late > BOUND_MS and abs(client_added) <= BOUND_MS:
            print(f"the host made the mock late (its own TTFT mean {server_late:.3f} ms over its "
                  f"prefill; token lateness max {truth['lateness_max_ms']} ms): convoy's TTFT "
                  f"mean is {client_added:.3f} ms from the mock's own, within {BOUND_MS}")
        else:
            failures.append(f"TTFT p50 off the truth by {ttft_err:.3f} ms (> {BOUND_MS}); "
                            f"convoy's mean minus the mock's own mean: {client_added:.3f} ms")
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
