//! The device's asynchronous events (`ibv_get_async_event`): which end traffic, what each
//! names, and whether one concerns a given endpoint. Pure functions of the event's code
//! (`enum ibv_event_type`, numbered as in rdma-core's verbs.h), so that they are tested
//! without a device; [`super::device::RdmaDevice::async_failures`] reads the events.

use crate::error::TransportFault;
use crate::transport::NodeId;

/// IBV_EVENT_CQ_ERR: a completion queue overran (completions were lost).
pub(super) const CQ_ERR: u32 = 0;
/// IBV_EVENT_QP_FATAL: a queue pair hit an error it cannot report in a completion.
pub(super) const QP_FATAL: u32 = 1;
/// IBV_EVENT_QP_REQ_ERR: the responder saw an invalid request on a queue pair.
pub(super) const QP_REQ_ERR: u32 = 2;
/// IBV_EVENT_QP_ACCESS_ERR: a local access violation on a queue pair (a bad key or address).
pub(super) const QP_ACCESS_ERR: u32 = 3;
/// IBV_EVENT_DEVICE_FATAL: the device stopped working.
pub(super) const DEVICE_FATAL: u32 = 8;
/// IBV_EVENT_PORT_ERR: a port left the ACTIVE state (link down).
pub(super) const PORT_ERR: u32 = 10;

/// What an event's `element` names, by its code (libibverbs fills the union accordingly).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SubjectKind {
    /// `element.qp`.
    Qp,
    /// `element.cq`.
    Cq,
    /// `element.srq` (this backend makes none).
    Srq,
    /// `element.wq` (this backend makes none).
    Wq,
    /// `element.port_num`.
    Port,
    /// The whole device (`element` means nothing).
    Device,
}

/// The element of a recorded event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Subject {
    /// A queue pair, by number.
    Qp(u32),
    /// A completion queue, by its address (as [`super::completion::CompletionQueue::raw`]).
    Cq(usize),
    /// A port, by number.
    Port(i32),
    /// The device.
    Device,
    /// An object this backend does not make (a shared receive queue, a work queue).
    Other,
}

/// A fatal asynchronous event the device reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct AsyncFailure {
    /// The event's code (`ibv_event_type`).
    pub code: u32,
    /// What it happened to.
    pub subject: Subject,
}

/// The verbs name of event `code`.
pub(super) fn async_event_name(code: u32) -> &'static str {
    match code {
        CQ_ERR => "IBV_EVENT_CQ_ERR",
        QP_FATAL => "IBV_EVENT_QP_FATAL",
        QP_REQ_ERR => "IBV_EVENT_QP_REQ_ERR",
        QP_ACCESS_ERR => "IBV_EVENT_QP_ACCESS_ERR",
        4 => "IBV_EVENT_COMM_EST",
        5 => "IBV_EVENT_SQ_DRAINED",
        6 => "IBV_EVENT_PATH_MIG",
        7 => "IBV_EVENT_PATH_MIG_ERR",
        DEVICE_FATAL => "IBV_EVENT_DEVICE_FATAL",
        9 => "IBV_EVENT_PORT_ACTIVE",
        PORT_ERR => "IBV_EVENT_PORT_ERR",
        11 => "IBV_EVENT_LID_CHANGE",
        12 => "IBV_EVENT_PKEY_CHANGE",
        13 => "IBV_EVENT_SM_CHANGE",
        14 => "IBV_EVENT_SRQ_ERR",
        15 => "IBV_EVENT_SRQ_LIMIT_REACHED",
        16 => "IBV_EVENT_QP_LAST_WQE_REACHED",
        17 => "IBV_EVENT_CLIENT_REREGISTER",
        18 => "IBV_EVENT_GID_CHANGE",
        19 => "IBV_EVENT_WQ_FATAL",
        _ => "unknown event",
    }
}

/// Whether event `code` ends traffic: a queue pair in the error state, a completion queue
/// that lost completions, a port that went down, a dead device (or a shared receive queue or
/// work queue in error). Informational events (a connection established, a port back up, a
/// LID, P_Key, SM or GID change, a drained send queue, a path migrated) are not.
pub(super) fn is_fatal(code: u32) -> bool {
    matches!(
        code,
        CQ_ERR | QP_FATAL | QP_REQ_ERR | QP_ACCESS_ERR | DEVICE_FATAL | PORT_ERR | 14 | 19
    )
}

/// Which `element` event `code` names.
pub(super) fn subject_kind(code: u32) -> SubjectKind {
    match code {
        CQ_ERR => SubjectKind::Cq,
        QP_FATAL | QP_REQ_ERR | QP_ACCESS_ERR | 4..=7 | 16 => SubjectKind::Qp,
        14 | 15 => SubjectKind::Srq,
        19 => SubjectKind::Wq,
        DEVICE_FATAL => SubjectKind::Device,
        _ => SubjectKind::Port,
    }
}

/// What this endpoint owns, to tell whether an event concerns it.
pub(super) struct Owned<'a> {
    /// The endpoint's node.
    pub node: NodeId,
    /// Its queue pairs: number -> peer.
    pub peer_of_qp: &'a dyn Fn(u32) -> Option<NodeId>,
    /// Its completion queues' addresses.
    pub cqs: &'a [usize],
    /// The port its queue pairs use.
    pub port: u8,
}

/// The failure `f` means to the endpoint `owned` describes, or None when it concerns another
/// endpoint of the device (a queue pair or completion queue of another node, another port):
/// a queue pair's event names its peer ([`TransportFault::PeerLost`]), the others are
/// [`TransportFault::Device`].
pub(super) fn describe(f: &AsyncFailure, owned: &Owned<'_>) -> Option<(TransportFault, String)> {
    let (code, name, node) = (f.code, async_event_name(f.code), owned.node);
    match f.subject {
        Subject::Qp(qpn) => (owned.peer_of_qp)(qpn).map(|peer| {
            (
                TransportFault::PeerLost,
                format!(
                    "rdma: node {node}: the queue pair to node {peer} (QP {qpn:#x}) reported {name} ({code}): the connection is in the error state"
                ),
            )
        }),
        Subject::Cq(cq) => owned.cqs.contains(&cq).then(|| {
            (
                TransportFault::Device,
                format!(
                    "rdma: node {node}: a completion queue reported {name} ({code}): completions were lost"
                ),
            )
        }),
        Subject::Port(port) => (u8::try_from(port).ok() == Some(owned.port)).then(|| {
            (
                TransportFault::Device,
                format!(
                    "rdma: node {node}: port {port} reported {name} ({code}): the link is down (`ibv_devinfo` shows its state)"
                ),
            )
        }),
        Subject::Device => Some((
            TransportFault::Device,
            format!("rdma: node {node}: the device reported {name} ({code})"),
        )),
        Subject::Other => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_have_their_verbs_names_and_the_fatal_ones_are_told_apart() {
        assert_eq!(async_event_name(QP_FATAL), "IBV_EVENT_QP_FATAL");
        assert_eq!(async_event_name(QP_REQ_ERR), "IBV_EVENT_QP_REQ_ERR");
        assert_eq!(async_event_name(QP_ACCESS_ERR), "IBV_EVENT_QP_ACCESS_ERR");
        assert_eq!(async_event_name(PORT_ERR), "IBV_EVENT_PORT_ERR");
        assert_eq!(async_event_name(DEVICE_FATAL), "IBV_EVENT_DEVICE_FATAL");
        assert_eq!(async_event_name(9), "IBV_EVENT_PORT_ACTIVE");
        assert_eq!(async_event_name(19), "IBV_EVENT_WQ_FATAL");
        assert_eq!(async_event_name(20), "unknown event");
        for code in 0..=19 {
            assert!(async_event_name(code).starts_with("IBV_EVENT_"), "{code}");
        }
        for code in [CQ_ERR, QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR] {
            assert!(is_fatal(code), "{}", async_event_name(code));
        }
        for code in [DEVICE_FATAL, PORT_ERR, 14, 19] {
            assert!(is_fatal(code), "{}", async_event_name(code));
        }
        // COMM_EST, SQ_DRAINED, PATH_MIG, PORT_ACTIVE, LID/PKEY/SM change, LAST_WQE,
        // CLIENT_REREGISTER, GID_CHANGE: informational.
        for code in [4, 5, 6, 9, 11, 12, 13, 16, 17, 18, 20] {
            assert!(!is_fatal(code), "{}", async_event_name(code));
        }
        assert_eq!(subject_kind(QP_FATAL), SubjectKind::Qp);
        assert_eq!(subject_kind(QP_ACCESS_ERR), SubjectKind::Qp);
        assert_eq!(subject_kind(CQ_ERR), SubjectKind::Cq);
        assert_eq!(subject_kind(PORT_ERR), SubjectKind::Port);
        assert_eq!(subject_kind(DEVICE_FATAL), SubjectKind::Device);
        assert_eq!(subject_kind(14), SubjectKind::Srq);
        assert_eq!(subject_kind(19), SubjectKind::Wq);
    }

    #[test]
    fn an_event_is_reported_by_the_endpoint_it_concerns_naming_the_peer() {
        let peer_of_qp = |qpn: u32| (qpn == 0x11).then_some(5usize);
        let owned = Owned {
            node: 2,
            peer_of_qp: &peer_of_qp,
            cqs: &[0x1000, 0x2000],
            port: 1,
        };
        let ours = AsyncFailure {
            code: QP_FATAL,
            subject: Subject::Qp(0x11),
        };
        let (fault, text) = describe(&ours, &owned).unwrap();
        assert_eq!(fault, TransportFault::PeerLost);
        assert!(
            text.contains("node 2: the queue pair to node 5 (QP 0x11)")
                && text.contains("IBV_EVENT_QP_FATAL (1)"),
            "{text}"
        );
        // Another node's queue pair on the same device: that endpoint reports it.
        let theirs = AsyncFailure {
            code: QP_ACCESS_ERR,
            subject: Subject::Qp(0x12),
        };
        assert!(describe(&theirs, &owned).is_none());
        let port = |p| AsyncFailure {
            code: PORT_ERR,
            subject: Subject::Port(p),
        };
        let (fault, text) = describe(&port(1), &owned).unwrap();
        assert_eq!(fault, TransportFault::Device);
        assert!(
            text.contains("port 1 reported IBV_EVENT_PORT_ERR"),
            "{text}"
        );
        assert!(describe(&port(2), &owned).is_none());
        let cq = |c| AsyncFailure {
            code: CQ_ERR,
            subject: Subject::Cq(c),
        };
        assert!(describe(&cq(0x2000), &owned).is_some());
        assert!(describe(&cq(0x3000), &owned).is_none());
        let dead = AsyncFailure {
            code: DEVICE_FATAL,
            subject: Subject::Device,
        };
        let (_, text) = describe(&dead, &owned).unwrap();
        assert!(text.contains("IBV_EVENT_DEVICE_FATAL"), "{text}");
        let srq = AsyncFailure {
            code: 14,
            subject: Subject::Other,
        };
        assert!(describe(&srq, &owned).is_none());
    }
}
