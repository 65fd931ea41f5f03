//! Transition matrices and spectral gaps.
//!
//! * ASAP (§3): `P = diag(d_in)^-1 A`, where `A` includes self-loops and `d_in` is the (weighted)
//!   in-degree including the self-loop, so every row of `P` sums to 1. The gap is
//!   `1 - sigma_2(P)` with `sigma_2` the second largest singular value.
//! * Hop (footnote 2): `|lambda_1(W)| - |lambda_2(W)|` for the weighted adjacency `W`; we take
//!   `W = P`, the uniform averaging weights Hop's reduce uses.
//!
//! Both are computed with nalgebra's SVD and Schur decompositions.

use super::{PathSummary, Topology};
use crate::error::{CoreError, Result};
use nalgebra::DMatrix;

/// Row-stochastic transition matrix `P = diag(d_in)^-1 A`.
pub fn transition_matrix(t: &Topology) -> DMatrix<f64> {
    let n = t.nodes();
    let a = DMatrix::from_row_slice(n, n, t.adjacency());
    let mut p = a.clone();
    for r in 0..n {
        let d: f64 = a.row(r).sum();
        for c in 0..n {
            p[(r, c)] = a[(r, c)] / d;
        }
    }
    p
}

/// Singular values of `P`, descending.
///
/// # Errors
/// [`CoreError::Numeric`] when the SVD does not converge.
pub fn singular_values(t: &Topology) -> Result<Vec<f64>> {
    let p = transition_matrix(t);
    let svd = p
        .try_svd(false, false, 1e-14, 10_000)
        .ok_or_else(|| CoreError::Numeric(format!("SVD of P for {} did not converge", t.name())))?;
    let mut s: Vec<f64> = svd.singular_values.iter().copied().collect();
    s.sort_by(|a, b| b.total_cmp(a));
    Ok(s)
}

/// Moduli of the eigenvalues of `P`, descending.
///
/// # Errors
/// [`CoreError::Numeric`] when the Schur decomposition does not converge.
pub fn eigenvalue_moduli(t: &Topology) -> Result<Vec<f64>> {
    let p = transition_matrix(t);
    let schur = p.try_schur(1e-14, 100_000).ok_or_else(|| {
        CoreError::Numeric(format!(
            "eigen-decomposition of P for {} did not converge",
            t.name()
        ))
    })?;
    let mut m: Vec<f64> = schur
        .complex_eigenvalues()
        .iter()
        .map(|z| z.norm())
        .collect();
    m.sort_by(|a, b| b.total_cmp(a));
    Ok(m)
}

/// ASAP's spectral gap `1 - sigma_2(P)`.
///
/// # Errors
/// As [`singular_values`].
pub fn spectral_gap_sv(t: &Topology) -> Result<f64> {
    let s = singular_values(t)?;
    Ok(1.0 - s[1])
}

/// Hop's spectral gap `|lambda_1(P)| - |lambda_2(P)|`.
///
/// # Errors
/// As [`eigenvalue_moduli`].
pub fn spectral_gap_eig(t: &Topology) -> Result<f64> {
    let m = eigenvalue_moduli(t)?;
    Ok(m[0] - m[1])
}

/// The gap the Hop paper's numbers use: `1 - lambda_2(D^-1 A)` with `A` *without* self-loops
/// and `lambda_2` the second largest eigenvalue by real part (for an undirected graph, the
/// smallest non-zero eigenvalue of the normalised Laplacian). It reproduces the paper's 0.6667
/// for the 8-node ring-based graph and 0.2682 / 0.2688 for its two hierarchical graphs (Hop §7.3.6,
/// Fig 21), which its footnote's `|lambda_1(W)| - |lambda_2(W)|` does not for any `W` we tried.
///
/// # Errors
/// [`CoreError::Numeric`] when the decomposition fails or a node has no neighbour.
pub fn spectral_gap_laplacian(t: &Topology) -> Result<f64> {
    let n = t.nodes();
    let mut a = DMatrix::from_row_slice(n, n, t.adjacency());
    for r in 0..n {
        a[(r, r)] = 0.0;
        let d: f64 = a.row(r).sum();
        if d <= 0.0 {
            return Err(CoreError::Numeric(format!(
                "node {r} of {} has no neighbour",
                t.name()
            )));
        }
        for c in 0..n {
            a[(r, c)] /= d;
        }
    }
    let schur = a.try_schur(1e-14, 100_000).ok_or_else(|| {
        CoreError::Numeric(format!(
            "eigen-decomposition of D^-1 A for {} did not converge",
            t.name()
        ))
    })?;
    let mut re: Vec<f64> = schur.complex_eigenvalues().iter().map(|z| z.re).collect();
    re.sort_by(|a, b| b.total_cmp(a));
    Ok(1.0 - re[1])
}

/// Everything `syncbench graph` prints about a topology.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GraphReport {
    /// Graph name.
    pub name: String,
    /// Node count.
    pub nodes: usize,
    /// Directed edges excluding self-loops.
    pub edges: usize,
    /// In-degree of each node including its self-loop.
    pub in_degrees: Vec<usize>,
    /// Out-degree of each node including its self-loop.
    pub out_degrees: Vec<usize>,
    /// Same in- and out-degree everywhere.
    pub regular: bool,
    /// Strongly connected.
    pub connected: bool,
    /// ASAP gap `1 - sigma_2(P)`.
    pub spectral_gap_sv: f64,
    /// Hop gap `|lambda_1| - |lambda_2|`.
    pub spectral_gap_eig: f64,
    /// `1 - Re lambda_2(D^-1 A)` without self-loops, the convention that matches Hop's Fig 21
    /// values (see [`spectral_gap_laplacian`]); None when a node has no neighbour.
    pub spectral_gap_laplacian: Option<f64>,
    /// Largest two singular values of `P`.
    pub sigma: [f64; 2],
    /// Largest two eigenvalue moduli of `P`.
    pub lambda_abs: [f64; 2],
    /// Hop distances.
    pub paths: PathSummary,
    /// The conventions used, spelled out.
    pub convention: &'static str,
}

/// The convention note written beside every gap we report.
pub const GAP_CONVENTION: &str = "P = diag(d_in)^-1 A with self-loops, d_in = weighted in-degree incl. self-loop (rows sum to 1); spectral_gap_sv = 1 - sigma_2(P) (ASAP); spectral_gap_eig = |lambda_1(P)| - |lambda_2(P)| (Hop, W = P); spectral_gap_laplacian = 1 - Re lambda_2(D^-1 A) without self-loops (matches Hop Fig 21's values)";

impl GraphReport {
    /// Analyses `t`.
    ///
    /// # Errors
    /// As [`singular_values`] and [`eigenvalue_moduli`].
    pub fn of(t: &Topology) -> Result<Self> {
        let s = singular_values(t)?;
        let m = eigenvalue_moduli(t)?;
        let n = t.nodes();
        Ok(GraphReport {
            name: t.name().to_string(),
            nodes: n,
            edges: t.edges().len(),
            in_degrees: (0..n).map(|i| t.in_degree(i)).collect(),
            out_degrees: (0..n).map(|i| t.out_degree(i)).collect(),
            regular: t.is_regular(),
            connected: t.is_strongly_connected(),
            spectral_gap_sv: 1.0 - s[1],
            spectral_gap_eig: m[0] - m[1],
            spectral_gap_laplacian: spectral_gap_laplacian(t).ok(),
            sigma: [s[0], s[1]],
            lambda_abs: [m[0], m[1]],
            paths: PathSummary::of(t),
            convention: GAP_CONVENTION,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopologyKind;

    fn gap(kind: TopologyKind, n: usize) -> f64 {
        spectral_gap_sv(&kind.build(n).unwrap()).unwrap()
    }

    #[test]
    fn all_reduce_gap_is_one() {
        assert!((gap(TopologyKind::Complete, 6) - 1.0).abs() < 1e-12);
        assert!((gap(TopologyKind::Complete, 25) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn disconnected_gap_is_zero() {
        let mut t = Topology::with_self_loops(4, "two pairs").unwrap();
        t.add_undirected(0, 1);
        t.add_undirected(2, 3);
        assert!(spectral_gap_sv(&t).unwrap().abs() < 1e-12);
        assert!(spectral_gap_eig(&t).unwrap().abs() < 1e-12);
    }

    #[test]
    fn rows_sum_to_one() {
        let p = transition_matrix(&TopologyKind::Star.build(7).unwrap());
        for r in 0..7 {
            assert!((p.row(r).sum() - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn ring_eigen_gap_matches_closed_form() {
        // Ring of n with self-loops: eigenvalues (1 + 2 cos(2 pi k / n)) / 3.
        let n = 8;
        let l2 = (1.0 + 2.0 * (2.0 * std::f64::consts::PI / n as f64).cos()) / 3.0;
        let g = spectral_gap_eig(&TopologyKind::Ring.build(n).unwrap()).unwrap();
        assert!((g - (1.0 - l2)).abs() < 1e-10, "{g}");
    }
}
