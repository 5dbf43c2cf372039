#!/usr/bin/env python3
"""The reference token ids: Hugging Face `tokenizers` (the Python package, pinned by
scripts/tokenizers --reference) encodes each document of a corpus file.

Usage: tokenizer_ids.py TOKENIZER_JSON CORPUS_JSONL OUT [DECODED_JSONL]
  CORPUS_JSONL   one JSON string a line (a document: any text, newlines escaped)
  OUT            one line per document: its ids, space-separated
                 (encode(doc, add_special_tokens=False): specials in the text are recognised)
  DECODED_JSONL  one JSON string a line: decode(ids, skip_special_tokens=False) of each
Run it with the virtual environment's python that `scripts/tokenizers --reference` prints.
"""
import json
import sys

from tokenizers import Tokenizer


def main() -> int:
    if len(sys.argv) not in (4, 5):
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
    if len(sys.argv) == 5:
        texts = tok.decode_batch([e.ids for e in encodings], skip_special_tokens=False)
        with open(sys.argv[4], "w", encoding="utf-8") as out:
            for t in texts:
                out.write(json.dumps(t, ensure_ascii=True))
                out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
