//! A firehose cursor: for each partition of the log, in the order the log
//! names them, the offset of the next event to read. The embedded log has
//! one partition (its sequence); Kafka one per partition of each topic.
//! Written as the offsets joined by dots (`1042`, `17.0.9.33`): every event
//! carries the cursor just after it, so resuming from it loses nothing and
//! repeats nothing.

use crate::error::{Error, Result};

/// Most partitions a cursor names.
pub const MAX_PARTITIONS: usize = 4096;
/// Longest cursor a client may send, in bytes.
pub const MAX_CURSOR_BYTES: usize = MAX_PARTITIONS * 21;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Cursor(Vec<u64>);

impl Cursor {
    pub fn new(next: Vec<u64>) -> Cursor {
        Cursor(next)
    }

    /// Parses a cursor a client sent: 400 `invalid_cursor` unless it is
    /// offsets joined by dots.
    pub fn parse(s: &str) -> Result<Cursor> {
        let bad = |why: &str| {
            Error::invalid(
                "invalid_cursor",
                format!("a cursor is the `cursor` of a firehose event ({why})"),
            )
        };
        if s.is_empty() || s.len() > MAX_CURSOR_BYTES {
            return Err(bad("empty or too long"));
        }
        let next = s
            .split('.')
            .map(|p| match p.bytes().all(|b| b.is_ascii_digit()) {
                true => p.parse::<u64>().ok(),
                false => None,
            })
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(|| bad("offsets joined by dots"))?;
        Ok(Cursor(next))
    }

    /// The next offset of each partition.
    pub fn next(&self) -> &[u64] {
        &self.0
    }

    /// This cursor, if it names `partitions` partitions. A cursor of a
    /// log whose partitions changed since is refused: its offsets would be
    /// read against other partitions (on Kafka the posts topic's come
    /// first, so one it gained would shift the graph topic's).
    pub fn fitting(self, partitions: usize) -> Result<Cursor> {
        if self.0.len() != partitions {
            return Err(Error::invalid(
                "invalid_cursor",
                format!(
                    "the cursor names {} partitions; this log has {partitions} (its partitions changed, or the cursor is another log's): start again without one",
                    self.0.len()
                ),
            ));
        }
        Ok(self)
    }

    /// Past the event at `offset` of `partition`.
    pub fn advance(&mut self, partition: usize, offset: u64) {
        if let Some(next) = self.0.get_mut(partition) {
            *next = (*next).max(offset + 1);
        }
    }
}

impl std::fmt::Display for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, n) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{n}")?;
        }
        Ok(())
    }
}
