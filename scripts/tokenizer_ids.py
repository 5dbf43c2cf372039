#!/usr/bin/env python3
"""The reference token ids: Hugging Face `tokenizers` (the Python package, pinned by
scripts/tokenizers --reference) encodes each document of a corpus file.

Usage: tokenizer_ids.py TOKENIZER_JSON CORPUS_JSONL OUT
  CORPUS_JSONL  one JSON string a line (a document: any text, newlines escaped)
  OUT           one line per document: its ids, space-separated
                (encode(doc, add_special_tokens=False): specials in the text are recognised)
Run it with the virtual environment's python that `scripts/tokenizers --reference` prints.
"""
import json
import sys

from tokenizers import Tokenizer


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    tok = Tokenizer.from_file(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        docs = [json.loads(line) for line in f if line.strip()]
    encodings = tok.encode_batch(docs, add_special_tokens=False)
    with open(sys.argv[3], "w", encoding="ascii") as out:
        for enc in encodings:
            out.write(" ".join(map(str, enc.ids)))
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
