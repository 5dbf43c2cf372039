"""The ISL each tool sent, counted by one tokenizer: reads convoy-mock's request logs
(--log-requests, one JSON line per request: docs/mock.md) and counts, for every chat request,
the tokens of every message's text (system, user and the assistant history a multi-turn tool
resent) by the tokenizer.json given. The chat template's framing is not counted: the server
renders it, and it adds the same tokens whatever the tool (docs/datasets.md, count_chat_template).

Runs in the Python of `scripts/tokenizers --reference` (Hugging Face `tokenizers`, pinned):
  python isl_count.py TOKENIZER_DIR LOG... prints {LOG: {"requests", "isl_mean", "isl_p50",
  "isl_max"}} as JSON on stdout (a log with no chat request maps to null).
"""

import json
import os
import sys

from tokenizers import Tokenizer


def _texts(body):
    """The text parts of a chat request's messages (a string content, or its text parts)."""
    for m in body.get("messages") or []:
        c = m.get("content")
        if isinstance(c, str):
            yield c
        elif isinstance(c, list):
            for part in c:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    yield part["text"]


def count_log(tok, path, cache):
    """The tokens of each chat request in one log: {requests, isl_mean, isl_p50, isl_max}."""
    counts = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a line cut short when the mock stopped
            body = row.get("body")
            if not row.get("target", "").startswith("/v1/chat/completions") or \
                    not isinstance(body, dict):
                continue
            n = 0
            for text in _texts(body):
                if text not in cache:
                    cache[text] = len(tok.encode(text, add_special_tokens=False).ids)
                n += cache[text]
            counts.append(n)
    if not counts:
        return None
    counts.sort()
    return {"requests": len(counts), "isl_mean": round(sum(counts) / len(counts), 2),
            "isl_p50": counts[len(counts) // 2], "isl_max": counts[-1]}


def main():
    folder, logs = sys.argv[1], sys.argv[2:]
    path = folder if folder.endswith(".json") else os.path.join(folder, "tokenizer.json")
    tok = Tokenizer.from_file(path)
    cache = {}  # text -> tokens: every tool resends the same prompts
    json.dump({log: count_log(tok, log, cache) for log in logs}, sys.stdout)


if __name__ == "__main__":
    main()
