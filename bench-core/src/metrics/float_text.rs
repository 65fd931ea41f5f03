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
            "time,iteration,loss,accuracy\n1.5,2.0,NaN,-inf\n1.5,2.0,0.25,1.0\n"
        );
    }
}
