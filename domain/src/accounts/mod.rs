//! Accounts: who may do what ([`access`]), when an account may act and
//! whose tokens count ([`lifecycle`]), and a user created, given a profile
//! or a standing ([`user`]).

pub mod access;
pub mod lifecycle;
pub mod user;
