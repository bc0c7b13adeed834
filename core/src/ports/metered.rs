//! Store metrics for any backend: every port is declared with [`port!`],
//! which writes the trait and, from the same list of methods, its wrapper
//! [`Metered`] that times every call and counts its failures
//! (`socialite_store_operation_duration_seconds`,
//! `socialite_store_errors_total`, labelled by store and operation). A
//! method added to a port is metered by being added: there is no second
//! list to keep in step.

use crate::error::Result;
use crate::metrics::metrics;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;

/// What every port is: shared by the tasks of a process.
pub trait Port: Send + Sync + 'static {}

impl<T: Send + Sync + 'static + ?Sized> Port for T {}

/// A port with every call metered.
pub struct Metered<T: ?Sized>(pub Arc<T>);

/// Times `call` as the operation `op` of `store`.
pub(crate) async fn timed<T>(
    store: &'static str,
    op: &'static str,
    call: impl Future<Output = Result<T>>,
) -> Result<T> {
    let start = Instant::now();
    // A round trip is a child span when traces are exported and it serves
    // a traced operation (a request, a fanout batch); the background loops'
    // polls would otherwise each be a trace of one span.
    let traced = crate::trace::hooks().is_some() && !tracing::Span::current().is_none();
    let result = if traced {
        let span = tracing::info_span!("store", otel.name = %format_args!("{store}.{op}"));
        call.instrument(span).await
    } else {
        call.await
    };
    metrics().observe_store(store, op, start.elapsed(), result.is_err());
    result
}

/// Declares a port: `port! { /// docs  pub trait Name: Super as "store"
/// for Wrapper { methods } }` writes the trait (async methods through
/// `async_trait`) and `impl Name for Wrapper`, where every method is
/// forwarded to the wrapped port: an async one timed as the operation of
/// its name under "store", a plain one as it is. A method marked `write`
/// (a write of the domain, provided over [`super::Transact`]) is not
/// forwarded: the wrapper's own runs, and its `transact` is timed under
/// the write's name ([`crate::write::Write::name`]). A method marked
/// `own` is metered its own way: the wrapper's method is written in the
/// block `metered { ... }` after the trait.
macro_rules! port {
    (
        $(#[$meta:meta])*
        pub trait $port:ident: $sup:path as $store:literal for $wrapper:ty {
            $($body:tt)*
        }
        $(metered { $($own:tt)* })?
    ) => {
        $crate::ports::metered::port!(@munch [$(#[$meta])* $port $sup] [$store $wrapper] []
            [$($($own)*)?] $($body)*);
    };

    // Every method read: the trait, then the wrapper.
    (@munch [$(#[$meta:meta])* $port:ident $sup:path] [$store:literal $wrapper:ty] [$($t:tt)*] [$($i:tt)*]) => {
        $(#[$meta])*
        #[async_trait::async_trait]
        pub trait $port: $sup {
            $($t)*
        }

        #[async_trait::async_trait]
        impl $port for $wrapper {
            $($i)*
        }
    };

    // A write: the trait's default, not forwarded.
    (@munch $head:tt $meter:tt [$($t:tt)*] [$($i:tt)*]
        $(#[$m:meta])* write async fn $n:ident(&$s:ident $(, $a:ident: $ty:ty)* $(,)?) -> $r:ty $b:block
        $($rest:tt)*
    ) => {
        $crate::ports::metered::port!(@munch $head $meter
            [$($t)* $(#[$m])* async fn $n(&$s $(, $a: $ty)*) -> $r $b]
            [$($i)*]
            $($rest)*);
    };

    // A method the wrapper meters its own way (in `metered { ... }`).
    (@munch $head:tt $meter:tt [$($t:tt)*] [$($i:tt)*]
        $(#[$m:meta])* own async fn $n:ident(&$s:ident $(, $a:ident: $ty:ty)* $(,)?) -> $r:ty;
        $($rest:tt)*
    ) => {
        $crate::ports::metered::port!(@munch $head $meter
            [$($t)* $(#[$m])* async fn $n(&$s $(, $a: $ty)*) -> $r;]
            [$($i)*]
            $($rest)*);
    };

    // An async method, required or provided: forwarded and timed.
    (@munch $head:tt [$store:literal $wrapper:ty] [$($t:tt)*] [$($i:tt)*]
        $(#[$m:meta])* async fn $n:ident(&$s:ident $(, $a:ident: $ty:ty)* $(,)?) -> $r:ty;
        $($rest:tt)*
    ) => {
        $crate::ports::metered::port!(@munch $head [$store $wrapper]
            [$($t)* $(#[$m])* async fn $n(&$s $(, $a: $ty)*) -> $r;]
            [$($i)* async fn $n(&$s $(, $a: $ty)*) -> $r {
                $crate::ports::metered::timed($store, stringify!($n), $s.0.$n($($a),*)).await
            }]
            $($rest)*);
    };
    (@munch $head:tt [$store:literal $wrapper:ty] [$($t:tt)*] [$($i:tt)*]
        $(#[$m:meta])* async fn $n:ident(&$s:ident $(, $a:ident: $ty:ty)* $(,)?) -> $r:ty $b:block
        $($rest:tt)*
    ) => {
        $crate::ports::metered::port!(@munch $head [$store $wrapper]
            [$($t)* $(#[$m])* async fn $n(&$s $(, $a: $ty)*) -> $r $b]
            [$($i)* async fn $n(&$s $(, $a: $ty)*) -> $r {
                $crate::ports::metered::timed($store, stringify!($n), $s.0.$n($($a),*)).await
            }]
            $($rest)*);
    };

    // A plain method (no store round trip): forwarded as it is.
    (@munch $head:tt $meter:tt [$($t:tt)*] [$($i:tt)*]
        $(#[$m:meta])* fn $n:ident(&$s:ident $(, $a:ident: $ty:ty)* $(,)?) -> $r:ty;
        $($rest:tt)*
    ) => {
        $crate::ports::metered::port!(@munch $head $meter
            [$($t)* $(#[$m])* fn $n(&$s $(, $a: $ty)*) -> $r;]
            [$($i)* fn $n(&$s $(, $a: $ty)*) -> $r { $s.0.$n($($a),*) }]
            $($rest)*);
    };
    (@munch $head:tt $meter:tt [$($t:tt)*] [$($i:tt)*]
        $(#[$m:meta])* fn $n:ident(&$s:ident $(, $a:ident: $ty:ty)* $(,)?) -> $r:ty $b:block
        $($rest:tt)*
    ) => {
        $crate::ports::metered::port!(@munch $head $meter
            [$($t)* $(#[$m])* fn $n(&$s $(, $a: $ty)*) -> $r $b]
            [$($i)* fn $n(&$s $(, $a: $ty)*) -> $r { $s.0.$n($($a),*) }]
            $($rest)*);
    };
}
pub(crate) use port;
