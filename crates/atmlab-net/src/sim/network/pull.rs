//! Ports that pull their arrivals: a port whose slots are not events (a
//! pipelined port, or a slotted one that runs its slots late: `atm/port.rs`)
//! on a link of [`PULL_SLOTS`] slot times or more, fed only by links whose
//! every VC goes to it, takes the cells of those links without an arrival
//! event each.
//!
//! What such a port does with an arriving cell (usage parameter control
//! where the link ends, ERICA's count, queueing or dropping, a backward RM
//! cell's ER written by a controller of the switch) is seen outside the
//! switch only through the port's slots, which reach the far end a cell
//! time and the link delay after they start, or through the controllers,
//! which are read only by a backward RM cell's ER, an interval deadline or
//! a probe. So the links' head cells wait in a merge of the port's feeders,
//! ordered as their arrival events would be (time, then the link's index),
//! and are taken in that order by whoever must see them:
//!
//! * every reader of a controller or a queue, before it reads
//!   ([`catch_up`](Simulation::catch_up), probes, a lazy port's wake-up):
//!   the arrivals before its own moment in the order of simultaneous
//!   events;
//! * one wake-up event per port ([`Event::Pull`]), just before the earliest
//!   waiting cell could leave the port and reach the far end of its link:
//!   every arrival up to then;
//! * the end of the run: the arrivals before it.
//!
//! Each cell is then handled exactly as its arrival event would have: at
//! its arrival time, in its place among the arrivals of the instant. A
//! cell waits at most a cell time and the port's delay, so whatever it
//! starts (the port's next wake-up, a new ERICA deadline) falls at or after
//! the moment it is taken. Event elision off, or with a VS/VD switch in
//! the network, no port pulls.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::atm::NextHop;
use crate::ids::{PortId, PullId};
use crate::sim::Simulation;
use crate::sim::kernel::{Event, SLOT, order_key};
use atmlab_engine::{Duration, SimTime};

/// A port that pulls its arrivals, and the head cells of its links.
#[derive(Clone, Debug)]
pub(super) struct Pull {
    port: PortId,
    /// A cell reaches the far end of the port's link this long after its
    /// slot starts.
    transit: Duration,
    /// Each feeding link's head cell: its arrival time (ps) in the high 64
    /// bits, the link's index in the low (the order of arrival events).
    heads: BinaryHeap<Reverse<u128>>,
    /// The time of the earliest pending wake-up event, if any.
    wake: Option<SimTime>,
}

/// A port pulls its arrivals only if its cells take at least this many
/// slot times to reach the far end of its link: each wake-up then takes
/// tens of arrivals or more. On a shorter link (a LAN) it would take one
/// or two, and the merge would cost more than the arrival events it saves
/// (measured: `docs/benchmark.md`).
const PULL_SLOTS: u64 = 32;

/// The merge asks for the cache line of the cell this many places behind a
/// link's new head: written a link delay before, it is read when its turn
/// comes among the port's links (`docs/benchmark.md`).
const PREFETCH_AHEAD: usize = 3;

/// No port pulls the link's cells (see [`Simulation::pulled_by`]).
pub(in crate::sim) const NOT_PULLED: u32 = u32::MAX;

impl Simulation {
    /// Chooses the ports that pull their arrivals (see the module docs).
    pub(in crate::sim) fn start_pulls(&mut self, elide: bool, vs_vd: bool) {
        if !elide || vs_vd {
            return;
        }
        let n = self.net.ports.len();
        let feeders = crate::sim::feeders(&self.net.ports);
        // A link feeds its port alone if every VC on it goes there, taken
        // by arrival events (not an eager hop).
        let dedicated: Vec<bool> = self
            .net
            .ports
            .iter()
            .map(|link| {
                let mut to = link.vcs.iter().map(|vc| match vc.next {
                    // (A link that hands its cells over has no arrivals.)
                    NextHop::Port { port, .. } if !vc.eager && !vc.hands_over => Some(port),
                    _ => None,
                });
                to.next().flatten().is_some_and(|q| to.all(|t| t == Some(q)))
            })
            .collect();
        let mut pulled_by = vec![NOT_PULLED; n];
        for (q, links) in feeders.iter().enumerate() {
            let port = &self.net.ports[q];
            let long = port.transit().as_ps() >= PULL_SLOTS * port.rate.cell_time().as_ps();
            let late = port.is_lazy() || port.mode() == crate::atm::PortMode::Pipelined;
            if !late || !long || links.is_empty() || !links.iter().all(|&u| dedicated[u]) {
                continue;
            }
            let k = self.net.pulls.len() as u32;
            for &u in links {
                pulled_by[u] = k;
            }
            self.net.pulls.push(Pull {
                port: PortId(q as u32),
                transit: self.net.ports[q].transit(),
                heads: BinaryHeap::new(),
                wake: None,
            });
        }
        if !self.net.pulls.is_empty() {
            self.net.pulled_by = pulled_by;
        }
    }

    /// Link `link`, whose cells pull `k` takes, has a new head cell
    /// arriving at `at`.
    #[inline]
    pub(in crate::sim) fn pull_head(&mut self, k: u32, link: PortId, at: SimTime) {
        let pull = &mut self.net.pulls[k as usize];
        pull.heads.push(Reverse(order_key(at.as_ps(), link.0)));
        self.arm_pull(k);
    }

    /// Sets pull `k`'s wake-up just before its earliest waiting cell could
    /// reach the far end of the port's link, unless one is pending by then.
    fn arm_pull(&mut self, k: u32) {
        let pull = &mut self.net.pulls[k as usize];
        let Some(&Reverse(head)) = pull.heads.peek() else { return };
        let first = (head >> 64) as u64;
        let lag = Duration::from_ps(pull.transit.as_ps() - 1);
        let wake = SimTime::from_ps(first).saturating_add(lag);
        if pull.wake.is_none_or(|w| wake < w) {
            pull.wake = Some(wake);
            self.k.queue.push(wake, SLOT, Event::Pull(PullId(k)));
        }
    }

    /// Pull `k`'s wake-up: every arrival up to now is taken.
    pub(in crate::sim) fn on_pull(&mut self, k: PullId) {
        let k = k.0;
        let now = self.k.now;
        if self.net.pulls[k as usize].wake == Some(now) {
            self.net.pulls[k as usize].wake = None;
        }
        self.take_pulled(k, now, None);
        self.arm_pull(k);
    }

    /// Every port that pulls takes the arrivals before a reader at `t`:
    /// one that is itself an arrival on link `tie`, or (`None`) any later
    /// class of event at that instant.
    #[inline]
    pub(in crate::sim) fn take_all_pulled(&mut self, t: SimTime, tie: Option<u32>) {
        for k in 0..self.net.pulls.len() as u32 {
            self.take_pulled(k, t, tie);
        }
    }

    /// Pull `k` takes the arrivals before a reader at `t` (as
    /// [`take_all_pulled`](Self::take_all_pulled)), in order, each as its
    /// arrival event would have.
    pub(in crate::sim) fn take_pulled(&mut self, k: u32, t: SimTime, tie: Option<u32>) {
        // Arrivals before (t, tie): those whose key is below this bound.
        let bound = match tie {
            Some(l) => order_key(t.as_ps(), l),
            None => order_key(t.as_ps(), u32::MAX).saturating_add(1),
        };
        loop {
            let mut top = match self.net.pulls[k as usize].heads.peek_mut() {
                Some(top) if top.0 < bound => top,
                _ => return,
            };
            let link = top.0 as u32;
            let port = &mut self.net.ports[link as usize];
            let (at, cell) = port.take_arrival();
            port.prefetch_arrival(PREFETCH_AHEAD);
            // The link's next head takes its place (one sift instead of a
            // pop and a push), or the link leaves the merge.
            match port.next_arrival() {
                Some(next) => {
                    top.0 = order_key(next.as_ps(), link);
                    drop(top);
                }
                None => {
                    std::collections::binary_heap::PeekMut::pop(top);
                }
            }
            self.cell_arrives(PortId(link), at, cell);
        }
    }
}

impl Simulation {
    /// The ports that pull their arrivals (`sim/network/pull.rs`).
    pub fn pulling_ports(&self) -> Vec<PortId> {
        self.net.pulls.iter().map(|pull| pull.port).collect()
    }
}
