//! A pool for unit tests of split kernels, without the runtime's `threads` feature:
//! every task on its own scoped thread.

extern crate std;

/// Claims `workers` workers; runs each task on a new scoped thread.
#[derive(Debug)]
pub struct Scoped(pub usize);

impl et_runtime::Parallel for Scoped {
    fn workers(&self) -> usize {
        self.0
    }

    fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        std::thread::scope(|s| {
            for i in 0..tasks {
                s.spawn(move || task(i));
            }
        });
    }
}
