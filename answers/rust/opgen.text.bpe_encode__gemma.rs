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
use opgen::{Error, Result};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

fn mix(mut h: u64) -> u64 {
    // splitmix64's finalizer: spreads the bits the table index uses
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58476d1ce4e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d049bb133111eb);
    h ^ (h >> 31)
}

fn hash_bytes(bytes: &[u8]) -> u64 {
    // eight bytes at a time: pieces are short
    let mut h = 0x9e3779b97f4a7c15u64 ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let word = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h ^ word).wrapping_mul(0xff51afd7ed558ccd);
        h ^= h >> 32;
    }
    let mut tail = 0u64;
    for (k, &b) in chunks.remainder().iter().enumerate() {
        tail |= (b as u64) << (8 * k);
    }
    mix(h ^ tail)
}

fn table_size(entries: usize) -> usize {
    // a power of two at most half full
    let mut cap = 16;
    while cap < 2 * entries {
        cap <<= 1;
    }
    cap
}

/// The vocabulary as an open-addressing hash table of ids (with 32 bits of the hash per slot,
/// so most probes that do not match never touch the piece's bytes).
struct VocabIndex<'a> {
    vocab: &'a [&'a str],
    ids: Vec<i32>,
    tags: Vec<u32>,
    mask: usize,
}

impl<'a> VocabIndex<'a> {
    fn new(vocab: &'a [&'a str]) -> Result<Self> {
        if vocab.len() > i32::MAX as usize {
            return Err(Error::value("the vocabulary has more than 2^31 - 1 pieces"));
        }
        let cap = table_size(vocab.len());
        let mut index = VocabIndex { vocab, ids: vec![-1; cap], tags: vec![0; cap], mask: cap - 1 };
        for (id, piece) in vocab.iter().enumerate() {
            let h = hash_bytes(piece.as_bytes());
            let tag = (h >> 32) as u32;
            let mut slot = (h as usize) & index.mask;
            while index.ids[slot] >= 0 {
                let other = index.ids[slot];
                if index.tags[slot] == tag && vocab[other as usize] == *piece {
                    return Err(Error::value(format!(
                        "the vocabulary repeats the piece '{}' (ids {} and {})",
                        piece, other, id
                    )));
                }
                slot = (slot + 1) & index.mask;
            }
            index.ids[slot] = id as i32;
            index.tags[slot] = tag;
        }
        Ok(index)
    }

    fn find(&self, bytes: &[u8]) -> i32 {
        let h = hash_bytes(bytes);
        let tag = (h >> 32) as u32;
        let mut slot = (h as usize) & self.mask;
        while self.ids[slot] >= 0 {
            if self.tags[slot] == tag && self.vocab[self.ids[slot] as usize].as_bytes() == bytes {
                return self.ids[slot];
            }
            slot = (slot + 1) & self.mask;
        }
        -1
    }

    fn require(&self, piece: &str) -> Result<i32> {
        let id = self.find(piece.as_bytes());
        if id < 0 {
            return Err(Error::value(format!("the vocabulary lacks the special token {}", piece)));
        }
        Ok(id)
    }
}

const EMPTY_PAIR: u64 = u64::MAX; // no pair of ids below 2^31 packs to this

fn pack(left: i32, right: i32) -> u64 {
    ((left as u32 as u64) << 32) | (right as u32 as u64)
}

/// (left, right) -> (rank, merged), a later merge of the same pair overwriting an earlier one.
struct MergeTable {
    keys: Vec<u64>,
    values: Vec<(u32, i32)>,
    mask: usize,
}

impl MergeTable {
    fn new(merges: &[i64], vocab: &[&str]) -> Result<Self> {
        if merges.len() % 3 != 0 {
            return Err(Error::value(format!(
                "merges holds {} ints; it must be (left, right, merged) id triples",
                merges.len()
            )));
        }
        let count = merges.len() / 3;
        if count > u32::MAX as usize {
            return Err(Error::value("more than 2^32 merges"));
        }
        let n = vocab.len() as i64;
        let cap = table_size(count);
        let mut table = MergeTable { keys: vec![EMPTY_PAIR; cap], values: vec![(0, 0); cap], mask: cap - 1 };
        for (r, t) in merges.chunks_exact(3).enumerate() {
            let (left, right, merged) = (t[0], t[1], t[2]);
            if [left, right, merged].iter().any(|&i| i < 0 || i >= n) {
                return Err(Error::value(format!(
                    "merge {} ({}, {}, {}) names an id outside the vocabulary of {} pieces",
                    r, left, right, merged, n
                )));
            }
        }
        for (r, t) in merges.chunks_exact(3).enumerate() {
            let (left, right, merged) = (t[0] as usize, t[1] as usize, t[2] as usize);
            let (a, b, m) = (vocab[left].as_bytes(), vocab[right].as_bytes(), vocab[merged].as_bytes());
            if m.len() != a.len() + b.len() || &m[..a.len()] != a || &m[a.len()..] != b {
                return Err(Error::value(format!(
                    "merge {}: piece {} '{}' is not '{}' + '{}'",
                    r, merged, vocab[merged], vocab[left], vocab[right]
                )));
            }
            let key = pack(left as i32, right as i32);
            let mut slot = (mix(key) as usize) & table.mask;
            while table.keys[slot] != EMPTY_PAIR && table.keys[slot] != key {
                slot = (slot + 1) & table.mask;
            }
            table.keys[slot] = key;
            table.values[slot] = (r as u32, merged as i32);
        }
        Ok(table)
    }

    /// (rank, merged) of the pair, if it has a merge.
    fn find(&self, left: i32, right: i32) -> Option<(u32, i32)> {
        let key = pack(left, right);
        let mut slot = (mix(key) as usize) & self.mask;
        loop {
            if self.keys[slot] == key {
                return Some(self.values[slot]);
            }
            if self.keys[slot] == EMPTY_PAIR {
                return None;
            }
            slot = (slot + 1) & self.mask;
        }
    }
}

const NO_EDGE: u32 = u32::MAX; // nodes are below 2^24, so no key is this

/// The added tokens as a byte trie: the longest one starting at a position, found by walking
/// the trie from there (leftmost-longest matching when tried at each position in turn).
struct AddedTrie {
    keys: Vec<u32>, // (parent node << 8) | byte
    children: Vec<u32>,
    terminal: Vec<i32>, // per node: the id of the added token ending there, or -1
    first: [bool; 256],
    longest: usize,
    mask: usize,
}

impl AddedTrie {
    fn new(added: &[i64], vocab: &[&str]) -> Result<Self> {
        let n = vocab.len() as i64;
        let mut total = 0usize;
        for &id in added {
            if id < 0 || id >= n {
                return Err(Error::value(format!(
                    "added names id {}, outside the vocabulary of {} pieces",
                    id, n
                )));
            }
            total += vocab[id as usize].len();
        }
        if total >= 1 << 24 {
            return Err(Error::value("the added tokens hold more than 2^24 bytes"));
        }
        let cap = table_size(total + 1);
        let mut trie = AddedTrie {
            keys: vec![NO_EDGE; cap],
            children: vec![0; cap],
            terminal: vec![-1],
            first: [false; 256],
            longest: 0,
            mask: cap - 1,
        };
        for &id in added {
            let piece = vocab[id as usize].as_bytes();
            if piece.is_empty() {
                continue; // an empty added token never matches
            }
            trie.first[piece[0] as usize] = true;
            let mut node = 0u32;
            for &c in piece {
                let key = (node << 8) | c as u32;
                let mut slot = (mix(key as u64) as usize) & trie.mask;
                while trie.keys[slot] != NO_EDGE && trie.keys[slot] != key {
                    slot = (slot + 1) & trie.mask;
                }
                if trie.keys[slot] == NO_EDGE {
                    trie.keys[slot] = key;
                    trie.children[slot] = trie.terminal.len() as u32;
                    trie.terminal.push(-1);
                }
                node = trie.children[slot];
            }
            trie.terminal[node as usize] = id as i32;
            trie.longest = trie.longest.max(piece.len());
        }
        Ok(trie)
    }

    /// The longest added token at the start of s: (id, length in bytes).
    fn longest_at(&self, s: &[u8]) -> Option<(i32, usize)> {
        let mut node = 0u32;
        let mut best = None;
        for (i, &c) in s.iter().take(self.longest).enumerate() {
            let key = (node << 8) | c as u32;
            let mut slot = (mix(key as u64) as usize) & self.mask;
            while self.keys[slot] != NO_EDGE && self.keys[slot] != key {
                slot = (slot + 1) & self.mask;
            }
            if self.keys[slot] == NO_EDGE {
                break;
            }
            node = self.children[slot];
            let t = self.terminal[node as usize];
            if t >= 0 {
                best = Some((t, i + 1));
            }
        }
        best
    }
}

/// Length of the UTF-8 sequence starting at s[i] (the texts arrive as &str, so always valid).
fn char_length(b: u8) -> usize {
    match b {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

#[derive(Clone, Copy)]
struct Symbol {
    id: i32,
    prev: i32,
    next: i32, // neighbours in the word, -1 at the ends
    alive: bool,
}

const SPACE_MARK: &[u8] = "\u{2581}".as_bytes(); // "▁", what a space becomes

struct Encoder<'a> {
    index: &'a VocabIndex<'a>,
    merges: &'a MergeTable,
    added: &'a AddedTrie,
    unk: i32,
    limit: usize,
    ascii_id: [i32; 128],
    byte_id: [i32; 256],
    symbols: Vec<Symbol>,
    heap: BinaryHeap<Reverse<(u32, i32, i32)>>, // (rank, position of the left symbol, merged)
}

impl<'a> Encoder<'a> {
    fn new(index: &'a VocabIndex<'a>, merges: &'a MergeTable, added: &'a AddedTrie, unk: i32, limit: usize) -> Self {
        let space_id = index.find(SPACE_MARK);
        let mut ascii_id = [-1i32; 128];
        for (c, slot) in ascii_id.iter_mut().enumerate() {
            *slot = if c == b' ' as usize { space_id } else { index.find(&[c as u8]) };
        }
        const HEX: &[u8; 16] = b"0123456789ABCDEF";
        let mut byte_id = [-1i32; 256];
        for (b, slot) in byte_id.iter_mut().enumerate() {
            *slot = index.find(&[b'<', b'0', b'x', HEX[b >> 4], HEX[b & 15], b'>']);
        }
        Encoder { index, merges, added, unk, limit, ascii_id, byte_id, symbols: Vec::new(), heap: BinaryHeap::new() }
    }

    /// Tokens of one text (without <bos>/<eos>), at most `limit` of them, appended to out.
    fn encode(&mut self, text: &str, out: &mut Vec<i64>) {
        let base = out.len();
        let s = text.as_bytes();
        let (mut begin, mut at) = (0usize, 0usize);
        while at < s.len() && out.len() - base < self.limit {
            let hit = if self.added.first[s[at] as usize] { self.added.longest_at(&s[at..]) } else { None };
            match hit {
                None => at += 1,
                Some((id, length)) => {
                    self.word(&s[begin..at], out);
                    out.push(id as i64);
                    at += length;
                    begin = at;
                }
            }
        }
        if out.len() - base < self.limit {
            self.word(&s[begin..], out);
        }
        out.truncate(base + self.limit.min(out.len() - base));
    }

    fn add_symbol(&mut self, id: i32) {
        let at = self.symbols.len() as i32;
        if let Some(last) = self.symbols.last_mut() {
            last.next = at;
        }
        self.symbols.push(Symbol { id, prev: at - 1, next: -1, alive: true });
    }

    fn fallback(&mut self, bytes: &[u8], unk_pending: &mut bool) {
        if bytes.iter().any(|&b| self.byte_id[b as usize] < 0) {
            *unk_pending = true; // joins the pending <unk>, if any
            return;
        }
        for &b in bytes {
            let id = self.byte_id[b as usize];
            self.add_symbol(id);
        }
    }

    /// Initial symbols of one stretch (spaces read as "▁"), then BPE, then its tokens into out.
    fn word(&mut self, s: &[u8], out: &mut Vec<i64>) {
        if s.is_empty() {
            return;
        }
        self.symbols.clear();
        let mut unk_pending = false; // fused unknown characters not yet emitted (see the spec, step 3)
        let mut i = 0;
        while i < s.len() {
            let len = char_length(s[i]).min(s.len() - i);
            let id = if s[i] < 0x80 { self.ascii_id[s[i] as usize] } else { self.index.find(&s[i..i + len]) };
            if id >= 0 {
                if unk_pending {
                    self.add_symbol(self.unk);
                }
                unk_pending = false;
                self.add_symbol(id);
            } else if s[i] == b' ' {
                self.fallback(SPACE_MARK, &mut unk_pending); // "▁" is not in the vocabulary
            } else {
                self.fallback(&s[i..i + len], &mut unk_pending);
            }
            i += len;
        }
        if unk_pending {
            self.add_symbol(self.unk);
        }
        self.merge_all();
        out.extend(self.symbols.iter().filter(|sym| sym.alive).map(|sym| sym.id as i64));
    }

    fn push_candidate(&mut self, pos: i32) {
        let left = self.symbols[pos as usize];
        if left.next < 0 {
            return;
        }
        if let Some((rank, merged)) = self.merges.find(left.id, self.symbols[left.next as usize].id) {
            self.heap.push(Reverse((rank, pos, merged)));
        }
    }

    fn merge_all(&mut self) {
        self.heap.clear();
        for pos in 0..self.symbols.len().saturating_sub(1) {
            if let Some((rank, merged)) = self.merges.find(self.symbols[pos].id, self.symbols[pos + 1].id) {
                self.heap.push(Reverse((rank, pos as i32, merged)));
            }
        }
        while let Some(Reverse((_, pos, merged))) = self.heap.pop() {
            let left = self.symbols[pos as usize];
            if !left.alive || left.next < 0 {
                continue;
            }
            let right = self.symbols[left.next as usize];
            // A stale candidate: the pair at pos changed since it was pushed.
            match self.merges.find(left.id, right.id) {
                Some((_, now)) if now == merged => {}
                _ => continue,
            }
            self.symbols[pos as usize].id = merged;
            self.symbols[pos as usize].next = right.next;
            self.symbols[left.next as usize].alive = false;
            if right.next >= 0 {
                self.symbols[right.next as usize].prev = pos;
            }
            if left.prev >= 0 {
                self.push_candidate(left.prev);
            }
            self.push_candidate(pos);
        }
    }
}

pub fn opgen_text_bpe_encode__gemma(vocab: &[&str], merges: &[i64], added: &[i64], texts: &[&str], add_bos: bool,
                                    add_eos: bool, max_length: i64) -> Result<Vec<i64>> {
    let index = VocabIndex::new(vocab)?;
    let pad = index.require("<pad>")? as i64;
    let eos = index.require("<eos>")? as i64;
    let bos = index.require("<bos>")? as i64;
    let unk = index.require("<unk>")?;
    let specials = add_bos as i64 + add_eos as i64;
    if max_length < specials {
        return Err(Error::value(format!(
            "max_length {} leaves no room for the {} special tokens asked for",
            max_length, specials
        )));
    }
    let table = MergeTable::new(merges, vocab)?;
    let trie = AddedTrie::new(added, vocab)?;
    let mut encoder = Encoder::new(&index, &table, &trie, unk, (max_length - specials) as usize);

    if texts.is_empty() {
        return Ok(Vec::new());
    }
    let mut tokens = Vec::new();
    let mut starts = Vec::with_capacity(texts.len() + 1);
    let mut longest = 0;
    for text in texts {
        starts.push(tokens.len());
        encoder.encode(text, &mut tokens);
        longest = longest.max(tokens.len() - starts[starts.len() - 1]);
    }
    starts.push(tokens.len());

    let rows = texts.len();
    let width = longest + specials as usize;
    let mut result = vec![0i64; 2 * rows * width];
    let (ids, mask) = result.split_at_mut(rows * width);
    for r in 0..rows {
        let row = &mut ids[r * width..(r + 1) * width];
        let mut k = 0;
        if add_bos {
            row[k] = bos;
            k += 1;
        }
        let own = &tokens[starts[r]..starts[r + 1]];
        row[k..k + own.len()].copy_from_slice(own);
        k += own.len();
        if add_eos {
            row[k] = eos;
            k += 1;
        }
        mask[r * width..r * width + k].fill(1);
        row[k..].fill(pad);
    }
    Ok(result)
}
