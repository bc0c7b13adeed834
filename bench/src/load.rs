//! `socialite load`: fills a data directory with a network, either generated
//! (follow targets Zipf-distributed, so a few accounts have very many
//! followers and most have few) or imported from an edge-list file, through
//! the store's bulk paths. The data directory must not be in use.

use crate::progress::Progress;
use clap::Args;
use socialite_core::ids::{GroupName, ListName, PostIdGen, UserId};
use socialite_core::model::Post;
use socialite_core::sim::{Rng, Zipf};
use socialite_domain::graph::relations::FollowOption;
use socialite_embedded::EmbeddedStore;
use std::collections::HashSet;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Edges written per transaction.
const CHUNK: usize = 100_000;

#[derive(Debug, Clone, Args)]
pub struct NetworkArgs {
    /// Users of a generated network, named u0, u1, ... (u0 the most followed).
    #[arg(long, default_value_t = 100_000)]
    pub users: usize,
    /// Accounts each generated user follows (fewer where picks repeat).
    #[arg(long, default_value_t = 50)]
    pub follows: usize,
    /// Zipf exponent of follow targets: higher means more skew.
    #[arg(long, default_value_t = 1.0)]
    pub zipf: f64,
    /// Seed of the generator.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

#[derive(Debug, Clone, Args)]
pub struct LoadArgs {
    /// Data directory to fill (created if missing; no server may be using it).
    #[arg(long, env = "SOCIALITE_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    #[command(flatten)]
    pub network: NetworkArgs,
    /// Posts written by each user after the graph.
    #[arg(long, default_value_t = 0)]
    pub posts_per_user: usize,
    /// Import this edge list instead of generating: one `follower followee`
    /// pair of user ids per line; `#` starts a comment.
    #[arg(long, value_name = "FILE")]
    pub edges: Option<PathBuf>,
    /// Follow options to turn on (`hide_reposts`, `all_replies`, `notify`,
    /// comma-separated) on a share of a generated network's follows.
    #[arg(long, value_delimiter = ',', value_parser = follow_option)]
    pub follow_options: Vec<FollowOption>,
    /// The share of follows, in percent, that get `--follow-options`.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(0..=100))]
    pub options_percent: u64,
    /// Keyword filters (of 10 phrases each) for every second user (even
    /// ids), up to 100: what the "filtered page" benchmark reads.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=100))]
    pub filters: u64,
}

fn follow_option(s: &str) -> Result<FollowOption, String> {
    FollowOption::parse(s).map_err(|e| e.to_string())
}

/// What a load wrote.
#[derive(Debug, Default, Clone)]
pub struct Loaded {
    pub users: usize,
    pub edges: usize,
    pub posts: usize,
    pub seconds: f64,
}

pub async fn run_load(args: &LoadArgs) -> Result<Loaded, String> {
    std::fs::create_dir_all(&args.data_dir)
        .map_err(|e| format!("cannot create {}: {e}", args.data_dir.display()))?;
    let store = EmbeddedStore::open(&args.data_dir.join("content.redb")).map_err(|e| {
        format!(
            "cannot open {} (is a server using it?): {}",
            args.data_dir.display(),
            e.chain()
        )
    })?;
    let start = Instant::now();
    let mut loaded = match &args.edges {
        Some(file) => import_edge_list(&store, file).await?,
        None => generate(&store, &args.network).await?,
    };
    if !args.follow_options.is_empty() && args.edges.is_none() {
        set_follow_options(&store, args).await?;
    }
    if args.posts_per_user > 0 {
        loaded.posts = seed_posts(&store, &args.network, args.posts_per_user).await?;
    }
    if args.filters > 0 {
        let users = args.network.users;
        crate::load_filters::give_filters(&store, users, args.filters as usize, user).await?;
    }
    loaded.seconds = start.elapsed().as_secs_f64();
    Ok(loaded)
}

/// The list every generated user files some followees under: their first
/// followee and about one in five of the others.
pub const BENCH_LIST: &str = "close";

/// How many groups a generated network of `users` has: about 1,000 members
/// each, user `i` in group `g{i % groups}`.
pub fn groups_for(users: usize) -> usize {
    (users / 1000).max(1)
}

pub fn group_name(i: usize) -> String {
    format!("g{i}")
}

pub fn user_name(i: usize) -> String {
    format!("u{i}")
}

fn user(i: usize) -> UserId {
    UserId::parse(&user_name(i)).expect("generated ids are valid")
}

async fn generate(store: &EmbeddedStore, net: &NetworkArgs) -> Result<Loaded, String> {
    let err = |e: socialite_core::Error| e.chain();
    let mut progress = Progress::new("users", net.users as u64);
    for start in (0..net.users).step_by(CHUNK) {
        let ids: Vec<UserId> = (start..(start + CHUNK).min(net.users)).map(user).collect();
        progress.add(ids.len() as u64);
        store.import_users(ids).await.map_err(err)?;
    }
    progress.finish();
    let zipf = Zipf::new(net.users, net.zipf);
    let mut rng = Rng::new(net.seed);
    let mut progress = Progress::new("follows", (net.users * net.follows) as u64);
    let mut batch = Vec::with_capacity(CHUNK);
    let close = ListName::parse(BENCH_LIST).expect("a valid list name");
    let mut edges = 0;
    for follower in 0..net.users {
        let mut picked = HashSet::new();
        for _ in 0..net.follows {
            let target = zipf.pick(&mut rng);
            if target != follower && picked.insert(target) {
                let filed = picked.len() == 1 || rng.below(5) == 0;
                let lists = if filed {
                    vec![close.clone()]
                } else {
                    Vec::new()
                };
                batch.push((user(follower), user(target), lists));
            }
        }
        progress.add(net.follows as u64);
        if batch.len() >= CHUNK {
            edges += store
                .import_edges(std::mem::take(&mut batch))
                .await
                .map_err(err)?;
        }
    }
    edges += store.import_edges(batch).await.map_err(err)?;
    progress.finish();
    let groups = groups_for(net.users);
    let members: Vec<(GroupName, UserId)> = (0..net.users)
        .map(|i| {
            let g = GroupName::parse(&group_name(i % groups)).expect("a valid group name");
            (g, user(i))
        })
        .collect();
    for chunk in members.chunks(CHUNK) {
        store
            .import_memberships(chunk.to_vec())
            .await
            .map_err(err)?;
    }
    Ok(Loaded {
        users: net.users,
        edges,
        ..Default::default()
    })
}

/// Turns `--follow-options` on for `--options-percent` of the generated
/// follows, drawn again from the generator's seed (the same edges each run).
async fn set_follow_options(store: &EmbeddedStore, args: &LoadArgs) -> Result<(), String> {
    let net = &args.network;
    let zipf = Zipf::new(net.users, net.zipf);
    let mut rng = Rng::new(net.seed);
    let mut picks = Rng::new(net.seed ^ 0x0f0f);
    let mut progress = Progress::new("follow options", (net.users * net.follows) as u64);
    let mut batch = Vec::with_capacity(CHUNK);
    for follower in 0..net.users {
        let mut picked = HashSet::new();
        for _ in 0..net.follows {
            let target = zipf.pick(&mut rng);
            if target != follower && picked.insert(target) {
                // The generator's own draw for the list, kept in step.
                if picked.len() > 1 {
                    rng.below(5);
                }
                if picks.below(100) < args.options_percent as usize {
                    batch.push((user(follower), user(target)));
                }
            }
        }
        progress.add(net.follows as u64);
        if batch.len() >= CHUNK || follower + 1 == net.users {
            let options = args.follow_options.clone();
            store
                .import_follow_options(std::mem::take(&mut batch), options)
                .await
                .map_err(|e| e.chain())?;
        }
    }
    progress.finish();
    Ok(())
}

async fn import_edge_list(store: &EmbeddedStore, file: &Path) -> Result<Loaded, String> {
    let f =
        std::fs::File::open(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut progress = Progress::new("bytes", size);
    let mut users = HashSet::new();
    let mut batch = Vec::with_capacity(CHUNK);
    let mut edges = 0;
    for (n, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line.map_err(|e| format!("{}:{}: {e}", file.display(), n + 1))?;
        progress.add(line.len() as u64 + 1);
        let content = line.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let bad = |why: String| format!("{}:{}: {why}", file.display(), n + 1);
        let mut parts = content.split_whitespace();
        let (Some(a), Some(b), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad("expected `follower followee`".into()));
        };
        let (a, b) = (
            UserId::parse(a).map_err(|e| bad(e.to_string()))?,
            UserId::parse(b).map_err(|e| bad(e.to_string()))?,
        );
        users.insert(a.clone());
        users.insert(b.clone());
        batch.push((a, b, Vec::new()));
        if batch.len() >= CHUNK {
            edges += store
                .import_edges(std::mem::take(&mut batch))
                .await
                .map_err(|e| e.chain())?;
        }
    }
    edges += store.import_edges(batch).await.map_err(|e| e.chain())?;
    progress.finish();
    Ok(Loaded {
        users: users.len(),
        edges,
        ..Default::default()
    })
}

async fn seed_posts(
    store: &EmbeddedStore,
    net: &NetworkArgs,
    per_user: usize,
) -> Result<usize, String> {
    let ids = PostIdGen::new(1023);
    let mut progress = Progress::new("posts", (net.users * per_user) as u64);
    let mut stored = 0;
    let mut batch = Vec::with_capacity(CHUNK);
    for round in 0..per_user {
        for i in 0..net.users {
            // Each seed post mentions one other user, so every user has
            // mentions to read.
            let named = (i * 31 + round + 1) % net.users;
            batch.push(Post::written(
                ids.next(),
                user(i),
                format!(
                    "seed post {round} of {} for @{}",
                    user_name(i),
                    user_name(named)
                ),
                None,
                vec![user(named)],
            ));
            if batch.len() >= CHUNK {
                progress.add(batch.len() as u64);
                stored += store
                    .import_posts(std::mem::take(&mut batch))
                    .await
                    .map_err(|e| e.chain())?;
            }
        }
    }
    progress.add(batch.len() as u64);
    stored += store.import_posts(batch).await.map_err(|e| e.chain())?;
    progress.finish();
    Ok(stored)
}
