"""Figures, targets and pages of the side-by-side bench: from the rows run.py measured, the
derived figures per tool and cell (CPU per request with start-up taken off, peak RSS, TTFT and
ITL error against the mock's truth), the PASS/FAIL of each target, a markdown table
(table.md, for docs/benchmarks.md) and a self-contained side-by-side.html (inline SVG, no
network)."""

import html
import json
import os
import statistics

TOOLS = ("convoy", "aiperf", "guidellm")
COLORS = {"convoy": "#1f77b4", "aiperf": "#2ca02c", "guidellm": "#d62728"}


def _overheads(doc):
    """Each tool's start-up and shutdown CPU, from its mock runs: the run's CPU less its
    steady-state CPU per request times its requests (median over its runs), for the targets
    whose server logs no arrivals (nginx, Dynamo)."""
    per_tool = {}
    for row in doc["rows"]:
        f, w = row.get("figures"), row.get("window")
        if not f or not w or not w.get("cpu_s") or not w.get("requests") or \
                not f.get("requests"):
            continue
        steady = w["cpu_s"] / w["requests"]
        per_tool.setdefault(row["tool"], []).append(row["usage"]["cpu_s"] - steady * f["requests"])
    return {t: round(statistics.median(v), 4) for t, v in per_tool.items()}


def _cpu_per_request(row, overhead):
    """Client CPU per request in us with start-up and shutdown left out: on the mock, the CPU
    between the first and the last arrival the mock logged over the requests in between; on
    another target, the run's CPU less the tool's overhead (its mock runs) over its requests.
    None when neither can be read (or the overhead exceeds the run's CPU: a cell too short)."""
    w = row.get("window") or {}
    if w.get("cpu_s") and w.get("requests"):
        return round(w["cpu_s"] * 1e6 / w["requests"], 1), "window"
    n = (row.get("figures") or {}).get("requests") or 0
    cpu = row["usage"]["cpu_s"] - overhead.get(row["tool"], row["usage"]["cpu_s"])
    return (round(cpu * 1e6 / n, 1), "overhead") if n > 0 and cpu > 0 else (None, None)


def derive(doc):
    """Adds row["derived"] to every row with figures."""
    doc["overhead_cpu_s"] = _overheads(doc)
    for row in doc["rows"]:
        f = row.get("figures")
        if not f:
            continue
        cpu, how = _cpu_per_request(row, doc["overhead_cpu_s"])
        # raw: the whole run's CPU (start-up and shutdown included) over its requests.
        d = {"cpu_us_per_request": cpu, "cpu_from": how,
             "cpu_us_per_request_raw": round(row["usage"]["cpu_s"] * 1e6 / f["requests"], 1)
             if f.get("requests") else None,
             "peak_rss_mib": round(row["usage"]["peak_rss_bytes"] / 1048576, 1)}
        osl = f.get("osl")
        if d["cpu_us_per_request"] is not None and osl:
            d["cpu_us_per_token_event"] = round(d["cpu_us_per_request"] / osl, 2)
        t = row.get("truth") or {}
        if t.get("itl_ms") is not None and f.get("itl_p50") is not None:
            # Against the configured step (what the mock was told) ...
            d["itl_p50_error_ms"] = round(abs(f["itl_p50"] - t["itl_ms"]), 3)
            d["itl_p99_error_ms"] = round(abs(f["itl_p99"] - t["itl_ms"]), 3)
        if t.get("emitted_itl_p50_ms") is not None and f.get("itl_p50") is not None:
            # ... and against what it emitted (the same requests' ITL at the server).
            d["itl_p50_error_emitted_ms"] = round(abs(f["itl_p50"] - t["emitted_itl_p50_ms"]), 3)
            d["itl_p99_error_emitted_ms"] = round(abs(f["itl_p99"] - t["emitted_itl_p99_ms"]), 3)
        if t.get("server_ttft_mean_ms") is not None and f.get("ttft_mean") is not None:
            # The same requests, so the difference of the means is what the client added.
            d["ttft_error_ms"] = round(abs(f["ttft_mean"] - t["server_ttft_mean_ms"]), 3)
        isl = row.get("isl_tokenizer") or {}
        if isl.get("isl_mean") is not None:
            d["isl_tokenizer"] = isl["isl_mean"]
        row["derived"] = d


def _row(doc, target, cell, tool):
    for r in doc["rows"]:
        if (r["target"], r["cell"], r["tool"]) == (target, cell, tool) and r.get("derived"):
            return r
    return None


def targets(doc):
    """Item 3's ratios, each {name, value, bound, pass (None: not measured), note}."""
    out = []

    def ratio(name, cell, key, bound, note):
        c, a = _row(doc, "mock", cell, "convoy"), _row(doc, "mock", cell, "aiperf")
        if not c or not a or not a["derived"].get(key) or c["derived"].get(key) is None:
            out.append({"name": name, "value": None, "bound": bound, "pass": None,
                        "note": "not measured in this run (or a tool's start-up varied by more "
                                "than the cell's work)"})
            return
        v = round(c["derived"][key] / a["derived"][key], 3)
        out.append({"name": name, "value": v, "bound": bound, "pass": v <= bound,
                    "note": f"{note}: convoy {c['derived'][key]} vs AIPerf {a['derived'][key]}"})

    ratio("CPU per streamed request, convoy / AIPerf (mock, c16)", "c16",
          "cpu_us_per_request", 0.1, "us per request")
    ratio("CPU per streamed request, convoy / AIPerf (mock, c256)", "c256",
          "cpu_us_per_request", 0.1, "us per request")
    ratio("CPU per token event, convoy / AIPerf (mock, 256-token replies)", "long16",
          "cpu_us_per_token_event", 0.2, "us per event")
    # ITL is held to what the mock emitted (the same requests' ITL at the server): a client
    # that drives the shared cores harder makes the mock itself late, which is no error of the
    # client's. The error against the configured step is shown beside it, not as the target.
    for key, label, info in (("ttft_error_ms", "TTFT", False),
                             ("itl_p50_error_emitted_ms", "ITL p50 (against the emitted ITL)",
                              False),
                             ("itl_p50_error_ms", "ITL p50 (against the configured ITL)", True)):
        c = _row(doc, "mock", "c256", "convoy")
        peers = [r for t in ("aiperf", "guidellm") if (r := _row(doc, "mock", "c256", t))
                 and r["derived"].get(key) is not None]
        name = f"{label} error at c256, convoy / best peer"
        if not c or c["derived"].get(key) is None or not peers:
            out.append({"name": name, "value": None, "bound": 0.5, "pass": None,
                        "info": info, "note": "not measured in this run"})
            continue
        best = min(peers, key=lambda r: r["derived"][key])
        v = round(c["derived"][key] / max(best["derived"][key], 1e-3), 3)
        out.append({"name": name, "value": v, "bound": 0.5, "pass": None if info else v <= 0.5,
                    "info": info,
                    "note": ("shown, not the target (the mock's own lateness counts as the "
                             "client's here): " if info else "") +
                            f"convoy {c['derived'][key]} ms vs {best['tool']} "
                            f"{best['derived'][key]} ms"})
    out.append(fleet(doc))
    return out


FLEET_BOUND_MS = 1.0  # a rung is sustained while the ITL p99 error stays under this


def fleet(doc):
    """The client-fleet figure: per tool, the highest rung of the fN ladder (mock) at which its
    ITL p99 is within 1 ms of the mock's configured step (the issue's "exact timing"); convoy's
    over AIPerf's, at least 10. The same against the p99 the mock emitted is in the note."""
    name = "client fleet: highest concurrency with ITL p99 error < 1 ms, convoy / AIPerf"
    best, best_emitted = {}, {}
    for r in doc["rows"]:
        c = r["cell"]
        if r["target"] != "mock" or not (c.startswith("f") and c[1:].isdigit()):
            continue
        d = r.get("derived") or {}
        for key, into in (("itl_p99_error_ms", best), ("itl_p99_error_emitted_ms",
                                                        best_emitted)):
            into.setdefault(r["tool"], 0)
            if d.get(key) is not None and d[key] < FLEET_BOUND_MS:
                into[r["tool"]] = max(into[r["tool"]], int(c[1:]))
    emitted = f"; against the emitted p99: {best_emitted}" if best_emitted else ""
    if not best.get("convoy") or "aiperf" not in best:
        note = ("not measured in this run (SIDE_CELLS=\"f4 f16 f64 f256 f1024\" runs the "
                "ladder)" if not best else f"highest rungs within 1 ms: {best}{emitted}")
        return {"name": name, "value": None, "bound": 10, "pass": None, "note": note}
    if best["aiperf"] == 0:
        # AIPerf sustained no rung: convoy's rung over the lowest one run is a floor.
        lowest = min(int(r["cell"][1:]) for r in doc["rows"] if r["target"] == "mock" and
                     r["cell"].startswith("f") and r["cell"][1:].isdigit())
        v = round(best["convoy"] / lowest, 3)
        return {"name": name, "value": v, "bound": 10, "pass": v >= 10 or None,
                "note": f"highest rungs within 1 ms: {best} (AIPerf sustained none, not even "
                        f"f{lowest}: the ratio is at least this){emitted}"}
    v = round(best["convoy"] / best["aiperf"], 3)
    return {"name": name, "value": v, "bound": 10, "pass": v >= 10,
            "note": f"highest rungs within 1 ms: {best} (the ladder's top bounds convoy's)"
                    f"{emitted}"}


def _result(check):
    if check.get("info"):
        return "info"
    return "n/a" if check["pass"] is None else ("PASS" if check["pass"] else "FAIL")


def _bound(check):
    """The bound as text: the fleet figure is a floor, every other one a ceiling."""
    return f"≥ {check['bound']}" if check["name"].startswith("client fleet") else \
        f"≤ {check['bound']}"


def _fmt(v, digits=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return str(v)


COLUMNS = (("req/s", "figures", "rps", 1), ("TTFT p50", "figures", "ttft_p50", 2),
           ("TTFT p99", "figures", "ttft_p99", 2), ("ITL p50", "figures", "itl_p50", 3),
           ("ITL p99", "figures", "itl_p99", 3), ("e2e p50", "figures", "e2e_p50", 1),
           ("e2e p99", "figures", "e2e_p99", 1), ("ISL", "figures", "isl", 1),
           ("OSL", "figures", "osl", 1), ("CPU µs/req", "derived", "cpu_us_per_request", 1),
           ("CPU µs/req raw", "derived", "cpu_us_per_request_raw", 1),
           ("peak RSS MiB", "derived", "peak_rss_mib", 1),
           ("TTFT err ms", "derived", "ttft_error_ms", 3),
           ("ITL p50 err ms", "derived", "itl_p50_error_ms", 3),
           ("mock emitted ITL p50", "truth", "emitted_itl_p50_ms", 3),
           ("ITL p50 err vs emitted", "derived", "itl_p50_error_emitted_ms", 3),
           ("ISL (tokenizer)", "derived", "isl_tokenizer", 1))


def markdown(doc, checks):
    lines = [f"Run {doc['date']}, load average {' '.join(doc.get('load_average_start', []))} at "
             f"the start, {' '.join(doc['load_average'])} at the end, scale "
             f"{doc['scale']}, mock ITL {doc['itl_ms']} ms, "
             f"{doc.get('wall_s', 0) / 60:.1f} minutes. Times in ms.", "",
             "| target | cell | tool | " + " | ".join(c[0] for c in COLUMNS) + " |",
             "|---|---|---|" + "---:|" * len(COLUMNS)]
    for r in doc["rows"]:
        if not r.get("figures"):
            lines.append(f"| {r['target']} | {r['cell']} | {r['tool']} | "
                         f"{html.escape(r.get('error', 'no figures'))} |")
            continue
        vals = [_fmt((r.get(src) or {}).get(key), digits) for _, src, key, digits in COLUMNS]
        lines.append(f"| {r['target']} | {r['cell']} | {r['tool']} | " + " | ".join(vals) + " |")
    lines += ["", "| target (issue 36, item 3) | value | bound | result | note |",
              "|---|---:|---:|---|---|"]
    for c in checks:
        res = _result(c)
        lines.append(f"| {c['name']} | {_fmt(c['value'], 3)} | {_bound(c)} | {res} | "
                     f"{c['note']} |")
    return "\n".join(lines) + "\n"


def _bars(doc, target, src, key, title, unit):
    """One grouped bar chart (cells on x, a bar per tool) as inline SVG."""
    cells = []
    for r in doc["rows"]:
        if r["target"] == target and r["cell"] not in cells:
            cells.append(r["cell"])
    vals = {(r["cell"], r["tool"]): (r.get(src) or {}).get(key) for r in doc["rows"]
            if r["target"] == target}
    top = max([v for v in vals.values() if isinstance(v, (int, float))] + [1e-9])
    w, h, pad = 120 * max(len(cells), 1) + 60, 220, 40
    bw = 100 / len(TOOLS)
    parts = [f'<svg class="chart" width="{w}" height="{h + 40}" role="img" '
             f'aria-label="{html.escape(title)}">',
             f'<text x="4" y="14" font-size="13">{html.escape(title)} ({unit})</text>',
             f'<line x1="{pad}" y1="{h}" x2="{w}" y2="{h}" stroke="#999"/>']
    for i, cell in enumerate(cells):
        x0 = pad + i * 120 + 10
        parts.append(f'<text x="{x0 + 50}" y="{h + 16}" font-size="12" '
                     f'text-anchor="middle">{html.escape(cell)}</text>')
        for j, tool in enumerate(TOOLS):
            v = vals.get((cell, tool))
            if not isinstance(v, (int, float)) or v < 0:
                continue
            bh = (h - 30) * v / top
            x = x0 + j * bw
            parts.append(f'<rect class="bar" data-tool="{tool}" x="{x:.1f}" y="{h - bh:.1f}" '
                         f'width="{bw - 4:.1f}" height="{bh:.1f}" fill="{COLORS[tool]}">'
                         f'<title>{tool} {cell}: {v:.3f} {unit}</title></rect>')
            parts.append(f'<text x="{x + (bw - 4) / 2:.1f}" y="{h - bh - 3:.1f}" font-size="9" '
                         f'text-anchor="middle">{_fmt(float(v), 1)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def page(doc, checks, table_md):
    targets_seen = []
    for r in doc["rows"]:
        if r["target"] not in targets_seen:
            targets_seen.append(r["target"])
    legend = " ".join(f'<span style="color:{COLORS[t]}">&#9632; {t}</span>' for t in TOOLS)
    body = [f"<h1>convoy, AIPerf and GuideLLM side by side</h1><p>{legend}</p>"]
    charts = (("figures", "rps", "requests/s", "req/s"),
              ("derived", "cpu_us_per_request", "client CPU per request", "µs"),
              ("derived", "peak_rss_mib", "peak RSS of the client", "MiB"),
              ("figures", "ttft_p50", "TTFT p50", "ms"),
              ("figures", "itl_p50", "ITL p50", "ms"),
              ("derived", "ttft_error_ms", "TTFT error against the mock", "ms"),
              ("derived", "itl_p50_error_ms", "ITL p50 error against the mock's configured ITL",
               "ms"),
              ("derived", "itl_p50_error_emitted_ms", "ITL p50 error against the ITL the mock "
               "emitted", "ms"),
              ("derived", "isl_tokenizer", "ISL sent, counted by one tokenizer", "tokens"))
    for target in targets_seen:
        body.append(f'<h2 id="target-{html.escape(target)}">target: {html.escape(target)}</h2>')
        for src, key, title, unit in charts:
            body.append(_bars(doc, target, src, key, title, unit))
    body.append("<h2>Targets</h2><ul>")
    for c in checks:
        res = _result(c)
        body.append(f'<li class="check">{html.escape(c["name"])}: {_fmt(c["value"], 3)} '
                    f'(bound {c["bound"]}) <b>{res}</b>: {html.escape(c["note"])}</li>')
    body.append("</ul><h2>Table</h2><pre>" + html.escape(table_md) + "</pre>")
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>side by side</title>"
            "<style>body{font-family:sans-serif;margin:16px}svg.chart{margin:6px;"
            "border:1px solid #eee}pre{font-size:11px}</style></head><body>"
            + "".join(body) + "</body></html>\n")


def finish(doc, out):
    derive(doc)
    checks = targets(doc)
    doc["targets"] = checks
    table = markdown(doc, checks)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(table)
    with open(os.path.join(out, "side-by-side.html"), "w") as f:
        f.write(page(doc, checks, table))
    print(table)
    for c in checks:
        res = _result(c)
        print(f"(k) {c['name']}: {_fmt(c['value'], 3)} (bound {c['bound']}) {res}")
    print(f"wrote {out}/results.json, table.md, side-by-side.html")
