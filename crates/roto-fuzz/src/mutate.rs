//! The mutator: a seeded generator and the edits it makes to corpus entries.
//!
//! Everything is deterministic for a seed, so a run can be repeated exactly. The edits are
//! those that find parser bugs without coverage feedback: bit flips, byte inserts and
//! deletes, dictionary tokens, splices between corpus entries, repetition of a chunk, and
//! wrapping an input in thousands of a target's opening and closing tokens (deep nesting).

/// The largest input the mutator builds (deep nesting needs room).
pub const MAX_INPUT: usize = 256 * 1024;

/// SplitMix64: small, fast, and good enough to drive mutations.
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn bits(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`0` when `n` is `0`).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.bits() % n as u64) as usize
        }
    }

    /// A count from 1 up to `2^max_bits`, small counts far likelier than large ones.
    pub fn count(&mut self, max_bits: usize) -> usize {
        let bits = self.below(max_bits + 1);
        1 + self.below(1 << bits)
    }
}

/// What a target tells the mutator about its language.
pub struct Grammar {
    /// Tokens worth inserting whole (keywords, operators, delimiters).
    pub dictionary: &'static [&'static str],
    /// Opening and closing tokens that nest.
    pub nesting: &'static [(&'static str, &'static str)],
}

/// Bytes that break parsers more often than random ones.
const INTERESTING: &[u8] = b"\x00\xff()[]{}<>\"'\\,.:;=*?#$&|%\x80\xc3\xa9\n\r\t ";

/// Builds mutated inputs from a corpus.
pub struct Mutator<'g> {
    rng: Rng,
    grammar: &'g Grammar,
}

impl<'g> Mutator<'g> {
    /// A mutator for `grammar` seeded with `seed`.
    pub fn new(seed: u64, grammar: &'g Grammar) -> Mutator<'g> {
        Mutator {
            rng: Rng::new(seed),
            grammar,
        }
    }

    /// A new input: a corpus entry with one to four edits.
    pub fn input(&mut self, corpus: &[Vec<u8>]) -> Vec<u8> {
        let mut data = corpus
            .get(self.rng.below(corpus.len()))
            .cloned()
            .unwrap_or_default();
        for _ in 0..=self.rng.below(4) {
            self.edit(&mut data, corpus);
            data.truncate(MAX_INPUT);
        }
        data
    }

    fn edit(&mut self, data: &mut Vec<u8>, corpus: &[Vec<u8>]) {
        match self.rng.below(10) {
            0 => self.flip(data),
            1 => self.insert_byte(data),
            2 => self.delete(data),
            3 | 4 => self.insert_token(data),
            5 => self.splice(data, corpus),
            6 => self.repeat(data),
            7 => self.nest(data),
            8 => self.overwrite(data),
            _ => self.truncate(data),
        }
    }

    fn flip(&mut self, data: &mut [u8]) {
        if !data.is_empty() {
            let at = self.rng.below(data.len());
            data[at] ^= 1 << self.rng.below(8);
        }
    }

    fn insert_byte(&mut self, data: &mut Vec<u8>) {
        let at = self.rng.below(data.len() + 1);
        let byte = INTERESTING[self.rng.below(INTERESTING.len())];
        data.insert(at, byte);
    }

    fn overwrite(&mut self, data: &mut [u8]) {
        if !data.is_empty() {
            let at = self.rng.below(data.len());
            data[at] = INTERESTING[self.rng.below(INTERESTING.len())];
        }
    }

    fn delete(&mut self, data: &mut Vec<u8>) {
        if !data.is_empty() {
            let at = self.rng.below(data.len());
            let len = self.rng.count(4).min(data.len() - at);
            data.drain(at..at + len);
        }
    }

    fn truncate(&mut self, data: &mut Vec<u8>) {
        let at = self.rng.below(data.len() + 1);
        data.truncate(at);
    }

    fn insert_token(&mut self, data: &mut Vec<u8>) {
        let tokens = self.grammar.dictionary;
        if tokens.is_empty() {
            return self.insert_byte(data);
        }
        let token = tokens[self.rng.below(tokens.len())].as_bytes();
        let at = self.rng.below(data.len() + 1);
        data.splice(at..at, token.iter().copied());
    }

    /// The start of this input joined to the end of another corpus entry.
    fn splice(&mut self, data: &mut Vec<u8>, corpus: &[Vec<u8>]) {
        let Some(other) = corpus.get(self.rng.below(corpus.len())) else {
            return;
        };
        let keep = self.rng.below(data.len() + 1);
        let from = self.rng.below(other.len() + 1);
        data.truncate(keep);
        data.extend_from_slice(&other[from..]);
    }

    /// A chunk of the input repeated many times in place.
    fn repeat(&mut self, data: &mut Vec<u8>) {
        if data.is_empty() {
            return;
        }
        let at = self.rng.below(data.len());
        let len = self.rng.count(4).min(data.len() - at);
        let chunk = data[at..at + len].to_vec();
        let times = self.rng.count(13);
        let repeated: Vec<u8> = chunk.iter().copied().cycle().take(len * times).collect();
        data.splice(at..at, repeated);
    }

    /// The input, or a part of it, wrapped in many levels of a nesting pair.
    fn nest(&mut self, data: &mut Vec<u8>) {
        let pairs = self.grammar.nesting;
        if pairs.is_empty() {
            return self.repeat(data);
        }
        let (open, close) = pairs[self.rng.below(pairs.len())];
        let depth = self.rng.count(15);
        let at = self.rng.below(data.len() + 1);
        let end = at + self.rng.below(data.len() - at + 1);
        let mut out = data[..at].to_vec();
        out.extend(open.as_bytes().repeat(depth));
        out.extend_from_slice(&data[at..end]);
        if self.rng.below(4) != 0 {
            out.extend(close.as_bytes().repeat(depth));
        }
        out.extend_from_slice(&data[end..]);
        *data = out;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRAMMAR: Grammar = Grammar {
        dictionary: &["AND", "("],
        nesting: &[("(", ")")],
    };

    #[test]
    fn the_same_seed_makes_the_same_inputs() {
        let corpus = vec![b"a = b".to_vec(), b"(x)".to_vec()];
        let run = |seed| {
            let mut m = Mutator::new(seed, &GRAMMAR);
            (0..200).map(|_| m.input(&corpus)).collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        assert!(run(7).iter().all(|i| i.len() <= MAX_INPUT));
    }

    #[test]
    fn nesting_builds_deep_inputs() {
        let corpus = vec![b"a".to_vec()];
        let mut m = Mutator::new(1, &GRAMMAR);
        let deepest = (0..2000)
            .map(|_| m.input(&corpus))
            .map(|i| i.iter().filter(|b| **b == b'(').count())
            .max()
            .unwrap_or(0);
        assert!(deepest > 4096, "{deepest}");
    }
}
