//! `syncbench datasets inspect` on a generated RCV1-shaped LIBSVM file and on a bad one, on
//! every other format it recognises, and on a file it does not know.

use bench_core::data::{
    write_bag_of_words, write_cifar, write_libsvm, write_movielens, BagOfWordsShape, CifarShape,
    Rating, RatingsShape, Rcv1Shape,
};
use std::path::Path;
use std::process::Command;

#[test]
fn inspect_reports_shape_and_rejects_bad_lines() {
    let dir = std::env::temp_dir().join(format!("syncbench-datasets-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let m = Rcv1Shape::with_rows(500).generate(2);
    let good = dir.join("rcv1-twin.svm");
    let mut f = std::fs::File::create(&good).unwrap();
    write_libsvm(&m, &mut f, Path::new("rcv1-twin.svm")).unwrap();
    drop(f);
    let o = Command::new(env!("CARGO_BIN_EXE_syncbench"))
        .args(["datasets", "inspect", "--json", "--features", "47236"])
        .arg(&good)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rows"], 500);
    assert_eq!(v["features"], 47236);
    assert_eq!(v["nnz"].as_u64().unwrap() as usize, m.nnz());
    let labels = v["labels"].as_object().unwrap();
    let total: u64 = labels.values().map(|c| c.as_u64().unwrap()).sum();
    assert_eq!(total, 500);
    let bad = dir.join("bad.svm");
    std::fs::write(&bad, "+1 1:1 2:2\n-1 3:1 47237:5\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_syncbench"))
        .args(["datasets", "inspect", "--features", "47236"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.svm:2:8:") && err.contains("47237"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn inspect_json(file: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_syncbench"))
        .args(["datasets", "inspect", "--json"])
        .args(extra)
        .arg(file)
        .output()
        .unwrap()
}

#[test]
fn inspect_recognises_each_format_by_content_and_refuses_others() {
    let dir = std::env::temp_dir().join(format!("syncbench-formats-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut cases: Vec<(std::path::PathBuf, &str, &str, u64)> = Vec::new();
    for (classes, name) in [(10, "cifar10"), (100, "cifar100")] {
        let p = dir.join(format!("data_{classes}.bin"));
        let mut b = Vec::new();
        write_cifar(&CifarShape { images: 9, classes }, 1, &mut b, &p).unwrap();
        std::fs::write(&p, b).unwrap();
        cases.push((p, name, "images", 9));
    }
    let ratings: Vec<Rating> = (0..20)
        .map(|k| Rating {
            user: k % 4,
            item: k % 7,
            value: 0.5,
        })
        .collect();
    let ml = dir.join("ratings.csv");
    let mut b = Vec::new();
    write_movielens(&ratings, &mut b, &ml).unwrap();
    std::fs::write(&ml, b).unwrap();
    cases.push((ml, "movielens", "ratings", 20));
    let nf = dir.join("mv_0000001.txt");
    std::fs::write(&nf, "1:\n6,3,2005-09-06\n7,5,2005-09-07\n").unwrap();
    cases.push((nf, "netflix", "ratings", 2));
    let bow = dir.join("docword.twin.txt");
    let shape = BagOfWordsShape {
        documents: 6,
        vocabulary: 50,
        topics: 2,
        words_per_document: 12,
    };
    let mut b = Vec::new();
    write_bag_of_words(&shape, 1, &mut b, &bow).unwrap();
    std::fs::write(&bow, b).unwrap();
    cases.push((bow, "bag-of-words", "documents", 6));
    for (file, format, key, want) in &cases {
        let o = inspect_json(file, &[]);
        assert!(
            o.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["format"], *format);
        assert_eq!(v["detected"], true);
        assert_eq!(v[*key].as_u64(), Some(*want), "{format}: {v}");
    }
    // A CIFAR file read as LIBSVM because --format says so: a clear parse error, no garbage.
    let o = inspect_json(&cases[0].0, &["--format", "movielens"]);
    assert!(!o.status.success());
    // Something else: refused, saying what it looks like.
    let odd = dir.join("odd.bin");
    std::fs::write(&odd, [7u8, 0, 1, 2, 3]).unwrap();
    let o = inspect_json(&odd, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("odd.bin")
            && err.contains("binary file of 5 bytes")
            && err.contains("--format"),
        "{err}"
    );
    let o = inspect_json(&odd, &["--format", "parquet"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown dataset format 'parquet'"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A one-file HTTP server on loopback serving `body` to every GET.
fn serve(body: Vec<u8>) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { return };
            let mut r = BufReader::new(s.try_clone().unwrap());
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(head.as_bytes());
            let _ = s.write_all(&body);
        }
    });
    format!("http://{addr}")
}

#[test]
fn fetch_path_pin_and_verify_from_the_command_line() {
    let dir = std::env::temp_dir().join(format!("syncbench-datasets-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let body = b"+1 1:1 3:0.5\n-1 2:2\n".to_vec();
    let base = serve(body);
    let lock = dir.join("datasets.lock");
    std::fs::write(
        &lock,
        format!(
            "# test lock\n[[dataset]]\nname = \"mini\"\nurl = \"{base}/mini.svm\"\nbytes = 20\nchecksum = \"unpinned\"\ncompression = \"none\"\nformat = \"libsvm\"\nrows = 2\nsource = \"test\"\nlicence = \"test\"\n"
        ),
    )
    .unwrap();
    let cache = dir.join("cache");
    let sb = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_syncbench"))
            .arg("datasets")
            .args(args)
            .arg("--lock")
            .arg(&lock)
            .env("SYNCBENCH_DATA", &cache)
            .output()
            .unwrap()
    };
    let o = sb(&["path", "mini"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("datasets fetch mini"));
    let o = sb(&["fetch", "mini"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fetched = String::from_utf8_lossy(&o.stdout).trim().to_string();
    assert!(String::from_utf8_lossy(&o.stderr).contains("datasets pin mini"));
    let o = sb(&["path", "mini"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), fetched);
    let o = sb(&["inspect", &fetched, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rows"], 2);
    let o = sb(&["pin", "mini"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&lock).unwrap();
    assert!(
        text.starts_with("# test lock\n") && text.contains("checksum = \"sha256:"),
        "{text}"
    );
    let o = sb(&["pin", "mini"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("already pinned"));
    let o = sb(&["verify", "mini"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("checksum matches"));
    let o = sb(&["list"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("ready"));
    let o = sb(&["fetch", "other"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown dataset 'other'"));
}

#[test]
fn experiments_read_real_data_from_the_cache_only_once_verified() {
    let dir = std::env::temp_dir().join(format!("syncbench-real-data-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut shape = Rcv1Shape::with_rows(1000);
    shape.features = 3000;
    let m = shape.generate(5);
    let mut body = Vec::new();
    write_libsvm(&m, &mut body, Path::new("tiny.svm")).unwrap();
    let base = serve(body.clone());
    std::fs::write(
        dir.join("datasets.lock"),
        format!(
            "[[dataset]]\nname = \"tiny\"\nurl = \"{base}/tiny.svm\"\nbytes = {}\nchecksum = \"unpinned\"\ncompression = \"none\"\nformat = \"libsvm\"\nfeatures = 3000\nsource = \"test\"\nlicence = \"test\"\n",
            body.len()
        ),
    )
    .unwrap();
    let cfg = r#"
good_inputs = 5
[common]
workers = 8
graph = "complete"
iterations = 6
eval_every = 3
jitter_sigma = 0.3
copy_gbps = 5.0
stall_timeout_ms = 30000
[common.data]
dataset = "tiny"
train_rows = 800
test_rows = 100
features = 3000
nnz_per_row = 40.0
label_noise = 0.1
informative = 0.05
[common.svm]
loss = "hinge"
lambda = 1e-4
eta0 = 20.0
batch = 16
[common.compute]
ns_per_example = 1000.0
[common.network]
latency_ns = 2000
bandwidth_gbps = 40.0
"#;
    std::fs::write(dir.join("cfg.toml"), cfg).unwrap();
    let run = |bin: &str, args: &[&str]| {
        Command::new(bin)
            .args(args)
            .current_dir(&dir)
            .env("SYNCBENCH_DATA", dir.join("cache"))
            .output()
            .unwrap()
    };
    let fig7 = env!("CARGO_BIN_EXE_asap-fig7");
    let args = [
        "--data", "real", "--driver", "sim", "--config", "cfg.toml", "--out", "out",
    ];
    let o = run(fig7, &args);
    assert!(!o.status.success(), "ran on data it never fetched");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("syncbench datasets fetch tiny"), "{err}");
    assert!(!dir.join("out/config/cfg/asap-fig7").exists());
    let o = run(
        env!("CARGO_BIN_EXE_syncbench"),
        &["datasets", "fetch", "tiny"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(fig7, &args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let manifest =
        std::fs::read_to_string(dir.join("out/config/cfg/asap-fig7/manifest.json")).unwrap();
    assert!(
        manifest.contains("data: real tiny")
            && manifest.contains("800 training + 100 evaluation rows of 1000"),
        "{manifest}"
    );
    // The default at quick scale stays synthetic.
    let o = run(
        fig7,
        &["--driver", "sim", "--config", "cfg.toml", "--out", "out2"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let manifest =
        std::fs::read_to_string(dir.join("out2/config/cfg/asap-fig7/manifest.json")).unwrap();
    assert!(
        manifest.contains("data: synthetic twin of tiny"),
        "{manifest}"
    );
}

#[test]
fn essp_experiments_read_real_ratings_and_reject_malformed_ones() {
    let dir = std::env::temp_dir().join(format!("syncbench-real-ratings-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let shape = RatingsShape {
        users: 60,
        items: 40,
        ratings: 3000,
        rank: 3,
        noise: 0.1,
        popularity_exponent: 1.0,
    };
    let mut good = Vec::new();
    write_movielens(&shape.generate(2), &mut good, Path::new("ratings.csv")).unwrap();
    // The same file with one line broken: a rating of 9 stars on line 101.
    let text = String::from_utf8(good.clone()).unwrap();
    let bad: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 100 {
                let f: Vec<&str> = l.split(',').collect();
                format!("{},{},9.0,{}\n", f[0], f[1], f[3])
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let (good_url, bad_url) = (serve(good.clone()), serve(bad.clone().into_bytes()));
    let mut bow = Vec::new();
    let bow_shape = BagOfWordsShape {
        documents: 40,
        vocabulary: 200,
        topics: 4,
        words_per_document: 30,
    };
    write_bag_of_words(&bow_shape, 3, &mut bow, Path::new("docword.txt")).unwrap();
    let bow_url = serve(bow.clone());
    let entry = |name: &str, url: &str, bytes: usize| {
        format!(
            "[[dataset]]\nname = \"{name}\"\nurl = \"{url}/ratings.csv\"\nbytes = {bytes}\nchecksum = \"unpinned\"\ncompression = \"none\"\nformat = \"movielens-csv\"\nsource = \"test\"\nlicence = \"test\"\n\n"
        )
    };
    std::fs::write(
        dir.join("datasets.lock"),
        entry("ml-good", &good_url, good.len())
            + &entry("ml-bad", &bad_url, bad.len())
            + &format!(
                "[[dataset]]\nname = \"bow\"\nurl = \"{bow_url}/docword.txt\"\nbytes = {}\nchecksum = \"unpinned\"\ncompression = \"none\"\nformat = \"uci-bow\"\nsource = \"test\"\nlicence = \"test\"\n",
                bow.len()
            ),
    )
    .unwrap();
    let cfg = include_str!("../configs/essp-fig2-staleness.quick.toml")
        .replace("workers = 64", "workers = 4")
        .replace("shards = 4", "shards = 2")
        .replace("clocks = 60", "clocks = 8")
        .replace("staleness = [1, 3, 5]", "staleness = [2]")
        .replace("workers = 8", "workers = 2")
        .replace("nytimes-docword", "bow");
    std::fs::write(
        dir.join("good.toml"),
        cfg.replace("movielens-20m", "ml-good"),
    )
    .unwrap();
    std::fs::write(dir.join("bad.toml"), cfg.replace("movielens-20m", "ml-bad")).unwrap();
    let run = |bin: &str, args: &[&str]| {
        Command::new(bin)
            .args(args)
            .current_dir(&dir)
            .env("SYNCBENCH_DATA", dir.join("cache"))
            .output()
            .unwrap()
    };
    let sb = env!("CARGO_BIN_EXE_syncbench");
    for name in ["ml-good", "ml-bad", "bow"] {
        let o = run(sb, &["datasets", "fetch", name]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let bin = env!("CARGO_BIN_EXE_essp-fig2-staleness");
    let o = run(
        bin,
        &["--data", "real", "--config", "good.toml", "--out", "out"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let manifest =
        std::fs::read_to_string(dir.join("out/config/good/essp-fig2-staleness/manifest.json"))
            .unwrap();
    assert!(
        manifest.contains("data: real ml-good") && manifest.contains("3000 of its 3000 ratings"),
        "{manifest}"
    );
    // The breakdown's LDA part reads the real bag of words too.
    let o = run(
        env!("CARGO_BIN_EXE_essp-fig2-breakdown"),
        &["--data", "real", "--config", "good.toml", "--out", "out"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let manifest =
        std::fs::read_to_string(dir.join("out/config/good/essp-fig2-breakdown/manifest.json"))
            .unwrap();
    assert!(
        manifest.contains("lda data: real bow") && manifest.contains("40 of its 40 documents"),
        "{manifest}"
    );
    let o = run(
        bin,
        &["--data", "real", "--config", "bad.toml", "--out", "out-bad"],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("ratings.csv:101:") && err.contains("'9.0'"),
        "{err}"
    );
    assert!(!dir.join("out-bad/config/bad/essp-fig2-staleness").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// CIFAR-10's binary format: a label byte, then 1,024 red, 1,024 green and 1,024 blue bytes,
/// per image; the class sets the colour mix so the images are not noise.
fn cifar_records(images: usize, seed: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(images * 3073);
    for i in 0..images {
        let label = (i % 10) as u8;
        out.push(label);
        for channel in 0..3u8 {
            for p in 0..1024usize {
                let base = 25u8
                    .wrapping_mul(label)
                    .wrapping_add(60u8.wrapping_mul(channel));
                out.push(base.wrapping_add((p as u8).wrapping_mul(seed)) / 2 + (p % 7) as u8);
            }
        }
    }
    out
}

/// The real-CIFAR path of the CNN experiments (feature `cnn`): a CIFAR-10-shaped archive served
/// like the real one is fetched, verified and unpacked by `syncbench datasets fetch`, and
/// hop-fig12's CNN half with `--data real` trains on its files (the training batches and the
/// test batch, one folder down as in the real archive), recording them in the manifest.
#[test]
fn cnn_experiments_read_real_cifar_from_the_cache() {
    if !cfg!(feature = "cnn") {
        return; // without the feature the workload is refused before any data is read
    }
    let dir = std::env::temp_dir().join(format!("syncbench-real-cifar-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut archive = Vec::new();
    {
        let gz = flate2::write::GzEncoder::new(&mut archive, flate2::Compression::fast());
        let mut tar = tar::Builder::new(gz);
        for (name, images, seed) in [
            ("data_batch_1.bin", 60, 3),
            ("data_batch_2.bin", 40, 5),
            ("test_batch.bin", 20, 7),
        ] {
            let body = cifar_records(images, seed);
            let mut header = tar::Header::new_gnu();
            header.set_size(body.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            tar.append_data(
                &mut header,
                format!("cifar-10-batches-bin/{name}"),
                &body[..],
            )
            .unwrap();
        }
        tar.into_inner().unwrap().finish().unwrap();
    }
    let base = serve(archive.clone());
    std::fs::write(
        dir.join("datasets.lock"),
        format!(
            "[[dataset]]\nname = \"cifar-10-binary\"\nurl = \"{base}/cifar-10-binary.tar.gz\"\nbytes = {}\nchecksum = \"unpinned\"\ncompression = \"tar.gz\"\nformat = \"cifar-binary\"\nclasses = 10\nsource = \"test\"\nlicence = \"test\"\n",
            archive.len()
        ),
    )
    .unwrap();
    let cfg = include_str!("../configs/hop-fig12.cnn.quick.toml")
        .replace(
            r#"graphs = ["ring", "ring-based", "double-ring"]"#,
            r#"graphs = ["ring", "double-ring"]"#,
        )
        .replace("iterations = 200", "iterations = 4");
    assert!(
        cfg.contains("iterations = 4\n"),
        "the shortened budget no longer matches"
    );
    std::fs::write(dir.join("cfg.toml"), cfg).unwrap();
    let run = |bin: &str, args: &[&str]| {
        Command::new(bin)
            .args(args)
            .current_dir(&dir)
            .env("SYNCBENCH_DATA", dir.join("cache"))
            .output()
            .unwrap()
    };
    let o = run(
        env!("CARGO_BIN_EXE_syncbench"),
        &["datasets", "fetch", "cifar-10-binary"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(
        env!("CARGO_BIN_EXE_hop-fig12"),
        &[
            "--data", "real", "--seeds", "1", "--config", "cfg.toml", "--out", "out",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let manifest =
        std::fs::read_to_string(dir.join("out/config/cfg/hop-fig12/manifest.json")).unwrap();
    assert!(
        manifest.contains("images: real cifar-10-binary")
            && manifest.contains("100 training + 20 evaluation images"),
        "{manifest}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A LIBSVM file `figure-twins` wrote, read back with the project's reader, and the rows it
/// should hold compared value for value (labels, column indices, values).
fn assert_file_holds(file: &Path, want: &bench_core::data::CsrMatrix) {
    let f = std::io::BufReader::new(std::fs::File::open(file).unwrap());
    let got = bench_core::data::read_libsvm(f, file, Some(want.cols)).unwrap();
    assert_eq!(got.rows(), want.rows(), "{}", file.display());
    assert_eq!(got.labels, want.labels, "{}", file.display());
    assert_eq!(got.indptr, want.indptr, "{}", file.display());
    assert_eq!(got.indices, want.indices, "{}", file.display());
    assert_eq!(got.values, want.values, "{}", file.display());
}

/// `figure-twins` writes exactly the rows a figure trains on: the SVM twin's training and
/// held-out rows as `SparseData::rows` gives them to hop-fig12's workload, and each ASYNC
/// least-squares twin as `AsyncDataset::prepare` hands it to the solver; a second export to the
/// same folder is refused, and a configuration without twins is an error naming it.
#[test]
fn figure_twins_are_the_rows_the_figure_trains_on() {
    use experiments::harness::data_source::DataSource;
    use experiments::workloads::least_squares::AsyncDataset;
    use experiments::workloads::svm::SparseData;
    let dir = std::env::temp_dir().join(format!("syncbench-figtwins-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let export = |config: &str, seed: &str, out: &Path| {
        Command::new(env!("CARGO_BIN_EXE_syncbench"))
            .args(["datasets", "figure-twins", "--seed", seed, "--config"])
            .arg(configs.join(config))
            .arg("--out-dir")
            .arg(out)
            .output()
            .unwrap()
    };
    let read = |config: &str| -> toml::Value {
        toml::from_str(&std::fs::read_to_string(configs.join(config)).unwrap()).unwrap()
    };

    let hop = dir.join("hop");
    let o = export("hop-fig12.quick.toml", "2", &hop);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let data: SparseData = read("hop-fig12.quick.toml")["common"]["data"]
        .clone()
        .try_into()
        .unwrap();
    let (train, test) = data.rows(2, &DataSource::synthetic()).unwrap();
    assert_file_holds(&hop.join("common_data.train.libsvm"), &train);
    assert_file_holds(&hop.join("common_data.test.libsvm"), &test);
    let index = std::fs::read_to_string(hop.join("index.tsv")).unwrap();
    assert!(
        index.contains(&format!("common:data.train\t{}\t", train.rows())),
        "{index}"
    );
    let again = export("hop-fig12.quick.toml", "2", &hop);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists already"));

    let ls = dir.join("async");
    let o = export("async-cds.quick.toml", "3", &ls);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sets = read("async-cds.quick.toml")["datasets"]
        .as_array()
        .unwrap()
        .clone();
    assert!(!sets.is_empty());
    for (i, d) in sets.into_iter().enumerate() {
        let ds: AsyncDataset = d.try_into().unwrap();
        let prepared = ds.prepare(3).unwrap();
        let file = ls.join(format!("datasets_{i}_.{}.all.libsvm", ds.name));
        assert_file_holds(&file, prepared.problem.data());
    }

    let none = export("essp-fig3.quick.toml", "1", &dir.join("essp"));
    assert!(!none.status.success());
    assert!(String::from_utf8_lossy(&none.stderr).contains("names no SVM [data] twin"));
    assert!(!dir.join("essp").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
