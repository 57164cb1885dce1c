//! A small thread pool for [`Method::execute_with`](crate::Method::execute_with)
//! (feature `threads`, which needs `std`).
//!
//! [`ThreadPool::new(n)`](ThreadPool::new) starts `n - 1` threads; the thread that calls
//! [`Parallel::run`] is the `n`-th and takes tasks like the others, so a pool of 1 runs
//! everything inline. The caller owns the pool: the runtime never starts a thread, and
//! one pool serves any number of methods (one call at a time, see below).
//!
//! How a call runs: the caller publishes the job (the task closure and the task count)
//! under a lock and bumps a generation counter; idle workers watch that counter, spinning
//! for [`SPIN`] before they park on a condition variable, so the back-to-back kernels of
//! a network (mobilenet_v2 runs about a hundred of 20-200 us each) find them awake. Tasks
//! are claimed from an atomic counter, each index once. The caller returns only when
//! every task has finished *and* every worker that picked up the job has let go of it:
//! the closure it lent lives on the caller's stack.
//!
//! Re-entrancy: while a call runs, another call on the same pool (from inside one of its
//! tasks, or from another thread sharing the pool) runs its tasks inline on its own
//! thread, in order, instead of waiting for workers that are busy with the first call:
//! no deadlock, and the same results.
//!
//! Panics: a task that panics (on any thread) does not take its thread down and does not
//! stop the other tasks; once all of them have finished, `run` resumes the first panic on
//! the calling thread, and the pool stays usable. (etch's kernels do not panic; this is
//! what keeps a pool sound if one does.)

use core::any::Any;
use core::fmt;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use core::time::Duration;
use std::boxed::Box;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Instant;
use std::vec::Vec;

use crate::kernel::Parallel;

/// How long an idle worker spins, watching for the next job, before it parks. Long
/// enough to bridge the unsplit kernels between two split ones; a parked worker costs a
/// futex wake (tens of microseconds on a busy machine) to get back.
pub const SPIN: Duration = Duration::from_micros(200);

/// A pool of `n - 1` worker threads plus the calling thread; see the
/// [module docs](self). Dropping it stops and joins the workers.
pub struct ThreadPool {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

/// The task closure of the running call, its lifetime erased (see `ThreadPool::run`).
#[derive(Clone, Copy)]
struct Job {
    task: *const (dyn Fn(usize) + Sync + 'static),
    tasks: usize,
}

// SAFETY: the closure behind `task` is `Sync`, so calling it from the worker that holds
// a copy of the job is allowed; `run` keeps it alive while any worker may (see there).
unsafe impl Send for Job {}

/// What workers read under the lock: the current job, if one is running.
struct Slot {
    generation: u64,
    job: Option<Job>,
}

struct Shared {
    slot: Mutex<Slot>,
    /// `slot.generation`, readable without the lock: what spinning workers watch.
    generation: Line<AtomicU64>,
    /// The next task index to hand out.
    next: Line<AtomicUsize>,
    /// Tasks of the running call not finished yet.
    pending: Line<AtomicUsize>,
    /// Workers holding a copy of the running job.
    joined: Line<AtomicUsize>,
    /// A call is running: further calls run inline.
    busy: AtomicBool,
    /// The first panic of the running call's tasks.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Parking: workers past their spin wait on `wake`.
    sleeping: AtomicUsize,
    sleep: Mutex<()>,
    wake: Condvar,
    shutdown: AtomicBool,
}

/// A value on a cache line of its own: the counters one thread writes while another
/// spins on a neighbour would otherwise pull the line back and forth between cores.
#[repr(align(64))]
struct Line<T>(T);

impl<T> core::ops::Deref for Line<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// Locks `m`, ignoring poisoning: nothing panics while holding these locks.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ThreadPool {
    /// A pool running calls on `n` threads: this one and `n - 1` new ones (`n` of 0 is
    /// taken as 1). Fails if the OS refuses a thread (the ones started are joined).
    pub fn new(n: usize) -> io::Result<ThreadPool> {
        let shared = Arc::new(Shared {
            slot: Mutex::new(Slot {
                generation: 0,
                job: None,
            }),
            generation: Line(AtomicU64::new(0)),
            next: Line(AtomicUsize::new(0)),
            pending: Line(AtomicUsize::new(0)),
            joined: Line(AtomicUsize::new(0)),
            busy: AtomicBool::new(false),
            panic: Mutex::new(None),
            sleeping: AtomicUsize::new(0),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
            shutdown: AtomicBool::new(false),
        });
        let mut pool = ThreadPool {
            shared,
            threads: Vec::new(),
        };
        for i in 1..n.max(1) {
            let shared = Arc::clone(&pool.shared);
            let handle = thread::Builder::new()
                .name(std::format!("etch-worker-{i}"))
                .spawn(move || shared.worker())?;
            pool.threads.push(handle);
        }
        Ok(pool)
    }
}

impl Parallel for ThreadPool {
    fn workers(&self) -> usize {
        self.threads.len() + 1
    }

    fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        let s = &*self.shared;
        if tasks <= 1 || self.threads.is_empty() || s.busy.swap(true, Ordering::Acquire) {
            // One task, no workers, or a call already running (a nested call from one of
            // its tasks, or another thread's): run here, in order.
            (0..tasks).for_each(task);
            return;
        }
        s.next.store(0, Ordering::Relaxed);
        s.pending.store(tasks, Ordering::Relaxed);
        // SAFETY: only the lifetime bound changes (same fat-pointer layout). The erased
        // pointer is dereferenced only by `work` while the job is published or held by a
        // worker, and this function does not return (nor unwind: `work` catches the
        // tasks' panics, and nothing else below can panic) before the job is withdrawn
        // and `joined` is back to zero, so every dereference happens while `task` is
        // borrowed by this call.
        let erased = unsafe {
            core::mem::transmute::<
                *const (dyn Fn(usize) + Sync + '_),
                *const (dyn Fn(usize) + Sync + 'static),
            >(task)
        };
        let job = Job {
            task: erased,
            tasks,
        };
        {
            let mut slot = lock(&s.slot);
            slot.generation += 1;
            slot.job = Some(job);
            // SeqCst with the `sleeping` accesses: a worker about to park either is
            // counted below or sees the new generation (no lost wake-up).
            s.generation.store(slot.generation, Ordering::SeqCst);
        }
        if s.sleeping.load(Ordering::SeqCst) > 0 {
            let _guard = lock(&s.sleep);
            s.wake.notify_all();
        }
        s.work(job);
        // Every task has finished once `pending` is zero; the Acquire pairs with each
        // task's Release, so their writes are visible to the caller.
        wait_until(|| s.pending.load(Ordering::Acquire) == 0);
        // Withdraw the job, then wait for the workers that copied it to let go: after
        // that no thread can touch `task`, `next` or `pending` for this call.
        lock(&s.slot).job = None;
        wait_until(|| s.joined.load(Ordering::Acquire) == 0);
        let panicked = lock(&s.panic).take();
        s.busy.store(false, Ordering::Release);
        if let Some(payload) = panicked {
            panic::resume_unwind(payload);
        }
    }
}

/// Spins on `done`, yielding the CPU after a while (a worker may have been preempted in
/// the middle of a task on a loaded machine).
#[inline]
fn wait_until(done: impl Fn() -> bool) {
    let mut spins = 0u32;
    while !done() {
        if spins < 1 << 12 {
            spins += 1;
            core::hint::spin_loop();
        } else {
            thread::yield_now();
        }
    }
}

impl Shared {
    /// A worker thread: waits for a job, takes its tasks, repeats until shutdown.
    fn worker(&self) {
        let mut seen = 0;
        while self.wait_for_job(seen) {
            let job = {
                let slot = lock(&self.slot);
                seen = slot.generation;
                let Some(job) = slot.job else {
                    // The call ended before this worker woke up.
                    continue;
                };
                // Counted under the lock: `run` withdraws the job under the same lock
                // and then waits for the count to drop.
                self.joined.fetch_add(1, Ordering::Relaxed);
                job
            };
            self.work(job);
            self.joined.fetch_sub(1, Ordering::Release);
        }
    }

    /// Claims and runs tasks of `job` until none is left.
    fn work(&self, job: Job) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= job.tasks {
                return;
            }
            // SAFETY: `job` is the running call's (published, or copied while it was
            // published and counted in `joined`), so its closure is alive: `run` waits
            // for this task (`pending`) and for this thread to let go (`joined`).
            let task = unsafe { &*job.task };
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| task(i))) {
                let mut first = lock(&self.panic);
                if first.is_none() {
                    *first = Some(payload);
                } else {
                    // Dropping a payload can itself panic; a later one is not needed.
                    core::mem::forget(payload);
                }
            }
            self.pending.fetch_sub(1, Ordering::Release);
        }
    }

    /// Waits until the generation moves past `seen` (true) or the pool shuts down
    /// (false): spinning for [`SPIN`], then parked.
    fn wait_for_job(&self, seen: u64) -> bool {
        let start = Instant::now();
        let mut spins = 0u32;
        loop {
            if self.shutdown.load(Ordering::Acquire) {
                return false;
            }
            if self.generation.load(Ordering::Acquire) != seen {
                return true;
            }
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(64) && start.elapsed() > SPIN {
                break;
            }
            core::hint::spin_loop();
        }
        let mut guard = lock(&self.sleep);
        self.sleeping.fetch_add(1, Ordering::SeqCst);
        while self.generation.load(Ordering::SeqCst) == seen
            && !self.shutdown.load(Ordering::SeqCst)
        {
            guard = self
                .wake
                .wait(guard)
                .unwrap_or_else(PoisonError::into_inner);
        }
        self.sleeping.fetch_sub(1, Ordering::SeqCst);
        !self.shutdown.load(Ordering::SeqCst)
    }
}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::SeqCst);
        {
            let _guard = lock(&self.shared.sleep);
            self.shared.wake.notify_all();
        }
        for handle in self.threads.drain(..) {
            // Workers catch their tasks' panics, so a join error is not expected; there
            // is nothing to do with one in a destructor.
            let _ = handle.join();
        }
    }
}

impl fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPool")
            .field("workers", &self.workers())
            .finish()
    }
}

#[cfg(test)]
mod tests;
