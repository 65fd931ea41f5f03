//! The addressing decisions of a connection, as pure functions of what the device reports, so
//! that they are tested without a device: which port (and whether it can carry traffic), which
//! GID, whether packets carry a global route header and with which traffic class and hop
//! limit, which path MTU both ends can use, and the initial packet sequence numbers.

use super::err;
use crate::error::Result;

/// `link_layer` of an Ethernet (RoCE) port (IBV_LINK_LAYER_ETHERNET).
pub(super) const LINK_ETHERNET: u8 = 2;
/// `state` of a port that carries traffic (IBV_PORT_ACTIVE).
pub(super) const PORT_ACTIVE: u32 = 4;
/// The largest path MTU verbs name (IBV_MTU_4096; 1 is IBV_MTU_256).
pub(super) const MTU_4096: u32 = 5;

/// A one-byte setting from the environment variable `name` (its value `var`): `default` when
/// unset, else a number from `min` to 255; an error names the variable, the value and `hint`.
fn byte_setting(name: &str, var: Option<&str>, default: u8, min: u8, hint: &str) -> Result<u8> {
    match var {
        None => Ok(default),
        Some(v) => match v.trim().parse::<u8>() {
            Ok(b) if b >= min => Ok(b),
            _ => Err(err(format!("{name}={v:?} is not {hint}"))),
        },
    }
}

/// The port to use: `$SYNCBENCH_RDMA_PORT` (`var`), else 1.
///
/// # Errors
/// A value that is not a port number (1-255).
pub(super) fn port_number(var: Option<&str>) -> Result<u8> {
    byte_setting(
        "SYNCBENCH_RDMA_PORT",
        var,
        1,
        1,
        "a port number (1-255; `ibv_devinfo` lists them)",
    )
}

/// The traffic class of the global route header: `$SYNCBENCH_RDMA_TCLASS` (`var`), else 0.
/// On RoCE v2 its upper six bits are the packets' DSCP and its lower two their ECN bits.
///
/// # Errors
/// A value that is not a traffic class (0-255).
pub(super) fn traffic_class(var: Option<&str>) -> Result<u8> {
    byte_setting(
        "SYNCBENCH_RDMA_TCLASS",
        var,
        0,
        0,
        "a traffic class (0-255: DSCP x 4 + ECN bits, e.g. 106 for DSCP 26; ask the fabric's admin which class is lossless)",
    )
}

/// The hop limit of the global route header: `$SYNCBENCH_RDMA_HOP_LIMIT` (`var`), else 64.
///
/// # Errors
/// A value that is not a hop limit (1-255).
pub(super) fn hop_limit(var: Option<&str>) -> Result<u8> {
    byte_setting(
        "SYNCBENCH_RDMA_HOP_LIMIT",
        var,
        64,
        1,
        "a hop limit (1-255; default 64)",
    )
}

/// Whether a connection's packets carry a global route header (`is_global`), decided by the
/// local port's link layer: always on Ethernet (RoCE is routed by GID), never on InfiniBand
/// (one subnet, routed by LID).
pub(super) fn is_global(link_layer: u8) -> bool {
    link_layer == LINK_ETHERNET
}

/// A port state's verbs name.
pub(super) fn state_name(state: u32) -> &'static str {
    match state {
        0 => "NOP",
        1 => "DOWN",
        2 => "INIT",
        3 => "ARMED",
        4 => "ACTIVE",
        5 => "ACTIVE_DEFER",
        _ => "unknown",
    }
}

/// Checks that port `port` of `device` can carry traffic: ACTIVE, and on InfiniBand with a
/// LID (a subnet manager assigned one).
///
/// # Errors
/// The state or missing LID, with what to check.
pub(super) fn check_port(
    device: &str,
    port: u8,
    state: u32,
    link_layer: u8,
    lid: u16,
) -> Result<()> {
    if state != PORT_ACTIVE {
        return Err(err(format!(
            "port {port} of {device} is {} (not ACTIVE): check the link with `ibv_devinfo -d {device}` (state, phys_state), or choose another port with SYNCBENCH_RDMA_PORT",
            state_name(state)
        )));
    }
    if link_layer != LINK_ETHERNET && lid == 0 {
        return Err(err(format!(
            "port {port} of {device} is InfiniBand but has no LID: is a subnet manager (opensm) running on the fabric?"
        )));
    }
    Ok(())
}

/// One entry of a port's GID table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct GidEntry {
    /// Index in the table.
    pub index: u8,
    /// The GID.
    pub gid: [u8; 16],
    /// Whether the entry is RoCE v2 (routable over UDP/IP); false for RoCE v1 and InfiniBand.
    pub roce_v2: bool,
}

impl GidEntry {
    /// An IPv4-mapped address (::ffff:a.b.c.d), what RoCE v2 over IPv4 uses.
    fn ipv4_mapped(&self) -> bool {
        self.gid[..10].iter().all(|&b| b == 0) && self.gid[10] == 0xff && self.gid[11] == 0xff
    }

    fn unused(&self) -> bool {
        self.gid.iter().all(|&b| b == 0)
    }
}

/// The GID index to use: `explicit` (`$SYNCBENCH_RDMA_GID`) when given; on InfiniBand 0 (the
/// port GID); on Ethernet the first RoCE v2 entry with an IPv4-mapped address, else the first
/// RoCE v2 entry (IPv6), else the first entry in use (RoCE v1, link-local only).
///
/// # Errors
/// An Ethernet port whose table has no entry in use.
pub(super) fn choose_gid(explicit: Option<u8>, link_layer: u8, table: &[GidEntry]) -> Result<u8> {
    if let Some(i) = explicit {
        return Ok(i);
    }
    if link_layer != LINK_ETHERNET {
        return Ok(0);
    }
    let used: Vec<&GidEntry> = table.iter().filter(|e| !e.unused()).collect();
    used.iter()
        .find(|e| e.roce_v2 && e.ipv4_mapped())
        .or_else(|| used.iter().find(|e| e.roce_v2))
        .or_else(|| used.first())
        .map(|e| e.index)
        .ok_or_else(|| {
            err("the Ethernet port's GID table has no address: give the interface an IP address (RoCE v2 GIDs follow it), or set SYNCBENCH_RDMA_GID")
        })
}

/// The path MTU of a connection: the smaller of both ends' active MTUs (verbs enum values,
/// 1 = 256 bytes to 5 = 4096), at most 4096.
pub(super) fn path_mtu(local: u32, remote: u32) -> u32 {
    local.min(remote).clamp(1, MTU_4096)
}

/// An initial packet sequence number from random bits: PSNs are 24 bits. Random and exchanged
/// with the address, so that a queue pair number the device reuses from an earlier run does
/// not accept that run's stray packets.
pub(super) fn initial_psn(bits: u32) -> u32 {
    bits & 0x00ff_ffff
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `link_layer` of an InfiniBand port (IBV_LINK_LAYER_INFINIBAND; 0, unspecified, is
    /// treated alike).
    const LINK_INFINIBAND: u8 = 1;

    fn entry(index: u8, gid: [u8; 16], roce_v2: bool) -> GidEntry {
        GidEntry {
            index,
            gid,
            roce_v2,
        }
    }

    const LINK_LOCAL: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8];
    const V4: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 7];
    const V6: [u8; 16] = [0x20, 0x01, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9];

    #[test]
    fn roce_prefers_the_ipv4_mapped_v2_gid_then_any_v2_then_v1() {
        // mlx5's usual table: 0 v1 link-local, 1 v2 link-local, 2 v1 IPv4, 3 v2 IPv4.
        let table = [
            entry(0, LINK_LOCAL, false),
            entry(1, LINK_LOCAL, true),
            entry(2, V4, false),
            entry(3, V4, true),
        ];
        assert_eq!(choose_gid(None, LINK_ETHERNET, &table).unwrap(), 3);
        let no_v4 = [entry(0, LINK_LOCAL, false), entry(1, V6, true)];
        assert_eq!(choose_gid(None, LINK_ETHERNET, &no_v4).unwrap(), 1);
        let v1_only = [entry(0, [0; 16], false), entry(1, LINK_LOCAL, false)];
        assert_eq!(choose_gid(None, LINK_ETHERNET, &v1_only).unwrap(), 1);
        assert!(choose_gid(None, LINK_ETHERNET, &[entry(0, [0; 16], true)]).is_err());
        // InfiniBand: the port GID; an explicit index always wins.
        assert_eq!(choose_gid(None, LINK_INFINIBAND, &table).unwrap(), 0);
        assert_eq!(choose_gid(Some(2), LINK_ETHERNET, &table).unwrap(), 2);
    }

    #[test]
    fn ports_must_be_active_and_infiniband_ports_need_a_lid() {
        assert!(check_port("mlx5_0", 1, PORT_ACTIVE, LINK_INFINIBAND, 7).is_ok());
        assert!(check_port("mlx5_0", 1, PORT_ACTIVE, LINK_ETHERNET, 0).is_ok());
        let down = check_port("mlx5_0", 2, 1, LINK_ETHERNET, 0)
            .unwrap_err()
            .to_string();
        assert!(down.contains("port 2 of mlx5_0 is DOWN"), "{down}");
        let no_sm = check_port("mlx5_0", 1, PORT_ACTIVE, LINK_INFINIBAND, 0)
            .unwrap_err()
            .to_string();
        assert!(no_sm.contains("subnet manager"), "{no_sm}");
        assert_eq!(port_number(None).unwrap(), 1);
        assert_eq!(port_number(Some(" 2 ")).unwrap(), 2);
        for bad in ["0", "x", "256", ""] {
            assert!(port_number(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn traffic_class_and_hop_limit_come_from_the_environment_with_clear_errors() {
        assert_eq!(traffic_class(None).unwrap(), 0);
        assert_eq!(traffic_class(Some(" 106 ")).unwrap(), 106);
        assert_eq!(traffic_class(Some("0")).unwrap(), 0);
        assert_eq!(traffic_class(Some("255")).unwrap(), 255);
        for bad in ["256", "-1", "x", ""] {
            let e = traffic_class(Some(bad)).unwrap_err().to_string();
            assert!(
                e.contains(&format!("SYNCBENCH_RDMA_TCLASS={bad:?}")) && e.contains("0-255"),
                "{e}"
            );
        }
        assert_eq!(hop_limit(None).unwrap(), 64);
        assert_eq!(hop_limit(Some("1")).unwrap(), 1);
        assert_eq!(hop_limit(Some(" 255")).unwrap(), 255);
        for bad in ["0", "256", "x", ""] {
            let e = hop_limit(Some(bad)).unwrap_err().to_string();
            assert!(
                e.contains(&format!("SYNCBENCH_RDMA_HOP_LIMIT={bad:?}")) && e.contains("1-255"),
                "{e}"
            );
        }
    }

    #[test]
    fn the_global_route_header_is_decided_by_the_local_link_layer() {
        assert!(is_global(LINK_ETHERNET));
        assert!(!is_global(LINK_INFINIBAND));
        // 0 (IBV_LINK_LAYER_UNSPECIFIED) is how old drivers report InfiniBand.
        assert!(!is_global(0));
    }

    #[test]
    fn the_path_mtu_is_the_smaller_end_and_psns_are_24_bits() {
        assert_eq!(path_mtu(5, 3), 3);
        assert_eq!(path_mtu(3, 5), 3);
        assert_eq!(path_mtu(7, 6), MTU_4096);
        assert_eq!(path_mtu(0, 5), 1);
        assert_eq!(initial_psn(u32::MAX), 0x00ff_ffff);
        assert_eq!(initial_psn(0x1234_5678), 0x0034_5678);
    }
}
