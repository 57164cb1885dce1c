//! Waiting for a mutex from Python without deadlocking on the interpreter's lock.
//!
//! A call holds its object's mutex while it runs Rust code with the interpreter's lock
//! released, then takes the interpreter's lock back to build its results. Were another
//! thread to wait for that mutex while holding the interpreter's lock, each would wait
//! for the other forever; so a thread waits for a mutex only with the interpreter's lock
//! released.

use std::sync::{Mutex, MutexGuard, TryLockError};

use pyo3::Python;

/// Locks `mutex`, waiting (if it must) with the interpreter's lock released.
pub fn lock<'a, T: Send>(py: Python<'_>, mutex: &'a Mutex<T>) -> MutexGuard<'a, T> {
    loop {
        match mutex.try_lock() {
            Ok(guard) => return guard,
            // Every call catches its panics before its guard drops (`errors::catch`), so
            // a poisoned mutex still guards a consistent value.
            Err(TryLockError::Poisoned(p)) => return p.into_inner(),
            // Wait until the holder is done, then try again with the interpreter's lock.
            Err(TryLockError::WouldBlock) => py.detach(|| drop(mutex.lock())),
        }
    }
}
