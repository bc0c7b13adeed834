//! Moving data in and out: the export format's records ([`record`]), what
//! an export carries of a store ([`export`]) and what an import admits of
//! them ([`admit`]); the one planner of an act of
//! another store ([`apply`]: a record read as the event it mirrors, or an
//! event of another deployment's log, [`act`]), in one of two modes whose
//! every difference is decided in [`mode`]: a record loaded ([`import`]),
//! an event replayed ([`replay`]); and how many backups are made and kept
//! ([`backups`]).

pub mod act;
pub mod admit;
pub mod apply;
pub mod backups;
pub mod export;
pub mod import;
mod line;
pub mod mode;
mod reader_lines;
pub mod record;
pub mod replay;
