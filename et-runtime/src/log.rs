//! Logging that costs nothing unless compiled in.
//!
//! [`et_log!`](crate::et_log) takes a level and a format string. A level is compiled in
//! only by its feature: `log-error`, or `log-info` (which includes `log-error`). Without
//! them (the default) the macro expands to nothing at all, so no format string, argument
//! formatting or `core::fmt` code reaches the binary (`scripts/size-report.sh` checks
//! `size_test` for this). With a level compiled in, messages go to the sink set by
//! [`set_log_sink`], or to stderr under `std` when none is set, and are dropped otherwise.

use core::fmt;
use core::sync::atomic::{AtomicPtr, Ordering};

/// How severe a message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// A failure the caller is also told about through an `Err`.
    Error,
    /// Progress worth knowing (a method loaded, ...).
    Info,
}

/// The most verbose level compiled into this build (`None`: logging is compiled out).
pub const MAX_LEVEL: Option<Level> = if cfg!(feature = "log-info") {
    Some(Level::Info)
} else if cfg!(feature = "log-error") {
    Some(Level::Error)
} else {
    None
};

/// A log sink: receives each compiled-in message.
pub type LogSink = fn(Level, &fmt::Arguments<'_>);

static SINK: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());

/// Sends compiled-in messages to `sink` from now on.
pub fn set_log_sink(sink: LogSink) {
    SINK.store(sink as *mut (), Ordering::Release);
}

/// Delivers one message (what `et_log!` calls when its level is compiled in).
#[doc(hidden)]
#[cold]
pub fn emit(level: Level, args: fmt::Arguments<'_>) {
    let sink = SINK.load(Ordering::Acquire);
    if !sink.is_null() {
        // SAFETY: `SINK` only ever holds null or a `LogSink` stored by `set_log_sink`,
        // and function pointers round-trip through `*mut ()` on every supported target.
        let sink: LogSink = unsafe { core::mem::transmute::<*mut (), LogSink>(sink) };
        sink(level, &args);
    } else {
        #[cfg(feature = "std")]
        std::eprintln!("etch {level:?}: {args}");
    }
}

/// Logs a message at a level (`error` or `info`) if that level is compiled in (features
/// `log-error`, `log-info`); otherwise expands to nothing.
///
/// ```
/// et_runtime::et_log!(error, "method {} failed: {:?}", "forward", et_runtime::Error::InvalidProgram);
/// ```
#[macro_export]
macro_rules! et_log {
    (error, $($arg:tt)+) => {
        $crate::__et_log_error!($($arg)+)
    };
    (info, $($arg:tt)+) => {
        $crate::__et_log_info!($($arg)+)
    };
}

#[cfg(feature = "log-error")]
#[doc(hidden)]
#[macro_export]
macro_rules! __et_log_error {
    ($($arg:tt)+) => {
        $crate::log::emit($crate::log::Level::Error, format_args!($($arg)+))
    };
}

/// Compiled out: the arguments are only borrowed (so they count as used) and the format
/// string is dropped.
#[cfg(not(feature = "log-error"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __et_log_error {
    ($fmt:literal $(, $arg:expr)* $(,)?) => {{
        $(let _ = &$arg;)*
    }};
}

#[cfg(feature = "log-info")]
#[doc(hidden)]
#[macro_export]
macro_rules! __et_log_info {
    ($($arg:tt)+) => {
        $crate::log::emit($crate::log::Level::Info, format_args!($($arg)+))
    };
}

/// Compiled out, as `__et_log_error`.
#[cfg(not(feature = "log-info"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __et_log_info {
    ($fmt:literal $(, $arg:expr)* $(,)?) => {{
        $(let _ = &$arg;)*
    }};
}

#[cfg(test)]
mod tests {
    use super::{Level, MAX_LEVEL};

    #[test]
    fn levels_follow_the_features() {
        assert_eq!(MAX_LEVEL.is_some(), cfg!(feature = "log-error"));
        assert_eq!(MAX_LEVEL == Some(Level::Info), cfg!(feature = "log-info"));
        // Compiled out, the macro is an empty expression.
        let () = crate::et_log!(info, "{}", 1);
        let () = crate::et_log!(error, "{}", 2);
    }

    #[cfg(feature = "log-info")]
    #[test]
    fn compiled_in_messages_reach_the_sink() {
        extern crate std;
        use core::sync::atomic::{AtomicUsize, Ordering};
        use std::string::ToString;
        static SEEN: AtomicUsize = AtomicUsize::new(0);
        fn sink(level: Level, args: &core::fmt::Arguments<'_>) {
            if level == Level::Info && args.to_string() == "hello 7" {
                SEEN.fetch_add(1, Ordering::SeqCst);
            }
        }
        super::set_log_sink(sink);
        crate::et_log!(info, "hello {}", 7);
        assert_eq!(SEEN.load(Ordering::SeqCst), 1);
    }
}
