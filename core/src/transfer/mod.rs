//! Moving a deployment's data between backends: the export format
//! ([`record`]), and the use cases that write a store out as it and load
//! it into another ([`export`], [`import`]).

pub mod record;
