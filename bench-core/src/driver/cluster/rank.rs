//! Who this process is in a multi-process job: its rank, the job size, where rank 0 listens, and
//! the job token, from flags or from the launcher's environment.

use crate::error::{CoreError, Result};
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// Port rank 0 listens on when neither `--root` nor an environment variable says.
pub const DEFAULT_ROOT_PORT: u16 = 29517;

/// Rank variables of the launchers we know, in the order they are tried: our own (set by
/// `syncbench launch`), Open MPI's mpirun, MPICH/Intel MPI's PMI, and Slurm's srun.
pub const RANK_VARIABLES: [(&str, &str); 4] = [
    ("SYNCBENCH_RANK", "SYNCBENCH_SIZE"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
    ("PMI_RANK", "PMI_SIZE"),
    ("SLURM_PROCID", "SLURM_NTASKS"),
];

/// Variables that name a job, hashed into the job token when `SYNCBENCH_JOB_TOKEN` is unset,
/// so that every rank of one job agrees on it without being told.
const JOB_ID_VARIABLES: [&str; 4] = [
    "SLURM_JOB_ID",
    "OMPI_MCA_ess_base_jobid",
    "PMIX_NAMESPACE",
    "PMI_JOBID",
];

/// One process's place in a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankSpec {
    /// This process's rank, `0..size`.
    pub rank: usize,
    /// Processes in the job.
    pub size: usize,
    /// Where rank 0 listens for the others.
    pub root: SocketAddr,
    /// Shared secret every connection of the job presents; others are rejected.
    pub token: u64,
    /// How long ranks wait for each other to connect, and how long rank 0 waits for the other
    /// ranks' reports once one rank failed.
    pub timeout: Duration,
    /// How long a run's endpoints may take to connect to each other once every rank announced
    /// its addresses (refused or reset connections are retried until then).
    pub startup: Duration,
    /// Where the values came from (for the manifest).
    pub source: String,
}

/// Explicit settings; `None` fields are read from the environment.
#[derive(Debug, Clone, Default)]
pub struct RankFlags {
    /// `--rank`.
    pub rank: Option<usize>,
    /// `--world-size`.
    pub size: Option<usize>,
    /// `--root HOST:PORT`.
    pub root: Option<String>,
    /// `--cluster-timeout-ms`.
    pub timeout_ms: Option<u64>,
    /// `--startup-timeout-ms`.
    pub startup_ms: Option<u64>,
}

/// Default start-up deadline of a run's endpoints.
pub const DEFAULT_STARTUP_MS: u64 = 10_000;

impl RankSpec {
    /// Resolves the spec from `flags`, then `env` (a lookup such as `std::env::var`).
    ///
    /// Root address: `--root`, else `SYNCBENCH_ROOT`, else `MASTER_ADDR`:`MASTER_PORT` (as
    /// torchrun sets them), else `127.0.0.1:29517` (every rank on one host).
    ///
    /// # Errors
    /// [`CoreError::Config`] naming the flag or variable: a rank without a size or the other way
    /// round, a rank not below the size, a size of 0, a value that is not a number, or a root
    /// address that does not resolve.
    pub fn resolve(flags: &RankFlags, env: &dyn Fn(&str) -> Option<String>) -> Result<Self> {
        let number = |name: &str, v: &str| -> Result<usize> {
            v.trim().parse().map_err(|_| {
                CoreError::Config(format!("{name}={v:?} is not a non-negative integer"))
            })
        };
        let (rank, size, source) = match (flags.rank, flags.size) {
            (Some(r), Some(s)) => (r, s, "flags --rank/--world-size".to_string()),
            (Some(_), None) | (None, Some(_)) => {
                return Err(CoreError::Config(
                    "--rank and --world-size go together".into(),
                ))
            }
            (None, None) => {
                let mut found = None;
                for (rv, sv) in RANK_VARIABLES {
                    match (env(rv), env(sv)) {
                        (Some(r), Some(s)) => {
                            found = Some((number(rv, &r)?, number(sv, &s)?, format!("{rv}/{sv}")));
                            break;
                        }
                        (Some(_), None) => {
                            return Err(CoreError::Config(format!("{rv} is set but {sv} is not")))
                        }
                        _ => {}
                    }
                }
                found.ok_or_else(|| {
                    CoreError::Config(
                        "the cluster driver needs a rank: start the binary under `syncbench launch --ranks N`, mpirun or srun, or pass --rank and --world-size".into(),
                    )
                })?
            }
        };
        if size == 0 || rank >= size {
            return Err(CoreError::Config(format!(
                "rank {rank} of a job of {size} (from {source}): the rank must be below the size"
            )));
        }
        let root_text = flags
            .root
            .clone()
            .or_else(|| env("SYNCBENCH_ROOT"))
            .or_else(|| match (env("MASTER_ADDR"), env("MASTER_PORT")) {
                (Some(a), Some(p)) => Some(format!("{a}:{p}")),
                _ => None,
            })
            .unwrap_or_else(|| format!("127.0.0.1:{DEFAULT_ROOT_PORT}"));
        let root = root_text
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| {
                CoreError::Config(format!(
                    "root address {root_text:?} does not resolve (expected HOST:PORT)"
                ))
            })?;
        let token = match env("SYNCBENCH_JOB_TOKEN") {
            Some(t) => {
                u64::from_str_radix(t.trim().trim_start_matches("0x"), 16).map_err(|_| {
                    CoreError::Config(format!("SYNCBENCH_JOB_TOKEN={t:?} is not a hex number"))
                })?
            }
            None => {
                let mut key = format!("{root}/{size}");
                for v in JOB_ID_VARIABLES {
                    if let Some(x) = env(v) {
                        key.push('/');
                        key.push_str(&x);
                    }
                }
                fnv1a(key.as_bytes())
            }
        };
        let timeout_ms = match flags.timeout_ms {
            Some(t) => t,
            None => match env("SYNCBENCH_TIMEOUT_MS") {
                Some(t) => number("SYNCBENCH_TIMEOUT_MS", &t)? as u64,
                None => 30_000,
            },
        };
        let startup_ms = match flags.startup_ms {
            Some(t) => t,
            None => match env("SYNCBENCH_STARTUP_TIMEOUT_MS") {
                Some(t) => number("SYNCBENCH_STARTUP_TIMEOUT_MS", &t)? as u64,
                None => DEFAULT_STARTUP_MS,
            },
        };
        if timeout_ms == 0 || startup_ms == 0 {
            return Err(CoreError::Config(
                "the cluster and start-up timeouts must be at least 1 ms".into(),
            ));
        }
        Ok(RankSpec {
            rank,
            size,
            root,
            token,
            timeout: Duration::from_millis(timeout_ms),
            startup: Duration::from_millis(startup_ms),
            source,
        })
    }
}

/// FNV-1a, 64 bits: a stable hash (unlike std's) so that every rank derives the same token.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn launchers_are_recognised_in_order() {
        let s = RankSpec::resolve(
            &RankFlags::default(),
            &env_of(&[("OMPI_COMM_WORLD_RANK", "2"), ("OMPI_COMM_WORLD_SIZE", "4")]),
        )
        .unwrap();
        assert_eq!((s.rank, s.size), (2, 4));
        assert_eq!(s.root.port(), DEFAULT_ROOT_PORT);
        let s = RankSpec::resolve(
            &RankFlags::default(),
            &env_of(&[
                ("SLURM_PROCID", "1"),
                ("SLURM_NTASKS", "3"),
                ("PMI_RANK", "0"),
                ("PMI_SIZE", "3"),
                ("MASTER_ADDR", "127.0.0.1"),
                ("MASTER_PORT", "4000"),
            ]),
        )
        .unwrap();
        // PMI comes before Slurm.
        assert_eq!((s.rank, s.size, s.root.port()), (0, 3, 4000));
        assert!(s.source.contains("PMI_RANK"));
    }

    #[test]
    fn flags_override_and_token_is_shared() {
        let env = env_of(&[("SYNCBENCH_JOB_TOKEN", "abc1")]);
        let f = RankFlags {
            rank: Some(1),
            size: Some(2),
            root: Some("127.0.0.1:5000".into()),
            timeout_ms: Some(100),
            startup_ms: None,
        };
        let s = RankSpec::resolve(&f, &env).unwrap();
        assert_eq!((s.rank, s.token, s.timeout.as_millis()), (1, 0xabc1, 100));
        assert_eq!(s.startup.as_millis(), u128::from(DEFAULT_STARTUP_MS));
        let e = env_of(&[("SYNCBENCH_STARTUP_TIMEOUT_MS", "250")]);
        assert_eq!(RankSpec::resolve(&f, &e).unwrap().startup.as_millis(), 250);
        let e = env_of(&[("SYNCBENCH_STARTUP_TIMEOUT_MS", "0")]);
        assert!(RankSpec::resolve(&f, &e).is_err());
        // Without a token, ranks of one job derive the same one.
        let a = RankSpec::resolve(
            &RankFlags {
                rank: Some(0),
                ..f.clone()
            },
            &env_of(&[("SLURM_JOB_ID", "77")]),
        )
        .unwrap();
        let b = RankSpec::resolve(&f, &env_of(&[("SLURM_JOB_ID", "77")])).unwrap();
        let c = RankSpec::resolve(&f, &env_of(&[("SLURM_JOB_ID", "78")])).unwrap();
        assert_eq!(a.token, b.token);
        assert_ne!(a.token, c.token);
    }

    #[test]
    fn bad_settings_are_named() {
        let none = env_of(&[]);
        let e = RankSpec::resolve(&RankFlags::default(), &none).unwrap_err();
        assert!(e.to_string().contains("syncbench launch"), "{e}");
        let e = RankSpec::resolve(
            &RankFlags::default(),
            &env_of(&[("PMI_RANK", "x"), ("PMI_SIZE", "2")]),
        )
        .unwrap_err();
        assert!(e.to_string().contains("PMI_RANK=\"x\""), "{e}");
        let e = RankSpec::resolve(
            &RankFlags {
                rank: Some(3),
                size: Some(3),
                ..RankFlags::default()
            },
            &none,
        )
        .unwrap_err();
        assert!(e.to_string().contains("below the size"), "{e}");
        let e = RankSpec::resolve(
            &RankFlags {
                rank: Some(0),
                size: Some(1),
                root: Some("nohost-without-port".into()),
                ..RankFlags::default()
            },
            &none,
        )
        .unwrap_err();
        assert!(e.to_string().contains("does not resolve"), "{e}");
        let e = RankSpec::resolve(&RankFlags::default(), &env_of(&[("SLURM_PROCID", "0")]))
            .unwrap_err();
        assert!(e.to_string().contains("SLURM_NTASKS"), "{e}");
    }
}
