//! A [`ByteDfa`] written as bytes and read back, checked: a table read from bytes holds the
//! invariants every construction guarantees (a dead state 0, every other state reachable and
//! able to reach acceptance), so masks computed from it stay live.

use super::{ByteDfa, StateId, DEAD};

impl ByteDfa {
    /// Appends the table: state count, class count and start (u32, little-endian), the 256
    /// byte classes, the transitions row by row (u32), the accepting states as a bit set.
    pub fn write_table(&self, out: &mut Vec<u8>) {
        for value in [self.state_count(), self.class_count, self.start as usize] {
            out.extend_from_slice(&(value as u32).to_le_bytes());
        }
        out.extend_from_slice(&self.classes);
        out.reserve(self.transitions.len() * 4 + self.accepting.len().div_ceil(8));
        for &to in &self.transitions {
            out.extend_from_slice(&to.to_le_bytes());
        }
        for chunk in self.accepting.chunks(8) {
            out.push(chunk.iter().enumerate().fold(0u8, |bits, (i, &a)| bits | (u8::from(a) << i)));
        }
    }

    /// Reads a table [`write_table`](Self::write_table) wrote from the front of `input`,
    /// advancing it. A table that breaks an invariant is an error, never an automaton.
    pub(crate) fn read_table(input: &mut &[u8]) -> Result<ByteDfa, String> {
        let dfa = Self::read_table_shape(input)?;
        dfa.check_trimmed()?;
        Ok(dfa)
    }

    /// [`read_table`](Self::read_table) for a table the crate embeds, which a test keeps equal
    /// to an automaton built here: every index is checked, not the trimming (a walk of the
    /// whole graph).
    pub(crate) fn read_embedded_table(table: &[u8]) -> Result<ByteDfa, String> {
        Self::read_table_shape(&mut &table[..])
    }

    /// The table's automaton, every index in range; not yet checked for trimming.
    fn read_table_shape(input: &mut &[u8]) -> Result<ByteDfa, String> {
        let states = read_u32(input)? as usize;
        let class_count = read_u32(input)? as usize;
        let start = read_u32(input)?;
        if states == 0 || !(1..=256).contains(&class_count) || start as usize >= states {
            return Err(format!("automaton of {states} states, {class_count} classes, start {start}"));
        }
        let classes: [u8; 256] = take(input, 256)?.try_into().expect("256 bytes");
        if classes.iter().any(|&c| c as usize >= class_count) {
            return Err("a byte class beyond the class count".into());
        }
        let cells = states.checked_mul(class_count).ok_or("automaton too large")?;
        let table = take(input, cells.checked_mul(4).ok_or("automaton too large")?)?;
        let transitions: Vec<StateId> =
            table.chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes"))).collect();
        if transitions.iter().any(|&to| to as usize >= states) {
            return Err("a transition to a state beyond the table".into());
        }
        let bits = take(input, states.div_ceil(8))?;
        let accepting: Vec<bool> = (0..states).map(|s| bits[s / 8] >> (s % 8) & 1 == 1).collect();
        Ok(ByteDfa { classes, class_count, transitions, accepting, start })
    }

    /// State 0 is dead (never accepting, every byte stays there); every other state is
    /// reachable from the start and reaches an accepting state. An empty language has the dead
    /// state alone.
    fn check_trimmed(&self) -> Result<(), String> {
        let states = self.state_count();
        let row = |s: usize| &self.transitions[s * self.class_count..(s + 1) * self.class_count];
        if self.accepting[0] || row(0).iter().any(|&to| to != DEAD) {
            return Err("state 0 is not dead".into());
        }
        if self.start == DEAD {
            return if states == 1 { Ok(()) } else { Err("unreachable states".into()) };
        }
        let mut reached = vec![false; states];
        reached[self.start as usize] = true;
        let mut stack = vec![self.start as usize];
        let mut predecessors: Vec<Vec<u32>> = vec![Vec::new(); states];
        while let Some(s) = stack.pop() {
            for &to in row(s) {
                if to == DEAD {
                    continue;
                }
                predecessors[to as usize].push(s as u32);
                if !reached[to as usize] {
                    reached[to as usize] = true;
                    stack.push(to as usize);
                }
            }
        }
        if reached[1..].iter().any(|&r| !r) {
            return Err("unreachable states".into());
        }
        let mut live: Vec<bool> = self.accepting.clone();
        let mut stack: Vec<usize> = (1..states).filter(|&s| live[s]).collect();
        while let Some(s) = stack.pop() {
            for &from in &predecessors[s] {
                if !live[from as usize] {
                    live[from as usize] = true;
                    stack.push(from as usize);
                }
            }
        }
        if live[1..].iter().any(|&l| !l) {
            return Err("states that reach no accepting state".into());
        }
        Ok(())
    }
}

fn take<'a>(input: &mut &'a [u8], n: usize) -> Result<&'a [u8], String> {
    if input.len() < n {
        return Err("truncated automaton".into());
    }
    let (head, rest) = input.split_at(n);
    *input = rest;
    Ok(head)
}

fn read_u32(input: &mut &[u8]) -> Result<u32, String> {
    Ok(u32::from_le_bytes(take(input, 4)?.try_into().expect("4 bytes")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::automata::Re;

    fn written(dfa: &ByteDfa) -> Vec<u8> {
        let mut out = Vec::new();
        dfa.write_table(&mut out);
        out
    }

    #[test]
    fn tables_read_back_equal() {
        for dfa in [
            Re::literal(b"null").compile(64, 1024).unwrap(),
            ByteDfa::universe(),
            ByteDfa::empty(),
            Re::repeat(Re::literal(b"ab"), 0, None).compile(64, 1024).unwrap(),
        ] {
            let bytes = written(&dfa);
            let mut input = &bytes[..];
            assert_eq!(ByteDfa::read_table(&mut input).unwrap(), dfa);
            assert!(input.is_empty());
        }
    }

    #[test]
    fn broken_tables_are_refused() {
        let dfa = Re::literal(b"ab").compile(64, 1024).unwrap();
        let bytes = written(&dfa);
        // Truncated anywhere.
        for cut in 0..bytes.len() {
            assert!(ByteDfa::read_table(&mut &bytes[..cut]).is_err(), "cut at {cut}");
        }
        // A transition out of range, a live state made dead-ended, an accepting dead state.
        let cells = 12 + 256;
        let mut beyond = bytes.clone();
        beyond[cells + 4..cells + 8].copy_from_slice(&99u32.to_le_bytes());
        assert!(ByteDfa::read_table(&mut &beyond[..]).is_err());
        let mut no_accepting = bytes.clone();
        *no_accepting.last_mut().unwrap() = 0;
        assert!(ByteDfa::read_table(&mut &no_accepting[..]).is_err());
        let mut dead_accepts = bytes.clone();
        *dead_accepts.last_mut().unwrap() |= 1;
        assert!(ByteDfa::read_table(&mut &dead_accepts[..]).is_err());
    }
}
