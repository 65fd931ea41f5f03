//! The mean cross-entropy of a batch's logits and its gradient, on the host in one fixed
//! order with the pure-Rust `libm`'s `exp` and `log`, so that neither depends on the CPU: burn's
//! `CrossEntropyLoss` would call the C library's `expf` and `logf`, which glibc picks at run time
//! among versions with and without FMA that may round a hard case differently.
//!
//! Per image, in `f64`: `lse = max + log(sum_j exp(x_j - max))` (the `j` in order), its loss
//! `lse - x_label`, and the gradient `(exp(x_j - lse) - [j = label]) / batch`, rounded to `f32`
//! once. The batch's loss is the images' losses summed in order over the batch size.

/// The mean loss of `logits` (`batch` x `classes`, row-major) against `labels`, and the loss's
/// gradient with respect to the logits (the same layout).
///
/// # Panics
/// When the lengths do not match or a label is not a class: the workload checks its labels when
/// it is built, so either is a bug of the caller.
pub fn softmax_cross_entropy(logits: &[f32], labels: &[i64], classes: usize) -> (f64, Vec<f32>) {
    let batch = labels.len();
    assert_eq!(
        logits.len(),
        batch * classes,
        "logits of {batch} images, {classes} classes"
    );
    let mut grad = vec![0.0f32; logits.len()];
    let mut total = 0.0f64;
    for (i, &label) in labels.iter().enumerate() {
        let label = usize::try_from(label)
            .ok()
            .filter(|&l| l < classes)
            .unwrap_or_else(|| {
                panic!("label {label} of image {i} is not one of {classes} classes")
            });
        let row = &logits[i * classes..][..classes];
        let max = row
            .iter()
            .fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
        let sum: f64 = row.iter().map(|&v| libm::exp(f64::from(v) - max)).sum();
        let lse = max + libm::log(sum);
        total += lse - f64::from(row[label]);
        for (j, (g, &v)) in grad[i * classes..][..classes]
            .iter_mut()
            .zip(row)
            .enumerate()
        {
            let p = libm::exp(f64::from(v) - lse);
            let t = if j == label { 1.0 } else { 0.0 };
            *g = ((p - t) / batch as f64) as f32;
        }
    }
    (total / batch as f64, grad)
}

/// The index of each row's largest logit (the first of equal ones).
pub fn argmax(logits: &[f32], classes: usize) -> Vec<usize> {
    logits
        .chunks(classes)
        .map(|row| {
            row.iter()
                .enumerate()
                .fold((0, f32::NEG_INFINITY), |(bi, bv), (j, &v)| {
                    if v > bv {
                        (j, v)
                    } else {
                        (bi, bv)
                    }
                })
                .0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_logits_cost_log_classes_and_the_gradient_is_softmax_minus_one_hot() {
        let (loss, g) = softmax_cross_entropy(&[0.0; 8], &[1, 3], 4);
        assert!((loss - 4f64.ln()).abs() < 1e-12, "{loss}");
        assert_eq!(g[1], ((0.25 - 1.0) / 2.0) as f32);
        assert_eq!(g[0], (0.25 / 2.0) as f32);
        assert_eq!(g[7], (-0.75 / 2.0) as f32);
    }

    #[test]
    fn gradient_matches_finite_differences_and_large_logits_do_not_overflow() {
        let x = [1.0f32, -2.0, 0.5, 3.0, 1000.0, 999.0];
        let labels = [2, 0];
        let (base, g) = softmax_cross_entropy(&x, &labels, 3);
        assert!(base.is_finite());
        for k in 0..x.len() {
            let mut y = x;
            let h = 1e-2f32;
            y[k] += h;
            let (up, _) = softmax_cross_entropy(&y, &labels, 3);
            y[k] -= 2.0 * h;
            let (down, _) = softmax_cross_entropy(&y, &labels, 3);
            let fd = (up - down) / (2.0 * f64::from(h));
            assert!(
                (fd - f64::from(g[k])).abs() < 1e-3,
                "logit {k}: {fd} against {}",
                g[k]
            );
        }
    }

    #[test]
    fn argmax_takes_the_first_of_equals() {
        assert_eq!(argmax(&[1.0, 3.0, 3.0, 0.0, -1.0, -2.0], 3), vec![1, 0]);
    }

    #[test]
    #[should_panic(expected = "not one of 3 classes")]
    fn a_label_out_of_range_is_named() {
        softmax_cross_entropy(&[0.0; 3], &[3], 3);
    }
}
