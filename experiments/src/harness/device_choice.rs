//! `--device`: where a run's CNN workloads compute, for this process. One device (`cpu`,
//! `cuda:N`, `torch-cpu`) serves every process; a comma-separated list gives a cluster job's
//! ranks one each (rank r takes entry r; several ranks may name the same GPU); a bare `cuda`
//! gives each rank the GPU of its local rank (modulo the GPUs the machine has), as launchers
//! place one rank per GPU.

use crate::harness::exit::usage;
use anyhow::{bail, Context, Result};
use bench_core::workload::CnnDevice;

/// Each launcher's rank variable with the variable of its rank among the ranks of its machine:
/// `syncbench launch` (all of whose ranks share one machine, so its rank is the local rank),
/// Open MPI, MPICH / Intel MPI, and Slurm, in the order bench-core's
/// [`RANK_VARIABLES`](bench_core::driver::cluster::rank::RANK_VARIABLES) tries them, so the local
/// rank comes from the launcher the rank came from (a `syncbench launch` inside a Slurm
/// allocation inherits one SLURM_LOCALID for all its ranks).
const LOCAL_RANK_VARIABLES: [(&str, &str); 4] = [
    ("SYNCBENCH_RANK", "SYNCBENCH_RANK"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"),
    ("PMI_RANK", "MPI_LOCALRANKID"),
    ("SLURM_PROCID", "SLURM_LOCALID"),
];

/// Parses `--device` and picks this process's entry.
///
/// `rank` is this process's rank in a cluster job (`None` outside one), `local` its rank on
/// its machine, `gpus` the CUDA devices the machine has (for a bare `cuda`; `None` in a build
/// without the LibTorch backend).
///
/// # Errors
/// An unknown device name, a list with more than one entry outside a cluster job, or a list
/// shorter than the job.
pub fn pick(
    text: &str,
    rank: Option<usize>,
    local: Option<usize>,
    gpus: Option<usize>,
) -> Result<CnnDevice> {
    let entries: Vec<&str> = text.split(',').map(str::trim).collect();
    if entries.len() > 1 && entries.contains(&"cuda") {
        return Err(usage(format!("--device {text}: a per-rank list names each GPU by index (cuda:N); a bare `cuda` alone gives each rank the GPU of its local rank")));
    }
    let entry = match (entries.len(), rank) {
        (1, _) => entries[0],
        (n, Some(r)) => *entries.get(r).with_context(|| {
            format!("--device lists {n} devices, one per rank, and this is rank {r}")
        })?,
        (n, None) => return Err(usage(format!(
            "--device lists {n} devices, one per rank of a cluster job, and this process is not a rank (use one device, e.g. --device cuda:0)"
        ))),
    };
    if entry == "cuda" && rank.is_some() {
        let local = local.or(rank).unwrap_or(0);
        let Some(gpus) = gpus else {
            CnnDevice::Cuda(0).check_built()?;
            bail!("--device cuda: this build has no LibTorch backend");
        };
        if gpus == 0 {
            bail!("--device cuda: this machine has no CUDA device (rank {local} on it)");
        }
        return Ok(CnnDevice::Cuda(local % gpus));
    }
    entry
        .parse()
        .map_err(|e| usage(format!("--device {text}: {e}")))
}

/// This process's rank and local rank, for a process of a cluster job (`None`s otherwise):
/// `--rank` or the first launcher's rank variable that is set, and that launcher's local rank.
pub fn ranks(cluster: bool, flag: Option<usize>) -> (Option<usize>, Option<usize>) {
    ranks_from(cluster, flag, &|n| std::env::var(n).ok())
}

fn ranks_from(
    cluster: bool,
    flag: Option<usize>,
    env: &dyn Fn(&str) -> Option<String>,
) -> (Option<usize>, Option<usize>) {
    if !cluster {
        return (None, None);
    }
    let read = |n: &str| env(n).and_then(|v| v.trim().parse::<usize>().ok());
    let launcher = LOCAL_RANK_VARIABLES
        .iter()
        .find_map(|&(rank, local)| read(rank).map(|r| (r, read(local))));
    match (flag, launcher) {
        (Some(r), Some((_, local))) => (Some(r), local),
        (Some(r), None) => (Some(r), None),
        (None, Some((r, local))) => (Some(r), local),
        (None, None) => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_device_serves_every_process() {
        assert_eq!(pick("cpu", None, None, Some(0)).unwrap(), CnnDevice::Cpu);
        assert_eq!(
            pick("cuda:1", Some(3), Some(3), Some(2)).unwrap(),
            CnnDevice::Cuda(1)
        );
        assert_eq!(pick("cuda", None, None, None).unwrap(), CnnDevice::Cuda(0));
    }

    #[test]
    fn a_list_gives_each_rank_its_entry_and_ranks_may_share_a_gpu() {
        let list = "cuda:0,cuda:0,cuda:1,cpu";
        let got: Vec<_> = (0..4)
            .map(|r| pick(list, Some(r), None, Some(2)).unwrap())
            .collect();
        assert_eq!(
            got,
            [
                CnnDevice::Cuda(0),
                CnnDevice::Cuda(0),
                CnnDevice::Cuda(1),
                CnnDevice::Cpu
            ]
        );
        let e = pick(list, Some(4), None, Some(2)).unwrap_err().to_string();
        assert!(e.contains("4 devices") && e.contains("rank 4"), "{e}");
        let e = pick(list, None, None, Some(2)).unwrap_err().to_string();
        assert!(e.contains("not a rank"), "{e}");
    }

    #[test]
    fn bare_cuda_follows_the_local_rank() {
        assert_eq!(
            pick("cuda", Some(5), Some(1), Some(2)).unwrap(),
            CnnDevice::Cuda(1)
        );
        assert_eq!(
            pick("cuda", Some(5), Some(3), Some(2)).unwrap(),
            CnnDevice::Cuda(1)
        );
        assert_eq!(
            pick("cuda", Some(2), None, Some(4)).unwrap(),
            CnnDevice::Cuda(2)
        );
        let e = pick("cuda", Some(0), Some(0), Some(0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no CUDA device"), "{e}");
        // A build without the backend says so, not that the machine lacks a GPU.
        let e = format!("{:#}", pick("cuda", Some(0), Some(0), None).unwrap_err());
        assert!(e.contains("LibTorch backend"), "{e}");
    }

    #[test]
    fn bare_cuda_in_a_list_is_refused() {
        let e = pick("cuda,cuda:1", Some(0), None, Some(2))
            .unwrap_err()
            .to_string();
        assert!(e.contains("by index"), "{e}");
    }

    #[test]
    fn the_local_rank_comes_from_the_launcher_the_rank_came_from() {
        // syncbench launch inside a Slurm allocation: every rank inherits SLURM_LOCALID 0.
        let env = |n: &str| match n {
            "SYNCBENCH_RANK" => Some("3".to_string()),
            "SLURM_PROCID" | "SLURM_LOCALID" => Some("0".to_string()),
            _ => None,
        };
        assert_eq!(ranks_from(true, None, &env), (Some(3), Some(3)));
        // mpirun: its own local rank.
        let env = |n: &str| match n {
            "OMPI_COMM_WORLD_RANK" => Some("5".to_string()),
            "OMPI_COMM_WORLD_LOCAL_RANK" => Some("1".to_string()),
            _ => None,
        };
        assert_eq!(ranks_from(true, None, &env), (Some(5), Some(1)));
        assert_eq!(ranks_from(true, Some(2), &env), (Some(2), Some(1)));
        // Outside a cluster run no rank is read, whatever the environment says.
        assert_eq!(ranks_from(false, None, &env), (None, None));
    }

    #[test]
    fn an_unknown_device_is_named() {
        let e = format!(
            "{:#}",
            pick("cpu,gpu0", Some(1), None, Some(0)).unwrap_err()
        );
        assert!(
            e.contains("'gpu0'") && e.contains("--device cpu,gpu0"),
            "{e}"
        );
    }
}
