//! What each family of experiments trains, built from its configuration section and the data
//! source: the SVM (`[data]`), matrix factorisation and LDA on row tables (ESSP), CNNs on image
//! data (`[images]`), and ASYNC's least squares.

pub mod cnn;
pub mod lda;
pub mod least_squares;
pub mod mf;
pub mod row_tables;
pub mod svm;
