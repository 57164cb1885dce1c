//! The [`Parallel`] trait: a thread pool as kernels see it. Its own module, below the
//! context that carries it and the helpers that split work over it.

/// Runs independent tasks, possibly at the same time: a thread pool as kernels see it.
///
/// Object safe, so a context carries it as `&dyn Parallel` and kernels are not generic
/// over it.
pub trait Parallel: Sync {
    /// How many threads [`run`](Self::run) may use at once, the calling thread included
    /// (1: everything runs on the caller). Kernels size their split by it.
    fn workers(&self) -> usize;

    /// Calls `task(i)` once for every `i` in `0..tasks`, in any order and on any of the
    /// pool's threads (the caller's included), and returns when every call has returned.
    /// `tasks == 0` returns at once.
    fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync));
}
