"""scripts/bench k: the same workload through convoy, AIPerf and GuideLLM, one after another,
against each target (docs/benchmarks.md, (k)). Writes DIR/results.json, DIR/table.md and
DIR/side-by-side.html; prints the table and the targets' PASS/FAIL.

Env (all optional): SIDE_TARGETS ("mock nginx dynamo"), SIDE_CELLS (every target's cells;
default per target: DEFAULT_CELLS; long16: 256-token replies 1 ms apart at concurrency 16;
fN: a rung of the client-fleet ladder), SIDE_CELLS_MOCK / _NGINX / _DYNAMO (one target's),
SIDE_TOOLS ("convoy aiperf guidellm"), SIDE_CELL_S (8: seconds each tool sends per cell),
SIDE_SCALE (1.0: multiplies SIDE_CELL_S and the Poisson rate), SIDE_ITL_MS (5: the mock's
decode step), SIDE_OUTPUT_TOKENS (32), SIDE_PROMPT_BYTES (512), SIDE_TOKENIZER (qwen3: the
`scripts/tokenizers` name that counts the ISL each tool sent to the mock; none: not counted),
SIDE_MOCK_BIN (the convoy-mock binary; default the build's).
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import dataset  # noqa: E402
import measure  # noqa: E402
import report  # noqa: E402
import servers  # noqa: E402
import tools  # noqa: E402


def env_list(name, default):
    return os.environ.get(name, default).split()


# The cells each target runs by default: every cell on the mock (where the truth is known); two
# on nginx and on Dynamo, so that a full run takes about 25 minutes on 2 shared cores (each run
# of a peer starts in 30 to 110 s there). SIDE_CELLS, or SIDE_CELLS_<TARGET>, choose others.
DEFAULT_CELLS = {"mock": "c16 c256 mt32 poisson long16", "nginx": "c16 c256",
                 "dynamo": "c16 mt32"}


def cells(scale, target="mock"):
    """The workloads: single-turn at concurrency 16 and 256, 4-turn conversations with live
    history at concurrency 32, a Poisson rate (capped at concurrency 256)."""
    seconds = float(os.environ.get("SIDE_CELL_S", "8")) * scale
    out_tokens = int(os.environ.get("SIDE_OUTPUT_TOKENS", "32"))
    base = {"duration_s": round(seconds, 1), "requests": None, "output_tokens": out_tokens,
            "rate": None}
    all_cells = {
        "c16": {**base, "name": "c16", "mode": "concurrency", "concurrency": 16, "turns": 1},
        "c256": {**base, "name": "c256", "mode": "concurrency", "concurrency": 256, "turns": 1},
        "mt32": {**base, "name": "mt32", "mode": "concurrency", "concurrency": 32, "turns": 4},
        "poisson": {**base, "name": "poisson", "mode": "rate", "concurrency": 256, "turns": 1,
                    "rate": round(100 * scale, 1)},
        # Long streams: 256 one-token events per reply, 1 ms apart (per-event cost, item 3).
        "long16": {**base, "name": "long16", "mode": "concurrency", "concurrency": 16,
                   "turns": 1, "output_tokens": 256, "itl_ms": 1.0},
    }
    # fN: the client-fleet ladder's rungs (single-turn at concurrency N; not in the default set:
    # SIDE_CELLS="f16 f64 f256 f1024" runs the ladder item 3's fleet figure reads).
    chosen = env_list(f"SIDE_CELLS_{target.upper()}",
                      os.environ.get("SIDE_CELLS", DEFAULT_CELLS.get(target, "c16")))
    for name in chosen:
        if name.startswith("f") and name[1:].isdigit():
            all_cells[name] = {**base, "name": name, "mode": "concurrency",
                               "concurrency": int(name[1:]), "turns": 1}
    return [all_cells[c] for c in chosen]


def start_target(name, root, build, work, itl_ms, request_log=None):
    if name == "mock":
        binary = os.environ.get("SIDE_MOCK_BIN") or os.path.join(build, "mock", "convoy-mock")
        return servers.Mock(binary, itl_ms, os.path.join(work, f"mock-{time.monotonic_ns()}.log"),
                            request_log=request_log)
    if name == "nginx":
        return servers.Nginx(root, os.path.join(work, "nginx"))
    if name == "dynamo":
        return servers.Dynamo(root)
    raise ValueError(f"unknown target {name} (mock, nginx, dynamo)")


class Bench:
    def __init__(self, args):
        self.root, self.build, self.out = args.root, args.build, args.out
        self.work = os.path.join(self.out, "runs")
        os.makedirs(self.work, exist_ok=True)
        self.scale = float(os.environ.get("SIDE_SCALE", "1"))
        self.itl_ms = float(os.environ.get("SIDE_ITL_MS", "5"))
        self.tools = env_list("SIDE_TOOLS", "convoy aiperf guidellm")
        self.venvs = {}
        for t in self.tools:
            if t != "convoy":
                self.venvs[t] = subprocess.run(
                    [os.path.join(self.root, "scripts", "lib", "peers.sh"), "install", t],
                    capture_output=False, stdout=subprocess.PIPE, text=True,
                    check=True).stdout.strip().splitlines()[-1]
        self.tokenizer = subprocess.run([os.path.join(self.root, "scripts", "tokenizers"),
                                         "qwen3"], stdout=subprocess.PIPE, text=True,
                                        check=True).stdout.strip()
        self.env = dict(os.environ)
        self.env["PATH"] = (f"{os.path.join(self.build, 'controller')}:"
                            f"{os.path.join(self.build, 'worker')}:{self.env['PATH']}")
        self.env.pop("HF_HUB_OFFLINE", None)  # AIPerf reads a local tokenizer folder online only
        self.rows = []

    def write_data(self, conversations):
        """One dataset, every format: single-turn files from turn 0 of each conversation, the
        multi-turn files with all four turns (the same bytes)."""
        pb = int(os.environ.get("SIDE_PROMPT_BYTES", "512"))
        ot = int(os.environ.get("SIDE_OUTPUT_TOKENS", "32"))
        self.data = {1: dataset.write_all(os.path.join(self.out, "data1"), conversations, 1,
                                          pb, ot),
                     4: dataset.write_all(os.path.join(self.out, "data4"), conversations // 4,
                                          4, pb, ot),
                     "long": dataset.write_all(os.path.join(self.out, "data-long"),
                                               conversations // 8, 1, pb, 256)}
        with open(os.path.join(self.out, "data4", "guidellm.jsonl"), "w") as f:
            # GuideLLM's column mapper reads turns from suffixed columns (prompt_0, prompt_1..).
            for c in range(conversations // 4):
                row = {}
                for t in range(4):
                    row[f"prompt_{t}"] = dataset.prompt_text(c, t, pb)
                    row[f"output_tokens_count_{t}"] = ot
                f.write(json.dumps(row) + "\n")

    def command(self, tool, cell, url, model, out):
        files = self.data["long" if cell["output_tokens"] > 32 else cell["turns"]]
        if tool == "convoy":
            return tools.convoy_command(os.path.join(self.build, "controller", "convoy"), cell,
                                        url, model, files["convoy"], out)
        if tool == "aiperf":
            kind = "aiperf_multi_turn" if cell["turns"] > 1 else "aiperf_single_turn"
            return tools.aiperf_command(self.venvs[tool], cell, url, model, files[kind], out,
                                        self.tokenizer)
        return tools.guidellm_command(self.venvs[tool], cell, url, model, files["guidellm"],
                                      out, self.tokenizer)

    def run_tool(self, target_name, target, tool, cell):
        tag = f"{target_name}-{cell['name']}-{tool}"
        out = os.path.join(self.work, tag)
        argv = self.command(tool, cell, target.url, target.model, out)
        print(f"side-by-side: {tag}", file=sys.stderr, flush=True)
        usage = measure.run_measured(argv, out + ".log", env=self.env,
                                     timeout_s=(cell["duration_s"] or 10) * 6 + 240)
        row = {"target": target_name, "cell": cell["name"], "tool": tool,
               "usage": usage.as_dict(), "figures": None, "truth": target.truth()}
        log = getattr(target, "request_log", None)
        if log:
            row["request_log"] = log
            row["window"] = traffic_window(log, usage.timeline)
        reader = {"convoy": tools.convoy_figures, "aiperf": tools.aiperf_figures,
                  "guidellm": tools.guidellm_figures}[tool]
        try:
            row["figures"] = reader(out)
        except (OSError, KeyError, ValueError, IndexError) as e:
            row["error"] = f"exit {usage.returncode}: no figures ({e}); see {out}.log"
            print(f"side-by-side: {tag}: {row['error']}", file=sys.stderr)
        return row

    def run_cell(self, target_name, shared, cell, tool):
        """One tool through one cell: on the mock, a fresh mock logging every request (its
        arrivals bound the run's traffic; its bodies give the ISL the tool sent)."""
        if shared is not None:
            return self.run_tool(target_name, shared, tool, cell)
        log = os.path.join(self.work, f"{target_name}-{cell['name']}-{tool}.requests.jsonl")
        target = start_target("mock", self.root, self.build, self.work,
                              cell.get("itl_ms", self.itl_ms), request_log=log)
        try:
            return self.run_tool(target_name, target, tool, cell)
        finally:
            target.stop()

    def count_isl(self):
        """The ISL each tool sent, by one tokenizer (isl_count.py), into row["isl_tokenizer"];
        the request logs are removed once counted."""
        logs = [r["request_log"] for r in self.rows if r.get("request_log")]
        name = os.environ.get("SIDE_TOKENIZER", "qwen3")
        if logs and name != "none":
            try:
                py = subprocess.run([os.path.join(self.root, "scripts", "tokenizers"),
                                     "--reference"], stdout=subprocess.PIPE, text=True,
                                    check=True).stdout.strip()
                folder = subprocess.run([os.path.join(self.root, "scripts", "tokenizers"),
                                         name], stdout=subprocess.PIPE, text=True,
                                        check=True).stdout.strip()
                counted = json.loads(subprocess.run(
                    [py, os.path.join(HERE, "isl_count.py"), folder, *logs],
                    stdout=subprocess.PIPE, text=True, check=True).stdout)
                for r in self.rows:
                    if counted.get(r.get("request_log")):
                        r["isl_tokenizer"] = {**counted[r["request_log"]], "tokenizer": name}
            except (subprocess.SubprocessError, OSError, ValueError) as e:
                print(f"side-by-side: ISL not counted by a tokenizer: {e}", file=sys.stderr)
        for log in logs:
            if os.path.exists(log) and not os.environ.get("SIDE_KEEP_REQUEST_LOGS"):
                os.remove(log)

    def run(self):
        # Rows enough for either peer at c256 for an 8 s cell on this host (AIPerf loads every row
        # before its first request: fewer rows, a shorter start-up); a tool that runs out (convoy
        # at c256) starts again from the first row (the mock then finds the prompt cached,
        # which the TTFT error, measured against the mock's own TTFT of the same requests,
        # allows for).
        started = time.monotonic()
        load_start = open("/proc/loadavg").read().split()[:3]
        self.write_data(int(2000 * max(self.scale, 0.5)))
        for target_name in env_list("SIDE_TARGETS", "mock nginx dynamo"):
            shared = None
            try:
                if target_name != "mock":
                    shared = start_target(target_name, self.root, self.build, self.work,
                                          self.itl_ms)
            except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                print(f"side-by-side: target {target_name} skipped: {e}", file=sys.stderr)
                continue
            try:
                failed_rung = {}  # tool -> the fleet ladder's first rung it did not sustain
                for cell in cells(self.scale, target_name):
                    for tool in self.tools:
                        if is_rung(cell) and tool in failed_rung:
                            # Above a rung it could not sustain: not run (the ladder is
                            # monotone: more streams on the same cores only add delay).
                            self.rows.append({"target": target_name, "cell": cell["name"],
                                              "tool": tool, "figures": None,
                                              "error": f"not run: {failed_rung[tool]} not "
                                                       "sustained"})
                            continue
                        row = self.run_cell(target_name, shared, cell, tool)
                        self.rows.append(row)
                        if is_rung(cell) and not sustained(row):
                            failed_rung[tool] = cell["name"]
            finally:
                if shared is not None:
                    shared.stop()
        self.count_isl()
        doc = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "load_average": open("/proc/loadavg").read().split()[:3],
               "load_average_start": load_start, "scale": self.scale, "itl_ms": self.itl_ms,
               "rows": self.rows,
               "wall_s": round(time.monotonic() - started, 1)}
        report.finish(doc, self.out)
        return doc


def is_rung(cell):
    """A rung of the client-fleet ladder (fN)."""
    return cell["name"].startswith("f") and cell["name"][1:].isdigit()


def sustained(row):
    """Whether a rung held its ITL p99 within FLEET_BOUND_MS of the mock's configured step."""
    f, t = row.get("figures") or {}, row.get("truth") or {}
    if f.get("itl_p99") is None or t.get("itl_ms") is None:
        return False
    return abs(f["itl_p99"] - t["itl_ms"]) < report.FLEET_BOUND_MS


def traffic_window(log_path, timeline):
    """The run's traffic as the server saw it: from the first request's arrival to the last's
    (the mock's log, ms), the requests that arrived after the first, and the CPU the tool spent
    in between (start-up before and shutdown after are outside it). None when too short."""
    arrivals = []
    try:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                if str(row.get("target", "")).startswith("/v1/"):
                    arrivals.append(row["ts_ms"] / 1000.0)
    except OSError:
        return None
    if len(arrivals) < 3:
        return None
    arrivals.sort()
    cpu = measure.cpu_between(timeline, arrivals[0], arrivals[-1])
    return {"seconds": round(arrivals[-1] - arrivals[0], 3), "requests": len(arrivals) - 1,
            "cpu_s": None if cpu is None else round(cpu, 4)}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--root", required=True)
    p.add_argument("--build", required=True)
    p.add_argument("--out", required=True)
    Bench(p.parse_args()).run()


if __name__ == "__main__":
    main()
