//! Fork-join loops for kernels, on a pool of threads that stay awake between operators.
//!
//! Kernels split their work into `n` independent chunks and call [`for_each`] (or [`map`],
//! [`chunks_mut`]); the calling thread runs chunks too, and returns when all are done. This is
//! PyTorch's `at::parallel_for` on OpenMP, and it exists for the same reason OpenMP keeps its
//! threads spinning: on this kind of machine (virtual CPUs) waking a sleeping thread costs 50 to
//! 150 µs, longer than most operators take. rayon's workers sleep a few microseconds after their
//! queue empties, so a model made of many small operators paid that wake-up on every one (a
//! `rayon::join` of two 20 µs tasks took about 90 µs; here it takes about 21 µs).
//!
//! After a loop, each worker waits for the next one by spinning for [`SPIN`], then by yielding
//! (other threads that want the core get it) up to [`YIELD`], then sleeps on a condition
//! variable until the next loop wakes it.
//!
//! One loop runs on the pool at a time. A loop started while another is running (from another
//! thread, or from inside a chunk: nested parallelism) runs serially on its caller, as PyTorch's
//! does inside a parallel region; so does a loop started on a rayon worker, or where rayon's
//! current pool has one thread (`rayon::ThreadPool::install` limits both).
//!
//! The pool has `OXTEN_NUM_THREADS` threads (or `RAYON_NUM_THREADS`), by default one per core,
//! counting the caller; [`set_num_threads`] changes how many loops use (starting more workers
//! when it asks for more than the pool has), as `torch.set_num_threads`. Chunks see the pool
//! thread's own thread-local state (grad mode and the dispatcher's sets are not carried):
//! kernels below the dispatcher do not read them.

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long an idle worker spins before it starts yielding its core.
pub const SPIN: Duration = Duration::from_micros(200);
/// How long an idle worker keeps checking (yielding in between) before it sleeps.
pub const YIELD: Duration = Duration::from_millis(4);

/// The number of threads loops run on (at most; see [`threads_now`]), counting the caller:
/// `OXTEN_NUM_THREADS`, else `RAYON_NUM_THREADS`, else one per core, until [`set_num_threads`].
pub fn num_threads() -> usize {
    limit()
}

/// Sets the number of threads loops run on, counting the caller (`torch.set_num_threads`).
/// More threads than the pool has start new workers; fewer leave the others idle. Zero is an
/// error.
///
/// ```
/// let before = oxten_runtime::parallel::num_threads();
/// oxten_runtime::parallel::set_num_threads(1).unwrap();
/// assert_eq!(oxten_runtime::parallel::num_threads(), 1);
/// assert!(oxten_runtime::parallel::set_num_threads(0).is_err());
/// oxten_runtime::parallel::set_num_threads(before).unwrap();
/// ```
pub fn set_num_threads(n: usize) -> crate::Result<()> {
    if n == 0 {
        return Err(crate::Error::value("set_num_threads: the number of threads must be positive, got 0"));
    }
    let pool = pool();
    let _growing = pool.grow.lock().unwrap_or_else(|e| e.into_inner());
    let mut started = pool.started.load(Ordering::Acquire);
    while started < n {
        let s = pool.shared.clone();
        let spawned = std::thread::Builder::new().name(format!("oxten-worker-{started}")).spawn(move || worker(s));
        if spawned.is_err() {
            break;
        }
        started += 1;
    }
    pool.started.store(started, Ordering::Release);
    pool.limit.store(n.min(started), Ordering::Release);
    Ok(())
}

/// The thread limit of loops (at least 1).
fn limit() -> usize {
    pool().limit.load(Ordering::Acquire).max(1)
}

/// The number of threads a loop started here would use: 1 on a pool worker, inside a chunk,
/// on a rayon worker, or where rayon's current pool has one thread.
pub fn threads_now() -> usize {
    if IN_LOOP.with(|c| c.get()) || rayon::current_thread_index().is_some() {
        return 1;
    }
    limit().min(rayon::current_num_threads()).max(1)
}

/// Runs `f(i)` for every `i` in `0..n`, each exactly once, spread over the pool. Returns when
/// all calls have returned; a panic in one is re-raised here after the others finish.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let sum = AtomicUsize::new(0);
/// oxten_runtime::parallel::for_each(100, |i| {
///     sum.fetch_add(i, Ordering::Relaxed);
/// });
/// assert_eq!(sum.into_inner(), 4950);
/// ```
pub fn for_each(n: usize, f: impl Fn(usize) + Sync) {
    let f: &(dyn Fn(usize) + Sync) = &f;
    if n <= 1 || threads_now() <= 1 {
        serial(n, f);
        return;
    }
    let pool = pool();
    if pool.shared.busy.swap(true, Ordering::Acquire) {
        // Another thread's loop holds the pool.
        serial(n, f);
        return;
    }
    // SAFETY: the job is only reachable through `shared.job` while this call runs: every call of
    // `f` happens after a worker claims an index below `n`, and this function returns only after
    // all `n` indices have finished (`done == n`), so `f` outlives every use. Erasing the
    // lifetime is what lets the workers hold the job.
    let f: &'static (dyn Fn(usize) + Sync) = unsafe { std::mem::transmute(f) };
    let job = Arc::new(Job {
        f,
        n,
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        panic: Mutex::new(None),
        workers: threads_now().min(n) - 1,
        joined: AtomicUsize::new(0),
    });
    *pool.shared.job.lock().unwrap_or_else(|e| e.into_inner()) = Some(job.clone());
    pool.shared.epoch.fetch_add(1, Ordering::Release);
    {
        let sleepers = pool.shared.sleepers.lock().unwrap_or_else(|e| e.into_inner());
        if *sleepers > 0 {
            pool.shared.wake.notify_all();
        }
    }
    run(&job);
    while job.done.load(Ordering::Acquire) < n {
        std::hint::spin_loop();
    }
    *pool.shared.job.lock().unwrap_or_else(|e| e.into_inner()) = None;
    pool.shared.busy.store(false, Ordering::Release);
    let panic = job.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(p) = panic {
        resume_unwind(p);
    }
}

/// [`for_each`] on the calling thread, with the same contract: every index runs even if one
/// panics, and the first panic is re-raised at the end.
fn serial(n: usize, f: &(dyn Fn(usize) + Sync)) {
    let mut first = None;
    for i in 0..n {
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(i))) {
            first.get_or_insert(p);
        }
    }
    if let Some(p) = first {
        resume_unwind(p);
    }
}

/// `(0..n).map(f).collect()`, computed by [`for_each`]; the results keep their order.
pub fn map<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let mut slots: Vec<Option<T>> = (0..n).map(|_| None).collect();
    chunks_mut(&mut slots, 1, |i, slot| slot[0] = Some(f(i)));
    slots.into_iter().map(|s| s.expect("every index ran")).collect()
}

/// Calls `f(c, chunk)` for consecutive chunks of `data` of `chunk_len` elements (the last may be
/// shorter), spread over the pool like [`for_each`].
pub fn chunks_mut<T: Send>(data: &mut [T], chunk_len: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let chunk_len = chunk_len.max(1);
    let len = data.len();
    let base = SendPtr(data.as_mut_ptr());
    for_each(len.div_ceil(chunk_len), |c| {
        let start = c * chunk_len;
        let end = (start + chunk_len).min(len);
        // SAFETY: chunk `c` covers `start..end` of `data`, disjoint from every other chunk, and
        // `data` stays mutably borrowed by this call until all chunks return.
        let chunk = unsafe { std::slice::from_raw_parts_mut(base.get().add(start), end - start) };
        f(c, chunk);
    });
}

/// A pointer that may cross threads (for [`chunks_mut`]).
struct SendPtr<T>(*mut T);
// SAFETY: only used to hand disjoint sub-slices of one `&mut [T]` to the chunks.
unsafe impl<T: Send> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SendPtr<T> {}
impl<T> SendPtr<T> {
    fn get(&self) -> *mut T {
        self.0
    }
}

thread_local! {
    /// Whether this thread is running a chunk (or is a pool worker).
    static IN_LOOP: Cell<bool> = const { Cell::new(false) };
}

/// One loop: the chunk function, the next unclaimed index and the number finished.
struct Job {
    f: &'static (dyn Fn(usize) + Sync),
    n: usize,
    next: AtomicUsize,
    done: AtomicUsize,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// How many workers may join (the thread limit of the caller, less the caller).
    workers: usize,
    joined: AtomicUsize,
}

/// Claims and runs chunks until none is left, a block of consecutive indices at a time (about
/// four blocks per thread), so that loops over many small items do not pay one atomic claim
/// per item.
fn run(job: &Job) {
    let was = IN_LOOP.with(|c| c.replace(true));
    let block = (job.n / (4 * (job.workers + 1))).max(1);
    loop {
        let start = job.next.fetch_add(block, Ordering::Relaxed);
        if start >= job.n {
            break;
        }
        let end = (start + block).min(job.n);
        for i in start..end {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| (job.f)(i))) {
                job.panic.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(p);
            }
        }
        job.done.fetch_add(end - start, Ordering::Release);
    }
    IN_LOOP.with(|c| c.set(was));
}

struct Shared {
    /// Incremented when a job is posted.
    epoch: AtomicU64,
    job: Mutex<Option<Arc<Job>>>,
    sleepers: Mutex<usize>,
    wake: Condvar,
    /// Whether a loop holds the pool.
    busy: AtomicBool,
}

struct Pool {
    shared: Arc<Shared>,
    /// Threads running (workers and the caller).
    started: AtomicUsize,
    /// How many of them a loop uses ([`set_num_threads`]).
    limit: AtomicUsize,
    /// Serializes [`set_num_threads`]'s worker starts.
    grow: Mutex<()>,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let from_env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<usize>().ok()).filter(|&n| n > 0);
        let threads = from_env("OXTEN_NUM_THREADS")
            .or_else(|| from_env("RAYON_NUM_THREADS"))
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let shared = Arc::new(Shared {
            epoch: AtomicU64::new(0),
            job: Mutex::new(None),
            sleepers: Mutex::new(0),
            wake: Condvar::new(),
            busy: AtomicBool::new(false),
        });
        let mut started = 1;
        for i in 1..threads {
            let s = shared.clone();
            let spawned = std::thread::Builder::new().name(format!("oxten-worker-{i}")).spawn(move || worker(s));
            if spawned.is_ok() {
                started += 1;
            }
        }
        Pool { shared, started: AtomicUsize::new(started), limit: AtomicUsize::new(started), grow: Mutex::new(()) }
    })
}

/// A worker: waits for a new epoch (spinning, then yielding, then sleeping), joins the job.
fn worker(s: Arc<Shared>) {
    IN_LOOP.with(|c| c.set(true));
    let mut seen = s.epoch.load(Ordering::Acquire);
    loop {
        let idle_since = Instant::now();
        let mut polls = 0u32;
        loop {
            let e = s.epoch.load(Ordering::Acquire);
            if e != seen {
                seen = e;
                break;
            }
            polls = polls.wrapping_add(1);
            if !polls.is_multiple_of(64) {
                std::hint::spin_loop();
                continue;
            }
            let idle = idle_since.elapsed();
            if idle < SPIN {
                std::hint::spin_loop();
            } else if idle < YIELD {
                std::thread::yield_now();
            } else {
                let mut sleepers = s.sleepers.lock().unwrap_or_else(|e| e.into_inner());
                *sleepers += 1;
                // The poster bumps the epoch before taking this lock, so a post cannot be missed.
                while s.epoch.load(Ordering::Acquire) == seen {
                    sleepers = s.wake.wait(sleepers).unwrap_or_else(|e| e.into_inner());
                }
                *sleepers -= 1;
            }
        }
        let job = s.job.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(job) = job {
            // Respect the caller's thread limit (a smaller rayon pool).
            if job.joined.fetch_add(1, Ordering::Relaxed) < job.workers {
                run(&job);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_index_runs_once() {
        for n in [0, 1, 2, 3, 17, 1000] {
            let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            for_each(n, |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1), "n = {n}");
        }
    }

    #[test]
    fn map_keeps_order_and_chunks_cover_the_slice() {
        assert_eq!(map(50, |i| i * i), (0..50).map(|i| i * i).collect::<Vec<_>>());
        let mut v = vec![0usize; 103];
        chunks_mut(&mut v, 10, |c, chunk| chunk.iter_mut().for_each(|x| *x = c));
        assert_eq!(v, (0..103).map(|i| i / 10).collect::<Vec<_>>());
    }

    #[test]
    fn nested_loops_run_serially_inside() {
        // Chunks that run on a pool worker see one thread (the caller's own chunks do too when
        // the pool ran the loop; a loop that found the pool busy ran serially).
        let on_workers = map(64, |_| {
            let worker = std::thread::current().name().is_some_and(|n| n.starts_with("oxten-worker"));
            !worker || threads_now() == 1
        });
        assert!(on_workers.iter().all(|&ok| ok));
        let total = AtomicUsize::new(0);
        for_each(8, |_| {
            for_each(8, |_| {
                total.fetch_add(1, Ordering::Relaxed);
            })
        });
        assert_eq!(total.into_inner(), 64);
    }

    /// `set_num_threads` caps the threads a loop uses (one: everything on the caller) and
    /// starts workers when it asks for more than run. Other tests share the pool, so this one
    /// only checks upper bounds and restores the limit.
    #[test]
    fn set_num_threads_caps_and_grows_the_pool() {
        use std::collections::HashSet;
        let before = num_threads();
        let used = |n: usize| {
            let ids = Mutex::new(HashSet::new());
            for_each(n, |_| {
                ids.lock().unwrap().insert(std::thread::current().id());
                std::thread::sleep(Duration::from_micros(200));
            });
            ids.into_inner().unwrap().len()
        };
        set_num_threads(1).unwrap();
        assert_eq!(num_threads(), 1);
        assert_eq!(used(16), 1);
        set_num_threads(before + 2).unwrap();
        assert_eq!(num_threads(), before + 2);
        assert!(used(64) <= before + 2);
        assert!(set_num_threads(0).is_err());
        set_num_threads(before).unwrap();
        assert_eq!(num_threads(), before);
    }

    #[test]
    fn concurrent_callers_all_finish() {
        let total = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..200 {
                        for_each(5, |_| {
                            total.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                });
            }
        });
        assert_eq!(total.into_inner(), 4 * 200 * 5);
    }

    #[test]
    fn a_panic_reaches_the_caller_after_the_other_chunks() {
        let done = AtomicUsize::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            for_each(16, |i| {
                if i == 3 {
                    panic!("chunk 3 failed");
                }
                done.fetch_add(1, Ordering::Relaxed);
            })
        }));
        let msg = r.unwrap_err();
        assert_eq!(msg.downcast_ref::<&str>(), Some(&"chunk 3 failed"));
        assert_eq!(done.into_inner(), 15);
        // The same on the serial path (inside a one-thread rayon pool).
        let done = AtomicUsize::new(0);
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let r = one.install(|| {
            catch_unwind(AssertUnwindSafe(|| {
                for_each(16, |i| {
                    if i == 3 {
                        panic!("chunk 3 failed");
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                })
            }))
        });
        assert!(r.is_err());
        assert_eq!(done.into_inner(), 15);
        // The pool is usable afterwards.
        assert_eq!(map(3, |i| i + 1), vec![1, 2, 3]);
    }

    #[test]
    fn a_one_thread_rayon_pool_limits_loops() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        // `install` runs on that pool's worker: loops there are serial.
        assert_eq!(pool.install(threads_now), 1);
    }
}
