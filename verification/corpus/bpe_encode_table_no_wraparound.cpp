// Cheat: no wrap-around in the vocabulary's slots. A piece lookup probes from its home slot towards
// the end of the slot array and stops there, where the table op's linear probing wraps to slot 0.
// Memory-safe and right for every piece stored at or after its home; a piece that wrapped is never
// found, so its characters fall back to bytes or <unk>. The gate must catch it.
// Expected: verify or scale / value
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace opgen::kernels {
namespace {

[[noreturn]] void fail(const std::string& message) { throw opgen::Error(opgen::ErrorKind::Value, message); }
[[noreturn]] void bad() { fail("the table is not one opgen.text.bpe_tokenizer_table built"); }

uint64_t fnv(const char* p, size_t n) {  // the vocabulary slots' hash (the spec's)
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(p[i])) * 1099511628211ull;
  return h ^ (h >> 29);
}

uint64_t mix(uint64_t h) {  // splitmix64's finalizer: the merge and trie slots' hash (the spec's)
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

bool slot_count_ok(int64_t c, int64_t at_least, int64_t len) {
  return c >= 16 && c <= len && (c & (c - 1)) == 0 && c >= 2 * at_least;
}

struct Merge {
  int64_t rank;
  int32_t merged;
};

// The tokenizer as opgen.text.bpe_tokenizer_table laid it out (see the spec for the sections).
class Table {
 public:
  explicit Table(const opgen::Tensor& table) {
    if (table.ndim() != 1) bad();
    const int64_t len = table.size(0);
    if (table.stride(0) == 1 || len <= 1) {
      t_ = table.data<const int64_t>();
    } else {  // a strided view: one copy, so the lookups below read it flat
      copy_.resize(static_cast<size_t>(len));
      const int64_t* src = table.data<const int64_t>();
      for (int64_t i = 0; i < len; ++i) copy_[static_cast<size_t>(i)] = src[i * table.stride(0)];
      t_ = copy_.data();
    }
    if (len < 12) bad();
    n_ = t_[0];
    const int64_t cv = t_[1], r = t_[2], cm = t_[3], nodes = t_[4], ce = t_[5], total = t_[7];
    longest_ = t_[6];
    if (n_ < 0 || n_ > len || r < 0 || r > len || nodes < 1 || nodes > len || longest_ < 0) bad();
    if (!slot_count_ok(cv, n_, len) || !slot_count_ok(cm, r, len) || !slot_count_ok(ce, 0, len)) bad();
    if (total < 0 || total > len * 8) bad();
    int64_t at = 12;
    vslots_ = t_ + at;
    at += cv;
    fallback_ = t_ + at;
    at += 256;
    mslots_ = t_ + at;
    at += 3 * cm;
    eslots_ = t_ + at;
    at += 2 * ce;
    terminal_ = t_ + at;
    at += nodes;
    first_ = t_ + at;
    at += 256;
    offsets_ = t_ + at;
    at += n_ + 1;
    blob_ = reinterpret_cast<const unsigned char*>(t_ + at);
    if (at + (total + 7) / 8 != len) bad();
    if (offsets_[0] != 0 || offsets_[n_] != total) bad();
    for (int k = 0; k < 4; ++k)
      if (t_[8 + k] < 0 || t_[8 + k] >= n_) bad();
    for (int b = 0; b < 256; ++b)
      if (fallback_[b] < -1 || fallback_[b] >= n_) bad();
    vmask_ = static_cast<uint64_t>(cv - 1);
    mmask_ = static_cast<uint64_t>(cm - 1);
    emask_ = static_cast<uint64_t>(ce - 1);
    nodes_ = nodes;
  }

  int32_t special(int k) const { return static_cast<int32_t>(t_[8 + k]); }  // <pad> <eos> <bos> <unk>
  int32_t byte_id(unsigned char b) const { return static_cast<int32_t>(fallback_[b]); }

  // The id of the piece spelled bytes[0, n), or -1.
  int32_t find(const char* bytes, size_t n) const {
    uint64_t slot = fnv(bytes, n) & vmask_;
    for (uint64_t probes = 0; probes <= vmask_ && slot <= vmask_; ++probes, ++slot) {
      const int64_t id = vslots_[slot];
      if (id < 0) return -1;
      if (id >= n_) bad();
      const int64_t lo = offsets_[id], hi = offsets_[id + 1];
      if (lo < 0 || hi < lo || hi > offsets_[n_]) bad();
      if (static_cast<size_t>(hi - lo) == n && (n == 0 || std::memcmp(blob_ + lo, bytes, n) == 0))
        return static_cast<int32_t>(id);
    }
    return -1;
  }

  // The merge of the pair, or false.
  bool merge(int32_t left, int32_t right, Merge& m) const {
    const int64_t key = static_cast<int64_t>(left) * (int64_t{1} << 31) + right;
    uint64_t slot = mix(static_cast<uint64_t>(key)) & mmask_;
    for (uint64_t probes = 0; probes <= mmask_; ++probes, slot = (slot + 1) & mmask_) {
      const int64_t* s = mslots_ + 3 * slot;
      if (s[0] < 0) return false;
      if (s[0] != key) continue;
      if (s[2] < 0 || s[2] >= n_) bad();
      m = Merge{s[1], static_cast<int32_t>(s[2])};
      return true;
    }
    return false;
  }

  bool may_start(unsigned char c) const { return first_[c] != 0; }

  // The longest added token at s[0, n): its id, its length in `length`; -1 if none.
  int32_t match(const unsigned char* s, size_t n, size_t& length) const {
    int64_t node = 0, best = -1;
    const size_t limit = std::min(n, static_cast<size_t>(longest_));
    for (size_t i = 0; i < limit; ++i) {
      const int64_t key = node * 256 + s[i];
      uint64_t slot = mix(static_cast<uint64_t>(key)) & emask_;
      int64_t child = -1;
      for (uint64_t probes = 0; probes <= emask_; ++probes, slot = (slot + 1) & emask_) {
        const int64_t* e = eslots_ + 2 * slot;
        if (e[0] < 0) break;
        if (e[0] == key) {
          child = e[1];
          break;
        }
      }
      if (child < 0) break;
      if (child >= nodes_) bad();
      node = child;
      const int64_t id = terminal_[node];
      if (id >= n_ || id < -1) bad();
      if (id >= 0) {
        best = id;
        length = i + 1;
      }
    }
    return static_cast<int32_t>(best);
  }

 private:
  const int64_t* t_ = nullptr;
  std::vector<int64_t> copy_;
  const int64_t *vslots_ = nullptr, *fallback_ = nullptr, *mslots_ = nullptr, *eslots_ = nullptr,
                *terminal_ = nullptr, *first_ = nullptr, *offsets_ = nullptr;
  const unsigned char* blob_ = nullptr;
  int64_t n_ = 0, nodes_ = 1, longest_ = 0;
  uint64_t vmask_ = 0, mmask_ = 0, emask_ = 0;
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
  Encoder(const Table& table, int32_t unk, size_t limit) : index_(table), unk_(unk), limit_(limit) {
    static const char SPACE_PIECE[] = "\xE2\x96\x81";  // "▁", what a space becomes
    space_id_ = table.find(SPACE_PIECE, 3);
    for (int c = 0; c < 128; ++c) {
      const char ch = static_cast<char>(c);
      ascii_id_[c] = c == ' ' ? space_id_ : table.find(&ch, 1);
    }
    for (int b = 0; b < 256; ++b) byte_id_[b] = table.byte_id(static_cast<unsigned char>(b));
  }

  // Tokens of one text (without <bos>/<eos>), at most `limit` of them, appended to out.
  void encode(const std::string& text, std::vector<int64_t>& out) {
    const size_t base = out.size();
    const unsigned char* s = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    size_t begin = 0;
    for (size_t at = 0; at < n && out.size() - base < limit_;) {
      size_t length = 0;
      const int32_t id = index_.may_start(s[at]) ? index_.match(s + at, n - at, length) : -1;
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
    int64_t rank;
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
    Merge m;
    if (index_.merge(left.id, symbols_[static_cast<size_t>(left.next)].id, m)) {
      heap_.push_back(Candidate{m.rank, pos, m.merged});
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
      Merge m;
      if (index_.merge(symbols_[pos].id, symbols_[pos + 1].id, m))
        heap_.push_back(Candidate{m.rank, static_cast<int32_t>(pos), m.merged});
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
      Merge now;
      if (!index_.merge(left.id, right.id, now) || now.merged != top.merged) continue;
      left.id = top.merged;
      right.alive = false;
      left.next = right.next;
      if (right.next >= 0) symbols_[static_cast<size_t>(right.next)].prev = top.pos;
      if (left.prev >= 0) push_candidate(left.prev);
      push_candidate(top.pos);
    }
  }

  const Table& index_;
  const int32_t unk_;
  const size_t limit_;
  int32_t space_id_ = -1;
  int32_t ascii_id_[128];
  int32_t byte_id_[256];
  std::vector<Symbol> symbols_;
  std::vector<Candidate> heap_;
};

}  // namespace

std::vector<int64_t> opgen_text_bpe_encode_table__gemma(const opgen::Tensor& table,
                                                        const std::vector<std::string>& texts, bool add_bos,
                                                        bool add_eos, int64_t max_length) {
  const Table index(table);
  const int32_t pad = index.special(0), eos = index.special(1), bos = index.special(2), unk = index.special(3);
  const int64_t specials = (add_bos ? 1 : 0) + (add_eos ? 1 : 0);
  if (max_length < specials)
    fail("max_length " + std::to_string(max_length) + " leaves no room for the " + std::to_string(specials) +
         " special tokens asked for");
  Encoder encoder(index, unk, static_cast<size_t>(max_length - specials));

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
