//! Moving a deployment's data between backends: the export format
//! ([`crate::format`]), a store written out as it ([`export`]) and read into
//! another ([`import`]), each store's side being its [`crate::ports::Transfer`].

pub mod catch_up;
pub mod export;
pub mod import;
pub mod stream;
pub mod verify;
pub mod warm;
