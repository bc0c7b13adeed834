//! Deterministic generators for synthetic social workloads: seeded random
//! numbers and Zipf-distributed picks (a few accounts get most of the
//! attention, as in real networks). Used by the benchmark and the tests.

/// splitmix64: small, fast and reproducible from a seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Picks index `i` of `0..n` with probability proportional to `1/(i+1)^s`.
#[derive(Debug, Clone)]
pub struct Zipf {
    cumulative: Vec<f64>,
}

impl Zipf {
    pub fn new(n: usize, s: f64) -> Zipf {
        assert!(n > 0, "a Zipf distribution needs at least one item");
        let mut acc = 0.0;
        let cumulative = (0..n)
            .map(|i| {
                acc += 1.0 / ((i + 1) as f64).powf(s);
                acc
            })
            .collect();
        Zipf { cumulative }
    }

    pub fn pick(&self, rng: &mut Rng) -> usize {
        let total = *self.cumulative.last().expect("not empty");
        let x = rng.unit() * total;
        self.cumulative
            .partition_point(|&c| c <= x)
            .min(self.cumulative.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_favours_the_first_items() {
        let z = Zipf::new(1000, 1.1);
        let mut rng = Rng::new(1);
        let mut counts = [0usize; 1000];
        for _ in 0..100_000 {
            counts[z.pick(&mut rng)] += 1;
        }
        assert!(
            counts[0] > 10 * counts[99],
            "{} vs {}",
            counts[0],
            counts[99]
        );
        assert!(counts[999] > 0 || counts[998] > 0);
        let mut again = Rng::new(1);
        assert_eq!(
            Zipf::new(1000, 1.1).pick(&mut again),
            Zipf::new(1000, 1.1).pick(&mut Rng::new(1))
        );
    }
}
