//! Serde for `f64` fields that may be NaN or infinite (a loss that diverged, an accuracy a
//! workload does not have): finite values stay numbers, the others become the strings `NaN`,
//! `inf` and `-inf`. CSV output is unchanged (the csv crate writes those same texts), and JSON,
//! which has no NaN, carries them, so ranks can send such rows to rank 0.

use serde::{Deserializer, Serializer};

/// Serializes `v` as a number, or as its text when it is not finite.
///
/// # Errors
/// The serializer's.
pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() {
        s.serialize_f64(*v)
    } else if v.is_nan() {
        s.serialize_str("NaN")
    } else if *v > 0.0 {
        s.serialize_str("inf")
    } else {
        s.serialize_str("-inf")
    }
}

/// Reads a number, or one of the texts [`serialize`] writes.
///
/// # Errors
/// Anything else.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    struct V;
    impl serde::de::Visitor<'_> for V {
        type Value = f64;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a number, NaN, inf or -inf")
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<f64, E> {
            Ok(v)
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<f64, E> {
            Ok(v as f64)
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<f64, E> {
            Ok(v as f64)
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<f64, E> {
            match v.trim() {
                "NaN" | "nan" => Ok(f64::NAN),
                "inf" | "+inf" | "Infinity" => Ok(f64::INFINITY),
                "-inf" | "-Infinity" => Ok(f64::NEG_INFINITY),
                t => t
                    .parse()
                    .map_err(|_| E::custom(format!("not a number: {t:?}"))),
            }
        }
    }
    d.deserialize_any(V)
}

/// The same for `Option<f64>`: `None` is an empty CSV field (JSON `null`).
pub mod option {
    use serde::{Deserializer, Serializer};

    /// Serializes `None` as nothing, `Some(v)` as [`super::serialize`] does.
    ///
    /// # Errors
    /// The serializer's.
    pub fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            None => s.serialize_none(),
            Some(v) => super::serialize(v, s),
        }
    }

    /// Reads nothing (an empty field, `null`) as `None`, anything else as
    /// [`super::deserialize`] does.
    ///
    /// # Errors
    /// Anything else.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Option<f64>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("nothing, a number, NaN, inf or -inf")
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                super::deserialize(d).map(Some)
            }
        }
        d.deserialize_option(V)
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::ProgressRow;

    #[test]
    fn non_finite_values_survive_json_and_csv_is_unchanged() {
        let row = ProgressRow {
            time: 1.5,
            iteration: 2.0,
            loss: f64::NAN,
            accuracy: f64::NEG_INFINITY,
            train_objective: None,
        };
        let json = serde_json::to_string(&row).unwrap();
        assert!(
            json.contains("\"NaN\"") && json.contains("\"-inf\""),
            "{json}"
        );
        let back: ProgressRow = serde_json::from_str(&json).unwrap();
        assert!(back.loss.is_nan() && back.accuracy == f64::NEG_INFINITY);
        let finite = ProgressRow {
            loss: 0.25,
            accuracy: 1.0,
            ..row
        };
        let back: ProgressRow =
            serde_json::from_str(&serde_json::to_string(&finite).unwrap()).unwrap();
        assert_eq!(back, finite);
        let mut w = csv::Writer::from_writer(vec![]);
        w.serialize(row).unwrap();
        w.serialize(finite).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(
            text,
            "time,iteration,loss,accuracy,train_objective\n1.5,2.0,NaN,-inf,\n1.5,2.0,0.25,1.0,\n"
        );
    }

    #[test]
    fn the_training_objective_is_empty_or_a_number_and_old_files_still_read() {
        let rows = [
            ProgressRow {
                time: 0.0,
                iteration: 0.0,
                loss: 0.7,
                accuracy: 0.5,
                train_objective: Some(0.693),
            },
            ProgressRow {
                time: 1.0,
                iteration: 1.0,
                loss: 0.6,
                accuracy: 0.6,
                train_objective: None,
            },
            ProgressRow {
                time: 2.0,
                iteration: 2.0,
                loss: f64::NAN,
                accuracy: 0.5,
                train_objective: Some(f64::INFINITY),
            },
        ];
        let mut w = csv::Writer::from_writer(vec![]);
        for r in rows {
            w.serialize(r).unwrap();
        }
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(
            text,
            "time,iteration,loss,accuracy,train_objective\n0.0,0.0,0.7,0.5,0.693\n1.0,1.0,0.6,0.6,\n2.0,2.0,NaN,0.5,inf\n"
        );
        let back: Vec<ProgressRow> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back[0], rows[0]);
        assert_eq!(back[1], rows[1]);
        assert_eq!(back[2].train_objective, Some(f64::INFINITY));
        for r in &rows {
            let json = serde_json::to_string(r).unwrap();
            let b: ProgressRow = serde_json::from_str(&json).unwrap();
            assert_eq!(b.train_objective, r.train_objective, "{json}");
        }
        // A progress.csv written before the column existed.
        let old: Vec<ProgressRow> =
            csv::Reader::from_reader("time,iteration,loss,accuracy\n0.0,0.0,0.7,0.5\n".as_bytes())
                .deserialize()
                .collect::<Result<_, _>>()
                .unwrap();
        assert_eq!(old[0].train_objective, None);
    }
}
