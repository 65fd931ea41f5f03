//! Independent simulator runs on the cores: the seeds of a run, the modes of a figure and the
//! points of a sensitivity grid.
//!
//! Every experiment binary runs its seeds inside one work-stealing pool ([`pool`]: `--jobs`
//! threads, default the machine's cores, or one thread when any run measures real time), and
//! [`map_runs`] spreads a figure's independent simulator runs over that pool. Nested use is
//! safe (rayon's pool steals work while a task waits for its children). Results come back in
//! the order of their inputs and every run draws only from its own seed, so the CSV bytes are
//! those of a serial run; the integration tests compare the two.

use anyhow::Result;
use rayon::prelude::*;

/// Whether a configuration asks the simulator to measure real computation time
/// (`compute.measured = true` anywhere in it): such runs must not share the cores.
pub fn measures_real_time(cfg: &impl serde::Serialize) -> bool {
    fn walk(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Object(m) => m
                .iter()
                .any(|(k, v)| (k == "measured" && v.as_bool() == Some(true)) || walk(v)),
            serde_json::Value::Array(a) => a.iter().any(walk),
            _ => false,
        }
    }
    serde_json::to_value(cfg).is_ok_and(|v| walk(&v))
}

/// A pool of `jobs` threads (at least one) for a run's seeds and their simulator runs.
///
/// # Errors
/// When the operating system refuses the threads.
pub fn pool(jobs: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .thread_name(|i| format!("syncbench-sim-{i}"))
        .build()
        .map_err(|e| anyhow::anyhow!("cannot start {jobs} simulator threads: {e}"))
}

/// `f` over `items`, in parallel on the current pool when `parallel` (pass whether every run
/// `f` makes is a simulator run: threads- and cluster-driver runs measure real time and must
/// not share the cores), else one after another. The results are in the order of `items`;
/// on failure, the error of the first failing item in that order.
///
/// # Errors
/// The first failing item's error.
pub fn map_runs<T, R, F>(parallel: bool, items: &[T], f: F) -> Result<Vec<R>>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> Result<R> + Sync,
{
    if parallel && rayon::current_num_threads() > 1 && items.len() > 1 {
        let done: Vec<Result<R>> = items.par_iter().map(&f).collect();
        done.into_iter().collect()
    } else {
        items.iter().map(f).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measured_compute_model_anywhere_is_found() {
        let cfg =
            serde_json::json!({"a": {"compute": {"measured": false}}, "b": [{"measured": true}]});
        assert!(measures_real_time(&cfg));
        let cfg = serde_json::json!({"compute": {"measured": false, "ns": 3}});
        assert!(!measures_real_time(&cfg));
    }

    #[test]
    fn results_keep_the_order_of_the_inputs() {
        let items: Vec<u64> = (0..64).collect();
        let square = |x: &u64| -> Result<u64> { Ok(x * x) };
        let serial = map_runs(false, &items, square).unwrap();
        let parallel = pool(2)
            .unwrap()
            .install(|| map_runs(true, &items, square))
            .unwrap();
        assert_eq!(serial, parallel);
        assert_eq!(parallel[7], 49);
    }

    #[test]
    fn the_first_failure_in_input_order_is_returned() {
        let items: Vec<u64> = (0..32).collect();
        let e = pool(2)
            .unwrap()
            .install(|| {
                map_runs(true, &items, |&x| {
                    if x % 10 == 9 {
                        anyhow::bail!("item {x} failed")
                    }
                    Ok(x)
                })
            })
            .unwrap_err();
        assert_eq!(e.to_string(), "item 9 failed");
    }

    #[test]
    fn nested_maps_do_not_deadlock_on_a_small_pool() {
        let outer: Vec<u64> = (0..4).collect();
        let sums = pool(2)
            .unwrap()
            .install(|| {
                map_runs(true, &outer, |&o| {
                    let inner: Vec<u64> = (0..8).map(|i| o * 8 + i).collect();
                    Ok(map_runs(true, &inner, |&x| Ok(x))?.iter().sum::<u64>())
                })
            })
            .unwrap();
        assert_eq!(sums, vec![28, 92, 156, 220]);
    }
}
