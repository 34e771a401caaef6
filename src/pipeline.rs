//! One reader -> workers -> writer pipeline on crossbeam channels, shared by the passes, the
//! merge, the verifier and the statistics.
//!
//! Items `0..n` are read in order on a reader thread (I/O that prefetches while workers
//! compute), transformed by worker threads, and handed to the writer on the calling thread,
//! either as they complete or in item order. Memory stays bounded: with
//! [`Order::Completion`] the channels are rendezvous channels, so an item's buffers exist
//! only where they are being read (one item ahead), worked on, or written; with
//! [`Order::Sequence`] at most `window` items are between being read and being written, and
//! the queues hold them without making a stage wait for the next.
//!
//! The first error (from any stage, or a worker's panic) stops the pipeline: the writer
//! returns it, and dropping the channels unblocks every thread.

use crossbeam::channel::bounded;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// In which order the writer receives the workers' results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// As they complete (the writer records which item each result belongs to).
    Completion,
    /// In item order, with at most `window` items read but not yet written.
    Sequence { window: usize },
}

/// Time one stage of a pipeline spends working, summed over its threads: a pass reports
/// the reader's and the writer's share of its wall time, which tells whether one thread's
/// I/O bounds it.
#[derive(Debug, Default)]
pub struct BusyClock(AtomicU64);

impl BusyClock {
    /// Runs `f`, adding the time it takes to the clock.
    pub fn time<T>(&self, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = f();
        self.0.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        out
    }

    /// The time counted, as a share of `wall` per thread of the stage (0 to 1 when the
    /// stage has `threads` threads busy at most all the time).
    pub fn share(&self, wall: Duration, threads: usize) -> f64 {
        self.0.load(Ordering::Relaxed) as f64 / 1e9 / (wall.as_secs_f64() * threads.max(1) as f64).max(1e-9)
    }
}

/// A worker thread panicked (the pipeline reports it as an error instead of hanging).
#[derive(Debug, thiserror::Error)]
#[error("a worker thread panicked")]
pub struct WorkerPanicked;

/// Runs items `0..n` through `read` (one reader thread, in item order), `work` (`threads`
/// workers) and `write` (the calling thread).
pub fn run<J, R, E>(
    n: usize,
    threads: usize,
    order: Order,
    read: impl FnMut(usize) -> Result<J, E> + Send,
    work: impl Fn(usize, J) -> Result<R, E> + Sync,
    mut write: impl FnMut(usize, R) -> Result<(), E>,
) -> Result<(), E>
where
    J: Send,
    R: Send,
    E: Send + From<WorkerPanicked>,
{
    let window = match order {
        Order::Completion => None,
        Order::Sequence { window } => Some(window.max(1)),
    };
    // With a window the tickets bound the items in flight, and the queues may hold them all.
    let (job_tx, job_rx) = bounded::<(usize, Result<J, E>)>(window.unwrap_or(0));
    let (res_tx, res_rx) = bounded::<(usize, Result<R, E>)>(window.unwrap_or(0));
    let (ticket_tx, ticket_rx) = bounded::<()>(window.unwrap_or(0));
    for _ in 0..window.unwrap_or(0) {
        ticket_tx.send(()).expect("room for every ticket");
    }
    let mut read = read;
    let work = &work;
    let outcome = crossbeam::scope(|s| -> Result<(), E> {
        // Owned here: an early return drops them, which unblocks the other threads.
        let (res_rx, ticket_tx) = (res_rx, ticket_tx);
        s.spawn(move |_| {
            for i in 0..n {
                if window.is_some() && ticket_rx.recv().is_err() {
                    break;
                }
                let input = read(i);
                let failed = input.is_err();
                if job_tx.send((i, input)).is_err() || failed {
                    break;
                }
            }
        });
        for _ in 0..threads.max(1) {
            let (job_rx, res_tx) = (job_rx.clone(), res_tx.clone());
            s.spawn(move |_| {
                for (i, input) in job_rx.iter() {
                    let out = input.and_then(|j| {
                        catch_unwind(AssertUnwindSafe(|| work(i, j))).unwrap_or_else(|_| Err(WorkerPanicked.into()))
                    });
                    let failed = out.is_err();
                    if res_tx.send((i, out)).is_err() || failed {
                        break;
                    }
                }
            });
        }
        drop((job_rx, res_tx));
        let mut pending = BTreeMap::new();
        let mut next = 0;
        for (i, result) in res_rx.iter() {
            if window.is_none() {
                write(i, result?)?;
                continue;
            }
            pending.insert(i, result);
            while let Some(result) = pending.remove(&next) {
                write(next, result?)?;
                next += 1;
                ticket_tx.send(()).ok();
            }
        }
        Ok(())
    });
    outcome.unwrap_or_else(|_| Err(WorkerPanicked.into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Debug, PartialEq)]
    enum TestError {
        Failed(usize),
        Panicked,
    }

    impl From<WorkerPanicked> for TestError {
        fn from(_: WorkerPanicked) -> TestError {
            TestError::Panicked
        }
    }

    #[test]
    fn sequence_order_delivers_every_item_in_order() {
        for threads in [1, 2, 5] {
            let mut seen = Vec::new();
            run(
                100,
                threads,
                Order::Sequence { window: 3 },
                |i| Ok::<_, TestError>(i * 2),
                |i, j| {
                    std::thread::sleep(std::time::Duration::from_micros(((i * 37) % 11) as u64 * 50));
                    Ok(j + 1)
                },
                |i, r| {
                    seen.push((i, r));
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(seen, (0..100).map(|i| (i, 2 * i + 1)).collect::<Vec<_>>());
        }
    }

    #[test]
    fn completion_order_delivers_every_item_once() {
        let mut seen = Vec::new();
        run(
            50,
            3,
            Order::Completion,
            Ok::<_, TestError>,
            |_, j| Ok(j),
            |i, r| {
                assert_eq!(i, r);
                seen.push(i);
                Ok(())
            },
        )
        .unwrap();
        seen.sort_unstable();
        assert_eq!(seen, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn sequence_window_bounds_items_in_flight() {
        let in_flight = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        run(
            200,
            4,
            Order::Sequence { window: 3 },
            |i| {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                Ok::<_, TestError>(i)
            },
            |_, j| Ok(j),
            |_, _| {
                in_flight.fetch_sub(1, Ordering::SeqCst);
                Ok(())
            },
        )
        .unwrap();
        assert!(most.load(Ordering::SeqCst) <= 3, "{}", most.load(Ordering::SeqCst));
    }

    #[test]
    fn the_first_error_in_item_order_stops_the_pipeline() {
        for stage in 0..3 {
            let mut written = Vec::new();
            let err = run(
                1000,
                3,
                Order::Sequence { window: 4 },
                |i| if stage == 0 && i == 7 { Err(TestError::Failed(i)) } else { Ok(i) },
                |i, j| if stage == 1 && (i == 7 || i == 9) { Err(TestError::Failed(i)) } else { Ok(j) },
                |i, _| {
                    written.push(i);
                    if stage == 2 && i == 7 {
                        Err(TestError::Failed(i))
                    } else {
                        Ok(())
                    }
                },
            )
            .unwrap_err();
            assert_eq!(err, TestError::Failed(7), "stage {stage}");
            assert_eq!(written, (0..if stage == 2 { 8 } else { 7 }).collect::<Vec<_>>(), "stage {stage}");
        }
    }

    #[test]
    fn errors_stop_a_completion_pipeline_without_hanging() {
        let err = run(
            1000,
            2,
            Order::Completion,
            Ok::<_, TestError>,
            |i, j| {
                if i == 500 {
                    Err(TestError::Failed(i))
                } else {
                    Ok(j)
                }
            },
            |_, _| Ok(()),
        )
        .unwrap_err();
        assert_eq!(err, TestError::Failed(500));
    }

    #[test]
    fn a_panicking_worker_is_an_error() {
        for order in [Order::Completion, Order::Sequence { window: 2 }] {
            let err = run(
                10,
                2,
                order,
                Ok::<_, TestError>,
                |i, j| {
                    if i == 3 {
                        panic!("worker bug");
                    }
                    Ok(j)
                },
                |_, _| Ok(()),
            )
            .unwrap_err();
            assert_eq!(err, TestError::Panicked);
        }
    }
}
