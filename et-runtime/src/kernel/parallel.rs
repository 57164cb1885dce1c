//! Splitting a kernel's work: the [`KernelContext`] helpers kernels call
//! ([`parallel_for`](KernelContext::parallel_for),
//! [`parallel_each`](KernelContext::parallel_each)).
//!
//! The runtime owns no threads: a caller passes its pool for one execute
//! ([`Method::execute_with`](crate::Method::execute_with)), and every kernel of that
//! execute sees it through its context. Without a pool (plain `execute`, `no_std`
//! builds without one) the helpers run the tasks inline, in order, on the calling thread.
//! The `threads` feature provides a pool for `std` builds
//! (`threads::ThreadPool`); a `no_std` target can implement [`Parallel`] on its own
//! scheduler.

use core::sync::atomic::{AtomicUsize, Ordering};

use super::context::KernelContext;
use super::pool::Parallel;

impl<'a> KernelContext<'a> {
    /// This context with `parallel` as its pool (`None`: run every split inline).
    /// Without the feature `parallel` the pool is ignored: every split runs inline.
    #[inline(always)]
    pub fn with_parallel(
        #[cfg_attr(not(feature = "parallel"), allow(unused_mut))] mut self,
        parallel: Option<&'a dyn Parallel>,
    ) -> Self {
        #[cfg(feature = "parallel")]
        {
            self.parallel = parallel;
        }
        #[cfg(not(feature = "parallel"))]
        let _ = parallel;
        self
    }

    /// The pool the kernel may split its work over, if the execute was given one (never
    /// without the feature `parallel`).
    #[inline(always)]
    pub fn parallel(&self) -> Option<&'a dyn Parallel> {
        #[cfg(feature = "parallel")]
        return self.parallel;
        #[cfg(not(feature = "parallel"))]
        None
    }

    /// How many threads a split of this kernel's work may run on: 1 without a pool, and
    /// always 1 without the feature `parallel`, so that kernels' split paths compile
    /// away. Kernels compare their work with a threshold before splitting, so that small
    /// calls do not pay for waking threads.
    #[inline]
    pub fn workers(&self) -> usize {
        match self.parallel() {
            Some(p) => p.workers().max(1),
            None => 1,
        }
    }

    /// Calls `task(i)` for every `i` in `0..tasks`: on the pool when the context has one
    /// with more than one worker and there is more than one task, else inline and in
    /// order. Returns when every call has returned.
    ///
    /// Scratch memory ([`alloc_temp`](Self::alloc_temp)) is not for use inside the tasks
    /// (the arena is not shared between threads): take every task's scratch before the
    /// split and hand it over with [`parallel_each`](Self::parallel_each).
    #[inline]
    pub fn parallel_for(&self, tasks: usize, task: impl Fn(usize) + Sync) {
        match self.parallel() {
            Some(p) if tasks > 1 && p.workers() > 1 => p.run(tasks, &task),
            _ => (0..tasks).for_each(task),
        }
    }

    /// Calls `task(i, &mut items[i])` for every item, split over the pool as
    /// [`parallel_for`](Self::parallel_for) does: the way to give each task its own
    /// mutable data (an output block, its scratch), built before the split.
    ///
    /// Each item is handed out once, through a counter of this call rather than the
    /// pool's task numbers, so no `Parallel` implementation can make two tasks share one.
    pub fn parallel_each<T: Send>(&self, items: &mut [T], task: impl Fn(usize, &mut T) + Sync) {
        let n = items.len();
        let parallel = match self.parallel() {
            Some(p) if n > 1 && p.workers() > 1 => p,
            _ => {
                items.iter_mut().enumerate().for_each(|(i, t)| task(i, t));
                return;
            }
        };
        let base = SendPtr(items.as_mut_ptr());
        let next = AtomicUsize::new(0);
        let claim_all = || loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                break;
            }
            // SAFETY: `i < n` indexes `items`, which this call borrows mutably for its
            // whole duration; the counter hands out each `i` once, so this is the only
            // reference to item `i` while it lives (it ends with the task call).
            let item = unsafe { &mut *base.get().add(i) };
            task(i, item);
        };
        parallel.run(parallel.workers().min(n), &|_| claim_all());
        // A pool that ran fewer task calls than asked leaves items over: run them here.
        claim_all();
    }
}

/// A pointer to the items of [`KernelContext::parallel_each`], shared by its tasks.
struct SendPtr<T>(*mut T);

impl<T> SendPtr<T> {
    /// Through a method, so closures capture the wrapper (which is `Sync`), not the
    /// raw pointer field.
    #[inline(always)]
    fn get(&self) -> *mut T {
        self.0
    }
}

// SAFETY: the pointer is only dereferenced at indices handed out once each (see
// `parallel_each`), and `T: Send` lets each item move to the thread that takes it.
unsafe impl<T: Send> Sync for SendPtr<T> {}
