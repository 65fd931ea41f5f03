//! CIFAR-10 / CIFAR-100 binary files: records of `[label] 3072 pixel bytes` (CIFAR-10) or
//! `[coarse label][fine label] 3072 pixel bytes` (CIFAR-100), pixels as 1024 red, 1024 green,
//! 1024 blue bytes of a 32x32 image, row-major. A seeded twin writer draws images around one
//! colour prototype per class.

use crate::error::{CoreError, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{Read, Write};
use std::path::Path;

/// Bytes of one image.
pub const CIFAR_PIXELS: usize = 3072;

/// Images and labels read from CIFAR binary files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CifarImages {
    /// `n * 3072` pixel bytes.
    pub pixels: Vec<u8>,
    /// Class (CIFAR-10) or fine label (CIFAR-100) per image.
    pub labels: Vec<u8>,
    /// Coarse label per image (CIFAR-100 only).
    pub coarse: Option<Vec<u8>>,
}

impl CifarImages {
    /// Number of images.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }
}

/// Shape of a CIFAR twin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CifarShape {
    /// Images to draw.
    pub images: usize,
    /// 10 (CIFAR-10 layout) or 100 (CIFAR-100 layout, 20 coarse classes of 5).
    pub classes: usize,
}

/// Reads every record of `reader` into `out`; `classes` (10 or 100) decides the layout.
///
/// # Errors
/// [`CoreError::DataFile`] naming the record (as the line) and the byte within it (as the
/// column) for a truncated record or a label out of range; [`CoreError::Config`] for a class
/// count other than 10 or 100; [`CoreError::Io`] when reading fails.
pub fn read_cifar<R: Read>(
    mut reader: R,
    path: &Path,
    classes: usize,
    out: &mut CifarImages,
) -> Result<()> {
    let head = match classes {
        10 => 1,
        100 => 2,
        c => {
            return Err(CoreError::Config(format!(
                "CIFAR files have 10 or 100 classes, not {c}"
            )))
        }
    };
    if head == 2 && out.coarse.is_none() {
        out.coarse = Some(Vec::new());
    }
    let mut rec = vec![0u8; head + CIFAR_PIXELS];
    let mut record = 0usize;
    loop {
        record += 1;
        let mut got = 0;
        while got < rec.len() {
            let n = reader
                .read(&mut rec[got..])
                .map_err(|e| CoreError::io(path, e))?;
            if n == 0 {
                break;
            }
            got += n;
        }
        if got == 0 {
            return Ok(());
        }
        let err = |column: usize, message: String| CoreError::DataFile {
            path: path.to_path_buf(),
            line: record,
            column,
            message,
        };
        if got < rec.len() {
            return Err(err(
                got + 1,
                format!("record {record} is truncated: {got} of {} bytes", rec.len()),
            ));
        }
        let fine = rec[head - 1];
        if usize::from(fine) >= classes {
            return Err(err(head, format!("label {fine} is not below {classes}")));
        }
        if head == 2 {
            let coarse = rec[0];
            if coarse >= 20 {
                return Err(err(1, format!("coarse label {coarse} is not below 20")));
            }
            out.coarse.as_mut().expect("set above").push(coarse);
        }
        out.labels.push(fine);
        out.pixels.extend_from_slice(&rec[head..]);
    }
}

/// Writes a seeded twin: each class has a random colour prototype (a smooth 32x32 pattern per
/// channel), every image is its class prototype plus Gaussian-like noise, classes drawn
/// uniformly (CIFAR is balanced). CIFAR-100 twins carry coarse label `fine / 5`.
///
/// # Errors
/// [`CoreError::Io`] when writing fails; [`CoreError::Config`] for a class count other than
/// 10 or 100.
pub fn write_cifar<W: Write>(shape: &CifarShape, seed: u64, w: &mut W, path: &Path) -> Result<()> {
    if shape.classes != 10 && shape.classes != 100 {
        return Err(CoreError::Config(format!(
            "CIFAR twins have 10 or 100 classes, not {}",
            shape.classes
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let prototypes: Vec<Vec<f32>> = (0..shape.classes)
        .map(|_| {
            let (fx, fy) = (rng.gen_range(0.5..3.0f32), rng.gen_range(0.5..3.0f32));
            let base: [f32; 3] = [
                rng.gen_range(40.0..215.0),
                rng.gen_range(40.0..215.0),
                rng.gen_range(40.0..215.0),
            ];
            (0..CIFAR_PIXELS)
                .map(|i| {
                    let (c, p) = (i / 1024, i % 1024);
                    let (x, y) = ((p % 32) as f32 / 32.0, (p / 32) as f32 / 32.0);
                    base[c]
                        + 35.0 * (std::f32::consts::TAU * (fx * x + fy * y + c as f32 / 3.0)).sin()
                })
                .collect()
        })
        .collect();
    let mut rec = Vec::with_capacity(2 + CIFAR_PIXELS);
    for _ in 0..shape.images {
        let class = rng.gen_range(0..shape.classes);
        rec.clear();
        if shape.classes == 100 {
            rec.push((class / 5) as u8);
        }
        rec.push(class as u8);
        for &p in &prototypes[class] {
            // Sum of uniforms: roughly Gaussian noise of sd ~ 20.
            let noise: f32 = (0..3).map(|_| rng.gen_range(-20.0..20.0f32)).sum();
            rec.push((p + noise).clamp(0.0, 255.0) as u8);
        }
        w.write_all(&rec).map_err(|e| CoreError::io(path, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twins_round_trip_through_the_reader_for_both_layouts() {
        for classes in [10, 100] {
            let shape = CifarShape {
                images: 50,
                classes,
            };
            let mut bytes = Vec::new();
            write_cifar(&shape, 3, &mut bytes, Path::new("t.bin")).unwrap();
            assert_eq!(
                bytes.len(),
                50 * (CIFAR_PIXELS + if classes == 100 { 2 } else { 1 })
            );
            let mut out = CifarImages::default();
            read_cifar(&bytes[..], Path::new("t.bin"), classes, &mut out).unwrap();
            assert_eq!(out.len(), 50);
            assert_eq!(out.pixels.len(), 50 * CIFAR_PIXELS);
            assert!(out.labels.iter().all(|&l| usize::from(l) < classes));
            match (&out.coarse, classes) {
                (Some(c), 100) => {
                    assert!(c.iter().zip(&out.labels).all(|(&c, &f)| c == f / 5));
                }
                (None, 10) => {}
                other => panic!("{other:?}"),
            }
            let mut again = Vec::new();
            write_cifar(&shape, 3, &mut again, Path::new("t.bin")).unwrap();
            assert_eq!(bytes, again, "seeded");
        }
    }

    #[test]
    fn truncated_records_and_bad_labels_name_record_and_byte() {
        let mut bytes = Vec::new();
        write_cifar(
            &CifarShape {
                images: 2,
                classes: 10,
            },
            1,
            &mut bytes,
            Path::new("t"),
        )
        .unwrap();
        let cut = &bytes[..bytes.len() - 10];
        let e = read_cifar(cut, Path::new("b.bin"), 10, &mut CifarImages::default())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("b.bin:2:") && e.contains("truncated"), "{e}");
        let mut bad = bytes.clone();
        bad[0] = 12;
        let e = read_cifar(
            &bad[..],
            Path::new("b.bin"),
            10,
            &mut CifarImages::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("b.bin:1:1:") && e.contains("label 12"), "{e}");
        assert!(read_cifar(&bytes[..], Path::new("b"), 7, &mut CifarImages::default()).is_err());
    }
}
