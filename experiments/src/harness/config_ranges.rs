//! Range checks of every numeric field of every experiment configuration, in one place: each
//! field, known by its name (the last key of its path), has a [`Range`]; a configuration is
//! checked as parsed TOML before it is read into the experiment's structs, so the message names
//! the field's full path (`parts[0].common.data.label_noise`) and the file.
//!
//! Where one name means two things in different experiments (`workers`: at least 2 peers for
//! the decentralized ones, at least 1 elsewhere; `eval_every`: 0 means "only at the start and
//! end" in some), the rule here is the looser one and the experiment's own validation adds the
//! stricter one. Cross-field constraints (a worker index below the worker count, increasing
//! delays) stay with each experiment's validation. The `config_ranges` test tries an
//! out-of-range value for every numeric field of every shipped configuration, and fails when a
//! field has no rule here.

/// What values a numeric field may take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// A probability or share: finite, in [0, 1].
    Probability,
    /// A fraction that must be positive: in (0, 1].
    UnitLeftOpen,
    /// Strictly between 0 and 1.
    UnitOpen,
    /// An integer count of at least 1.
    Count,
    /// An integer of at least 0 (an index, or a count where 0 means none).
    Count0,
    /// An integer of at least 2 (graph sizes, peers, jumps).
    AtLeastTwo,
    /// Finite and above 0 (rates, step sizes, bandwidths, factors).
    Positive,
    /// Finite and at least 0 (latencies, jitter, regularisation).
    NonNegative,
    /// Finite and in [lo, hi].
    Between(f64, f64),
}

impl Range {
    /// Whether `v` is allowed (`integer`: the TOML value was an integer).
    pub fn allows(self, v: f64, integer: bool) -> bool {
        if !v.is_finite() {
            return false;
        }
        let whole = integer || v.fract() == 0.0;
        match self {
            Range::Probability => (0.0..=1.0).contains(&v),
            Range::UnitLeftOpen => v > 0.0 && v <= 1.0,
            Range::UnitOpen => v > 0.0 && v < 1.0,
            Range::Count => whole && v >= 1.0,
            Range::Count0 => whole && v >= 0.0,
            Range::AtLeastTwo => whole && v >= 2.0,
            Range::Positive => v > 0.0,
            Range::NonNegative => v >= 0.0,
            Range::Between(lo, hi) => v >= lo && v <= hi,
        }
    }

    /// What the range requires, for messages.
    pub fn describe(self) -> String {
        match self {
            Range::Probability => "a probability in [0, 1]".into(),
            Range::UnitLeftOpen => "a fraction in (0, 1]".into(),
            Range::UnitOpen => "a fraction strictly between 0 and 1".into(),
            Range::Count => "a whole number of at least 1".into(),
            Range::Count0 => "a whole number of at least 0".into(),
            Range::AtLeastTwo => "a whole number of at least 2".into(),
            Range::Positive => "a finite number above 0".into(),
            Range::NonNegative => "a finite number of at least 0".into(),
            Range::Between(lo, hi) => format!("a finite number in [{lo}, {hi}]"),
        }
    }

    /// A value just outside the range (for tests: every field must refuse it).
    pub fn outside(self) -> toml::Value {
        match self {
            Range::Probability | Range::UnitLeftOpen => toml::Value::Float(1.5),
            Range::UnitOpen => toml::Value::Float(1.0),
            Range::Count | Range::AtLeastTwo => toml::Value::Integer(0),
            Range::Count0 => toml::Value::Integer(-1),
            Range::Positive => toml::Value::Float(0.0),
            Range::NonNegative => toml::Value::Float(-1.0),
            Range::Between(_, hi) => toml::Value::Float(hi + 1.0),
        }
    }
}

/// The rule of every numeric field, by name.
pub const RULES: &[(&str, Range)] = &[
    ("alpha", Range::Positive),
    ("backups", Range::Count),
    ("bandwidth_gbps", Range::Positive),
    ("batch", Range::Count),
    ("beta", Range::Positive),
    ("bound_points", Range::Between(0.0, 100.0)),
    ("bytes_per_update", Range::Count),
    ("classes", Range::AtLeastTwo),
    ("clocks", Range::Count),
    ("copy_gbps", Range::Positive),
    ("delays", Range::Between(0.0, 10.0)),
    ("density", Range::UnitLeftOpen),
    ("documents", Range::Count),
    ("dst", Range::Count0),
    ("eta0", Range::Positive),
    ("eval_every", Range::Count0),
    ("eval_every_rounds", Range::Count),
    ("factor", Range::Positive),
    ("features", Range::Count),
    ("fig10_max_nodes", Range::AtLeastTwo),
    ("fig10_min_nodes", Range::AtLeastTwo),
    ("fig3_nodes", Range::AtLeastTwo),
    ("flat_tolerance", Range::Positive),
    ("good_inputs", Range::Count),
    ("hidden", Range::Count),
    ("hold_evals", Range::Count0),
    ("informative", Range::UnitLeftOpen),
    ("init_scale", Range::Positive),
    ("init_seed", Range::Count0),
    ("intra_bandwidth_gbps", Range::Positive),
    ("intra_latency_ns", Range::NonNegative),
    ("items", Range::Count),
    ("iteration_rate", Range::Positive),
    ("iterations", Range::Count),
    ("jitter_sigma", Range::NonNegative),
    ("label_noise", Range::Probability),
    ("lambda", Range::NonNegative),
    ("large_step", Range::Positive),
    ("latency_jitter_ns", Range::NonNegative),
    ("latency_ns", Range::NonNegative),
    ("long_tail", Range::NonNegative),
    ("long_tail_share", Range::Probability),
    ("lr", Range::Positive),
    ("lr_decay", Range::UnitLeftOpen),
    ("lr_decay_epochs", Range::NonNegative),
    ("makespan", Range::Positive),
    ("malt_degree", Range::Count),
    ("max", Range::Positive),
    ("max_i", Range::Count),
    ("max_jump", Range::AtLeastTwo),
    ("max_ratio", Range::Positive),
    ("max_step_cost_share", Range::Between(0.0, 1.0)),
    ("mean_wait", Range::Positive),
    ("min_iteration_speedup", Range::Positive),
    ("min_ratio", Range::NonNegative),
    ("min_speedup", Range::Positive),
    ("min_speedup_at_max_delay", Range::Positive),
    ("minibatch_fraction", Range::UnitLeftOpen),
    ("moderate", Range::NonNegative),
    ("momentum", Range::Between(0.0, 0.999)),
    ("near_optimum_way", Range::Between(0.5, 0.99)),
    ("nnz_per_row", Range::Positive),
    ("nodes", Range::AtLeastTwo),
    ("noise", Range::NonNegative),
    ("ns_per_example", Range::NonNegative),
    ("paper_gap", Range::Probability),
    ("placement", Range::Count0),
    ("popularity_exponent", Range::NonNegative),
    ("probability", Range::Probability),
    ("probe_messages", Range::Count),
    ("rank", Range::Count),
    ("ratings", Range::Count),
    ("reference_clocks", Range::Count0),
    ("reference_sweeps", Range::Count0),
    ("ring_depth", Range::Count),
    ("rounds", Range::Count),
    ("rows", Range::Count),
    ("s", Range::Count0),
    ("sampling_rate", Range::UnitLeftOpen),
    ("schedules", Range::Count),
    ("seconds_per_batch", Range::Positive),
    ("send_overhead_ns", Range::Count0),
    ("shards", Range::Count),
    ("share", Range::Probability),
    ("side", Range::Between(8.0, 1024.0)),
    ("slow_device_ratio", Range::Between(1.0, 100.0)),
    ("src", Range::Count0),
    ("staleness", Range::Count0),
    ("stall_timeout_ms", Range::Count),
    ("standard_min", Range::Positive),
    ("start_spread_ns", Range::Count0),
    ("step", Range::Positive),
    ("step_scale", Range::Positive),
    ("straggler", Range::Count0),
    ("target_accuracy", Range::UnitLeftOpen),
    ("target_fraction", Range::UnitLeftOpen),
    ("target_fractions", Range::UnitLeftOpen),
    ("target_relative_error", Range::UnitOpen),
    ("target_train_accuracy", Range::UnitLeftOpen),
    ("test_fraction", Range::UnitOpen),
    ("test_images", Range::Count),
    ("test_rows", Range::Count),
    ("time_to_target", Range::Positive),
    ("topic_share", Range::Probability),
    ("topics", Range::Count),
    ("train_images", Range::Count),
    ("train_rows", Range::Count),
    ("trigger", Range::Count),
    ("unit_ns", Range::Positive),
    ("users", Range::Count),
    ("vocabulary", Range::Count),
    ("warmup_tasks", Range::Count0),
    ("weight_decay", Range::NonNegative),
    ("width", Range::Count),
    ("words_per_document", Range::Count),
    ("worker", Range::Count0),
    ("workers", Range::Count),
];

/// The rule of field `name`.
pub fn rule(name: &str) -> Option<Range> {
    RULES.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
}

/// Every numeric leaf of `value`: (full path, field name, number, was an integer).
pub fn numeric_leaves(value: &toml::Value) -> Vec<(String, String, f64, bool)> {
    let mut out = Vec::new();
    walk(value, "", "", &mut out);
    out
}

fn walk(v: &toml::Value, path: &str, name: &str, out: &mut Vec<(String, String, f64, bool)>) {
    match v {
        toml::Value::Integer(i) => out.push((path.into(), name.into(), *i as f64, true)),
        toml::Value::Float(f) => out.push((path.into(), name.into(), *f, false)),
        toml::Value::Table(t) => {
            for (k, x) in t {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk(x, &p, k, out);
            }
        }
        toml::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                walk(x, &format!("{path}[{i}]"), name, out);
            }
        }
        _ => {}
    }
}

/// Checks every numeric field of `value` that has a rule.
///
/// # Errors
/// One line per field out of range: its full path, its value and what it must be. (A field
/// without a rule is left to the experiment's own parsing: a number where text is expected is
/// a type error there.)
pub fn check(value: &toml::Value) -> Result<(), String> {
    let bad: Vec<String> = numeric_leaves(value)
        .into_iter()
        .filter_map(|(path, name, v, integer)| {
            let r = rule(&name)?;
            (!r.allows(v, integer))
                .then(|| format!("{path} = {v} is out of range: it must be {}", r.describe()))
        })
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(bad.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_accept_their_edges_and_refuse_what_is_outside() {
        assert!(Range::Probability.allows(0.0, false) && Range::Probability.allows(1.0, false));
        assert!(!Range::Probability.allows(1.5, false));
        assert!(!Range::Positive.allows(f64::NAN, false));
        assert!(!Range::NonNegative.allows(f64::INFINITY, false));
        assert!(!Range::Count.allows(2.5, false) && Range::Count.allows(2.0, false));
        for (_, r) in RULES {
            let v = r.outside();
            let (x, int) = match v {
                toml::Value::Integer(i) => (i as f64, true),
                toml::Value::Float(f) => (f, false),
                _ => unreachable!(),
            };
            assert!(!r.allows(x, int), "{r:?} allows its own outside value");
        }
    }

    #[test]
    fn a_bad_field_is_named_by_its_full_path() {
        let v: toml::Value = toml::from_str(
            "[common.data]\nlabel_noise = 1.5\n[[slow]]\nworker = 0\nfactor = -2.0\n",
        )
        .unwrap();
        let e = check(&v).unwrap_err();
        assert!(
            e.contains(
                "common.data.label_noise = 1.5 is out of range: it must be a probability in [0, 1]"
            ),
            "{e}"
        );
        assert!(e.contains("slow[0].factor = -2"), "{e}");
        let names: Vec<&str> = RULES.iter().map(|(n, _)| *n).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names, sorted, "RULES is sorted and has no repeats");
    }
}
