//! How learnable the synthetic twins are against the real datasets: the SVM twins ([`svm`])
//! and ASYNC's least-squares twins ([`least_squares`]).

pub mod least_squares;
pub mod svm;
