//! The export format read into a store, a batch of records per transaction
//! ([`Transfer::import`]). Every record is idempotent, so an import cut
//! short (a crash, a malformed line) is finished by running it again: what
//! was imported is neither doubled nor lost.

use super::catch_up::refusal;
use super::stream::Stream;
use crate::error::{Error, Result};
use crate::ids::now_ms;
use crate::model::check_json_integers;
use crate::ports::Transfer;
use crate::transfer::warm::Posters;
use socialite_domain::transfer::admit::{admit, MAX_LINE_BYTES};
use socialite_domain::transfer::import::Caps;
use socialite_domain::transfer::record::{parse_line, record_of, Line, Record, VERSION};
use std::io::{BufRead, Read};

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

/// `e`, said of the record at `place` (`line 7`), keeping its code.
fn at(place: &str, e: Error) -> Error {
    Error::new(e.kind(), e.code(), format!("{place}: {}", e.message()))
}

/// Records waiting for their transaction, each with where it was read
/// (its line, or its place in a store).
#[derive(Default)]
struct Pending {
    records: Vec<Record>,
    places: Vec<u64>,
}

/// Reads `input` into the store, `batch` records per transaction, under
/// `caps`. Refuses, with the line's number: a stream that does not open
/// with the header; a malformed line, or one longer than
/// [`MAX_LINE_BYTES`]; a record past a limit of the write path
/// ([`admit`]), or one the store's rules refuse (a like of a post the
/// stream does not hold, a follow past the cap); an end line whose count
/// is not the stream's; and a stream cut before its end line. The batches
/// before a refused line stay imported (everything read, for a cut
/// stream).
pub async fn import(
    transfer: &dyn Transfer,
    mut input: impl BufRead,
    batch: usize,
    caps: &Caps,
) -> Result<Imported> {
    let mut done = Imported::default();
    let mut pending = Pending::default();
    let mut ended = false;
    let mut version = VERSION;
    let mut line_no = 0;
    let mut bytes = Vec::new();
    let now = now_ms();
    loop {
        bytes.clear();
        let limit = MAX_LINE_BYTES as u64 + 1;
        let read = (&mut input).take(limit).read_until(b'\n', &mut bytes);
        let read = read.map_err(|e| refused(line_no + 1, &format!("cannot be read: {e}")))?;
        if read == 0 {
            break;
        }
        line_no += 1;
        let text = match line_text(&mut bytes) {
            Ok(text) => text,
            Err(what) => {
                flush(transfer, &mut pending, &mut done, caps, "line").await?;
                return Err(refused(line_no, &what));
            }
        };
        if text.trim().is_empty() {
            continue;
        }
        let line =
            match check_json_integers(text.as_bytes()).and_then(|()| parse_line(line_no, text)) {
                Ok(line) => line,
                Err(e) => {
                    flush(transfer, &mut pending, &mut done, caps, "line").await?;
                    return Err(match e.code() {
                        "invalid_import_line" => e,
                        _ => refused(line_no, e.message()),
                    });
                }
            };
        if ended {
            return Err(refused(line_no, "a line after the end line"));
        }
        match (&line, line_no) {
            (Line::Header { version: v, .. }, 1) => {
                version = *v;
                continue;
            }
            (Line::Header { .. }, _) => return Err(refused(line_no, "a second header")),
            (_, 1) => return Err(refused(1, "a stream opens with its header line")),
            (Line::End { records }, _) => {
                let read = done.records + pending.records.len() as u64;
                if *records != read {
                    flush(transfer, &mut pending, &mut done, caps, "line").await?;
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
        let record = record_of(line_no, line, version)
            .and_then(|r| match r {
                Some(r) => admit(&r, now).map(|()| Some(r)),
                None => Ok(None),
            })
            .map_err(|e| match e.code() {
                "invalid_import_line" => e,
                _ => at(&format!("line {line_no}"), e),
            });
        match record {
            Ok(Some(record)) => {
                pending.records.push(record);
                pending.places.push(line_no);
            }
            Ok(None) => {}
            Err(e) => {
                flush(transfer, &mut pending, &mut done, caps, "line").await?;
                return Err(e);
            }
        }
        if pending.records.len() >= batch {
            flush(transfer, &mut pending, &mut done, caps, "line").await?;
        }
    }
    flush(transfer, &mut pending, &mut done, caps, "line").await?;
    if !ended {
        return Err(Error::invalid(
            "import_cut_short",
            format!("the stream ends at line {line_no} without its end line: it was cut short; the {} records read are imported, and an import of the whole stream finishes it", done.records),
        ));
    }
    Ok(done)
}

/// The text of a line read with its newline (if any): refused when it is
/// longer than [`MAX_LINE_BYTES`] or not UTF-8.
fn line_text(bytes: &mut Vec<u8>) -> std::result::Result<&str, String> {
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
    } else if bytes.len() > MAX_LINE_BYTES {
        return Err(format!(
            "longer than {MAX_LINE_BYTES} bytes, more than any record holds"
        ));
    }
    std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))
}

/// Imports the pending records in one transaction; when the store's rules
/// refuse one, names it by its `place` (`line 7`), with every record before
/// it imported ([`halving`]).
async fn flush(
    transfer: &dyn Transfer,
    pending: &mut Pending,
    done: &mut Imported,
    caps: &Caps,
    place: &str,
) -> Result<()> {
    if pending.records.is_empty() {
        return Ok(());
    }
    let (records, places) = (&pending.records[..], &pending.places[..]);
    let changed = halving(transfer, records, places, caps, place).await?;
    done.changed += changed as u64;
    done.records += pending.records.len() as u64;
    for r in &pending.records {
        if let Record::Post { post, .. } = r {
            done.posters.note(&post.author, post.id);
        }
    }
    pending.records.clear();
    pending.places.clear();
    Ok(())
}

/// Imports `records` in one transaction; if the store's rules refuse it,
/// its first half and then its second, each the same way, so the refusal
/// ends at the one record refused, named by its place in `places`, with
/// every record before it imported (each is idempotent, so none counts
/// twice) and none after it. A refused batch of 50,000 so takes about 32
/// transactions, not 50,000.
async fn halving(
    transfer: &dyn Transfer,
    records: &[Record],
    places: &[u64],
    caps: &Caps,
    place: &str,
) -> Result<usize> {
    match transfer.import(records, caps).await {
        Ok(changed) => Ok(changed),
        Err(e) if refusal(e.kind()) && records.len() > 1 => {
            let mid = records.len() / 2;
            let first = Box::pin(halving(
                transfer,
                &records[..mid],
                &places[..mid],
                caps,
                place,
            ));
            let first = first.await?;
            let second = Box::pin(halving(
                transfer,
                &records[mid..],
                &places[mid..],
                caps,
                place,
            ));
            Ok(first + second.await?)
        }
        Err(e) if refusal(e.kind()) => Err(at(&format!("{place} {}", places[0]), e)),
        Err(e) => Err(e),
    }
}

/// Reads the store `from` whole into `to`, `batch` records per
/// transaction, under `caps`, without a stream between them (a migration's
/// first copy): the same records an export carries, under the same limits.
pub async fn copy_store(
    from: &dyn Transfer,
    to: &dyn Transfer,
    batch: usize,
    caps: &Caps,
) -> Result<Imported> {
    let mut stream = Stream::open(from).await?;
    let mut done = Imported::default();
    let mut pending = Pending::default();
    let now = now_ms();
    loop {
        let page = stream.next(batch).await?;
        if page.is_empty() {
            return Ok(done);
        }
        for r in page {
            let n = done.records + pending.records.len() as u64 + 1;
            admit(&r, now).map_err(|e| at(&format!("record {n} of the source"), e))?;
            pending.records.push(r);
            pending.places.push(n);
        }
        flush(to, &mut pending, &mut done, caps, "record").await?;
    }
}
