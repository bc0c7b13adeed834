//! A store written out as the export format: the header, every record its
//! [`Stream`] carries, in its order, and the end line that counts them.

use super::stream::Stream;
use crate::error::{Error, Result};
use crate::ports::Transfer;
use socialite_domain::transfer::record::{write_line, Line, FORMAT, VERSION};
use std::io::Write;

/// Records read from the store at a time.
const PAGE: usize = 1_000;

/// Writes the whole store to `out`; returns how many records it wrote.
pub async fn export(
    transfer: &dyn Transfer,
    out: &mut dyn Write,
    exported_at_ms: u64,
) -> Result<u64> {
    let written = |e: std::io::Error| Error::internal(format!("writing the export: {e}"));
    let header = Line::Header {
        format: FORMAT.into(),
        version: VERSION,
        exported_at_ms,
    };
    writeln!(out, "{}", write_line(&header)).map_err(written)?;
    let mut stream = Stream::open(transfer).await?;
    let mut records = 0;
    loop {
        let page = stream.next(PAGE).await?;
        if page.is_empty() {
            break;
        }
        for record in &page {
            writeln!(out, "{}", write_line(&Line::from(record))).map_err(written)?;
        }
        records += page.len() as u64;
    }
    writeln!(out, "{}", write_line(&Line::End { records })).map_err(written)?;
    out.flush().map_err(written)?;
    Ok(records)
}
