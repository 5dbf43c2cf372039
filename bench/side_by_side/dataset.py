"""The one dataset of the side-by-side bench, written once and given to each tool in its format.

Every prompt is plain ASCII of exactly `prompt_bytes` bytes (convoy-mock counts one token per 4
bytes, so its ISL is fixed), unique from its first word (no two conversations share a KV block on
the mock). Each tool reads the same bytes:

  convoy.jsonl              convoy's jsonl rows: {"conversation_id", "turns": [{"text", "max_tokens"}]}
  aiperf_single_turn.jsonl  AIPerf's single_turn rows: {"text", "output_length"}
  aiperf_multi_turn.jsonl   AIPerf's multi_turn rows: {"session_id", "turns": [{"text", "output_length"}]}
  guidellm.jsonl            GuideLLM's file dataset: {"prompt", "output_tokens_count"} per row

(field names from each tool's own source: AIPerf's aiperf/dataset/loader/models.py SingleTurn,
MultiTurn; GuideLLM's column mapper reads `prompt` and `output_tokens_count`).
"""

import json
import os

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee "
         "zulu").split()


def prompt_text(conversation: int, turn: int, prompt_bytes: int) -> str:
    """A deterministic prompt of exactly prompt_bytes ASCII bytes, unique per (conversation, turn)."""
    head = f"c{conversation}t{turn} "
    words = []
    i = conversation * 7 + turn * 3
    size = len(head)
    while size < prompt_bytes:
        w = WORDS[i % len(WORDS)]
        words.append(w)
        size += len(w) + 1
        i += 1
    text = (head + " ".join(words))[:prompt_bytes]
    return text + "x" * (prompt_bytes - len(text))


def write_all(folder: str, conversations: int, turns: int, prompt_bytes: int,
              output_tokens: int) -> dict:
    """Writes every format into folder; returns {format name: path}."""
    os.makedirs(folder, exist_ok=True)
    paths = {name: os.path.join(folder, f"{name}.jsonl") for name in
             ("convoy", "aiperf_single_turn", "aiperf_multi_turn", "guidellm")}
    files = {name: open(path, "w", encoding="ascii") for name, path in paths.items()}
    try:
        for c in range(conversations):
            texts = [prompt_text(c, t, prompt_bytes) for t in range(turns)]
            files["convoy"].write(json.dumps({
                "conversation_id": f"c{c}",
                "turns": [{"text": x, "max_tokens": output_tokens} for x in texts]}) + "\n")
            files["aiperf_multi_turn"].write(json.dumps({
                "session_id": f"c{c}",
                "turns": [{"text": x, "output_length": output_tokens} for x in texts]}) + "\n")
            # Single-turn formats get the first turn of every conversation.
            files["aiperf_single_turn"].write(
                json.dumps({"text": texts[0], "output_length": output_tokens}) + "\n")
            files["guidellm"].write(
                json.dumps({"prompt": texts[0], "output_tokens_count": output_tokens}) + "\n")
    finally:
        for f in files.values():
            f.close()
    return paths
