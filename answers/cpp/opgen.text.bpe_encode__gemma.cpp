// opgen.text.bpe_encode, overload gemma: Gemma's tokenizer.json pipeline (added tokens matched
// in the raw text, spaces -> "▁", BPE with byte fallback and fused <unk>, "<bos> $A <eos>" as
// asked, truncation, padding to the longest), ids then attention masks, flat.
//
// Per call, three tables are built from the arguments (nothing is cached between calls): an
// open-addressing hash of the vocabulary's pieces (which also finds repeated pieces), an
// open-addressing hash of the merges keyed by the (left, right) id pair, and a byte trie of
// the added tokens. Each stretch of text between added tokens is one BPE word: its symbols
// form a linked list and the candidate merges a binary heap ordered by (rank, position), so
// a word of n symbols costs O(n log n), as in `tokenizers`' own Word::merge_all.
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace opgen::kernels {
namespace {

[[noreturn]] void fail(const std::string& message) { throw opgen::Error(opgen::ErrorKind::Value, message); }

uint64_t mix(uint64_t h) {  // splitmix64's finalizer: spreads the bits the table index uses
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

uint64_t hash_bytes(const char* p, size_t n) {  // eight bytes at a time: pieces are short
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    h = (h ^ word) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p, n);
  return mix(h ^ tail);
}

constexpr size_t AHEAD = 16;  // how far ahead the table builds prefetch

size_t table_size(size_t entries) {  // a power of two at most half full
  size_t cap = 16;
  while (cap < 2 * entries) cap <<= 1;
  return cap;
}

// The vocabulary as an open-addressing hash table of ids (slots hold the id and 32 bits of
// the hash, so most probes that do not match never touch the piece's bytes).
class VocabIndex {
 public:
  explicit VocabIndex(const std::vector<std::string>& vocab) : vocab_(vocab) {
    if (vocab.size() > static_cast<size_t>(INT32_MAX)) fail("the vocabulary has more than 2^31 - 1 pieces");
    const size_t cap = table_size(vocab.size());
    slots_.assign(cap, Slot{-1, 0});
    mask_ = cap - 1;
    // Hash every piece first (a sequential pass), then insert with the slot AHEAD pieces on
    // already requested from memory: the table is megabytes for a 262k vocabulary, and the
    // inserts are random accesses whose latency the prefetches overlap.
    std::vector<uint64_t> hashes(vocab.size());
    for (size_t id = 0; id < vocab.size(); ++id) hashes[id] = hash_bytes(vocab[id].data(), vocab[id].size());
    for (size_t id = 0; id < vocab.size(); ++id) {
      if (id + AHEAD < vocab.size()) __builtin_prefetch(&slots_[hashes[id + AHEAD] & mask_], 1);
      const std::string& piece = vocab[id];
      const uint64_t h = hashes[id];
      const uint32_t tag = static_cast<uint32_t>(h >> 32);
      size_t slot = h & mask_;
      for (; slots_[slot].id >= 0; slot = (slot + 1) & mask_) {
        if (slots_[slot].tag == tag && vocab[static_cast<size_t>(slots_[slot].id)] == piece)
          fail("the vocabulary repeats the piece '" + piece + "' (ids " + std::to_string(slots_[slot].id) + " and " +
               std::to_string(id) + ")");
      }
      slots_[slot] = Slot{static_cast<int32_t>(id), tag};
    }
  }

  int32_t find(const char* bytes, size_t n) const {
    const uint64_t h = hash_bytes(bytes, n);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    for (size_t slot = h & mask_; slots_[slot].id >= 0; slot = (slot + 1) & mask_) {
      if (slots_[slot].tag != tag) continue;
      const std::string& piece = vocab_[static_cast<size_t>(slots_[slot].id)];
      if (piece.size() == n && std::memcmp(piece.data(), bytes, n) == 0) return slots_[slot].id;
    }
    return -1;
  }

  int32_t require(const char* piece) const {
    const int32_t id = find(piece, std::strlen(piece));
    if (id < 0) fail(std::string("the vocabulary lacks the special token ") + piece);
    return id;
  }

 private:
  struct Slot {
    int32_t id;
    uint32_t tag;
  };
  const std::vector<std::string>& vocab_;
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

struct Merge {
  uint32_t rank;
  int32_t merged;
};

// (left, right) -> (rank, merged), a later merge of the same pair overwriting an earlier one.
class MergeTable {
 public:
  MergeTable(const std::vector<int64_t>& merges, const std::vector<std::string>& vocab) {
    if (merges.size() % 3 != 0)
      fail("merges holds " + std::to_string(merges.size()) + " ints; it must be (left, right, merged) id triples");
    const size_t count = merges.size() / 3;
    if (count > UINT32_MAX) fail("more than 2^32 merges");
    const int64_t n = static_cast<int64_t>(vocab.size());
    const size_t cap = table_size(count);
    slots_.assign(cap, Slot{EMPTY, Merge{0, 0}});
    mask_ = cap - 1;
    // First every id, so that the checks below may prefetch the pieces of later merges.
    for (size_t r = 0; r < count; ++r) {
      const int64_t left = merges[3 * r], right = merges[3 * r + 1], merged = merges[3 * r + 2];
      if (left < 0 || left >= n || right < 0 || right >= n || merged < 0 || merged >= n)
        fail("merge " + std::to_string(r) + " (" + std::to_string(left) + ", " + std::to_string(right) + ", " +
             std::to_string(merged) + ") names an id outside the vocabulary of " + std::to_string(n) + " pieces");
    }
    for (size_t r = 0; r < count; ++r) {
      if (r + AHEAD < count) {
        const size_t later = 3 * (r + AHEAD);
        for (size_t k = 0; k < 3; ++k) __builtin_prefetch(&vocab[static_cast<size_t>(merges[later + k])]);
        __builtin_prefetch(&slots_[mix(pack(static_cast<int32_t>(merges[later]),
                                            static_cast<int32_t>(merges[later + 1]))) & mask_], 1);
      }
      const int64_t left = merges[3 * r], right = merges[3 * r + 1], merged = merges[3 * r + 2];
      const std::string& a = vocab[static_cast<size_t>(left)];
      const std::string& b = vocab[static_cast<size_t>(right)];
      const std::string& m = vocab[static_cast<size_t>(merged)];
      if (m.size() != a.size() + b.size() || std::memcmp(m.data(), a.data(), a.size()) != 0 ||
          std::memcmp(m.data() + a.size(), b.data(), b.size()) != 0)
        fail("merge " + std::to_string(r) + ": piece " + std::to_string(merged) + " '" + m + "' is not '" + a +
             "' + '" + b + "'");
      const uint64_t key = pack(static_cast<int32_t>(left), static_cast<int32_t>(right));
      size_t slot = mix(key) & mask_;
      while (slots_[slot].key != EMPTY && slots_[slot].key != key) slot = (slot + 1) & mask_;
      slots_[slot] = Slot{key, Merge{static_cast<uint32_t>(r), static_cast<int32_t>(merged)}};
    }
    empty_ = count == 0;
  }

  // The merge of the pair, or nullptr.
  const Merge* find(int32_t left, int32_t right) const {
    if (empty_) return nullptr;
    const uint64_t key = pack(left, right);
    for (size_t slot = mix(key) & mask_;; slot = (slot + 1) & mask_) {
      if (slots_[slot].key == key) return &slots_[slot].merge;
      if (slots_[slot].key == EMPTY) return nullptr;
    }
  }

 private:
  static constexpr uint64_t EMPTY = ~0ull;  // no pair of ids below 2^31 packs to this
  static uint64_t pack(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  struct Slot {
    uint64_t key;
    Merge merge;
  };
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  bool empty_ = true;
};

// The added tokens as a byte trie: the longest one starting at a position, found by walking
// the trie from there (leftmost-longest matching when tried at each position in turn).
class AddedTrie {
 public:
  AddedTrie(const std::vector<int64_t>& added, const std::vector<std::string>& vocab) {
    const int64_t n = static_cast<int64_t>(vocab.size());
    size_t total = 0;
    for (const int64_t id : added) {
      if (id < 0 || id >= n)
        fail("added names id " + std::to_string(id) + ", outside the vocabulary of " + std::to_string(n) + " pieces");
      total += vocab[static_cast<size_t>(id)].size();
    }
    if (total >= (size_t{1} << 24)) fail("the added tokens hold more than 2^24 bytes");
    terminal_.push_back(-1);
    const size_t cap = table_size(total + 1);
    edges_.assign(cap, Edge{EMPTY, 0});
    mask_ = cap - 1;
    for (const int64_t id : added) {
      const std::string& piece = vocab[static_cast<size_t>(id)];
      if (piece.empty()) continue;  // an empty added token never matches
      first_[static_cast<unsigned char>(piece[0])] = true;
      uint32_t node = 0;
      for (const char c : piece) {
        const uint32_t key = (node << 8) | static_cast<unsigned char>(c);
        size_t slot = mix(key) & mask_;
        while (edges_[slot].key != EMPTY && edges_[slot].key != key) slot = (slot + 1) & mask_;
        if (edges_[slot].key == EMPTY) {
          edges_[slot] = Edge{key, static_cast<uint32_t>(terminal_.size())};
          terminal_.push_back(-1);
        }
        node = edges_[slot].child;
      }
      terminal_[node] = static_cast<int32_t>(id);
      if (piece.size() > longest_) longest_ = piece.size();
    }
  }

  bool may_start(unsigned char c) const { return first_[c]; }

  // The longest added token at s[0, n): its id, its length in `length`; -1 if none.
  int32_t match(const unsigned char* s, size_t n, size_t& length) const {
    uint32_t node = 0;
    int32_t best = -1;
    const size_t limit = std::min(n, longest_);
    for (size_t i = 0; i < limit; ++i) {
      const uint32_t key = (node << 8) | s[i];
      size_t slot = mix(key) & mask_;
      while (edges_[slot].key != EMPTY && edges_[slot].key != key) slot = (slot + 1) & mask_;
      if (edges_[slot].key == EMPTY) break;
      node = edges_[slot].child;
      if (terminal_[node] >= 0) {
        best = terminal_[node];
        length = i + 1;
      }
    }
    return best;
  }

 private:
  static constexpr uint32_t EMPTY = ~0u;  // nodes are below 2^24, so no key is this
  struct Edge {
    uint32_t key;  // (parent node << 8) | byte
    uint32_t child;
  };
  std::vector<Edge> edges_;
  std::vector<int32_t> terminal_;  // per node: the id of the added token ending there, or -1
  bool first_[256] = {};
  size_t longest_ = 0;
  size_t mask_ = 0;
};

// Length of the UTF-8 sequence starting at s[i] (1 for a byte that does not start a valid one,
// which then falls back to its byte piece like any character missing from the vocabulary).
size_t char_length(const unsigned char* s, size_t n, size_t i) {
  const unsigned char b = s[i];
  const size_t len = b < 0x80 ? 1 : b >= 0xF0 && b < 0xF8 ? 4 : b >= 0xE0 ? (b < 0xF0 ? 3 : 0) : b >= 0xC0 ? 2 : 0;
  if (len == 0 || i + len > n) return 1;
  for (size_t k = 1; k < len; ++k)
    if ((s[i + k] & 0xC0) != 0x80) return 1;
  return len;
}

class Encoder {
 public:
  Encoder(const VocabIndex& index, const MergeTable& merges, const AddedTrie& added, int32_t unk, size_t limit)
      : index_(index), merges_(merges), added_(added), unk_(unk), limit_(limit) {
    static const char SPACE_PIECE[] = "\xE2\x96\x81";  // "▁", what a space becomes
    space_id_ = index.find(SPACE_PIECE, 3);
    for (int c = 0; c < 128; ++c) {
      const char ch = static_cast<char>(c);
      ascii_id_[c] = c == ' ' ? space_id_ : index.find(&ch, 1);
    }
    static const char HEX[] = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) {
      const char piece[6] = {'<', '0', 'x', HEX[b >> 4], HEX[b & 15], '>'};
      byte_id_[b] = index.find(piece, 6);
    }
  }

  // Tokens of one text (without <bos>/<eos>), at most `limit` of them, appended to out.
  void encode(const std::string& text, std::vector<int64_t>& out) {
    const size_t base = out.size();
    const unsigned char* s = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    size_t begin = 0;
    for (size_t at = 0; at < n && out.size() - base < limit_;) {
      size_t length = 0;
      const int32_t id = added_.may_start(s[at]) ? added_.match(s + at, n - at, length) : -1;
      if (id < 0) {
        ++at;
        continue;
      }
      word(s + begin, at - begin, out);
      out.push_back(id);
      at += length;
      begin = at;
    }
    if (out.size() - base < limit_) word(s + begin, n - begin, out);
    if (out.size() - base > limit_) out.resize(base + limit_);
  }

 private:
  struct Symbol {
    int32_t id;
    int32_t prev, next;  // neighbours in the word, -1 at the ends
    bool alive;
  };
  struct Candidate {
    uint32_t rank;
    int32_t pos;  // the left symbol of the pair
    int32_t merged;
  };
  // std::push_heap keeps the largest on top: "larger" here is the lower rank, then the lower pos.
  static bool later(const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  }

  void add_symbol(int32_t id) {
    const int32_t at = static_cast<int32_t>(symbols_.size());
    if (at > 0) symbols_.back().next = at;
    symbols_.push_back(Symbol{id, at - 1, -1, true});
  }

  void push_candidate(int32_t pos) {
    const Symbol& left = symbols_[static_cast<size_t>(pos)];
    if (left.next < 0) return;
    if (const Merge* m = merges_.find(left.id, symbols_[static_cast<size_t>(left.next)].id)) {
      heap_.push_back(Candidate{m->rank, pos, m->merged});
      std::push_heap(heap_.begin(), heap_.end(), later);
    }
  }

  // Initial symbols of one stretch (spaces read as "▁"), then BPE, then its tokens into out.
  void word(const unsigned char* s, size_t n, std::vector<int64_t>& out) {
    if (n == 0) return;
    symbols_.clear();
    bool unk_pending = false;  // fused unknown characters not yet emitted (see the spec, step 3)
    for (size_t i = 0; i < n;) {
      int32_t id;
      size_t len;
      if (s[i] < 0x80) {
        id = ascii_id_[s[i]];
        len = 1;
      } else {
        len = char_length(s, n, i);
        id = index_.find(reinterpret_cast<const char*>(s + i), len);
      }
      if (id >= 0) {
        if (unk_pending) add_symbol(unk_);
        unk_pending = false;
        add_symbol(id);
      } else if (s[i] == ' ') {  // "▁" is not in the vocabulary: fall back on its bytes
        fallback(reinterpret_cast<const unsigned char*>("\xE2\x96\x81"), 3, unk_pending);
      } else {
        fallback(s + i, len, unk_pending);
      }
      i += len;
    }
    if (unk_pending) add_symbol(unk_);
    merge_all();
    for (const Symbol& sym : symbols_)
      if (sym.alive) out.push_back(sym.id);
  }

  void fallback(const unsigned char* bytes, size_t len, bool& unk_pending) {
    for (size_t k = 0; k < len; ++k)
      if (byte_id_[bytes[k]] < 0) {
        unk_pending = true;  // joins the pending <unk>, if any
        return;
      }
    for (size_t k = 0; k < len; ++k) add_symbol(byte_id_[bytes[k]]);
  }

  void merge_all() {
    heap_.clear();
    for (size_t pos = 0; pos + 1 < symbols_.size(); ++pos) {
      if (const Merge* m = merges_.find(symbols_[pos].id, symbols_[pos + 1].id))
        heap_.push_back(Candidate{m->rank, static_cast<int32_t>(pos), m->merged});
    }
    std::make_heap(heap_.begin(), heap_.end(), later);
    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), later);
      const Candidate top = heap_.back();
      heap_.pop_back();
      Symbol& left = symbols_[static_cast<size_t>(top.pos)];
      if (!left.alive || left.next < 0) continue;
      Symbol& right = symbols_[static_cast<size_t>(left.next)];
      // A stale candidate: the pair at pos changed since it was pushed.
      const Merge* now = merges_.find(left.id, right.id);
      if (now == nullptr || now->merged != top.merged) continue;
      left.id = top.merged;
      right.alive = false;
      left.next = right.next;
      if (right.next >= 0) symbols_[static_cast<size_t>(right.next)].prev = top.pos;
      if (left.prev >= 0) push_candidate(left.prev);
      push_candidate(top.pos);
    }
  }

  const VocabIndex& index_;
  const MergeTable& merges_;
  const AddedTrie& added_;
  const int32_t unk_;
  const size_t limit_;
  int32_t space_id_ = -1;
  int32_t ascii_id_[128];
  int32_t byte_id_[256];
  std::vector<Symbol> symbols_;
  std::vector<Candidate> heap_;
};

}  // namespace

std::vector<int64_t> opgen_text_bpe_encode__gemma(const std::vector<std::string>& vocab,
                                                  const std::vector<int64_t>& merges,
                                                  const std::vector<int64_t>& added,
                                                  const std::vector<std::string>& texts, bool add_bos,
                                                  bool add_eos, int64_t max_length) {
  const VocabIndex index(vocab);
  const int32_t pad = index.require("<pad>"), eos = index.require("<eos>"), bos = index.require("<bos>"),
                unk = index.require("<unk>");
  const int64_t specials = (add_bos ? 1 : 0) + (add_eos ? 1 : 0);
  if (max_length < specials)
    fail("max_length " + std::to_string(max_length) + " leaves no room for the " + std::to_string(specials) +
         " special tokens asked for");
  const MergeTable table(merges, vocab);
  const AddedTrie trie(added, vocab);
  Encoder encoder(index, table, trie, unk, static_cast<size_t>(max_length - specials));

  if (texts.empty()) return {};
  std::vector<int64_t> tokens;
  std::vector<size_t> starts;
  starts.reserve(texts.size() + 1);
  size_t longest = 0;
  for (const std::string& text : texts) {
    starts.push_back(tokens.size());
    encoder.encode(text, tokens);
    longest = std::max(longest, tokens.size() - starts.back());
  }
  starts.push_back(tokens.size());

  const size_t rows = texts.size(), width = longest + static_cast<size_t>(specials);
  std::vector<int64_t> result(2 * rows * width, 0);
  int64_t* ids = result.data();
  int64_t* mask = ids + rows * width;
  for (size_t r = 0; r < rows; ++r) {
    int64_t* row = ids + r * width;
    const size_t len = starts[r + 1] - starts[r];
    size_t k = 0;
    if (add_bos) row[k++] = bos;
    std::copy(tokens.begin() + static_cast<std::ptrdiff_t>(starts[r]),
              tokens.begin() + static_cast<std::ptrdiff_t>(starts[r + 1]), row + k);
    k += len;
    if (add_eos) row[k++] = eos;
    for (size_t j = 0; j < k; ++j) mask[r * width + j] = 1;
    for (; k < width; ++k) row[k] = pad;
  }
  return result;
}

}  // namespace opgen::kernels
