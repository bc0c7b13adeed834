//! The export format: its records ([`record`]), and what an import admits
//! of them ([`admit`]). Below the planners and the ports, which carry
//! records; above the rules, whose limits a record is checked against.

pub mod admit;
pub mod record;
