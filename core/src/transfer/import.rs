//! The export format read into a store, a batch of records per transaction
//! ([`Transfer::import`]). Every record is idempotent, so an import cut
//! short (a crash, a malformed line) is finished by running it again: what
//! was imported is neither doubled nor lost.

use super::record::{parse_line, record_of, Line, Record};
use crate::error::{Error, Result};
use crate::ports::Transfer;
use crate::transfer::warm::Posters;
use std::io::BufRead;

/// What an import did.
#[derive(Debug, Default, Clone)]
pub struct Imported {
    /// Records read.
    pub records: u64,
    /// Records that changed the store (the rest it held already).
    pub changed: u64,
    /// Who posted last (`--warm`).
    pub posters: Posters,
}

fn refused(line_no: u64, what: &str) -> Error {
    Error::invalid("invalid_import_line", format!("line {line_no}: {what}"))
}

/// Reads `input` into the store, `batch` records per transaction. Refuses
/// a stream that does not open with the header, a malformed line (with its
/// number; the batches before it stay imported), an end line whose count is
/// not the stream's, and a stream cut before its end line (everything read
/// is imported first).
pub async fn import(
    transfer: &dyn Transfer,
    input: impl BufRead,
    batch: usize,
) -> Result<Imported> {
    let mut done = Imported::default();
    let mut pending: Vec<Record> = Vec::with_capacity(batch);
    let mut ended = false;
    let mut line_no = 0;
    for text in input.lines() {
        line_no += 1;
        let text = text.map_err(|e| refused(line_no, &format!("cannot be read: {e}")))?;
        if text.trim().is_empty() {
            continue;
        }
        let line = match parse_line(line_no, &text) {
            Ok(line) => line,
            Err(e) => {
                flush(transfer, &mut pending, &mut done).await?;
                return Err(e);
            }
        };
        if ended {
            return Err(refused(line_no, "a line after the end line"));
        }
        match (&line, line_no) {
            (Line::Header { .. }, 1) => continue,
            (Line::Header { .. }, _) => return Err(refused(line_no, "a second header")),
            (_, 1) => return Err(refused(1, "a stream opens with its header line")),
            (Line::End { records }, _) => {
                if *records != done.records + pending.len() as u64 {
                    let read = done.records + pending.len() as u64;
                    flush(transfer, &mut pending, &mut done).await?;
                    return Err(refused(
                        line_no,
                        &format!("the end line counts {records} records; the stream has {read}"),
                    ));
                }
                ended = true;
                continue;
            }
            _ => {}
        }
        match record_of(line_no, line) {
            Ok(Some(record)) => pending.push(record),
            Ok(None) => {}
            Err(e) => {
                flush(transfer, &mut pending, &mut done).await?;
                return Err(e);
            }
        }
        if pending.len() >= batch {
            flush(transfer, &mut pending, &mut done).await?;
        }
    }
    flush(transfer, &mut pending, &mut done).await?;
    if !ended {
        return Err(Error::invalid(
            "import_cut_short",
            format!("the stream ends at line {line_no} without its end line: it was cut short; the {} records read are imported, and an import of the whole stream finishes it", done.records),
        ));
    }
    Ok(done)
}

async fn flush(
    transfer: &dyn Transfer,
    pending: &mut Vec<Record>,
    done: &mut Imported,
) -> Result<()> {
    if pending.is_empty() {
        return Ok(());
    }
    done.changed += transfer.import(pending).await? as u64;
    done.records += pending.len() as u64;
    for r in pending.iter() {
        if let Record::Post(p) = r {
            done.posters.note(&p.author, p.id);
        }
    }
    pending.clear();
    Ok(())
}

/// Reads the store `from` whole into `to`, `batch` records per
/// transaction, without a stream between them (a migration's first copy).
pub async fn copy_store(from: &dyn Transfer, to: &dyn Transfer, batch: usize) -> Result<Imported> {
    let mut view = from.export_view().await?;
    let mut done = Imported::default();
    loop {
        let mut page = view.next(batch).await?;
        if page.is_empty() {
            return Ok(done);
        }
        flush(to, &mut page, &mut done).await?;
    }
}
