//! Choosing the next token from logits: greedy at temperature 0, otherwise sampling
//! from the softmax at that temperature, limited to the top-p nucleus, with a seeded
//! generator so a run can be repeated.

use std::vec::Vec;

/// How the next token is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampling {
    /// 0 chooses the most likely token (the first of equal ones, as `torch.argmax`);
    /// higher values flatten the distribution sampled from.
    pub temperature: f32,
    /// Sample only among the most likely tokens whose probabilities sum to `top_p`
    /// (1.0: all of them).
    pub top_p: f32,
    /// The generator's seed.
    pub seed: u64,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            temperature: 0.0,
            top_p: 1.0,
            seed: 0,
        }
    }
}

/// A sampler: the settings and the generator's state.
#[derive(Clone, Debug)]
pub struct Sampler {
    sampling: Sampling,
    state: u64,
    scratch: Vec<(f32, u32)>,
}

impl Sampler {
    /// A sampler with `sampling`'s settings, its generator seeded.
    pub fn new(sampling: Sampling) -> Sampler {
        Sampler {
            sampling,
            state: sampling.seed,
            scratch: Vec::new(),
        }
    }

    /// The next token for `logits`.
    pub fn sample(&mut self, logits: &[f32]) -> u32 {
        if self.sampling.temperature <= 0.0 || logits.len() < 2 {
            return argmax(logits);
        }
        let unit = self.next_unit();
        let inv_t = 1.0 / self.sampling.temperature;
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        self.scratch.clear();
        let mut total = 0.0f64;
        for (i, &l) in logits.iter().enumerate() {
            let p = ((l - max) * inv_t).exp();
            total += f64::from(p);
            self.scratch.push((p, i as u32));
        }
        let top_p = f64::from(self.sampling.top_p.clamp(0.0, 1.0));
        let mut candidates: &[(f32, u32)] = &self.scratch;
        let mut mass = total;
        if top_p < 1.0 {
            // Most likely first; equal probabilities keep token order, so a seed gives
            // the same choice on every platform.
            self.scratch
                .sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let mut kept = 0.0f64;
            let mut n = 0;
            for &(p, _) in &self.scratch {
                kept += f64::from(p);
                n += 1;
                if kept >= top_p * total {
                    break;
                }
            }
            candidates = &self.scratch[..n];
            mass = kept;
        }
        let target = unit * mass;
        let mut acc = 0.0f64;
        for &(p, i) in candidates {
            acc += f64::from(p);
            if acc > target {
                return i;
            }
        }
        candidates.last().map_or(0, |&(_, i)| i)
    }

    /// A uniform double in [0, 1) from a SplitMix64 step: small, fast, and its stream is
    /// fixed by the seed alone.
    fn next_unit(&mut self) -> f64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The index of the largest value, the first of equal ones; NaNs never win.
pub fn argmax(values: &[f32]) -> u32 {
    let mut best = 0;
    let mut best_value = f32::NEG_INFINITY;
    for (i, &v) in values.iter().enumerate() {
        if v > best_value {
            best = i;
            best_value = v;
        }
    }
    best as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_takes_the_first_maximum() {
        assert_eq!(argmax(&[0.5, 2.0, -1.0, 2.0]), 1);
        assert_eq!(argmax(&[f32::NAN, 0.0, 1.0]), 2);
        let mut s = Sampler::new(Sampling::default());
        assert_eq!(s.sample(&[0.1, 0.3, 0.2]), 1);
    }

    #[test]
    fn sampling_follows_the_distribution_and_the_seed() {
        // Logits ln(1), ln(3): probabilities 1/4 and 3/4.
        let logits = [0.0f32, 3f32.ln()];
        let mut s = Sampler::new(Sampling {
            temperature: 1.0,
            top_p: 1.0,
            seed: 7,
        });
        let n = 20_000;
        let ones = (0..n).filter(|_| s.sample(&logits) == 1).count();
        let share = ones as f64 / n as f64;
        assert!((share - 0.75).abs() < 0.02, "{share}");

        let draw = |seed| {
            let mut s = Sampler::new(Sampling {
                temperature: 0.8,
                top_p: 1.0,
                seed,
            });
            (0..32)
                .map(|_| s.sample(&[0.1, 0.2, 0.3, 0.4]))
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
    }

    #[test]
    fn top_p_keeps_only_the_nucleus() {
        // Probabilities about 0.64, 0.24, 0.09, 0.03: top_p 0.8 keeps the first two.
        let logits = [3.0f32, 2.0, 1.0, 0.0];
        let mut s = Sampler::new(Sampling {
            temperature: 1.0,
            top_p: 0.8,
            seed: 1,
        });
        let mut seen = [0usize; 4];
        for _ in 0..5_000 {
            seen[s.sample(&logits) as usize] += 1;
        }
        assert!(seen[0] > 0 && seen[1] > 0, "{seen:?}");
        assert_eq!(seen[2] + seen[3], 0, "{seen:?}");
    }
}
