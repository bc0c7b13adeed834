//! Bookmarks over REST ([`rest`]: `PUT`/`DELETE /users/{id}/bookmarks/{post_id}`,
//! `GET /users/{id}/bookmarks`) and gRPC ([`grpc`]: `Bookmark`,
//! `Unbookmark` of the ingest service, `ListBookmarks` of the reads
//! service), mapped onto `socialite_core::bookmarks`.

pub mod grpc;
pub mod rest;
