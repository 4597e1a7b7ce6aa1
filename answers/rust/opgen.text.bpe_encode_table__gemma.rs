// opgen.text.bpe_encode_table, overload gemma: opgen.text.bpe_encode (Gemma's tokenizer.json
// pipeline: added tokens matched in the raw text, spaces -> "▁", BPE with byte fallback and fused
// <unk>, "<bos> $A <eos>" as asked, truncation, padding to the longest), ids then attention
// masks, flat, over a tokenizer prepared once by opgen.text.bpe_tokenizer_table.
//
// The table is read in place: pieces through its vocabulary slots (FNV-1a, h ^ (h >> 29)),
// merges through its merge slots and added tokens through its trie edges (splitmix64's
// finalizer), all linear probing; nothing proportional to the tokenizer is built or scanned per
// call. The header is checked against the table's length once (O(1), plus the 512 values of the
// byte-fallback ids and first-byte flags); every id, rank, node and offset read from a slot is
// checked as it is read, and probing stops after a table's slot count, so a table that is not
// one bpe_tokenizer_table built is a ValueError, never a read outside it nor an endless loop.
//
// Each stretch of text between added tokens is one BPE word: its symbols form a linked list and
// the candidate merges a binary heap ordered by (rank, position), so a word of n symbols costs
// O(n log n), as in `tokenizers`' own Word::merge_all.
use opgen::{Error, Lane, Result, TensorRef};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const HEADER: usize = 12;

fn not_a_table() -> Error {
    Error::value("the table is not one opgen.text.bpe_tokenizer_table built")
}

/// The home hash of a piece: 64-bit FNV-1a, then h ^ (h >> 29).
fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xCBF29CE484222325;
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x100000001B3);
    }
    h ^ (h >> 29)
}

/// splitmix64's finalizer: the home hash of an int key (a merge's pair, a trie edge).
fn mix(mut h: u64) -> u64 {
    h ^= h >> 30;
    h = h.wrapping_mul(0xBF58476D1CE4E5B9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94D049BB133111EB);
    h ^ (h >> 31)
}

/// The smallest power of two that is at least 16 and at least 2 * entries.
fn slot_count_ok(count: u64, entries: u64) -> bool {
    count.is_power_of_two() && count >= 16 && count >= entries.saturating_mul(2)
}

/// The table's int64 words in order, read in place.
enum Words<'a> {
    Flat(&'a [i64]),
    Strided(Lane<'a, i64>),
}

impl Words<'_> {
    fn len(&self) -> usize {
        match self {
            Words::Flat(s) => s.len(),
            Words::Strided(l) => l.len(),
        }
    }
    /// Word i; callers keep i < len().
    #[inline]
    fn at(&self, i: usize) -> i64 {
        match self {
            Words::Flat(s) => s[i],
            Words::Strided(l) => l.get(i),
        }
    }
}

struct Specials {
    pad: i64,
    eos: i64,
    bos: i64,
    unk: i64,
}

/// A bpe_tokenizer_table table, its parts located and its header checked against its length.
struct Table<'a> {
    words: Words<'a>,
    n: u64,
    vslots: usize, // index of the first vocabulary slot
    vmask: usize,  // Cv - 1
    ranks: u64,    // R
    mslots: usize,
    mmask: usize,
    nodes: u64, // N
    eslots: usize,
    emask: usize,
    terminal: usize,
    offsets: usize,
    blob: usize,
    total: u64, // B
    longest: usize,
    byte_id: [i64; 256],
    first: [bool; 256],
}

impl<'a> Table<'a> {
    fn new(table: &TensorRef<'a, i64>) -> Result<(Table<'a>, Specials)> {
        if table.ndim() != 1 {
            return Err(not_a_table()); // the table op's result is a list: one dim
        }
        let words = match table.as_slice() {
            Some(s) => Words::Flat(s),
            None => Words::Strided(table.lane(0, &[])),
        };
        let len = words.len();
        if len < HEADER {
            return Err(not_a_table());
        }
        let len64 = len as u64;
        // every count in 0..=len first (B in 0..=8 len), so the sums below cannot overflow
        let mut h = [0u64; 8];
        for (k, v) in h.iter_mut().enumerate() {
            let raw = words.at(k);
            let bound = if k == 7 { len64.saturating_mul(8) } else { len64 };
            if raw < 0 || raw as u64 > bound {
                return Err(not_a_table());
            }
            *v = raw as u64;
        }
        let [n, cv, ranks, cm, nodes, ce, longest, total] = h;
        if !slot_count_ok(cv, n) || !slot_count_ok(cm, ranks) || nodes < 1 || !slot_count_ok(ce, nodes - 1) {
            return Err(not_a_table());
        }
        if longest > total {
            return Err(not_a_table());
        }
        let expected = HEADER as u64 + cv + 256 + 3 * cm + 2 * ce + nodes + 256 + n + 1 + total.div_ceil(8);
        if expected != len64 {
            return Err(not_a_table());
        }
        let vslots = HEADER;
        let fallback = vslots + cv as usize;
        let mslots = fallback + 256;
        let eslots = mslots + 3 * cm as usize;
        let terminal = eslots + 2 * ce as usize;
        let first_at = terminal + nodes as usize;
        let offsets = first_at + 256;
        let blob = offsets + n as usize + 1;
        if words.at(offsets) != 0 || words.at(offsets + n as usize) != total as i64 {
            return Err(not_a_table());
        }
        let in_vocab = |id: i64| id >= 0 && (id as u64) < n;
        let mut sp = [0i64; 4];
        for (k, id) in sp.iter_mut().enumerate() {
            *id = words.at(8 + k);
            if !in_vocab(*id) {
                return Err(not_a_table());
            }
        }
        let mut byte_id = [-1i64; 256];
        let mut first = [false; 256];
        for b in 0..256 {
            let id = words.at(fallback + b);
            if id != -1 && !in_vocab(id) {
                return Err(not_a_table());
            }
            byte_id[b] = id;
            first[b] = match words.at(first_at + b) {
                0 => false,
                1 => true,
                _ => return Err(not_a_table()),
            };
        }
        let t = Table {
            words,
            n,
            vslots,
            vmask: cv as usize - 1,
            ranks,
            mslots,
            mmask: cm as usize - 1,
            nodes,
            eslots,
            emask: ce as usize - 1,
            terminal,
            offsets,
            blob,
            total,
            longest: longest as usize,
            byte_id,
            first,
        };
        Ok((t, Specials { pad: sp[0], eos: sp[1], bos: sp[2], unk: sp[3] }))
    }

    #[inline]
    fn in_vocab(&self, id: i64) -> bool {
        id >= 0 && (id as u64) < self.n
    }

    /// Byte j of the blob (j < total).
    #[inline]
    fn byte(&self, j: usize) -> u8 {
        (self.words.at(self.blob + j / 8) >> (8 * (j % 8))) as u8
    }

    /// Id of the piece spelled `bytes`, or -1.
    fn find(&self, bytes: &[u8]) -> Result<i64> {
        let mut slot = fnv(bytes) as usize & self.vmask;
        for _ in 0..=self.vmask {
            let id = self.words.at(self.vslots + slot);
            if id == -1 {
                return Ok(-1);
            }
            if !self.in_vocab(id) {
                return Err(not_a_table());
            }
            let at = self.offsets + id as usize;
            let (a, b) = (self.words.at(at), self.words.at(at + 1));
            if a < 0 || a > b || b as u64 > self.total {
                return Err(not_a_table());
            }
            let (a, b) = (a as usize, b as usize);
            if b - a == bytes.len() && bytes.iter().enumerate().all(|(k, &c)| self.byte(a + k) == c) {
                return Ok(id);
            }
            slot = (slot + 1) & self.vmask;
        }
        Err(not_a_table()) // a built table always has empty slots (Cv >= 2n)
    }

    /// (rank, merged) of the pair (left, right), if it has a merge; left and right are ids.
    fn merge(&self, left: i64, right: i64) -> Result<Option<(u64, i64)>> {
        let key = left.wrapping_mul(1i64 << 31).wrapping_add(right);
        let mut slot = mix(key as u64) as usize & self.mmask;
        for _ in 0..=self.mmask {
            let at = self.mslots + 3 * slot;
            let k = self.words.at(at);
            if k == -1 {
                return Ok(None);
            }
            if k == key {
                let (rank, merged) = (self.words.at(at + 1), self.words.at(at + 2));
                if rank < 0 || rank as u64 >= self.ranks || !self.in_vocab(merged) {
                    return Err(not_a_table());
                }
                return Ok(Some((rank as u64, merged)));
            }
            if k < 0 {
                return Err(not_a_table());
            }
            slot = (slot + 1) & self.mmask;
        }
        Err(not_a_table()) // a built table always has empty slots (Cm >= 2R)
    }

    /// The child of `node` along byte c, if the trie has that edge.
    fn child(&self, node: u64, c: u8) -> Result<Option<u64>> {
        let key = (node * 256 + c as u64) as i64;
        let mut slot = mix(key as u64) as usize & self.emask;
        for _ in 0..=self.emask {
            let at = self.eslots + 2 * slot;
            let k = self.words.at(at);
            if k == -1 {
                return Ok(None);
            }
            if k == key {
                let child = self.words.at(at + 1);
                if child < 1 || child as u64 >= self.nodes {
                    return Err(not_a_table());
                }
                return Ok(Some(child as u64));
            }
            if k < 0 {
                return Err(not_a_table());
            }
            slot = (slot + 1) & self.emask;
        }
        Err(not_a_table()) // a built table always has empty slots (Ce >= 2 (N - 1))
    }

    /// The longest added token at the start of s: (id, length in bytes).
    fn longest_at(&self, s: &[u8]) -> Result<Option<(i64, usize)>> {
        let mut node = 0u64;
        let mut best = None;
        for (i, &c) in s.iter().take(self.longest).enumerate() {
            match self.child(node, c)? {
                None => break,
                Some(next) => node = next,
            }
            let t = self.words.at(self.terminal + node as usize);
            if t != -1 {
                if !self.in_vocab(t) {
                    return Err(not_a_table());
                }
                best = Some((t, i + 1));
            }
        }
        Ok(best)
    }
}

/// Length of the UTF-8 sequence starting with byte b (the texts arrive as &str, so always valid).
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
    id: i64,
    prev: i32,
    next: i32, // neighbours in the word, -1 at the ends
    alive: bool,
}

const SPACE_MARK: &[u8] = "\u{2581}".as_bytes(); // "▁", what a space becomes
const NOT_LOOKED_UP: i64 = -2;

struct Encoder<'a> {
    table: &'a Table<'a>,
    unk: i64,
    limit: usize,
    ascii_id: [i64; 128], // looked up on first use (a space as "▁")
    symbols: Vec<Symbol>,
    heap: BinaryHeap<Reverse<(u64, i32, i64)>>, // (rank, position of the left symbol, merged)
}

impl<'a> Encoder<'a> {
    fn new(table: &'a Table<'a>, unk: i64, limit: usize) -> Self {
        Encoder {
            table,
            unk,
            limit,
            ascii_id: [NOT_LOOKED_UP; 128],
            symbols: Vec::new(),
            heap: BinaryHeap::new(),
        }
    }

    fn ascii(&mut self, c: u8) -> Result<i64> {
        let id = self.ascii_id[c as usize];
        if id != NOT_LOOKED_UP {
            return Ok(id);
        }
        let id = if c == b' ' { self.table.find(SPACE_MARK)? } else { self.table.find(&[c])? };
        self.ascii_id[c as usize] = id;
        Ok(id)
    }

    /// Tokens of one text (without <bos>/<eos>), at most `limit` of them, appended to out.
    fn encode(&mut self, text: &str, out: &mut Vec<i64>) -> Result<()> {
        let base = out.len();
        let s = text.as_bytes();
        let (mut begin, mut at) = (0usize, 0usize);
        while at < s.len() && out.len() - base < self.limit {
            let hit = if self.table.first[s[at] as usize] { self.table.longest_at(&s[at..])? } else { None };
            match hit {
                None => at += 1,
                Some((id, length)) => {
                    self.word(&s[begin..at], out)?;
                    out.push(id);
                    at += length;
                    begin = at;
                }
            }
        }
        if out.len() - base < self.limit {
            self.word(&s[begin..], out)?;
        }
        out.truncate(base + self.limit.min(out.len() - base));
        Ok(())
    }

    fn add_symbol(&mut self, id: i64) {
        let at = self.symbols.len() as i32;
        if let Some(last) = self.symbols.last_mut() {
            last.next = at;
        }
        self.symbols.push(Symbol { id, prev: at - 1, next: -1, alive: true });
    }

    fn fallback(&mut self, bytes: &[u8], unk_pending: &mut bool) {
        let byte_id = &self.table.byte_id;
        if bytes.iter().any(|&b| byte_id[b as usize] < 0) {
            *unk_pending = true; // joins the pending <unk>, if any
            return;
        }
        for &b in bytes {
            let id = self.table.byte_id[b as usize];
            self.add_symbol(id);
        }
    }

    /// Initial symbols of one stretch (spaces read as "▁"), then BPE, then its tokens into out.
    fn word(&mut self, s: &[u8], out: &mut Vec<i64>) -> Result<()> {
        if s.is_empty() {
            return Ok(());
        }
        self.symbols.clear();
        let mut unk_pending = false; // fused unknown characters not yet emitted (see the spec, step 3)
        let mut i = 0;
        while i < s.len() {
            let len = char_length(s[i]).min(s.len() - i);
            let id = if s[i] < 0x80 { self.ascii(s[i])? } else { self.table.find(&s[i..i + len])? };
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
        self.merge_all()?;
        out.extend(self.symbols.iter().filter(|sym| sym.alive).map(|sym| sym.id));
        Ok(())
    }

    fn push_candidate(&mut self, pos: i32) -> Result<()> {
        let left = self.symbols[pos as usize];
        if left.next < 0 {
            return Ok(());
        }
        if let Some((rank, merged)) = self.table.merge(left.id, self.symbols[left.next as usize].id)? {
            self.heap.push(Reverse((rank, pos, merged)));
        }
        Ok(())
    }

    fn merge_all(&mut self) -> Result<()> {
        self.heap.clear();
        for pos in 0..self.symbols.len().saturating_sub(1) {
            if let Some((rank, merged)) = self.table.merge(self.symbols[pos].id, self.symbols[pos + 1].id)? {
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
            match self.table.merge(left.id, right.id)? {
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
                self.push_candidate(left.prev)?;
            }
            self.push_candidate(pos)?;
        }
        Ok(())
    }
}

pub fn opgen_text_bpe_encode_table__gemma(
    table: &TensorRef<i64>,
    texts: &[&str],
    add_bos: bool,
    add_eos: bool,
    max_length: i64,
) -> Result<Vec<i64>> {
    let (table, sp) = Table::new(table)?;
    let specials = add_bos as i64 + add_eos as i64;
    if max_length < specials {
        return Err(Error::value(format!(
            "max_length {} leaves no room for the {} special tokens asked for",
            max_length, specials
        )));
    }
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    let limit = usize::try_from(max_length - specials).unwrap_or(usize::MAX);
    let mut encoder = Encoder::new(&table, sp.unk, limit);
    let mut tokens = Vec::new();
    let mut starts = Vec::with_capacity(texts.len() + 1);
    let mut longest = 0;
    for text in texts {
        starts.push(tokens.len());
        encoder.encode(text, &mut tokens)?;
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
            row[k] = sp.bos;
            k += 1;
        }
        let own = &tokens[starts[r]..starts[r + 1]];
        row[k..k + own.len()].copy_from_slice(own);
        k += own.len();
        if add_eos {
            row[k] = sp.eos;
            k += 1;
        }
        mask[r * width..r * width + k].fill(1);
        row[k..].fill(sp.pad);
    }
    Ok(result)
}
