// opgen.text.wordpiece_vocab_table, overload bert_uncased: a WordPiece vocabulary laid out once as
// one flat int64 table for opgen.text.wordpiece_encode_table:
//   [n, C, id [PAD], id [UNK], id [CLS], id [SEP], id [MASK], longest piece, longest "##" rest, B]
//   C slots (an id or -1; FNV-1a, then h ^ (h >> 29), linear probing, pieces inserted in id order)
//   n + 1 byte offsets (0, running totals, B)
//   ceil(B / 8) words of the pieces' UTF-8 bytes, concatenated, 8 to a word little-endian.
// The slots are filled as the pieces are inserted, so a repeated piece is found on its way in.
use opgen::{Error, Result};

const SPECIALS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
const HEADER: usize = 10;

/// 64-bit FNV-1a of the bytes, then mixed: h ^ (h >> 29).
fn hash(bytes: &[u8]) -> u64 {
    const PRIME: u64 = 0x100000001B3;
    let mut h: u64 = 0xCBF29CE484222325;
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(PRIME);
    }
    h ^ (h >> 29)
}

/// The slot holding the piece, or the empty slot where it would go (the slots never fill up).
fn probe(vocab: &[&str], slots: &[i64], piece: &[u8]) -> (usize, bool) {
    let mask = slots.len() - 1;
    let mut slot = hash(piece) as usize & mask;
    loop {
        let id = slots[slot];
        if id < 0 {
            return (slot, false);
        }
        if vocab[id as usize].as_bytes() == piece {
            return (slot, true);
        }
        slot = (slot + 1) & mask;
    }
}

pub fn opgen_text_wordpiece_vocab_table__bert_uncased(vocab: &[&str]) -> Result<Vec<i64>> {
    let n = vocab.len();
    let mut cap = 16usize;
    while cap < n.saturating_mul(2) {
        cap <<= 1;
    }
    let total: usize = vocab.iter().map(|p| p.len()).sum();
    let words = total.div_ceil(8);
    let mut table = Vec::with_capacity(HEADER + cap + n + 1 + words);
    table.resize(HEADER, 0);
    table.resize(HEADER + cap, -1i64);
    let (mut max_plain, mut max_cont) = (0usize, 0usize);
    {
        let slots = &mut table[HEADER..HEADER + cap];
        for (id, piece) in vocab.iter().enumerate() {
            let (slot, found) = probe(vocab, slots, piece.as_bytes());
            if found {
                return Err(Error::value(format!("the vocabulary repeats the piece '{piece}'")));
            }
            slots[slot] = id as i64;
            max_plain = max_plain.max(piece.len());
            if let Some(rest) = piece.strip_prefix("##") {
                max_cont = max_cont.max(rest.len());
            }
        }
    }
    let mut specials = [0i64; 5];
    for (k, special) in SPECIALS.iter().enumerate() {
        let (slot, found) = probe(vocab, &table[HEADER..HEADER + cap], special.as_bytes());
        if !found {
            return Err(Error::value(format!("the vocabulary lacks the special token {special}")));
        }
        specials[k] = table[HEADER + slot];
    }
    table[0] = n as i64;
    table[1] = cap as i64;
    table[2..7].copy_from_slice(&specials);
    table[7] = max_plain as i64;
    table[8] = max_cont as i64;
    table[9] = total as i64;

    let mut offset = 0usize;
    table.push(0);
    for piece in vocab {
        offset += piece.len();
        table.push(offset as i64);
    }
    // The blob: bytes gathered 8 to a word, little-endian, the last word zero-padded.
    let mut word = [0u8; 8];
    let mut fill = 0usize;
    for piece in vocab {
        for &b in piece.as_bytes() {
            word[fill] = b;
            fill += 1;
            if fill == 8 {
                table.push(i64::from_le_bytes(word));
                fill = 0;
            }
        }
    }
    if fill > 0 {
        word[fill..].fill(0);
        table.push(i64::from_le_bytes(word));
    }
    debug_assert_eq!(table.len(), HEADER + cap + n + 1 + words);
    Ok(table)
}
