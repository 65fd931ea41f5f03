//! Fuzz targets for the readers of files from outside: LIBSVM, CIFAR binary, MovieLens and
//! Netflix ratings, UCI bag-of-words, graph edge lists, and format detection. Each starts from
//! valid files the crate's own writers produce and mutates them (bench_core::fuzz); a reader
//! may refuse an input with an error, never panic. A short bounded pass runs in `make test`;
//! `make fuzz` (FUZZ_SECONDS=600) runs each for ten minutes.

use bench_core::data::{
    detect_format, read_bag_of_words, read_cifar, read_libsvm, read_movielens, read_netflix_movie,
    write_bag_of_words, write_cifar, write_libsvm, write_movielens, BagOfWordsShape, CifarImages,
    CifarShape, Rating, RatingsData, Rcv1Shape,
};
use bench_core::fuzz;
use bench_core::topology::parse_edge_list;
use std::path::Path;
use std::time::Duration;

const SHORT: Duration = Duration::from_secs(2);

fn path() -> &'static Path {
    Path::new("fuzz-input")
}

#[test]
fn fuzz_libsvm() {
    let m = Rcv1Shape::with_rows(6).generate(1);
    let mut seed = Vec::new();
    write_libsvm(&m, &mut seed, path()).unwrap();
    let seeds = vec![
        seed,
        b"+1 1:0.5 3:1e-3 # comment\n-1 2:1\n\n1 qid:3 7:2\n".to_vec(),
    ];
    fuzz::check("libsvm", &seeds, SHORT, |b| {
        if let Ok(m) = read_libsvm(b, path(), None) {
            assert_eq!(m.indptr.len(), m.rows() + 1);
            assert!(m.indices.iter().all(|&i| (i as usize) < m.cols));
        }
        let _ = read_libsvm(b, path(), Some(50));
    });
}

#[test]
fn fuzz_cifar() {
    let mut seeds = Vec::new();
    for classes in [10, 100] {
        let mut b = Vec::new();
        write_cifar(&CifarShape { images: 2, classes }, 1, &mut b, path()).unwrap();
        seeds.push(b);
    }
    fuzz::check("cifar", &seeds, SHORT, |b| {
        for classes in [10, 100, 7] {
            let mut out = CifarImages::default();
            if read_cifar(b, path(), classes, &mut out).is_ok() {
                assert_eq!(out.pixels.len(), out.len() * 3072);
            }
        }
    });
}

#[test]
fn fuzz_ratings() {
    let ratings: Vec<Rating> = (0..12)
        .map(|k| Rating {
            user: k % 3,
            item: k % 5,
            value: 0.3,
        })
        .collect();
    let mut ml = Vec::new();
    write_movielens(&ratings, &mut ml, path()).unwrap();
    let nf = b"17:\n6,3,2005-09-06\n7,5,2005-09-07\n".to_vec();
    fuzz::check("ratings", &[ml, nf], SHORT, |b| {
        let mut out = RatingsData::default();
        let _ = read_movielens(b, path(), &mut out);
        let mut out = RatingsData::default();
        if read_netflix_movie(b, path(), &mut out).is_ok() {
            assert!(out.ratings.iter().all(|r| (1.0..=5.0).contains(&r.value)));
        }
    });
}

#[test]
fn fuzz_bag_of_words() {
    let shape = BagOfWordsShape {
        documents: 4,
        vocabulary: 30,
        topics: 2,
        words_per_document: 8,
    };
    let mut seed = Vec::new();
    write_bag_of_words(&shape, 1, &mut seed, path()).unwrap();
    fuzz::check("bag-of-words", &[seed], SHORT, |b| {
        if let Ok(m) = read_bag_of_words(b, path()) {
            assert!(m.indices.iter().all(|&i| (i as usize) < m.cols));
        }
    });
}

#[test]
fn fuzz_graph_file() {
    let seeds = vec![
        b"# ring\nnodes 4\n0 1\n1 2 0.5\n2 3\n3 0\n".to_vec(),
        b"0 1\n1 0\n1 1\n".to_vec(),
    ];
    fuzz::check("graph-file", &seeds, SHORT, |b| {
        if let Ok(t) = parse_edge_list(&String::from_utf8_lossy(b), path()) {
            assert!(t
                .edges()
                .iter()
                .all(|&(s, d, _)| s < t.nodes() && d < t.nodes()));
        }
    });
}

#[test]
fn fuzz_format_detection() {
    let mut cifar = Vec::new();
    write_cifar(
        &CifarShape {
            images: 1,
            classes: 10,
        },
        1,
        &mut cifar,
        path(),
    )
    .unwrap();
    let seeds = vec![
        cifar,
        b"1:\n6,3,2005-09-06\n".to_vec(),
        b"2\n5\n3\n1 1 2\n".to_vec(),
        b"+1 3:1\n".to_vec(),
        b"userId,movieId,rating,timestamp\n1,2,3,4\n".to_vec(),
    ];
    fuzz::check("format-detection", &seeds, SHORT, |b| {
        let _ = detect_format(b, b.len() as u64, path());
        let _ = detect_format(b, 3073, path());
    });
}
