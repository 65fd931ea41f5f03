//! Ratings files: MovieLens CSV (`userId,movieId,rating,timestamp` with a header) and the
//! Netflix Prize per-movie files (`MovieID:` then `CustomerID,Rating,Date` lines). Ids are
//! remapped to dense indices in order of first appearance; the maps are kept so results can
//! name the original ids.

use super::Rating;
use crate::error::{CoreError, Result};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;

/// Ratings with dense user and item indices.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RatingsData {
    /// Observed ratings.
    pub ratings: Vec<Rating>,
    /// Original user id of each dense user index.
    pub user_ids: Vec<u64>,
    /// Original item id of each dense item index.
    pub item_ids: Vec<u64>,
    users: HashMap<u64, u32>,
    items: HashMap<u64, u32>,
}

impl RatingsData {
    fn index(map: &mut HashMap<u64, u32>, ids: &mut Vec<u64>, id: u64) -> u32 {
        *map.entry(id).or_insert_with(|| {
            ids.push(id);
            (ids.len() - 1) as u32
        })
    }

    fn push(&mut self, user: u64, item: u64, value: f32) {
        let user = Self::index(&mut self.users, &mut self.user_ids, user);
        let item = Self::index(&mut self.items, &mut self.item_ids, item);
        self.ratings.push(Rating { user, item, value });
    }

    /// Dense index of original user id `id`, if seen.
    pub fn user_index(&self, id: u64) -> Option<u32> {
        self.users.get(&id).copied()
    }
}

fn parse_error(path: &Path, line: usize, column: usize, message: String) -> CoreError {
    CoreError::DataFile {
        path: path.to_path_buf(),
        line,
        column,
        message,
    }
}

/// Splits `line` at commas, with each field's 1-based column.
fn fields(line: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut col = 1;
    line.split(',').map(move |f| {
        let c = col;
        col += f.len() + 1;
        (c, f.trim())
    })
}

/// Reads MovieLens `ratings.csv` into `out`.
///
/// # Errors
/// [`CoreError::DataFile`] naming line and column for a missing header, a missing field, a
/// non-numeric id, or a rating outside 0.5..=5; [`CoreError::Io`] when reading fails.
pub fn read_movielens<R: BufRead>(reader: R, path: &Path, out: &mut RatingsData) -> Result<()> {
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| CoreError::io(path, e))?;
        let lineno = i + 1;
        if lineno == 1 {
            if !line
                .trim_start_matches('\u{feff}')
                .starts_with("userId,movieId,rating")
            {
                return Err(parse_error(
                    path,
                    1,
                    1,
                    "expected the header 'userId,movieId,rating,timestamp'".into(),
                ));
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<(usize, &str)> = fields(&line).collect();
        if f.len() < 3 {
            return Err(parse_error(
                path,
                lineno,
                line.len() + 1,
                format!(
                    "expected userId,movieId,rating[,timestamp], got {} fields",
                    f.len()
                ),
            ));
        }
        let id = |k: usize, what: &str| {
            f[k].1.parse::<u64>().map_err(|_| {
                parse_error(
                    path,
                    lineno,
                    f[k].0,
                    format!("{what} '{}' is not an id", f[k].1),
                )
            })
        };
        let (user, item) = (id(0, "userId")?, id(1, "movieId")?);
        let value: f32 = f[2]
            .1
            .parse()
            .ok()
            .filter(|v| (0.5..=5.0).contains(v))
            .ok_or_else(|| {
                parse_error(
                    path,
                    lineno,
                    f[2].0,
                    format!("rating '{}' is not in 0.5..=5", f[2].1),
                )
            })?;
        out.push(user, item, value);
    }
    Ok(())
}

/// Reads one Netflix Prize `mv_*.txt` file into `out`.
///
/// # Errors
/// [`CoreError::DataFile`] naming line and column for a missing `MovieID:` first line, a
/// malformed customer line, or a rating outside 1..=5; [`CoreError::Io`] when reading fails.
pub fn read_netflix_movie<R: BufRead>(reader: R, path: &Path, out: &mut RatingsData) -> Result<()> {
    let mut movie: Option<u64> = None;
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| CoreError::io(path, e))?;
        let lineno = i + 1;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(m) = t.strip_suffix(':') {
            movie = Some(m.parse().map_err(|_| {
                parse_error(path, lineno, 1, format!("movie id '{m}' is not a number"))
            })?);
            continue;
        }
        let Some(m) = movie else {
            return Err(parse_error(
                path,
                lineno,
                1,
                "expected 'MovieID:' before ratings".into(),
            ));
        };
        let f: Vec<(usize, &str)> = fields(t).collect();
        if f.len() < 2 {
            return Err(parse_error(
                path,
                lineno,
                t.len() + 1,
                "expected CustomerID,Rating,Date".into(),
            ));
        }
        let user: u64 = f[0].1.parse().map_err(|_| {
            parse_error(
                path,
                lineno,
                f[0].0,
                format!("customer id '{}' is not a number", f[0].1),
            )
        })?;
        let value: f32 = f[1]
            .1
            .parse()
            .ok()
            .filter(|v| (1.0..=5.0).contains(v))
            .ok_or_else(|| {
                parse_error(
                    path,
                    lineno,
                    f[1].0,
                    format!("rating '{}' is not in 1..=5", f[1].1),
                )
            })?;
        out.push(user, m, value);
    }
    Ok(())
}

/// Reads a ratings dataset as the cache unpacked it: for `movielens-csv`, the file itself or
/// the `ratings.csv` under the directory an archive unpacked into; for `netflix`, every
/// `mv_*.txt` under the directory, in name order.
///
/// # Errors
/// [`CoreError::Dataset`] for another format or when no ratings file is found;
/// [`CoreError::DataFile`] naming file, line and column for a malformed line;
/// [`CoreError::Io`] when reading fails.
pub fn read_ratings_dataset(path: &Path, format: &str) -> Result<RatingsData> {
    let open = |p: &Path| {
        std::fs::File::open(p)
            .map(|f| std::io::BufReader::with_capacity(1 << 20, f))
            .map_err(|e| CoreError::io(p, e))
    };
    let missing = |what: &str| CoreError::Dataset {
        name: path.display().to_string(),
        message: format!("no {what} found there"),
    };
    let mut out = RatingsData::default();
    match format {
        "movielens-csv" => {
            let file = if path.is_dir() {
                find_files(path, 3, &|n| n == "ratings.csv")
                    .into_iter()
                    .next()
                    .ok_or_else(|| missing("ratings.csv"))?
            } else {
                path.to_path_buf()
            };
            read_movielens(open(&file)?, &file, &mut out)?;
        }
        "netflix" => {
            let files = find_files(path, 3, &|n| n.starts_with("mv_") && n.ends_with(".txt"));
            if files.is_empty() {
                return Err(missing("Netflix mv_*.txt files"));
            }
            for f in files {
                read_netflix_movie(open(&f)?, &f, &mut out)?;
            }
        }
        other => {
            return Err(CoreError::Dataset {
                name: path.display().to_string(),
                message: format!("format '{other}' holds no ratings (movielens-csv or netflix)"),
            })
        }
    }
    Ok(out)
}

/// Files under `dir` (to `depth` levels) whose names pass `keep`, sorted by path.
fn find_files(dir: &Path, depth: usize, keep: &dyn Fn(&str) -> bool) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if depth > 0 {
                found.extend(find_files(&p, depth - 1, keep));
            }
        } else if p.file_name().and_then(|n| n.to_str()).is_some_and(keep) {
            found.push(p);
        }
    }
    found.sort();
    found
}

/// Writes ratings as MovieLens CSV (ids 1-based, values mapped into 0.5..=5 in half stars).
///
/// # Errors
/// [`CoreError::Io`] when writing fails.
pub fn write_movielens<W: Write>(ratings: &[Rating], w: &mut W, path: &Path) -> Result<()> {
    let io = |e| CoreError::io(path, e);
    writeln!(w, "userId,movieId,rating,timestamp").map_err(io)?;
    for (k, r) in ratings.iter().enumerate() {
        // The twin's values are O(1) around 0: shift to the 1..5 star scale, round to halves.
        let stars = ((3.0 + 1.5 * r.value).clamp(0.5, 5.0) * 2.0).round() / 2.0;
        writeln!(
            w,
            "{},{},{stars:.1},{}",
            r.user + 1,
            r.item + 1,
            1_100_000_000 + k
        )
        .map_err(io)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::RatingsShape;

    #[test]
    fn movielens_twin_round_trips() {
        let shape = RatingsShape {
            users: 30,
            items: 20,
            ratings: 500,
            rank: 3,
            noise: 0.1,
            popularity_exponent: 1.0,
        };
        let r = shape.generate(4);
        let mut bytes = Vec::new();
        write_movielens(&r, &mut bytes, Path::new("r.csv")).unwrap();
        let mut out = RatingsData::default();
        read_movielens(&bytes[..], Path::new("r.csv"), &mut out).unwrap();
        assert_eq!(out.ratings.len(), 500);
        for (a, b) in r.iter().zip(&out.ratings) {
            assert_eq!(out.user_ids[b.user as usize], u64::from(a.user) + 1);
            assert_eq!(out.item_ids[b.item as usize], u64::from(a.item) + 1);
            assert!((0.5..=5.0).contains(&b.value));
        }
        // The same file found under an unpacked archive's directory.
        let dir = std::env::temp_dir().join(format!("syncbench-ml-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("ml-tiny")).unwrap();
        std::fs::write(dir.join("ml-tiny/ratings.csv"), &bytes).unwrap();
        let again = read_ratings_dataset(&dir, "movielens-csv").unwrap();
        assert_eq!(again, out);
        let e = read_ratings_dataset(&dir, "netflix").unwrap_err();
        assert!(e.to_string().contains("mv_*.txt"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn netflix_files_and_errors() {
        let text = "17:\n6,3,2005-09-06\n7,5,2005-01-01\n\n18:\n6,1,2004-01-01\n";
        let mut out = RatingsData::default();
        read_netflix_movie(text.as_bytes(), Path::new("mv.txt"), &mut out).unwrap();
        assert_eq!(out.ratings.len(), 3);
        assert_eq!(out.item_ids, vec![17, 18]);
        assert_eq!(out.user_ids, vec![6, 7]);
        assert_eq!(out.user_index(7), Some(1));
        let e = read_netflix_movie("6,3,2005\n".as_bytes(), Path::new("mv.txt"), &mut out)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("mv.txt:1:1:"), "{e}");
        let e = read_netflix_movie("1:\n6,9,2005\n".as_bytes(), Path::new("mv.txt"), &mut out)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("mv.txt:2:3:") && e.contains("rating '9'"),
            "{e}"
        );
        let e = read_movielens(
            "userId,movieId,rating\n1,x,3\n".as_bytes(),
            Path::new("r.csv"),
            &mut out,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("r.csv:2:3:") && e.contains("movieId 'x'"),
            "{e}"
        );
        assert!(read_movielens("a,b\n".as_bytes(), Path::new("r.csv"), &mut out).is_err());
    }
}
