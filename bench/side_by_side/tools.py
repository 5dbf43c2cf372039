"""Each benchmark client of the side-by-side bench: its command line for one cell and the reader
of its own output files, brought to one shape (`figures`).

Cell: {"name", "mode": "concurrency" | "rate", "concurrency", "rate", "duration_s", "requests"
(or None), "turns", "output_tokens"}. A cell runs either `requests` requests or for
`duration_s` seconds. figures: requests, errors, rps, ttft/itl/e2e p50/p99 and mean (ms),
isl/osl mean (tokens), with None where a tool does not report a figure.

Flags and files, from each tool's own source and --help (pinned versions: scripts/lib/peers.sh):
  convoy    `convoy run CONFIG -o DIR`: DIR/summary.json (docs/metrics.md)
  AIPerf    `aiperf profile --custom-dataset-type single_turn|multi_turn --input-file F
            --concurrency N | --request-rate R --arrival-pattern poisson --request-count N |
            --benchmark-duration S --use-server-token-count --ui-type none --artifact-dir DIR`:
            DIR/profile_export_aiperf.json (metrics as {unit, avg, p50, p99, ...})
  GuideLLM  `guidellm run --scenario FILE` (the file: backend openai_http, profile concurrent
            {streams} | poisson {rate}, constraints max_requests {count} | max_duration
            {seconds}, tokenizer huggingface_auto {model}, data json_file {path}, outputs json
            {path}): benchmarks.json, benchmarks[-1].metrics ({successful: {mean, percentiles}})
"""

import json
import os

GRACE_S = 10  # seconds in-flight requests may finish after a cell's duration (every tool)


def _pick(metric, key):
    if not isinstance(metric, dict):
        return None
    v = metric.get(key)
    return None if v is None else float(v)


# ---- convoy --------------------------------------------------------------------------------

def convoy_command(convoy_bin, cell, url, model, dataset_path, out_dir):
    """Writes the run's config beside out_dir and returns the argv."""
    load = {"mode": cell["mode"], "concurrency": cell["concurrency"], "grace_s": GRACE_S}
    if cell["mode"] == "rate":
        load.update({"rate": cell["rate"], "arrival": "poisson"})
    if cell.get("requests"):
        load["requests"] = cell["requests"]
    else:
        load["duration_s"] = cell["duration_s"]
    config = {
        "name": cell["name"],
        "target": {"url": url, "model": model, "api_key_env": None,
                   "use_server_token_counts": True},
        "dataset": {"type": "jsonl", "path": dataset_path},
        "load": load,
        "workers": {"local": 1},
        "output": {"records": False, "html": False},
    }
    path = out_dir.rstrip("/") + ".yaml"
    with open(path, "w") as f:
        json.dump(config, f)  # JSON is YAML
    return [convoy_bin, "run", path, "-o", out_dir]


def convoy_figures(out_dir):
    s = json.load(open(os.path.join(out_dir, "summary.json")))
    return {
        "requests": _pick(s.get("request_count"), "avg"),
        "errors": _pick(s.get("error_request_count"), "avg") or 0.0,
        "rps": _pick(s.get("request_throughput"), "avg"),
        **_latency_block(s, "time_to_first_token", "inter_token_latency", "request_latency"),
        "isl": _pick(s.get("input_sequence_length"), "avg"),
        "osl": _pick(s.get("output_sequence_length"), "avg"),
    }


def _latency_block(doc, ttft, itl, e2e):
    out = {}
    for short, key in (("ttft", ttft), ("itl", itl), ("e2e", e2e)):
        m = doc.get(key)
        for stat in ("avg", "p50", "p99"):
            out[f"{short}_{'mean' if stat == 'avg' else stat}"] = _pick(m, stat)
    return out


# ---- AIPerf --------------------------------------------------------------------------------

def aiperf_command(venv, cell, url, model, dataset_path, out_dir, tokenizer):
    argv = [os.path.join(venv, "bin", "aiperf"), "profile", "--model", model, "--url", url,
            "--endpoint-type", "chat", "--streaming", "--input-file", dataset_path,
            "--custom-dataset-type", "multi_turn" if cell["turns"] > 1 else "single_turn",
            "--tokenizer", tokenizer, "--use-server-token-count", "--ui-type", "none",
            "--artifact-dir", out_dir, "--no-server-metrics", "--no-gpu-telemetry",
            "--concurrency", str(cell["concurrency"])]
    if cell["mode"] == "rate":
        argv += ["--request-rate", str(cell["rate"]), "--arrival-pattern", "poisson"]
    if cell.get("requests"):
        argv += ["--request-count", str(cell["requests"])]
    else:
        argv += ["--benchmark-duration", str(cell["duration_s"]),
                 "--benchmark-grace-period", str(GRACE_S)]
    return argv


def aiperf_figures(out_dir):
    d = json.load(open(os.path.join(out_dir, "profile_export_aiperf.json")))
    return {
        "requests": _pick(d.get("request_count"), "avg"),
        "errors": _pick(d.get("error_request_count"), "avg") or 0.0,
        "rps": _pick(d.get("request_throughput"), "avg"),
        **_latency_block(d, "time_to_first_token", "inter_token_latency", "request_latency"),
        "isl": _pick(d.get("input_sequence_length"), "avg"),
        "osl": _pick(d.get("output_sequence_length"), "avg"),
    }


# ---- GuideLLM ------------------------------------------------------------------------------

def guidellm_command(venv, cell, url, model, dataset_path, out_dir, tokenizer):
    """GuideLLM 0.8 takes a scenario file (the `spec` of its BenchmarkArgs: backend, profile,
    constraints, tokenizer, data, outputs); written beside out_dir."""
    if cell["mode"] == "rate":
        profile = {"kind": "poisson", "rate": [cell["rate"]],
                   "max_concurrency": cell["concurrency"]}
    else:
        profile = {"kind": "concurrent", "streams": [cell["concurrency"]]}
    if cell.get("requests"):
        constraints = [{"kind": "max_requests", "count": cell["requests"]}]
    else:
        constraints = [{"kind": "max_duration", "seconds": cell["duration_s"]}]
    spec = {
        # validate_backend off: its GET /health is no route of nginx's fixed stream.
        "backend": {"kind": "openai_http", "target": url, "model": model,
                    "request_format": "/v1/chat/completions", "validate_backend": False},
        "profile": profile,
        "constraints": constraints,
        "tokenizer": {"kind": "huggingface_auto", "model": tokenizer},
        "data": [{"kind": "json_file", "path": dataset_path}],
        "outputs": [{"kind": "json", "path": os.path.join(out_dir, "benchmarks.json")}],
    }
    path = out_dir.rstrip("/") + ".scenario.json"
    with open(path, "w") as f:
        json.dump({"spec": spec}, f)
    return [os.path.join(venv, "bin", "guidellm"), "run", "--scenario", path,
            "--disable-console-interactive"]


def _guidellm_dist(metrics, key, scale):
    """GuideLLM's StatusDistributionSummary: metrics[key]["successful"] has mean, median and
    percentiles {p50, p99}; scale brings its unit to ms."""
    m = (metrics.get(key) or {}).get("successful") or {}
    pct = m.get("percentiles") or {}
    val = lambda v: None if v is None else float(v) * scale
    return val(m.get("mean")), val(pct.get("p50", m.get("median"))), val(pct.get("p99"))


def guidellm_figures(out_dir):
    doc = json.load(open(os.path.join(out_dir, "benchmarks.json")))
    b = doc["benchmarks"][-1]
    m = b["metrics"]
    out = {}
    for short, key in (("ttft", "time_to_first_token_ms"), ("itl", "inter_token_latency_ms"),
                       ("e2e", "request_latency")):
        scale = 1000.0 if key == "request_latency" else 1.0  # request_latency is in seconds
        out[f"{short}_mean"], out[f"{short}_p50"], out[f"{short}_p99"] = \
            _guidellm_dist(m, key, scale)
    totals = (m.get("request_totals") or {})
    done = float(totals.get("successful", 0)) + float(totals.get("errored", 0))
    # requests_per_second is a distribution of instantaneous rates: completed over duration is
    # the figure the other tools report.
    rps = done / float(b["duration"]) if b.get("duration") else None
    return {
        "requests": done,
        "errors": float(totals.get("errored", 0)),
        "rps": rps,
        **out,
        "isl": _guidellm_dist(m, "prompt_token_count", 1.0)[0],
        "osl": _guidellm_dist(m, "output_token_count", 1.0)[0],
    }
