//! Network time model of the simulator: per-message latency, NIC serialization on send and
//! receive, FIFO delivery per link.
//!
//! Without [`HostPlacement`] every node is its own host with its own NICs. With it, nodes sit on
//! hosts (machines): messages between two nodes of one host take the fast intra-host path (its
//! own latency and bandwidth, serialised per node), and messages between hosts share the hosts'
//! NICs: a two-level network, as in Hop's heterogeneous placement of 8 workers on 3 machines.

use crate::error::{CoreError, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

/// Latency and bandwidth of one directed link, overriding the defaults (e.g. fast links inside a
/// machine, slow ones between machines).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkOverride {
    /// Sending node.
    pub src: usize,
    /// Receiving node.
    pub dst: usize,
    /// One-way latency in nanoseconds.
    pub latency_ns: u64,
    /// Bandwidth in gigabits per second.
    pub bandwidth_gbps: f64,
}

/// Link parameters.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkModel {
    /// One-way latency in nanoseconds.
    pub latency_ns: u64,
    /// NIC bandwidth in gigabits per second (each host has one NIC for sending and one for
    /// receiving, both serialise messages).
    pub bandwidth_gbps: f64,
    /// Extra latency drawn uniformly from `0..=latency_jitter_ns` per message (seeded; FIFO per
    /// link is kept).
    #[serde(default)]
    pub latency_jitter_ns: u64,
    /// Per-link overrides of latency and bandwidth.
    #[serde(default)]
    pub links: Vec<LinkOverride>,
    /// Nodes placed on shared hosts (two-level network); `None`: one host per node.
    #[serde(default)]
    pub hosts: Option<HostPlacement>,
    /// Software cost of sending one message, in nanoseconds, paid by the sender before its NIC
    /// takes the bytes and serialised with its other sends (0: none). Models a framework's
    /// per-message work, e.g. Spark's serialisation and launch of each task that ASYNC's
    /// coordinator dispatches (the waits of ASYNC §6.3, Fig 4 run from a result's submission
    /// to the next task's arrival: two such sends). ASAP's control queue (ACKs) does not pay
    /// it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub send_overhead_ns: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

/// Which host (machine) every node runs on, and the intra-host path. The top-level latency and
/// bandwidth of [`NetworkModel`] then describe the links and NICs between hosts.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostPlacement {
    /// Host index of each node (`placement[node]`), hosts numbered from 0.
    pub placement: Vec<usize>,
    /// One-way latency between two nodes of one host, ns.
    pub intra_latency_ns: u64,
    /// Bandwidth between two nodes of one host, Gbit/s (serialised per node).
    pub intra_bandwidth_gbps: f64,
}

impl NetworkModel {
    /// Checks every value is usable for `nodes` nodes.
    ///
    /// # Errors
    /// [`CoreError::Config`] naming the bad value or link.
    pub fn validate(&self, nodes: usize) -> Result<()> {
        if !(self.bandwidth_gbps.is_finite() && self.bandwidth_gbps > 0.0) {
            return Err(CoreError::out_of_range(
                "network.bandwidth_gbps",
                "> 0",
                self.bandwidth_gbps,
            ));
        }
        if let Some(h) = &self.hosts {
            if h.placement.len() != nodes {
                return Err(CoreError::Config(format!(
                    "network.hosts.placement lists {} nodes but the run has {nodes}",
                    h.placement.len()
                )));
            }
            if !(h.intra_bandwidth_gbps.is_finite() && h.intra_bandwidth_gbps > 0.0) {
                return Err(CoreError::out_of_range(
                    "network.hosts.intra_bandwidth_gbps",
                    "> 0",
                    h.intra_bandwidth_gbps,
                ));
            }
        }
        for l in &self.links {
            if l.src >= nodes || l.dst >= nodes {
                return Err(CoreError::Config(format!(
                    "network link {} -> {} names a node outside 0..{nodes}",
                    l.src, l.dst
                )));
            }
            if !(l.bandwidth_gbps.is_finite() && l.bandwidth_gbps > 0.0) {
                return Err(CoreError::Config(format!(
                    "network link {} -> {}: bandwidth_gbps must be > 0, got {}",
                    l.src, l.dst, l.bandwidth_gbps
                )));
            }
        }
        Ok(())
    }
}

impl Default for NetworkModel {
    fn default() -> Self {
        NetworkModel {
            latency_ns: 5_000,
            bandwidth_gbps: 10.0,
            latency_jitter_ns: 0,
            links: Vec::new(),
            hosts: None,
            send_overhead_ns: 0,
        }
    }
}

/// Hosts under `model`'s placement (0 without one).
fn hosts_of(model: &NetworkModel) -> usize {
    model
        .hosts
        .as_ref()
        .and_then(|h| h.placement.iter().max())
        .map_or(0, |m| m + 1)
}

/// NIC and link occupancy during a simulation.
#[derive(Debug, Clone)]
pub(crate) struct NetworkState {
    model: NetworkModel,
    tx_free: Vec<u64>,
    rx_free: Vec<u64>,
    last_delivery: HashMap<(usize, usize), u64>,
    links: HashMap<(usize, usize), (u64, f64)>,
    /// Host NICs (two-level network): free times of each host's send and receive NIC.
    host_tx_free: Vec<u64>,
    host_rx_free: Vec<u64>,
    rng: ChaCha8Rng,
}

impl NetworkState {
    pub(crate) fn new(model: NetworkModel, nodes: usize, seed: u64) -> Self {
        NetworkState {
            links: model
                .links
                .iter()
                .map(|l| ((l.src, l.dst), (l.latency_ns, l.bandwidth_gbps)))
                .collect(),
            host_tx_free: vec![0; hosts_of(&model)],
            host_rx_free: vec![0; hosts_of(&model)],
            model,
            tx_free: vec![0; nodes],
            rx_free: vec![0; nodes],
            last_delivery: HashMap::new(),
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x0005_EED0_F4E7),
        }
    }

    /// The hosts of `src` and `dst` when they differ under a host placement.
    fn across_hosts(&self, src: usize, dst: usize) -> Option<(usize, usize)> {
        let h = self.model.hosts.as_ref()?;
        let (a, b) = (h.placement[src], h.placement[dst]);
        (a != b).then_some((a, b))
    }

    fn link(&self, src: usize, dst: usize) -> (u64, f64) {
        if let Some(h) = &self.model.hosts {
            if h.placement[src] == h.placement[dst] {
                return (h.intra_latency_ns, h.intra_bandwidth_gbps);
            }
        }
        let default = (self.model.latency_ns, self.model.bandwidth_gbps);
        if self.links.is_empty() {
            default
        } else {
            self.links.get(&(src, dst)).copied().unwrap_or(default)
        }
    }

    /// Delivery time of a small control message from `src` to `dst` sent on its own queue (not
    /// behind data on the NICs): the link latency.
    pub(crate) fn control_latency(&self, src: usize, dst: usize) -> u64 {
        self.link(src, dst).0
    }

    /// Delivery time of a message of `bytes` sent by `src` to `dst` at `now`.
    pub(crate) fn send(&mut self, now: u64, src: usize, dst: usize, bytes: u64) -> u64 {
        self.send_span(now, src, dst, bytes).1
    }

    /// When the bytes of a message of `bytes` sent by `src` to `dst` at `now` start and finish
    /// landing in the receiver's memory (the second is its delivery time).
    pub(crate) fn send_span(&mut self, now: u64, src: usize, dst: usize, bytes: u64) -> (u64, u64) {
        let (latency, gbps) = self.link(src, dst);
        // bits / (Gbit/s) = ns
        let ser = ((bytes as f64 * 8.0) / gbps).ceil() as u64;
        let hosts = self.across_hosts(src, dst);
        let (tx, rx) = match hosts {
            Some((a, b)) => (&mut self.host_tx_free[a], self.host_rx_free[b]),
            None => (&mut self.tx_free[src], self.rx_free[dst]),
        };
        // The sender's software work, then the NIC's serialisation, one message after another.
        let depart = now.max(*tx) + self.model.send_overhead_ns;
        *tx = depart + ser;
        let jitter = if self.model.latency_jitter_ns > 0 {
            self.rng.gen_range(0..=self.model.latency_jitter_ns)
        } else {
            0
        };
        let first_bit = depart + latency + jitter;
        let arrive = (first_bit + ser).max(rx + ser);
        match hosts {
            Some((_, b)) => self.host_rx_free[b] = arrive,
            None => self.rx_free[dst] = arrive,
        }
        let last = self.last_delivery.entry((src, dst)).or_insert(0);
        let deliver = arrive.max(*last);
        *last = deliver;
        (deliver - ser, deliver)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_on_both_nics() {
        let m = NetworkModel {
            latency_ns: 100,
            bandwidth_gbps: 8.0,
            latency_jitter_ns: 0,
            links: vec![LinkOverride {
                src: 1,
                dst: 2,
                latency_ns: 10,
                bandwidth_gbps: 80.0,
            }],
            hosts: None,
            send_overhead_ns: 0,
        };
        assert!(m.validate(3).is_ok());
        assert!(m.validate(2).is_err());
        let mut fresh = NetworkState::new(m.clone(), 3, 0);
        let mut n = NetworkState::new(m, 3, 0);
        // 1000 bytes at 8 Gbit/s = 1000 ns.
        assert_eq!(n.send(0, 0, 1, 1000), 1100);
        // second message from the same host waits for the first on the sender NIC.
        assert_eq!(n.send(0, 0, 2, 1000), 2100);
        // a message from host 2 into host 1 waits for host 1's receive NIC.
        assert_eq!(n.send(0, 2, 1, 1000), 2100);
        // the fast 1 -> 2 link: 100 ns on the wire, 10 ns latency...
        assert_eq!(fresh.send(0, 1, 2, 1000), 110);
        // ...but still queued behind host 2's busy receive NIC.
        assert_eq!(n.send(0, 1, 2, 1000), 2200);
    }

    #[test]
    fn hosts_share_nics_between_machines_and_not_inside() {
        let m = NetworkModel {
            latency_ns: 1000,
            bandwidth_gbps: 8.0,
            latency_jitter_ns: 0,
            links: vec![],
            hosts: Some(HostPlacement {
                placement: vec![0, 0, 1, 1],
                intra_latency_ns: 10,
                intra_bandwidth_gbps: 80.0,
            }),
            send_overhead_ns: 0,
        };
        assert!(m.validate(4).is_ok());
        assert!(m.validate(5).unwrap_err().to_string().contains("placement"));
        let mut n = NetworkState::new(m, 4, 0);
        // Inside host 0: 10 ns latency + 100 ns on the fast path.
        assert_eq!(n.send(0, 0, 1, 1000), 110);
        // Host 0 -> host 1: 1000 ns on host 0's NIC, 1000 ns latency.
        assert_eq!(n.send(0, 0, 2, 1000), 2000);
        // Node 1 shares host 0's NIC, so it departs after node 0's message.
        assert_eq!(n.send(0, 1, 3, 1000), 3000);
        // Inside host 1, unaffected by the busy NIC.
        assert_eq!(n.send(0, 2, 3, 1000), 110);
        assert_eq!(n.control_latency(0, 3), 1000);
        assert_eq!(n.control_latency(2, 3), 10);
    }

    #[test]
    fn a_send_overhead_is_paid_per_message_before_the_nic_one_after_another() {
        let m = NetworkModel {
            latency_ns: 100,
            bandwidth_gbps: 8.0,
            send_overhead_ns: 500,
            ..NetworkModel::default()
        };
        let mut n = NetworkState::new(m, 3, 0);
        // 500 ns of software, 100 ns latency, 1000 ns on the wire.
        assert_eq!(n.send(0, 0, 1, 1000), 1600);
        // The second send starts its software work once the first left the NIC (1500), so a
        // burst of k sends pays k overheads: what a coordinator dispatching tasks pays.
        assert_eq!(n.send(0, 0, 2, 1000), 3100);
        // Another sender, to an idle receiver, is not held up: 500 + 100 + 10.
        assert_eq!(n.send(0, 2, 0, 10), 610);
        // A zero overhead is omitted from the configuration as written.
        let plain = toml::to_string(&NetworkModel::default()).unwrap();
        assert!(!plain.contains("send_overhead_ns"), "{plain}");
    }
}
