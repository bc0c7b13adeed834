//! The one place that turns settings into opened backends and running
//! services: settings as flags, environment and file ([`settings`],
//! [`settings_file`]), backends chosen by URI ([`backends`]; MongoDB and
//! Kafka behind the `mongodb` and `kafka` cargo features), the service
//! builder ([`app`]), authentication settings and a data directory's
//! credentials ([`credentials`]), logging ([`telemetry`]) and the process around it all
//! ([`process`]). Every binary is a `main` over this crate.
//!
//! It wires; it must not decide what a timeline holds (core) or how a
//! request maps to a use case (the API crate).

pub mod admin;
mod allocator;
pub mod app;
pub mod backends;
pub mod background;
pub mod credentials;
pub mod migrate;
pub mod process;
mod services;
mod serving;
pub mod settings;
pub mod settings_file;
pub mod settings_rank;
pub mod settings_webhooks;
pub mod telemetry;
pub mod transfer;
mod webhook_http;

pub use app::{start, App, AppConfig, Service};
pub use socialite_api::auth::AuthConfig;
pub use socialite_api::limits::Limits;
