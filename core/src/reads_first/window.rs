//! A window of reads: their times in a histogram of log-spaced buckets,
//! and its 99th percentile.

/// Fewer reads in a window tell nothing of their tail.
const MIN_READS: u64 = 100;

/// Buckets of the reads' histogram: eight to an octave of microseconds,
/// up to 2^25 (33 s).
pub(super) const BUCKETS: usize = 192;

/// The bucket of a read of `us` microseconds: exact below 8, then eight
/// to an octave (a bucket's top is at most 1/8 above its bottom, finer
/// than the multiples the guard tells apart).
pub(super) fn bucket(us: u64) -> usize {
    if us < 8 {
        return us as usize;
    }
    let octave = 63 - us.leading_zeros() as usize;
    let sub = ((us >> (octave - 3)) & 7) as usize;
    (8 * (octave - 2) + sub).min(BUCKETS - 1)
}

/// The largest read a bucket holds, in seconds.
fn bucket_top(b: usize) -> f64 {
    if b < 8 {
        return b as f64 * 1e-6;
    }
    let (octave, sub) = (b / 8 + 2, b % 8);
    (((8 + sub as u64 + 1) << (octave - 3)) - 1) as f64 * 1e-6
}

/// The 99th percentile of a window's reads, if it had enough to tell.
pub(super) fn p99(counts: &[u64]) -> Option<f64> {
    let n: u64 = counts.iter().sum();
    if n < MIN_READS {
        return None;
    }
    let rank = n - n / 100;
    let mut seen = 0;
    for (b, c) in counts.iter().enumerate() {
        seen += c;
        if seen >= rank {
            return Some(bucket_top(b));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_hold_their_reads_in_order() {
        let mut last = 0;
        for us in 0..100_000u64 {
            let b = bucket(us);
            assert!(b >= last, "{us}");
            assert!(bucket_top(b) * 1e6 >= us as f64 - 0.5, "{us} in {b}");
            last = b;
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
        let mut counts = [0u64; BUCKETS];
        counts[bucket(1_000)] = 99;
        counts[bucket(20_000)] = 1;
        let top = p99(&counts).unwrap();
        assert!((0.001..0.00113).contains(&top), "{top}");
        counts[bucket(20_000)] = 2;
        assert!(p99(&counts).unwrap() > 0.019);
        assert_eq!(p99(&[1; 10]), None, "too few reads");
    }
}
