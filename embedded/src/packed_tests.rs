use super::*;

/// A generator of ids and authors that covers the awkward cases: equal
/// milliseconds, other nodes, large gaps, ids of any bits.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn slot(&mut self) -> Slot {
        let post = match self.next() % 4 {
            0 => self.next(),
            1 => (self.next() % 50) << LOW_BITS | (self.next() % 3) << NODE_BITS,
            2 => (1_000_000 + self.next() % 5_000) << LOW_BITS | (self.next() % 1024),
            _ => self.next() % 10_000,
        };
        Slot {
            post: PostId(post),
            author: (self.next() % 3) as u32 * (self.next() as u32 % 100_000),
        }
    }
}

fn ids(p: &Packed) -> Vec<(u64, u32)> {
    p.iter().map(|s| ({ s.post }.0, s.author)).collect()
}

#[test]
fn holds_what_a_sorted_set_holds_under_every_operation() {
    for seed in 1..40u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut p = Packed::default();
        let mut model: std::collections::BTreeMap<u64, u32> = Default::default();
        for _ in 0..600 {
            match rng.next() % 10 {
                0 => {
                    p.drop_oldest();
                    model.pop_first();
                }
                1 => {
                    let cut = rng.next() % 3;
                    p.retain(|s| { s.post }.0 % 3 != cut);
                    model.retain(|id, _| id % 3 != cut);
                }
                _ => {
                    let s = rng.slot();
                    let fresh = !model.contains_key(&{ s.post }.0);
                    assert_eq!(p.insert(s), fresh, "seed {seed}");
                    model.entry({ s.post }.0).or_insert(s.author);
                }
            }
            assert_eq!(ids(&p), model.clone().into_iter().collect::<Vec<_>>());
            assert_eq!(p.len(), model.len());
        }
    }
}

#[test]
fn a_full_cache_of_fifty_from_one_producer_takes_a_few_hundred_bytes() {
    let mut p = Packed::default();
    // A post every 0.2 s to 3 s from producer node 1023, by one of
    // 100,000 authors.
    let mut rng = Rng(7);
    let mut ms = 1_000_000_000u64;
    for _ in 0..5_000 {
        ms += 200 + rng.next() % 2_800;
        p.insert(Slot {
            post: PostId(ms << LOW_BITS | (rng.next() % 4) << NODE_BITS | 1023),
            author: (rng.next() % 100_000) as u32,
        });
        if p.len() > 50 {
            p.drop_oldest();
        }
    }
    assert_eq!(p.len(), 50);
    assert!(
        p.allocated_bytes() <= 50 * 7,
        "{} bytes",
        p.allocated_bytes()
    );
}

#[test]
fn a_fill_newest_first_prepends_in_place() {
    let mut p = Packed::new(50);
    p.reserve_front(50);
    let reserved = p.bytes.as_ptr();
    let mut want = Vec::new();
    for i in (0..50u64).rev() {
        let s = Slot {
            post: PostId((1_000 + i * 37) << LOW_BITS | (i % 3) << NODE_BITS | 5),
            author: i as u32,
        };
        assert!(p.insert(s));
        want.insert(0, ({ s.post }.0, s.author));
    }
    assert_eq!(ids(&p), want);
    assert_eq!(p.bytes.as_ptr(), reserved, "one allocation for the fill");
    p.fit();
    assert_eq!(ids(&p), want);
    assert!(
        p.allocated_bytes() <= 50 * 7,
        "{} bytes",
        p.allocated_bytes()
    );
}
