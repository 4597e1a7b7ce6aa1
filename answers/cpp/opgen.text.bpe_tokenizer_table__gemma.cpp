// opgen.text.bpe_tokenizer_table, overload gemma: Gemma's BPE tokenizer (vocabulary, merges, added
// tokens) laid out once as the flat int64 table opgen.text.bpe_encode_table reads: a header of 12,
// the vocabulary's hash slots, the 256 byte-fallback ids, the merges' hash slots keyed by
// left * 2^31 + right, the added pieces' trie (hashed edges, terminals, first bytes), the offsets and
// the pieces' bytes 8 to a little-endian word. Every table is filled by linear probing.
//
// The checks are bpe_encode's: a repeated piece shows while the vocabulary's slots fill, a merge's ids
// and pieces before its slot is taken, an added id before its piece is walked.
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace opgen::kernels {
namespace {

[[noreturn]] void fail(const std::string& message) { throw opgen::Error(opgen::ErrorKind::Value, message); }

uint64_t fnv(const std::string& p) {
  uint64_t h = 14695981039346656037ull;
  for (const char c : p) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h ^ (h >> 29);
}

uint64_t mix(uint64_t h) {
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

int64_t slot_count(int64_t entries) {
  int64_t c = 16;
  while (c < 2 * entries) c <<= 1;
  return c;
}

constexpr const char* SPECIALS[4] = {"<pad>", "<eos>", "<bos>", "<unk>"};

}  // namespace

std::vector<int64_t> opgen_text_bpe_tokenizer_table__gemma(const std::vector<std::string>& vocab,
                                                          const std::vector<int64_t>& merges,
                                                          const std::vector<int64_t>& added) {
  const int64_t n = static_cast<int64_t>(vocab.size());
  // The vocabulary's slots (they also find a repeated piece).
  const int64_t cv = slot_count(n);
  std::vector<int64_t> vslots(static_cast<size_t>(cv), -1);
  const uint64_t vmask = static_cast<uint64_t>(cv - 1);
  auto find = [&](const std::string& piece) -> int64_t {
    for (uint64_t s = fnv(piece) & vmask; vslots[s] >= 0; s = (s + 1) & vmask)
      if (vocab[static_cast<size_t>(vslots[s])] == piece) return vslots[s];
    return -1;
  };
  for (int64_t id = 0; id < n; ++id) {
    const std::string& piece = vocab[static_cast<size_t>(id)];
    uint64_t s = fnv(piece) & vmask;
    for (; vslots[s] >= 0; s = (s + 1) & vmask)
      if (vocab[static_cast<size_t>(vslots[s])] == piece) fail("the vocabulary repeats the piece '" + piece + "'");
    vslots[s] = id;
  }
  int64_t special[4];
  std::string missing;
  for (int k = 0; k < 4; ++k) {
    special[k] = find(SPECIALS[k]);
    if (special[k] < 0) missing += std::string(missing.empty() ? "" : ", ") + "'" + SPECIALS[k] + "'";
  }
  if (!missing.empty()) fail("the vocabulary lacks the special tokens [" + missing + "]");

  // The merges, each checked as tokenizers' BPE builder checks it.
  if (merges.size() % 3 != 0)
    fail("merges holds " + std::to_string(merges.size()) + " ints; it must be (left, right, merged) id triples");
  const int64_t r_count = static_cast<int64_t>(merges.size() / 3);
  for (int64_t r = 0; r < r_count; ++r) {
    const int64_t left = merges[3 * r], right = merges[3 * r + 1], merged = merges[3 * r + 2];
    if (left < 0 || left >= n || right < 0 || right >= n || merged < 0 || merged >= n)
      fail("merge " + std::to_string(r) + " (" + std::to_string(left) + ", " + std::to_string(right) + ", " +
           std::to_string(merged) + ") names an id outside the vocabulary of " + std::to_string(n) + " pieces");
    const std::string& a = vocab[static_cast<size_t>(left)];
    const std::string& b = vocab[static_cast<size_t>(right)];
    const std::string& m = vocab[static_cast<size_t>(merged)];
    if (m.size() != a.size() + b.size() || m.compare(0, a.size(), a) != 0 || m.compare(a.size(), b.size(), b) != 0)
      fail("merge " + std::to_string(r) + ": piece " + std::to_string(merged) + " '" + m + "' is not '" + a +
           "' + '" + b + "'");
  }
  for (const int64_t id : added)
    if (id < 0 || id >= n)
      fail("added names id " + std::to_string(id) + ", outside the vocabulary of " + std::to_string(n) + " pieces");

  const int64_t cm = slot_count(r_count);
  std::vector<int64_t> mslots(static_cast<size_t>(3 * cm), -1);
  const uint64_t mmask = static_cast<uint64_t>(cm - 1);
  for (int64_t r = 0; r < r_count; ++r) {
    const int64_t key = merges[3 * r] * (int64_t{1} << 31) + merges[3 * r + 1];
    uint64_t s = mix(static_cast<uint64_t>(key)) & mmask;
    while (mslots[3 * s] >= 0 && mslots[3 * s] != key) s = (s + 1) & mmask;
    mslots[3 * s] = key;
    mslots[3 * s + 1] = r;
    mslots[3 * s + 2] = merges[3 * r + 2];
  }

  // The added pieces' trie.
  int64_t added_bytes = 0;
  for (const int64_t id : added) added_bytes += static_cast<int64_t>(vocab[static_cast<size_t>(id)].size());
  const int64_t ce = slot_count(added_bytes);
  std::vector<int64_t> eslots(static_cast<size_t>(2 * ce), -1);
  const uint64_t emask = static_cast<uint64_t>(ce - 1);
  std::vector<int64_t> terminal{-1};
  int64_t first[256] = {};
  int64_t longest = 0;
  for (const int64_t id : added) {
    const std::string& piece = vocab[static_cast<size_t>(id)];
    if (piece.empty()) continue;  // an empty added token never matches
    first[static_cast<unsigned char>(piece[0])] = 1;
    longest = std::max(longest, static_cast<int64_t>(piece.size()));
    int64_t node = 0;
    for (const char c : piece) {
      const int64_t key = node * 256 + static_cast<unsigned char>(c);
      uint64_t s = mix(static_cast<uint64_t>(key)) & emask;
      while (eslots[2 * s] >= 0 && eslots[2 * s] != key) s = (s + 1) & emask;
      if (eslots[2 * s] < 0) {
        eslots[2 * s] = key;
        eslots[2 * s + 1] = static_cast<int64_t>(terminal.size());
        terminal.push_back(-1);
      }
      node = eslots[2 * s + 1];
    }
    terminal[static_cast<size_t>(node)] = id;
  }

  int64_t total = 0;
  for (const std::string& p : vocab) total += static_cast<int64_t>(p.size());
  const int64_t nodes = static_cast<int64_t>(terminal.size());
  std::vector<int64_t> t;
  t.reserve(static_cast<size_t>(12 + cv + 256 + 3 * cm + 2 * ce + nodes + 256 + n + 1 + (total + 7) / 8));
  for (const int64_t v : {n, cv, r_count, cm, nodes, ce, longest, total, special[0], special[1], special[2], special[3]})
    t.push_back(v);
  t.insert(t.end(), vslots.begin(), vslots.end());
  static const char HEX[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    const char piece[7] = {'<', '0', 'x', HEX[b >> 4], HEX[b & 15], '>', 0};
    t.push_back(find(piece));
  }
  t.insert(t.end(), mslots.begin(), mslots.end());
  t.insert(t.end(), eslots.begin(), eslots.end());
  t.insert(t.end(), terminal.begin(), terminal.end());
  t.insert(t.end(), first, first + 256);
  int64_t at = 0;
  t.push_back(0);
  for (const std::string& p : vocab) t.push_back(at += static_cast<int64_t>(p.size()));
  const size_t blob_at = t.size();
  t.resize(blob_at + static_cast<size_t>((total + 7) / 8), 0);
  unsigned char* blob = reinterpret_cast<unsigned char*>(t.data() + blob_at);  // little-endian words
  for (const std::string& p : vocab) {
    if (!p.empty()) std::memcpy(blob, p.data(), p.size());
    blob += p.size();
  }
  return t;
}

}  // namespace opgen::kernels
