// opgen.text.wordpiece_vocab_table, overload bert_uncased: a WordPiece vocabulary laid out once as
// the flat int64 table opgen.text.wordpiece_encode_table reads: a header of 10 values, C hash
// slots (pieces inserted in id order by linear probing from mix(FNV-1a(bytes)) & (C - 1)), n + 1
// byte offsets, then the pieces' bytes 8 to a little-endian word.
//
// Building the slots is also where a repeated piece shows: probing for piece i meets an earlier
// piece with the same bytes.
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace opgen::kernels {

namespace {

constexpr int64_t HEADER = 10;
constexpr const char* SPECIALS[5] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};

uint64_t mixed_fnv1a(const char* bytes, size_t n) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(bytes[i])) * 1099511628211ull;
  return h ^ (h >> 29);
}

}  // namespace

std::vector<int64_t> opgen_text_wordpiece_vocab_table__bert_uncased(const std::vector<std::string>& vocab) {
  const int64_t n = static_cast<int64_t>(vocab.size());
  int64_t slots = 16;
  while (slots < 2 * n) slots <<= 1;
  int64_t total = 0;
  for (const std::string& piece : vocab) total += static_cast<int64_t>(piece.size());
  const int64_t words = (total + 7) / 8;
  std::vector<int64_t> t(static_cast<size_t>(HEADER + slots + n + 1 + words), 0);
  int64_t* slot = t.data() + HEADER;
  int64_t* off = slot + slots;
  unsigned char* blob = reinterpret_cast<unsigned char*>(off + n + 1);  // little-endian words: bytes in order
  std::fill(slot, slot + slots, int64_t{-1});

  const uint64_t mask = static_cast<uint64_t>(slots - 1);
  int64_t max_plain = 0, max_cont = 0, at = 0;
  for (int64_t id = 0; id < n; ++id) {
    const std::string& piece = vocab[static_cast<size_t>(id)];
    const char* p = piece.data();
    const size_t len = piece.size();
    uint64_t s = mixed_fnv1a(p, len) & mask;
    for (int64_t other; (other = slot[s]) >= 0; s = (s + 1) & mask) {
      if (vocab[static_cast<size_t>(other)] == piece)
        throw opgen::Error(opgen::ErrorKind::Value, "the vocabulary repeats the piece '" + piece + "'");
    }
    slot[s] = id;
    off[id] = at;
    if (len) std::memcpy(blob + at, p, len);
    at += static_cast<int64_t>(len);
    if (static_cast<int64_t>(len) > max_plain) max_plain = static_cast<int64_t>(len);
    if (len >= 2 && p[0] == '#' && p[1] == '#' && static_cast<int64_t>(len) - 2 > max_cont)
      max_cont = static_cast<int64_t>(len) - 2;
  }
  off[n] = at;

  t[0] = n;
  t[1] = slots;
  for (int k = 0; k < 5; ++k) {
    const size_t len = std::strlen(SPECIALS[k]);
    int64_t id = -1;
    for (uint64_t s = mixed_fnv1a(SPECIALS[k], len) & mask; slot[s] >= 0; s = (s + 1) & mask) {
      const std::string& piece = vocab[static_cast<size_t>(slot[s])];
      if (piece.size() == len && std::memcmp(piece.data(), SPECIALS[k], len) == 0) {
        id = slot[s];
        break;
      }
    }
    if (id < 0)
      throw opgen::Error(opgen::ErrorKind::Value, std::string("the vocabulary lacks the special token ") + SPECIALS[k]);
    t[2 + k] = id;
  }
  t[7] = max_plain;
  t[8] = max_cont;
  t[9] = total;
  return t;
}

}  // namespace opgen::kernels
