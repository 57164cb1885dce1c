extern crate std;

use super::*;
use core::sync::atomic::AtomicUsize;
use std::vec::Vec;

fn counters(n: usize) -> Vec<AtomicUsize> {
    (0..n).map(|_| AtomicUsize::new(0)).collect()
}

fn assert_each_once(counts: &[AtomicUsize]) {
    for (i, c) in counts.iter().enumerate() {
        assert_eq!(c.load(Ordering::Relaxed), 1, "task {i}");
    }
}

#[test]
fn every_task_runs_once() {
    for n in [1, 2, 3, 4] {
        let pool = ThreadPool::new(n).unwrap();
        assert_eq!(pool.workers(), n);
        for tasks in [1, 2, n, 3 * n + 1, 1000] {
            let counts = counters(tasks);
            pool.run(tasks, &|i| {
                counts[i].fetch_add(1, Ordering::Relaxed);
            });
            assert_each_once(&counts);
        }
    }
}

#[test]
fn zero_tasks_and_zero_threads() {
    let pool = ThreadPool::new(0).unwrap();
    assert_eq!(pool.workers(), 1);
    pool.run(0, &|_| panic!("no task to run"));
    let pool = ThreadPool::new(2).unwrap();
    pool.run(0, &|_| panic!("no task to run"));
}

#[test]
fn tasks_use_the_workers() {
    // With 2 threads and tasks that wait for each other, both threads must take part.
    let pool = ThreadPool::new(2).unwrap();
    let arrived = AtomicUsize::new(0);
    let threads = std::sync::Mutex::new(Vec::new());
    pool.run(2, &|_| {
        threads.lock().unwrap().push(thread::current().id());
        arrived.fetch_add(1, Ordering::SeqCst);
        let start = Instant::now();
        while arrived.load(Ordering::SeqCst) < 2 && start.elapsed() < Duration::from_secs(5) {
            core::hint::spin_loop();
        }
    });
    let threads = threads.into_inner().unwrap();
    assert_eq!(threads.len(), 2);
    assert_ne!(threads[0], threads[1]);
}

#[test]
fn a_nested_call_runs_inline() {
    let pool = ThreadPool::new(3).unwrap();
    let counts = counters(6 * 5);
    pool.run(6, &|outer| {
        let me = thread::current().id();
        pool.run(5, &|inner| {
            // Inline: on the thread of the enclosing task.
            assert_eq!(thread::current().id(), me);
            counts[outer * 5 + inner].fetch_add(1, Ordering::Relaxed);
        });
    });
    assert_each_once(&counts);
}

#[test]
fn calls_from_two_threads_share_one_pool() {
    let pool = ThreadPool::new(2).unwrap();
    let counts = counters(2 * 200 * 16);
    thread::scope(|scope| {
        for t in 0..2 {
            let (pool, counts) = (&pool, &counts);
            scope.spawn(move || {
                for round in 0..200 {
                    let base = (t * 200 + round) * 16;
                    pool.run(16, &|i| {
                        counts[base + i].fetch_add(1, Ordering::Relaxed);
                    });
                }
            });
        }
    });
    assert_each_once(&counts);
}

#[test]
fn a_panic_reaches_the_caller_after_every_task() {
    let pool = ThreadPool::new(2).unwrap();
    let counts = counters(64);
    let caught = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.run(64, &|i| {
            counts[i].fetch_add(1, Ordering::Relaxed);
            if i % 7 == 3 {
                panic!("task {i}");
            }
        });
    }));
    assert!(caught.is_err());
    // The other tasks still ran, each once, and the pool still works.
    assert_each_once(&counts);
    let again = counters(10);
    pool.run(10, &|i| {
        again[i].fetch_add(1, Ordering::Relaxed);
    });
    assert_each_once(&again);
}

#[test]
fn workers_park_and_wake() {
    // Past the spin the workers sleep on the condition variable; a call must wake them.
    let pool = ThreadPool::new(2).unwrap();
    for _ in 0..3 {
        thread::sleep(SPIN * 5);
        let counts = counters(8);
        pool.run(8, &|i| {
            counts[i].fetch_add(1, Ordering::Relaxed);
        });
        assert_each_once(&counts);
    }
}

#[test]
fn many_short_calls() {
    // Back-to-back calls, as kernels make them: no task lost or repeated across
    // generations.
    let pool = ThreadPool::new(4).unwrap();
    let total = AtomicUsize::new(0);
    for round in 0..2000 {
        let tasks = round % 7;
        pool.run(tasks, &|_| {
            total.fetch_add(1, Ordering::Relaxed);
        });
    }
    let expected: usize = (0..2000).map(|r| r % 7).sum();
    assert_eq!(total.load(Ordering::Relaxed), expected);
}

#[test]
fn parallel_each_hands_out_every_item_once() {
    use crate::memory::Arena;
    use crate::KernelContext;
    let pool = ThreadPool::new(3).unwrap();
    let mut scratch = [0u8; 64];
    let arena = Arena::new(&mut scratch);
    for ctx in [
        KernelContext::new(&arena),
        KernelContext::new(&arena).with_parallel(Some(&pool)),
    ] {
        let mut items: Vec<usize> = (0..37).collect();
        ctx.parallel_each(&mut items, |i, v| {
            assert_eq!(*v, i);
            *v += 100;
        });
        assert!(items.iter().enumerate().all(|(i, &v)| v == i + 100));
        let counts = counters(11);
        ctx.parallel_for(11, |i| {
            counts[i].fetch_add(1, Ordering::Relaxed);
        });
        assert_each_once(&counts);
    }
    assert_eq!(KernelContext::new(&arena).workers(), 1);
    assert_eq!(
        KernelContext::new(&arena)
            .with_parallel(Some(&pool))
            .workers(),
        3
    );
}
