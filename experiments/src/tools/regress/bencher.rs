//! The measured samples in Bencher's metric format (BMF JSON,
//! <https://bencher.dev/docs/reference/bencher-metric-format>), so that a user can push them to
//! an existing Bencher dashboard (`bencher run --adapter json --file bencher.json`): one
//! benchmark per metric, its median as the value and the smallest and largest sample as the
//! bounds. Latencies use Bencher's built-in `latency` measure (ns), rates its `throughput`
//! (operations per second); bandwidths and ratios get measures of their own.

use super::stats::median;
use super::suite::{metric, Samples};
use serde_json::{json, Map, Value};

/// BMF JSON of `samples`, benchmarks named `syncbench/<metric>`.
pub fn bmf(samples: &Samples) -> Value {
    let mut out = Map::new();
    for (name, x) in &samples.values {
        if x.is_empty() {
            continue;
        }
        let measure = match metric(name).map(|m| m.unit) {
            Some("ns") => "latency",
            Some("events/s") | Some("ops/s") => "throughput",
            Some("Gb/s") => "bandwidth-gbps",
            _ => "ratio",
        };
        let lo = x.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        out.insert(
            format!("syncbench/{name}"),
            json!({ measure: { "value": median(x), "lower_value": lo, "upper_value": hi } }),
        );
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_becomes_a_benchmark_with_its_measure() {
        let s = Samples {
            rounds: 3,
            values: [
                ("shm/notify-2B".to_string(), vec![300.0, 100.0, 200.0]),
                ("shm/write-4MiB/word-copy".to_string(), vec![0.9, 1.0, 0.95]),
                ("sim/events".to_string(), vec![2e6, 3e6, 2.5e6]),
                ("memcpy/4MiB".to_string(), vec![]),
            ]
            .into_iter()
            .collect(),
        };
        let v = bmf(&s);
        let lat = &v["syncbench/shm/notify-2B"]["latency"];
        assert_eq!(lat["value"], 200.0);
        assert_eq!(lat["lower_value"], 100.0);
        assert_eq!(lat["upper_value"], 300.0);
        assert_eq!(
            v["syncbench/shm/write-4MiB/word-copy"]["ratio"]["value"],
            0.95
        );
        assert_eq!(v["syncbench/sim/events"]["throughput"]["value"], 2.5e6);
        assert!(
            v.get("syncbench/memcpy/4MiB").is_none(),
            "no samples, no benchmark"
        );
    }
}
