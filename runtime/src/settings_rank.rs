//! The settings of the ranked home timelines (`order=balanced`,
//! `catchup`): the weights of the score and the bounds of a ranked read
//! (docs/ranking.md gives the formula and a settings file of them).

use crate::settings::parse_duration_secs;
use clap::Args;
use socialite_core::reads::ranked::Ranking;
use socialite_domain::feed::rank::Weights;
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub struct RankArgs {
    /// Hours after which a ranked entry's recency has halved.
    #[arg(long, env = "SOCIALITE_RANK_HALF_LIFE_HOURS", default_value_t = Weights::default().half_life_hours, value_parser = positive)]
    pub rank_half_life_hours: f64,
    /// Weight of engagement: likes, reposts and replies, on a log scale.
    #[arg(long, env = "SOCIALITE_RANK_ENGAGEMENT", default_value_t = Weights::default().engagement, value_parser = weight)]
    pub rank_engagement: f64,
    /// Weight of the reader's affinity: their recent likes, replies to and reposts
    /// of the author, on a log scale.
    #[arg(long, env = "SOCIALITE_RANK_AFFINITY", default_value_t = Weights::default().affinity, value_parser = weight)]
    pub rank_affinity: f64,
    /// Weight of rarity: divided by the author's candidates, so rare
    /// posters are lifted.
    #[arg(long, env = "SOCIALITE_RANK_RARITY", default_value_t = Weights::default().rarity, value_parser = weight)]
    pub rank_rarity: f64,
    /// What each further entry of one author in a page weighs, relative to
    /// the one before it (0 to 1).
    #[arg(long, env = "SOCIALITE_RANK_DIVERSITY_DECAY", default_value_t = Weights::default().diversity_decay, value_parser = share)]
    pub rank_diversity_decay: f64,
    /// The least a further entry of one author in a page weighs (0 to 1).
    #[arg(long, env = "SOCIALITE_RANK_DIVERSITY_FLOOR", default_value_t = Weights::default().diversity_floor, value_parser = share)]
    pub rank_diversity_floor: f64,
    /// How far back a ranked order's candidates go.
    #[arg(long, env = "SOCIALITE_RANK_WINDOW", default_value = "48h", value_parser = parse_duration_secs)]
    pub rank_window: u64,
    /// Most candidates a ranked order reads.
    #[arg(long, env = "SOCIALITE_RANK_MAX_CANDIDATES", default_value_t = Ranking::default().max_candidates as u64, value_parser = clap::value_parser!(u64).range(1..=5_000))]
    pub rank_max_candidates: u64,
    /// Milliseconds a ranked first page may take before it is served in
    /// latest order (and says so).
    #[arg(long, env = "SOCIALITE_RANK_DEADLINE_MS", default_value_t = Ranking::default().deadline.as_millis() as u64, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub rank_deadline_ms: u64,
    /// How long the later pages of a ranked order can be read.
    #[arg(long, env = "SOCIALITE_RANK_SNAPSHOT_TTL", default_value = "10m", value_parser = parse_duration_secs)]
    pub rank_snapshot_ttl: u64,
}

impl RankArgs {
    pub fn config(&self) -> Ranking {
        Ranking {
            weights: Weights {
                half_life_hours: self.rank_half_life_hours,
                engagement: self.rank_engagement,
                affinity: self.rank_affinity,
                rarity: self.rank_rarity,
                diversity_decay: self.rank_diversity_decay,
                diversity_floor: self.rank_diversity_floor,
            },
            window: Duration::from_secs(self.rank_window),
            max_candidates: self.rank_max_candidates as usize,
            deadline: Duration::from_millis(self.rank_deadline_ms),
            snapshot_ttl: Duration::from_secs(self.rank_snapshot_ttl),
        }
    }
}

fn number(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if !v.is_finite() {
        return Err(format!("`{text}` is not a finite number"));
    }
    Ok(v)
}

fn positive(text: &str) -> Result<f64, String> {
    let v = number(text)?;
    if v <= 0.0 {
        return Err(format!("`{text}` must be above 0"));
    }
    Ok(v)
}

fn weight(text: &str) -> Result<f64, String> {
    let v = number(text)?;
    if !(0.0..=100.0).contains(&v) {
        return Err(format!("`{text}` must be between 0 and 100"));
    }
    Ok(v)
}

fn share(text: &str) -> Result<f64, String> {
    let v = number(text)?;
    if !(0.0..=1.0).contains(&v) {
        return Err(format!("`{text}` must be between 0 and 1"));
    }
    Ok(v)
}
