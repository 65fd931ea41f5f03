//! Compute-time profiles: run the learning on a small proxy model on the CPU while the clock
//! advances as if a named model ran on named devices (e.g. ResNet-110 on a GTX 1080 Ti and a
//! GTX 1060). The profile fixes seconds per mini-batch per device and bytes per update; the
//! manifest and figure captions state both the profile and the proxy.

use crate::error::{CoreError, Result};

/// Seconds per mini-batch of the profiled model on one device.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceTime {
    /// Device name, e.g. `gtx1080ti`.
    pub name: String,
    /// Seconds per mini-batch.
    pub seconds_per_batch: f64,
}

/// A named model's cost on named devices.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeProfile {
    /// Model profiled, e.g. `resnet110-cifar100-batch128`.
    pub model: String,
    /// Bytes of one update (and of one model snapshot) on the wire.
    pub bytes_per_update: u64,
    /// Devices and their seconds per batch.
    pub devices: Vec<DeviceTime>,
    /// Device of each worker, by name.
    pub worker_devices: Vec<String>,
    /// Where the numbers come from.
    pub source: String,
}

impl TimeProfile {
    /// Nanoseconds per iteration of each of `workers` workers.
    ///
    /// # Errors
    /// [`CoreError::Config`] when the worker count does not match `worker_devices`, a device
    /// is unknown, or a time is not positive.
    pub fn iteration_ns(&self, workers: usize) -> Result<Vec<u64>> {
        if self.worker_devices.len() != workers {
            return Err(CoreError::Config(format!(
                "profile {} lists devices for {} workers, the run has {workers}",
                self.model,
                self.worker_devices.len()
            )));
        }
        self.worker_devices
            .iter()
            .map(|d| {
                let dev = self.devices.iter().find(|x| &x.name == d).ok_or_else(|| {
                    CoreError::Config(format!("profile {}: unknown device '{d}'", self.model))
                })?;
                if !(dev.seconds_per_batch > 0.0 && dev.seconds_per_batch.is_finite()) {
                    return Err(CoreError::Config(format!(
                        "profile {}: seconds_per_batch of {} must be > 0",
                        self.model, dev.name
                    )));
                }
                Ok((dev.seconds_per_batch * 1e9).round() as u64)
            })
            .collect()
    }

    /// One line for manifests and captions.
    pub fn describe(&self) -> String {
        let devs: Vec<String> = self
            .devices
            .iter()
            .map(|d| format!("{} {:.3} s/batch", d.name, d.seconds_per_batch))
            .collect();
        format!(
            "time profile {}: {}; {} bytes per update; workers on [{}]; source: {}",
            self.model,
            devs.join(", "),
            self.bytes_per_update,
            self.worker_devices.join(", "),
            self.source
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_worker_times_and_errors() {
        let p = TimeProfile {
            model: "m".into(),
            bytes_per_update: 10,
            devices: vec![
                DeviceTime {
                    name: "fast".into(),
                    seconds_per_batch: 0.05,
                },
                DeviceTime {
                    name: "slow".into(),
                    seconds_per_batch: 0.1,
                },
            ],
            worker_devices: vec!["fast".into(), "slow".into()],
            source: "test".into(),
        };
        assert_eq!(p.iteration_ns(2).unwrap(), vec![50_000_000, 100_000_000]);
        assert!(p.iteration_ns(3).is_err());
        let mut q = p.clone();
        q.worker_devices[1] = "tpu".into();
        assert!(q.iteration_ns(2).unwrap_err().to_string().contains("tpu"));
        assert!(p.describe().contains("slow 0.100 s/batch"));
    }
}
