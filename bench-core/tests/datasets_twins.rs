//! Every dataset of the repository's datasets.lock has a seeded twin written in the dataset's
//! own format, and the format's reader reads it back with the lock's shape.

use bench_core::data::{
    read_bag_of_words, read_cifar, read_libsvm, read_movielens, CifarImages, DatasetLock,
    RatingsData, Twin,
};
use std::io::BufReader;
use std::path::Path;

#[test]
fn every_twin_round_trips_through_its_reader() {
    let lock =
        DatasetLock::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets.lock")).unwrap();
    let dir = std::env::temp_dir().join(format!("syncbench-twins-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut checked = 0;
    for e in &lock.entries {
        let rows = 60;
        let twin = match Twin::of(e, rows) {
            Ok(t) => t,
            Err(err) => {
                assert_eq!(e.format, "uci-vocab", "{}: {err}", e.name);
                continue;
            }
        };
        let path = dir.join(format!("{}.twin", e.name));
        twin.write(7, &path).unwrap();
        let open = || BufReader::new(std::fs::File::open(&path).unwrap());
        match e.format.as_str() {
            "libsvm" => {
                let features = e.features.unwrap() as usize;
                let m = read_libsvm(open(), &path, Some(features)).unwrap();
                assert_eq!((m.rows(), m.cols), (rows, features), "{}", e.name);
                let classes = e.classes.unwrap_or(2);
                let mut labels: Vec<i64> = m.labels.iter().map(|&l| l as i64).collect();
                labels.sort_unstable();
                labels.dedup();
                assert!(
                    labels.len() >= 2 && labels.len() as u64 <= classes,
                    "{}: {labels:?}",
                    e.name
                );
                if let (Some(z), Some(r)) = (e.nnz, e.rows) {
                    let want = z as f64 / r as f64;
                    let got = m.nnz() as f64 / rows as f64;
                    assert!(
                        (got / want - 1.0).abs() < 0.2,
                        "{}: {got} vs {want}",
                        e.name
                    );
                }
            }
            "cifar-binary" => {
                let mut out = CifarImages::default();
                read_cifar(open(), &path, e.classes.unwrap() as usize, &mut out).unwrap();
                assert_eq!(out.len(), rows, "{}", e.name);
            }
            "movielens-csv" | "netflix" => {
                let mut out = RatingsData::default();
                read_movielens(open(), &path, &mut out).unwrap();
                assert_eq!(out.ratings.len(), rows, "{}", e.name);
            }
            "uci-bow" => {
                let m = read_bag_of_words(open(), &path).unwrap();
                assert_eq!(
                    (m.rows(), m.cols as u64),
                    (rows, e.features.unwrap()),
                    "{}",
                    e.name
                );
            }
            other => panic!("{}: unexpected format {other}", e.name),
        }
        std::fs::remove_file(&path).unwrap();
        checked += 1;
    }
    assert_eq!(
        checked,
        lock.entries.len() - 1,
        "all but the vocabulary list"
    );
}
