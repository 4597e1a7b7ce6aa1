"""What one call of opgen.text.bpe_encode costs for a tokenizer of Gemma 3's size.

The op takes the whole tokenizer with every call (no hidden caches), so each call builds its
tables: the vocabulary hash (262,144 pieces), the merge table (hundreds of thousands of id
triples, each checked against the pieces) and the added-token trie. This script measures that
cost on a synthetic tokenizer of Gemma 3's size (the real tokenizer.json cannot be fetched
here): 4 specials, the 256 byte pieces, ~8,000 single characters, pieces joined from earlier
ones up to 262,144, and every (left, right) split of each piece whose halves are pieces as a
merge (what transformers' converter generates for Gemma), ordered by the merged piece's id.

It reports, as medians over repeated calls:
  native: the admitted kernel called directly from C++ (compiled as the registry builds it),
          with no texts (the tables alone) and with 1 and 32 sentences;
  python: the same kernel called through opgen.verify.ffi from Python, which also converts the
          262,144 strings and the merges into C arrays on every call.

    python scripts/bench_bpe_tables.py [--vocab 262144] [--repeat 7]
"""

from __future__ import annotations

import argparse
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SENTENCE = "task: search result | query: Which city is the capital of France? The capital of France is Paris."

HARNESS = r"""
#include "opgen_kernel.hpp"
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>
namespace opgen::kernels {
std::vector<int64_t> opgen_text_bpe_encode__gemma(const std::vector<std::string>&, const std::vector<int64_t>&,
    const std::vector<int64_t>&, const std::vector<std::string>&, bool, bool, int64_t);
}
static double median_ms(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
int main(int argc, char** argv) {
  std::ifstream in(argv[1], std::ios::binary);
  auto u32 = [&]() { uint32_t x; in.read(reinterpret_cast<char*>(&x), 4); return x; };
  std::vector<std::string> vocab(u32());
  for (auto& p : vocab) { p.resize(u32()); in.read(&p[0], p.size()); }
  std::vector<int64_t> merges(u32());
  for (auto& m : merges) m = u32();
  std::vector<int64_t> added(u32());
  for (auto& a : added) a = u32();
  const std::string sentence = argv[2];
  const int repeat = std::stoi(argv[3]);
  for (size_t batch : {size_t(0), size_t(1), size_t(32)}) {
    std::vector<std::string> texts(batch, sentence);
    std::vector<double> times;
    size_t out = 0;
    for (int r = 0; r < repeat; ++r) {
      const std::clock_t t0 = std::clock();  // CPU time: the figure stays meaningful on a busy machine
      out += opgen::kernels::opgen_text_bpe_encode__gemma(vocab, merges, added, texts, true, true, 2048).size();
      times.push_back(1000.0 * static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC);
    }
    std::printf("native  batch %2zu: %8.2f ms CPU per call (median of %d; %zu ints out)\n", batch, median_ms(times),
                repeat, out / repeat);
  }
}
"""


def synthetic_tokenizer(size: int, seed: int = 0) -> tuple[list[str], list[int], list[int]]:
    rng = random.Random(seed)
    vocab = ["<pad>", "<eos>", "<bos>", "<unk>"] + [f"<0x{b:02X}>" for b in range(256)]
    added = ["<start_of_turn>", "<end_of_turn>"] + [f"<unused{i}>" for i in range(6000)]
    chars = [chr(c) for c in range(0x21, 0x7F)] + ["\u2581"] + [chr(c) for c in range(0xC0, 0x250)] + \
        [chr(c) for c in range(0x4E00, 0x4E00 + 7000)]
    vocab += added + chars
    seen = set(vocab)
    short = len(vocab)  # pieces joined from the shorter, earlier ones, as BPE training does
    while len(vocab) < size:
        left = vocab[rng.randrange(4 + 256 + len(added), len(vocab))]
        right = vocab[rng.randrange(4 + 256 + len(added), min(len(vocab), short + 20000))]
        piece = ("\u2581" if rng.random() < 0.3 and not left.startswith("\u2581") else "") + left + right
        if len(piece) <= 16 and piece not in seen:
            seen.add(piece)
            vocab.append(piece)
    ids = {p: i for i, p in enumerate(vocab)}
    merges: list[int] = []
    for i, piece in enumerate(vocab[4 + 256 + len(added):], start=4 + 256 + len(added)):
        for k in range(1, len(piece)):
            a, b = piece[:k], piece[k:]
            if a in ids and b in ids:
                merges += [ids[a], ids[b], i]
    return vocab, merges, [ids[a] for a in added]


def native(vocab: list[str], merges: list[int], added: list[int], kernel_source: str, repeat: int) -> None:
    from opgen.project import PACKAGE_ROOT

    with tempfile.TemporaryDirectory(prefix="opgen-bpe-bench-") as tmp:
        d = Path(tmp)
        (d / "kernel.cpp").write_text(kernel_source)
        (d / "main.cpp").write_text(HARNESS)
        blob = bytearray(struct.pack("<I", len(vocab)))
        for p in vocab:
            b = p.encode("utf-8")
            blob += struct.pack("<I", len(b)) + b
        blob += struct.pack("<I", len(merges)) + struct.pack(f"<{len(merges)}I", *merges)
        blob += struct.pack("<I", len(added)) + struct.pack(f"<{len(added)}I", *added)
        (d / "tok.bin").write_bytes(bytes(blob))
        include = PACKAGE_ROOT / "opgen" / "runtime"
        subprocess.run(["g++", "-std=c++17", "-O3", "-march=native", f"-I{include}", "main.cpp", "kernel.cpp", "-o",
                        "bench"], cwd=d, check=True)
        subprocess.run([str(d / "bench"), str(d / "tok.bin"), SENTENCE, str(repeat)], check=True)


def python_ffi(vocab: list[str], merges: list[int], added: list[int], repeat: int) -> None:
    import ctypes

    from opgen.gate.admission import build_job
    from opgen.build.cpp import build
    from opgen.verify.ffi import Kernel
    from opgen.project import PACKAGE_ROOT
    from opgen.registry import Registry
    from opgen.spec.model import load_all

    entry = Registry(PACKAGE_ROOT / "generated").get("opgen.text.bpe_encode", "gemma", "cpu-cpp")
    spec = load_all(PACKAGE_ROOT / "specs")["opgen.text.bpe_encode"]
    built = build([build_job(spec, spec.overload("gemma"), entry.file("kernel").read_text())])[0]
    kernel = Kernel(ctypes.CDLL(str(built.library)), entry.signature["c_symbol"], spec.overload("gemma").sig)
    for batch in (0, 1):
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            kernel([vocab, merges, added, [SENTENCE] * batch, True, True, 2048])
            times.append((time.perf_counter() - t0) * 1000)
        print(f"python  batch {batch:2d}: {statistics.median(times):8.2f} ms per call through opgen.verify.ffi")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab", type=int, default=262144)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    from opgen.project import PACKAGE_ROOT
    from opgen.registry import Registry

    entry = Registry(PACKAGE_ROOT / "generated").get("opgen.text.bpe_encode", "gemma", "cpu-cpp")
    if entry is None:
        print("opgen.text.bpe_encode gemma is not admitted; run scripts/record_answers.py "
              "opgen.text.bpe_encode__gemma", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    vocab, merges, added = synthetic_tokenizer(args.vocab)
    print(f"synthetic tokenizer: {len(vocab)} pieces, {len(merges) // 3} merges, {len(added)} added tokens "
          f"(made in {time.perf_counter() - t0:.1f} s)")
    native(vocab, merges, added, entry.file("kernel").read_text(), args.repeat)
    python_ffi(vocab, merges, added, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
