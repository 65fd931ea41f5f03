//! `--device`: where a run's CNN workloads compute, for this process. One device (`cpu`,
//! `cuda:N`, `torch-cpu`) serves every process; a comma-separated list gives a cluster job's
//! ranks one each (rank r takes entry r; several ranks may name the same GPU); a bare `cuda`
//! gives each rank the GPU of its local rank (modulo the GPUs the machine has), as launchers
//! place one rank per GPU.

use anyhow::{bail, Context, Result};
use bench_core::workload::CnnDevice;

/// Variables that carry a process's rank among the ranks of its machine, in the order tried:
/// Open MPI, MPICH / Intel MPI, Slurm, and `syncbench launch` (all of whose ranks share one
/// machine, so its rank is the local rank).
const LOCAL_RANK_VARIABLES: [&str; 4] = [
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "MPI_LOCALRANKID",
    "SLURM_LOCALID",
    "SYNCBENCH_RANK",
];

/// Parses `--device` and picks this process's entry.
///
/// `rank` is this process's rank in a cluster job (`None` outside one), `local` its rank on
/// its machine, `gpus` the CUDA devices the machine has (for a bare `cuda`).
///
/// # Errors
/// An unknown device name, a list with more than one entry outside a cluster job, or a list
/// shorter than the job.
pub fn pick(
    text: &str,
    rank: Option<usize>,
    local: Option<usize>,
    gpus: usize,
) -> Result<CnnDevice> {
    let entries: Vec<&str> = text.split(',').map(str::trim).collect();
    let entry = match (entries.len(), rank) {
        (1, _) => entries[0],
        (n, Some(r)) => *entries.get(r).with_context(|| {
            format!("--device lists {n} devices, one per rank, and this is rank {r}")
        })?,
        (n, None) => bail!(
            "--device lists {n} devices, one per rank of a cluster job, and this process is not a rank (use one device, e.g. --device cuda:0)"
        ),
    };
    if entry == "cuda" && rank.is_some() {
        let local = local.or(rank).unwrap_or(0);
        if gpus == 0 {
            bail!("--device cuda: this machine has no CUDA device (rank {local} on it)");
        }
        return Ok(CnnDevice::Cuda(local % gpus));
    }
    entry.parse().with_context(|| format!("--device {text}"))
}

/// This process's rank and local rank from the launcher's environment (`--rank` wins for the
/// rank).
pub fn ranks(flag: Option<usize>) -> (Option<usize>, Option<usize>) {
    fn var<'a>(mut names: impl Iterator<Item = &'a str>) -> Option<usize> {
        names.find_map(|n| std::env::var(n).ok().and_then(|v| v.trim().parse().ok()))
    }
    let rank = flag.or_else(|| {
        var(bench_core::driver::cluster::rank::RANK_VARIABLES
            .iter()
            .map(|(r, _)| *r))
    });
    (rank, var(LOCAL_RANK_VARIABLES.iter().copied()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_device_serves_every_process() {
        assert_eq!(pick("cpu", None, None, 0).unwrap(), CnnDevice::Cpu);
        assert_eq!(
            pick("cuda:1", Some(3), Some(3), 2).unwrap(),
            CnnDevice::Cuda(1)
        );
        assert_eq!(pick("cuda", None, None, 0).unwrap(), CnnDevice::Cuda(0));
    }

    #[test]
    fn a_list_gives_each_rank_its_entry_and_ranks_may_share_a_gpu() {
        let list = "cuda:0,cuda:0,cuda:1,cpu";
        let got: Vec<_> = (0..4)
            .map(|r| pick(list, Some(r), None, 2).unwrap())
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
        let e = pick(list, Some(4), None, 2).unwrap_err().to_string();
        assert!(e.contains("4 devices") && e.contains("rank 4"), "{e}");
        let e = pick(list, None, None, 2).unwrap_err().to_string();
        assert!(e.contains("not a rank"), "{e}");
    }

    #[test]
    fn bare_cuda_follows_the_local_rank() {
        assert_eq!(
            pick("cuda", Some(5), Some(1), 2).unwrap(),
            CnnDevice::Cuda(1)
        );
        assert_eq!(
            pick("cuda", Some(5), Some(3), 2).unwrap(),
            CnnDevice::Cuda(1)
        );
        assert_eq!(pick("cuda", Some(2), None, 4).unwrap(), CnnDevice::Cuda(2));
        let e = pick("cuda", Some(0), Some(0), 0).unwrap_err().to_string();
        assert!(e.contains("no CUDA device"), "{e}");
    }

    #[test]
    fn an_unknown_device_is_named() {
        let e = format!("{:#}", pick("cpu,gpu0", Some(1), None, 0).unwrap_err());
        assert!(
            e.contains("'gpu0'") && e.contains("--device cpu,gpu0"),
            "{e}"
        );
    }
}
