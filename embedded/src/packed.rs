//! A capped cache's entries packed in bytes: about five bytes an entry
//! where a [`Slot`] takes twelve, so that a full cache of fifty fits in a
//! few hundred bytes. Entries are kept oldest first, each one written as
//! the difference from the one before (its "mark": millisecond and node):
//!
//! - a varint of the milliseconds since the previous entry's (post ids
//!   start with their millisecond, so neighbours differ by little), shifted
//!   left twice; the low bits say whether a sequence and a node follow;
//! - the sequence within the millisecond, if not 0;
//! - the producer node, if not the previous entry's (a few producers make
//!   every post, so it seldom changes);
//! - a varint of the author's interned number.
//!
//! The usual delivery (the newest post) appends; the cap drops the oldest
//! by moving the start of the live bytes past it and keeping its mark,
//! against which the next entry is written; a fill, whose merge comes
//! newest first, prepends. None of these moves the other entries: the
//! bytes dropped are taken back when an append needs the room. An entry
//! that arrives out of order is written between its neighbours, moving
//! the bytes after it; a removal decodes the whole, at most a cap of
//! entries, and writes it again.

use crate::slot::Slot;
use socialite_core::ids::PostId;

/// Bits of a post id below its millisecond: 12 of sequence, 10 of node.
const LOW_BITS: u32 = 22;
const NODE_BITS: u32 = 10;
const NODE: u64 = (1 << NODE_BITS) - 1;
/// The longest entry: 7 bytes of header (44 bits), 2 of sequence, 2 of
/// node, 5 of author.
const MAX_ENTRY: usize = 16;

/// What an entry is written against: the previous entry's millisecond and
/// node (the first entry's: its own millisecond, node 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Mark {
    ms: u64,
    node: u64,
}

impl Mark {
    fn of(post: PostId) -> Mark {
        Mark {
            ms: post.0 >> LOW_BITS,
            node: post.0 & NODE,
        }
    }

    /// The mark a first entry is written against.
    fn first(post: PostId) -> Mark {
        Mark {
            ms: post.0 >> LOW_BITS,
            node: 0,
        }
    }
}

#[inline(always)]
fn put_varint(out: &mut [u8; MAX_ENTRY], at: &mut usize, mut v: u64) {
    while v >= 0x80 {
        out[*at] = (v as u8) | 0x80;
        *at += 1;
        v >>= 7;
    }
    out[*at] = v as u8;
    *at += 1;
}

/// Reads a varint this module wrote; its bytes are always whole.
#[inline(always)]
fn get_varint(bytes: &[u8], at: &mut usize) -> u64 {
    // Most fields take one byte.
    let first = bytes[*at];
    *at += 1;
    if first < 0x80 {
        return u64::from(first);
    }
    let mut v = u64::from(first & 0x7f);
    let mut shift = 7;
    loop {
        let b = bytes[*at];
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// `slot` written against `prev` (whose millisecond is at most its own).
#[inline]
fn encode(slot: Slot, prev: Mark) -> ([u8; MAX_ENTRY], usize) {
    let mut out = [0u8; MAX_ENTRY];
    let n = encode_into(&mut out, slot, prev);
    (out, n)
}

/// `slot` written against `prev` into `out`; how many bytes it took (the
/// rest of `out` is left as it was).
#[inline(always)]
fn encode_into(out: &mut [u8; MAX_ENTRY], slot: Slot, prev: Mark) -> usize {
    let mut at = 0;
    let post = slot.post;
    let mark = Mark::of(post);
    let seq = (post.0 >> NODE_BITS) & ((1 << (LOW_BITS - NODE_BITS)) - 1);
    let node_differs = mark.node != prev.node;
    let header = ((mark.ms - prev.ms) << 2) | (u64::from(node_differs) << 1) | u64::from(seq != 0);
    put_varint(out, &mut at, header);
    if seq != 0 {
        put_varint(out, &mut at, seq);
    }
    if node_differs {
        put_varint(out, &mut at, mark.node);
    }
    put_varint(out, &mut at, u64::from(slot.author));
    at
}

/// The entry at `at`, written against `prev`; moves `at` past it.
#[inline(always)]
fn decode(bytes: &[u8], at: &mut usize, prev: Mark) -> (Slot, Mark) {
    let header = get_varint(bytes, at);
    let ms = prev.ms + (header >> 2);
    let seq = if header & 1 == 1 {
        get_varint(bytes, at)
    } else {
        0
    };
    let node = if header & 2 == 2 {
        get_varint(bytes, at)
    } else {
        prev.node
    };
    let author = get_varint(bytes, at) as u32;
    let post = PostId((ms << LOW_BITS) | (seq << NODE_BITS) | node);
    (Slot { post, author }, Mark { ms, node })
}

/// A new allocation holding `live` after `before` bytes of room and before
/// `after` (the room is written only once, not zeroed and then copied over).
fn bytes_with(before: usize, live: &[u8], after: usize) -> Box<[u8]> {
    let mut v = Vec::with_capacity(before + live.len() + after);
    v.resize(before, 0);
    v.extend_from_slice(live);
    v.resize(before + live.len() + after, 0);
    v.into_boxed_slice()
}

/// Entries sorted by post id, each once, packed (see the module), and the
/// cap the layout holds them to (kept here, where it costs no room).
#[derive(Debug, Clone, Default)]
pub struct Packed {
    /// `bytes[head..end]` are the entries; the rest is room.
    bytes: Box<[u8]>,
    head: u32,
    end: u32,
    len: u32,
    /// Entries beyond this are dropped oldest first; at most 10,000 (the
    /// setting's bound), so the offsets fit 32 bits.
    cap: u32,
    /// The mark the first entry is written against, as `ms << 10 | node`:
    /// a first entry's own millisecond and node 0, or after a drop, the
    /// mark of the entry dropped.
    start: u64,
    /// The newest entry's id, which an append is compared with.
    newest: u64,
}

impl Packed {
    pub fn new(cap: usize) -> Packed {
        Packed {
            cap: u32::try_from(cap).unwrap_or(u32::MAX),
            ..Packed::default()
        }
    }

    pub fn cap(&self) -> usize {
        self.cap as usize
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter {
            bytes: &self.bytes[..self.end as usize],
            at: self.head as usize,
            mark: self.first_mark(),
            left: self.len,
        }
    }

    /// What the first entry is written against.
    fn first_mark(&self) -> Mark {
        Mark {
            ms: self.start >> NODE_BITS,
            node: self.start & NODE,
        }
    }

    fn set_first_mark(&mut self, m: Mark) {
        self.start = (m.ms << NODE_BITS) | m.node;
    }

    pub fn oldest(&self) -> Option<Slot> {
        self.iter().next()
    }

    pub fn newest(&self) -> Option<PostId> {
        (self.len > 0).then_some(PostId(self.newest))
    }

    /// The bytes a delivery to a full cache reads and writes: the first
    /// (the oldest entry, which it drops) and the last (the newest, after
    /// which it appends), for a prefetch.
    pub fn ends(&self) -> Option<(&u8, &u8)> {
        (self.end > self.head).then(|| {
            (
                &self.bytes[self.head as usize],
                &self.bytes[self.end as usize - 1],
            )
        })
    }

    /// Bytes allocated for the entries.
    pub fn allocated_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Stores the slot; false if its post is already held.
    pub fn insert(&mut self, s: Slot) -> bool {
        let post = s.post;
        if self.len == 0 {
            self.set_first_mark(Mark::first(post));
            let (enc, n) = encode(s, Mark::first(post));
            match (self.head as usize).checked_sub(n) {
                // Room reserved in front (a fill's): the entry ends there.
                Some(at) => {
                    self.bytes[at..at + n].copy_from_slice(&enc[..n]);
                    self.head = at as u32;
                    self.len = 1;
                    self.newest = post.0;
                }
                None => self.append(s, Mark::first(post)),
            }
            return true;
        }
        if post.0 > self.newest {
            self.append(s, Mark::of(PostId(self.newest)));
            return true;
        }
        self.insert_within(s)
    }

    /// Inserts `s`, older than the newest entry, before the first entry
    /// newer than it: `s` is written against the entry before, that entry
    /// against `s`, and the bytes after them move by the difference (an
    /// entry that arrives a little out of order moves a few bytes).
    fn insert_within(&mut self, s: Slot) -> bool {
        let (mut at, mut mark) = (self.head as usize, self.first_mark());
        let post = s.post;
        let (begin, next) = loop {
            let begin = at;
            let (e, m) = decode(&self.bytes, &mut at, mark);
            let held = e.post;
            if held == post {
                return false;
            }
            if held > post {
                break (begin, e);
            }
            mark = m;
        };
        if begin == self.head as usize {
            self.prepend(s);
            return true;
        }
        let (a, n) = encode(s, mark);
        let (b, m) = encode(next, Mark::of(s.post));
        let (old, new) = (at - begin, n + m);
        // Offsets from the head: making room may move the live bytes.
        let (begin, at) = (begin - self.head as usize, at - self.head as usize);
        self.room_for(new.saturating_sub(old));
        let (head, end) = (self.head as usize, self.end as usize);
        let (begin, at) = (head + begin, head + at);
        self.bytes.copy_within(at..end, begin + new);
        self.bytes[begin..begin + n].copy_from_slice(&a[..n]);
        self.bytes[begin + n..begin + new].copy_from_slice(&b[..m]);
        self.end = (end + new - old) as u32;
        self.len += 1;
        true
    }

    fn append(&mut self, s: Slot, prev: Mark) {
        let end = self.end as usize;
        // With room for the longest entry, written in place (the bytes
        // past it are room); else made room for first.
        let n = match self.bytes.get_mut(end..end + MAX_ENTRY) {
            Some(room) => encode_into(room.try_into().expect("MAX_ENTRY bytes"), s, prev),
            None => {
                let (enc, n) = encode(s, prev);
                self.room_for(n);
                let end = self.end as usize;
                self.bytes[end..end + n].copy_from_slice(&enc[..n]);
                n
            }
        };
        self.end += n as u32;
        self.len += 1;
        self.newest = { s.post }.0;
    }

    /// Makes room for `n` more bytes at the end: by taking back what
    /// dropped entries left at the front when that leaves room to spare,
    /// else by a larger allocation with an eighth to spare, so that a full
    /// cache's appends and drops reuse its bytes for several deliveries
    /// before they move them.
    fn room_for(&mut self, n: usize) {
        let (head, end) = (self.head as usize, self.end as usize);
        if end + n <= self.bytes.len() {
            return;
        }
        let live = end - head;
        if live + n + live / 16 <= self.bytes.len() {
            self.bytes.copy_within(head..end, 0);
        } else {
            self.bytes = bytes_with(0, &self.bytes[head..end], n + live / 8 + 8);
        }
        self.head = 0;
        self.end = live as u32;
    }

    /// Puts `s`, older than every entry, first: it is written against
    /// itself and the old first entry against it; the rest stays as it is.
    fn prepend(&mut self, s: Slot) {
        let mut at = self.head as usize;
        let (first, _) = decode(&self.bytes, &mut at, self.first_mark());
        let (a, n) = encode(s, Mark::first(s.post));
        let (b, m) = encode(first, Mark::of(s.post));
        let end = self.end as usize;
        let new_head = if at >= n + m {
            at - n - m
        } else {
            // No room before: a new allocation with room in front for the
            // fill's next entries.
            let rest = end - at;
            let room = (rest + n + m) / 8 + 16;
            self.bytes = bytes_with(room + n + m, &self.bytes[at..end], 0);
            self.end = (room + n + m + rest) as u32;
            room
        };
        self.bytes[new_head..new_head + n].copy_from_slice(&a[..n]);
        self.bytes[new_head + n..new_head + n + m].copy_from_slice(&b[..m]);
        self.head = new_head as u32;
        self.set_first_mark(Mark::first(s.post));
        self.len += 1;
    }

    /// Makes room in front for about `entries` more, in one allocation: a
    /// fill's merge comes newest first, so its entries are prepended.
    pub fn reserve_front(&mut self, entries: usize) {
        let want = entries * MAX_ENTRY / 2;
        if self.head as usize >= want {
            return;
        }
        let (head, end) = (self.head as usize, self.end as usize);
        self.bytes = bytes_with(want, &self.bytes[head..end], 0);
        self.head = want as u32;
        self.end = (want + end - head) as u32;
    }

    /// Gives back what a reservation left unused, keeping the room to
    /// spare that appends keep (see `room_for`).
    pub fn fit(&mut self) {
        let (head, end) = (self.head as usize, self.end as usize);
        let live = end - head;
        if self.bytes.len() > live + live / 4 + 16 {
            self.bytes = bytes_with(0, &self.bytes[head..end], live / 8 + 8);
            self.head = 0;
            self.end = live as u32;
        }
    }

    /// Drops the oldest entry: its mark becomes what the second, now the
    /// first, is written against.
    pub fn drop_oldest(&mut self) {
        if self.len <= 1 {
            *self = Packed {
                bytes: std::mem::take(&mut self.bytes),
                ..Packed::new(self.cap())
            };
            return;
        }
        let mut at = self.head as usize;
        let (_, first) = decode(&self.bytes, &mut at, self.first_mark());
        self.head = at as u32;
        self.set_first_mark(first);
        self.len -= 1;
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&Slot) -> bool) {
        let all: Vec<Slot> = self.iter().collect();
        let kept: Vec<Slot> = all.iter().copied().filter(|s| keep(s)).collect();
        if kept.len() != all.len() {
            self.rebuild(&kept);
        }
    }

    /// Writes `sorted` anew in an allocation of its size.
    fn rebuild(&mut self, sorted: &[Slot]) {
        let mut out = Vec::with_capacity(sorted.len() * 6);
        let first = sorted
            .first()
            .map_or(Mark::default(), |s| Mark::first(s.post));
        let mut prev = first;
        for &s in sorted {
            let (enc, n) = encode(s, prev);
            out.extend_from_slice(&enc[..n]);
            prev = Mark::of(s.post);
        }
        *self = Packed {
            end: out.len() as u32,
            bytes: out.into_boxed_slice(),
            head: 0,
            len: sorted.len() as u32,
            start: (first.ms << NODE_BITS) | first.node,
            newest: sorted.last().map_or(0, |s| { s.post }.0),
            cap: self.cap,
        };
    }
}

/// The entries oldest first.
pub struct Iter<'a> {
    bytes: &'a [u8],
    at: usize,
    mark: Mark,
    left: u32,
}

impl Iterator for Iter<'_> {
    type Item = Slot;

    fn next(&mut self) -> Option<Slot> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let (slot, mark) = decode(self.bytes, &mut self.at, self.mark);
        self.mark = mark;
        Some(slot)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
#[path = "packed_tests.rs"]
mod tests;
