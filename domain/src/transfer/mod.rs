//! Moving data in and out: the export format's records ([`record`]) and
//! what an import admits of them ([`admit`]), a record loaded ([`import`]),
//! an event of another deployment replayed ([`replay`]), and how many
//! backups are made and kept ([`backups`]).

pub mod admit;
pub mod backups;
pub mod import;
pub mod record;
pub mod replay;
