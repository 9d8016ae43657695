//! Reading a key against the names it may become, for mask walks inside keys that only named
//! keys complete: the names sorted in one buffer, the run of them that goes on with the key so
//! far narrowed at each character, escapes decoded along the way.

use std::cell::OnceCell;
use std::sync::Arc;

/// The names that go on with a key read so far, and where its next character starts in them.
#[derive(Clone)]
pub(super) struct KeyRun {
    names: Arc<NamedKeys>,
    run: (u32, u32),
    at: usize,
    escape: KeyEscape,
    /// The bytes some name of the run has at `at`, as a bit set: asked for every trie child.
    next: OnceCell<[u64; 4]>,
}

/// What reading one more byte of a key does.
pub(super) enum KeyStep {
    /// Some name goes on with the key.
    Reads(KeyRun),
    Refused,
    /// The byte is the key's closing quote.
    Closes,
    /// Half a surrogate pair was read: the names alone cannot tell.
    Unsure,
}

impl KeyRun {
    /// The key whose first `read` bytes (of its decoded text) every name in `names` shares.
    pub(super) fn new(names: &[&str], read: usize) -> KeyRun {
        let names = Arc::new(NamedKeys::new(names));
        let run = (0, names.ends.len() as u32);
        KeyRun { names, run, at: read, escape: KeyEscape::None, next: OnceCell::new() }
    }

    /// True only when [`KeyRun::read`] would surely refuse `byte`.
    pub(super) fn refuses(&self, byte: u8) -> bool {
        let next = self.next.get_or_init(|| self.names.next_bytes(self.run, self.at));
        let no_name_has = |c: u8| next[c as usize / 64] & (1 << (c % 64)) == 0;
        match self.escape {
            KeyEscape::None if byte == b'\\' => *next == [0; 4],
            KeyEscape::None => byte < 0x20 || (byte != b'"' && no_name_has(byte)),
            KeyEscape::Started => byte != b'u' && escaped_char(byte).is_none_or(no_name_has),
            KeyEscape::Unicode { .. } => !byte.is_ascii_hexdigit(),
        }
    }

    /// Reads one byte of the key's text; a character narrows the run once complete.
    pub(super) fn read(self, byte: u8) -> KeyStep {
        let KeyRun { names, mut run, mut at, escape, .. } = self;
        let mut character = [0u8; 4];
        let (read, escape): (&[u8], KeyEscape) = match (escape, byte) {
            (KeyEscape::None, b'"') => return KeyStep::Closes,
            // An escape spells a character: some name must go on with one.
            (KeyEscape::None, b'\\') if names.unit_in(run, at, 0, u32::MAX) => (&[], KeyEscape::Started),
            (KeyEscape::None, byte) if byte >= 0x20 && byte != b'\\' => {
                character[0] = byte;
                (&character[..1], KeyEscape::None)
            }
            (KeyEscape::Started, b'u') => (&[], KeyEscape::Unicode { digits: 0, unit: 0 }),
            (KeyEscape::Started, byte) => match escaped_char(byte) {
                Some(c) => {
                    character[0] = c;
                    (&character[..1], KeyEscape::None)
                }
                None => return KeyStep::Refused,
            },
            (KeyEscape::Unicode { digits, unit }, byte) => {
                let Some(digit) = (byte as char).to_digit(16) else { return KeyStep::Refused };
                let unit = unit * 16 + digit;
                // The code units the digits so far may still become.
                let shift = 4 * (3 - u32::from(digits));
                if !names.unit_in(run, at, unit << shift, ((unit + 1) << shift) - 1) {
                    return KeyStep::Refused;
                }
                if digits < 3 {
                    (&[], KeyEscape::Unicode { digits: digits + 1, unit })
                } else {
                    let Some(c) = char::from_u32(unit) else { return KeyStep::Unsure };
                    (c.encode_utf8(&mut character).as_bytes(), KeyEscape::None)
                }
            }
            _ => return KeyStep::Refused,
        };
        for &b in read {
            run = names.narrow(run, at, b);
            at += 1;
        }
        match run.0 < run.1 {
            true => KeyStep::Reads(KeyRun { names, run, at, escape, next: OnceCell::new() }),
            false => KeyStep::Refused,
        }
    }
}

/// An escape half read inside a key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyEscape {
    None,
    /// After the backslash.
    Started,
    /// After `\u` and `digits` hex digits, whose value is `unit`.
    Unicode {
        digits: u8,
        unit: u32,
    },
}

/// The character a one-letter escape stands for (`u` excluded).
fn escaped_char(byte: u8) -> Option<u8> {
    Some(match byte {
        b'"' | b'\\' | b'/' => byte,
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        _ => return None,
    })
}

/// The names a key may still become (see
/// [`InnerContainer::named_keys`](crate::structured::InnerContainer::named_keys)), sorted, in one
/// buffer.
struct NamedKeys {
    text: Box<[u8]>,
    /// Where each name ends in `text`.
    ends: Box<[u32]>,
}

impl NamedKeys {
    fn new(names: &[&str]) -> NamedKeys {
        let mut text = Vec::with_capacity(names.iter().map(|n| n.len()).sum());
        let mut ends = Vec::with_capacity(names.len());
        for name in names {
            text.extend_from_slice(name.as_bytes());
            ends.push(text.len() as u32);
        }
        NamedKeys { text: text.into(), ends: ends.into() }
    }

    fn name(&self, i: u32) -> &[u8] {
        let start = match i {
            0 => 0,
            i => self.ends[i as usize - 1] as usize,
        };
        &self.text[start..self.ends[i as usize] as usize]
    }

    /// Whether some name of `run` has a character starting at `at` whose first UTF-16 code
    /// unit (as a `\u` escape spells it) is within `low..=high`. False mid-character.
    fn unit_in(&self, (lo, hi): (u32, u32), at: usize, low: u32, high: u32) -> bool {
        (lo..hi).any(|i| {
            let rest = &self.name(i)[at.min(self.name(i).len())..];
            let Some(c) = rest.utf8_chunks().next().and_then(|chunk| chunk.valid().chars().next()) else {
                return false;
            };
            let mut units = [0u16; 2];
            let unit = u32::from(c.encode_utf16(&mut units)[0]);
            (low..=high).contains(&unit)
        })
    }

    /// The bytes the names of `run` have at `at`, as a bit set.
    fn next_bytes(&self, (lo, hi): (u32, u32), at: usize) -> [u64; 4] {
        let mut bytes = [0u64; 4];
        for byte in (lo..hi).filter_map(|i| self.name(i).get(at)) {
            bytes[*byte as usize / 64] |= 1 << (byte % 64);
        }
        bytes
    }

    /// The names of `run` with `byte` at `at`; the run shares its bytes before `at`, so they
    /// are sorted by that byte (a name that ends before comes first).
    fn narrow(&self, (lo, hi): (u32, u32), at: usize, byte: u8) -> (u32, u32) {
        let at_byte = |i: u32| self.name(i).get(at).copied();
        let first = partition_point(lo, hi, |i| at_byte(i) < Some(byte));
        (first, partition_point(first, hi, |i| at_byte(i) == Some(byte)))
    }
}

/// The first index in `lo..hi` where `before` turns false (it holds on a prefix of the range).
fn partition_point(mut lo: u32, mut hi: u32, before: impl Fn(u32) -> bool) -> u32 {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}
