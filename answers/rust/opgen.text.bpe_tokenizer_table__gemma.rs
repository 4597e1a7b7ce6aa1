// opgen.text.bpe_tokenizer_table, overload gemma: Gemma's BPE tokenizer (vocabulary, merges,
// added tokens) laid out once as one flat int64 table for opgen.text.bpe_encode_table.
//
// The layout is the spec's, value for value: a header of 12; the vocabulary's open-addressing
// slots (FNV-1a of the piece's bytes, h ^ (h >> 29), linear probing, pieces in id order); the
// 256 byte-fallback ids; the merge slots (key left * 2^31 + right, splitmix64's finalizer,
// a repeated pair overwritten in place by its later rank); the added pieces' trie as hashed
// edges (key node * 256 + byte), a terminal id per node and 256 first-byte flags; the pieces'
// byte offsets and their bytes packed 8 to a little-endian word.
//
// The checks come first and in bpe_encode's order: a repeated piece (found while the pieces
// are hashed into their slots), a missing special token, merges that are not id triples inside
// the vocabulary whose merged piece is the left one followed by the right one, and added ids
// outside the vocabulary.
use opgen::{Error, Result};

const HEADER: usize = 12;
const SPECIALS: [&str; 4] = ["<pad>", "<eos>", "<bos>", "<unk>"];

/// The home hash of a piece: 64-bit FNV-1a, then h ^ (h >> 29).
fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xCBF29CE484222325;
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x100000001B3);
    }
    h ^ (h >> 29)
}

/// splitmix64's finalizer: the home hash of an int key.
fn mix(mut h: u64) -> u64 {
    h ^= h >> 30;
    h = h.wrapping_mul(0xBF58476D1CE4E5B9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94D049BB133111EB);
    h ^ (h >> 31)
}

/// The smallest power of two that is at least 16 and at least 2 * entries.
fn slot_count(entries: usize) -> usize {
    let mut c = 16usize;
    while c < entries.saturating_mul(2) {
        c *= 2;
    }
    c
}

/// Python's repr of a str, for the error messages (as the reference writes them).
fn repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7F => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// The vocabulary's slots while they are filled: ids in id order.
struct VocabSlots<'a> {
    vocab: &'a [&'a str],
    slots: Vec<i64>,
    mask: usize,
}

impl<'a> VocabSlots<'a> {
    /// Every piece in its slot, or the ValueError of the first piece that repeats an earlier one.
    fn new(vocab: &'a [&'a str]) -> Result<Self> {
        let cap = slot_count(vocab.len());
        let mut index = VocabSlots { vocab, slots: vec![-1; cap], mask: cap - 1 };
        for (id, piece) in vocab.iter().enumerate() {
            let mut slot = fnv(piece.as_bytes()) as usize & index.mask;
            loop {
                let other = index.slots[slot];
                if other < 0 {
                    break;
                }
                if vocab[other as usize] == *piece {
                    return Err(Error::value(format!("the vocabulary repeats the piece {}", repr(piece))));
                }
                slot = (slot + 1) & index.mask;
            }
            index.slots[slot] = id as i64;
        }
        Ok(index)
    }

    fn find(&self, piece: &str) -> i64 {
        let mut slot = fnv(piece.as_bytes()) as usize & self.mask;
        loop {
            let id = self.slots[slot];
            if id < 0 || self.vocab[id as usize] == piece {
                return id;
            }
            slot = (slot + 1) & self.mask;
        }
    }
}

pub fn opgen_text_bpe_tokenizer_table__gemma(vocab: &[&str], merges: &[i64], added: &[i64]) -> Result<Vec<i64>> {
    let n = vocab.len();
    let vocab_slots = VocabSlots::new(vocab)?;
    let mut specials = [0i64; 4];
    let mut missing = Vec::new();
    for (k, name) in SPECIALS.iter().enumerate() {
        specials[k] = vocab_slots.find(name);
        if specials[k] < 0 {
            missing.push(repr(name));
        }
    }
    if !missing.is_empty() {
        return Err(Error::value(format!("the vocabulary lacks the special tokens [{}]", missing.join(", "))));
    }

    // Merges: checked triple by triple (ids first, then the pieces), each inserted as it passes.
    if merges.len() % 3 != 0 {
        return Err(Error::value(format!(
            "merges holds {} ints; it must be (left, right, merged) id triples",
            merges.len()
        )));
    }
    let r_count = merges.len() / 3;
    let cm = slot_count(r_count);
    let mut mslots = vec![-1i64; 3 * cm];
    let in_vocab = |i: i64| i >= 0 && (i as u64) < n as u64;
    for (r, t) in merges.chunks_exact(3).enumerate() {
        let (left, right, merged) = (t[0], t[1], t[2]);
        if !(in_vocab(left) && in_vocab(right) && in_vocab(merged)) {
            return Err(Error::value(format!(
                "merge {} ({}, {}, {}) names an id outside the vocabulary of {} pieces",
                r, left, right, merged, n
            )));
        }
        let (a, b, m) = (
            vocab[left as usize].as_bytes(),
            vocab[right as usize].as_bytes(),
            vocab[merged as usize].as_bytes(),
        );
        if m.len() != a.len() + b.len() || &m[..a.len()] != a || &m[a.len()..] != b {
            return Err(Error::value(format!(
                "merge {}: piece {} {} is not {} + {}",
                r,
                merged,
                repr(vocab[merged as usize]),
                repr(vocab[left as usize]),
                repr(vocab[right as usize])
            )));
        }
        let key = left.wrapping_mul(1i64 << 31).wrapping_add(right);
        let mut slot = mix(key as u64) as usize & (cm - 1);
        while mslots[3 * slot] >= 0 && mslots[3 * slot] != key {
            slot = (slot + 1) & (cm - 1);
        }
        mslots[3 * slot] = key;
        mslots[3 * slot + 1] = r as i64;
        mslots[3 * slot + 2] = merged;
    }

    // Added tokens: ids checked, then their pieces walked into the trie in order.
    let mut added_bytes = 0usize;
    for &id in added {
        if !in_vocab(id) {
            return Err(Error::value(format!("added names id {}, outside the vocabulary of {} pieces", id, n)));
        }
        added_bytes += vocab[id as usize].len();
    }
    let ce = slot_count(added_bytes);
    let mut eslots = vec![-1i64; 2 * ce];
    let mut terminal: Vec<i64> = vec![-1];
    let mut first = [0i64; 256];
    let mut longest = 0usize;
    for &id in added {
        let piece = vocab[id as usize].as_bytes();
        if piece.is_empty() {
            continue; // an empty added token never matches
        }
        first[piece[0] as usize] = 1;
        longest = longest.max(piece.len());
        let mut node = 0i64;
        for &b in piece {
            let key = node * 256 + b as i64;
            let mut slot = mix(key as u64) as usize & (ce - 1);
            while eslots[2 * slot] >= 0 && eslots[2 * slot] != key {
                slot = (slot + 1) & (ce - 1);
            }
            if eslots[2 * slot] < 0 {
                eslots[2 * slot] = key;
                eslots[2 * slot + 1] = terminal.len() as i64;
                terminal.push(-1);
            }
            node = eslots[2 * slot + 1];
        }
        terminal[node as usize] = id;
    }

    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut fallback = [-1i64; 256];
    let mut name = String::with_capacity(6);
    for (b, slot) in fallback.iter_mut().enumerate() {
        name.clear();
        name.push_str("<0x");
        name.push(HEX[b >> 4] as char);
        name.push(HEX[b & 15] as char);
        name.push('>');
        *slot = vocab_slots.find(&name);
    }

    let total: usize = vocab.iter().map(|p| p.len()).sum();
    let cv = vocab_slots.slots.len();
    let length = HEADER + cv + 256 + 3 * cm + 2 * ce + terminal.len() + 256 + (n + 1) + total.div_ceil(8);
    let mut out: Vec<i64> = Vec::with_capacity(length);
    out.extend_from_slice(&[
        n as i64,
        cv as i64,
        r_count as i64,
        cm as i64,
        terminal.len() as i64,
        ce as i64,
        longest as i64,
        total as i64,
    ]);
    out.extend_from_slice(&specials);
    out.extend_from_slice(&vocab_slots.slots);
    out.extend_from_slice(&fallback);
    out.extend_from_slice(&mslots);
    out.extend_from_slice(&eslots);
    out.extend_from_slice(&terminal);
    out.extend_from_slice(&first);
    let mut offset = 0i64;
    out.push(0);
    for piece in vocab {
        offset += piece.len() as i64;
        out.push(offset);
    }
    // The blob: every piece's bytes in id order, 8 to a little-endian word, the last padded with 0.
    let mut word = [0u8; 8];
    let mut fill = 0usize;
    for piece in vocab {
        for &b in piece.as_bytes() {
            word[fill] = b;
            fill += 1;
            if fill == 8 {
                out.push(i64::from_le_bytes(word));
                fill = 0;
            }
        }
    }
    if fill > 0 {
        word[fill..].fill(0);
        out.push(i64::from_le_bytes(word));
    }
    debug_assert_eq!(out.len(), length);
    Ok(out)
}
