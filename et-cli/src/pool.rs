//! `etch run --threads N`: the pool the kernels split their work over (feature
//! `threads`, on by default), and the execute that uses it.

use et_runtime::etdump::EventTracer;
use et_runtime::{ExecuteError, Method};

use crate::Failure;

/// The pool of `--threads N`: none for one thread (plain `execute`), or without the
/// `threads` feature.
pub struct Pool {
    #[cfg(feature = "threads")]
    pool: Option<et_runtime::threads::ThreadPool>,
}

impl Pool {
    /// Starts `threads - 1` workers (none for 0 or 1). Without the `threads` feature
    /// `main` has refused more than one thread already.
    pub fn new(threads: usize) -> Result<Pool, Failure> {
        #[cfg(feature = "threads")]
        {
            let pool = if threads > 1 {
                let pool = et_runtime::threads::ThreadPool::new(threads)
                    .map_err(|e| Failure(format!("cannot start {threads} threads: {e}")))?;
                Some(pool)
            } else {
                None
            };
            Ok(Pool { pool })
        }
        #[cfg(not(feature = "threads"))]
        {
            let _ = threads;
            Ok(Pool {})
        }
    }

    /// Executes `method` once, on the pool if there is one, traced if `tracer` is given.
    pub fn execute<'a>(
        &self,
        method: &mut Method<'a>,
        tracer: Option<&EventTracer<'_>>,
    ) -> Result<(), ExecuteError<'a>> {
        #[cfg(feature = "threads")]
        if let Some(pool) = &self.pool {
            return match tracer {
                Some(tracer) => method.execute_traced_with(tracer, pool),
                None => method.execute_with(pool),
            };
        }
        match tracer {
            Some(tracer) => method.execute_traced(tracer),
            None => method.execute(),
        }
    }
}
