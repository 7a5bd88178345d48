//! An output port: queues, buffer pools, acceptance, scheduler, and the link
//! it transmits on.
//!
//! ```text
//!            offer()                                   transmit() (one call per slot)
//!  cell ──> [per-VC frame state] ─> policy ─> pool ─> queue[q] ──┐
//!                                                                 scheduler ─> channel (FIFO of
//!                                                     queue[q'] ──┘            cells in flight) ─> peer
//! ```
//!
//! * **Queues.** One FIFO for everything (a host adapter), or one per service
//!   category (a switch port), served by the [`Scheduler`].
//! * **Pools.** Buffer space is counted in pools: one shared pool (`buffer`,
//!   possibly unlimited) and optional dedicated pools per category
//!   (`class_buffers`), as in the 97-0424 switch where VBR and UBR have
//!   separate buffers. A cell is queued only if its pool has room.
//! * **Acceptance.** Each category has a [`BufferAcceptance`] policy; the port
//!   keeps the per-VC frame state the policies need (see `accept.rs`).
//! * **Slots.** The port is slotted: it starts a cell only at a slot boundary
//!   of its [`SlotClock`] (epoch `t = 0`), as a SONET/SDH transmitter fills
//!   empty slots with idle cells. A busy port has exactly one pending
//!   slot event; an idle port has none.
//! * **Channel.** The link is a fixed-delay FIFO: a cell sent in slot `k`
//!   arrives at the far end at `b_k + cell_time + delay`. Only the head of the
//!   channel has an event in the queue.

use super::accept::{AcceptancePolicy, AdmitContext, BufferAcceptance, OverflowAction, Verdict};
use super::category::ServiceCategory;
use super::cell::{CELL_SIZE, Cell, VcLabel};
use super::sched::{Scheduler, SchedulerKind};
use crate::ids::{HostId, PortId};
use atmlab_engine::{BitRate, CELL_BITS, Duration, SimTime, SlotClock, TimeAverage};
use serde::Serialize;
use std::collections::VecDeque;

/// Where a cell goes after crossing a port's link, per VC: the forwarding
/// entry compiled from the far switch's VC table (or the far host's VC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextHop {
    /// Relabel and offer to output port `port` of the far switch, where the
    /// VC has index `slot`.
    Port {
        /// The far switch's output port.
        port: PortId,
        /// The label on that port's link.
        label: VcLabel,
        /// The VC's index at that port.
        slot: u16,
    },
    /// Deliver to VC `vc` of host `host`.
    Host {
        /// The receiving host.
        host: HostId,
        /// The VC's index at that host.
        vc: u32,
    },
}

/// How a port arranges its queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Queueing {
    /// One FIFO for all cells (a host adapter).
    Fifo,
    /// One FIFO per service category, in priority order CBR, VBR, ABR, UBR.
    #[default]
    PerCategory,
}

/// Configuration of one output port.
#[derive(Clone, Debug, PartialEq)]
pub struct PortConfig {
    /// Queue arrangement.
    pub queueing: Queueing,
    /// Capacity of the shared pool in cells (`None`: unlimited).
    pub buffer: Option<u32>,
    /// Dedicated pools per category (`None`: the category uses the shared pool).
    pub class_buffers: [Option<u32>; 4],
    /// Acceptance policy per category.
    pub policies: [AcceptancePolicy; 4],
    /// The scheduler between queues.
    pub scheduler: SchedulerKind,
}

impl PortConfig {
    /// A host adapter: one unlimited FIFO.
    pub fn host_adapter() -> PortConfig {
        PortConfig {
            queueing: Queueing::Fifo,
            buffer: None,
            class_buffers: [None; 4],
            policies: [AcceptancePolicy::default(); 4],
            scheduler: SchedulerKind::default(),
        }
    }
}

/// Why a cell was not queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// Its pool was full.
    Overflow,
    /// It belonged to a frame the policy discards (EPD refusal or the rest of
    /// a frame cut by PPD).
    FrameDiscard,
}

/// Result of offering a cell to a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Queued. `wake` is the start of the slot the now-busy port sends in, if
    /// the port was idle (the caller schedules that slot event).
    Queued {
        /// First slot of a new busy period, if one starts.
        wake: Option<SimTime>,
    },
    /// Not queued.
    Dropped(DropReason),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Discard {
    No,
    /// Drop through the end-of-frame cell included.
    Whole,
    /// Drop through the end of frame; keep the last cell if the policy says so.
    Partial,
}

/// State of one VC at one port.
#[derive(Clone, Debug)]
pub struct PortVc {
    /// The VC's service category.
    pub category: ServiceCategory,
    /// Where its cells go after the link.
    pub next: NextHop,
    occupancy: u32,
    frame_start: bool,
    discard: Discard,
    /// Cells of this VC dropped at this port.
    pub dropped: u64,
}

impl PortVc {
    /// A VC of `category` whose cells go to `next`.
    pub fn new(category: ServiceCategory, next: NextHop) -> PortVc {
        PortVc {
            category,
            next,
            occupancy: 0,
            frame_start: true,
            discard: Discard::No,
            dropped: 0,
        }
    }
    /// Cells of this VC queued at the port.
    pub fn occupancy(&self) -> u32 {
        self.occupancy
    }
}

/// Cell counters of one category at one port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CategoryCounts {
    /// Cells offered.
    pub cells_in: u64,
    /// Cells sent.
    pub cells_out: u64,
    /// Cells dropped.
    pub dropped: u64,
}

/// Counters of one port.
#[derive(Clone, Debug, Default)]
pub struct PortStats {
    /// Cells offered to the port.
    pub cells_in: u64,
    /// Cells sent on the link.
    pub cells_out: u64,
    /// Cells dropped because their pool was full.
    pub dropped_overflow: u64,
    /// Cells dropped by frame discard (EPD refusals, PPD tails).
    pub dropped_frame: u64,
    /// Counters per category.
    pub per_category: [CategoryCounts; 4],
    /// Cells queued over time (all queues).
    pub occupancy: TimeAverage,
}

/// An output port and the simplex link it drives.
pub struct Port {
    /// `owner->peer`.
    pub name: String,
    /// Link rate.
    pub rate: BitRate,
    /// Propagation delay.
    pub delay: Duration,
    clock: SlotClock,
    cell_time: Duration,
    busy: bool,
    queues: Vec<VecDeque<Cell>>,
    queue_of: [u8; 4],
    pool_of: [u8; 4],
    pool_limit: [u32; 5],
    pool_occ: [u32; 5],
    policies: [AcceptancePolicy; 4],
    scheduler: SchedulerKind,
    config: PortConfig,
    /// Per-VC state, indexed by [`Cell::slot`].
    pub vcs: Vec<PortVc>,
    active_vcs: u32,
    queued: u32,
    channel: VecDeque<(SimTime, Cell)>,
    /// Counters.
    pub stats: PortStats,
}

impl Port {
    /// A port named `name` on a link of `rate` and `delay`.
    pub fn new(name: String, rate: BitRate, delay: Duration, config: PortConfig) -> Port {
        let queue_of = match config.queueing {
            Queueing::Fifo => [0; 4],
            Queueing::PerCategory => [0, 1, 2, 3],
        };
        let nqueues = 1 + *queue_of.iter().max().expect("four categories") as usize;
        let mut pool_of = [0u8; 4];
        let mut pool_limit = [u32::MAX; 5];
        pool_limit[0] = config.buffer.unwrap_or(u32::MAX);
        for (c, own) in config.class_buffers.iter().enumerate() {
            if let Some(limit) = own {
                pool_of[c] = 1 + c as u8;
                pool_limit[1 + c] = *limit;
            }
        }
        let prealloc = config.buffer.map_or(1024, |b| b.min(1 << 16) as usize);
        Port {
            name,
            rate,
            delay,
            clock: SlotClock::new(rate, CELL_BITS),
            cell_time: rate.cell_time(),
            busy: false,
            queues: (0..nqueues)
                .map(|_| VecDeque::with_capacity(prealloc))
                .collect(),
            queue_of,
            pool_of,
            pool_limit,
            pool_occ: [0; 5],
            policies: config.policies,
            scheduler: config.scheduler,
            config,
            vcs: Vec::new(),
            active_vcs: 0,
            queued: 0,
            channel: VecDeque::with_capacity(64),
            stats: PortStats::default(),
        }
    }

    /// Adds a VC and returns its slot index at this port.
    pub fn add_vc(&mut self, vc: PortVc) -> u16 {
        let slot = u16::try_from(self.vcs.len()).expect("more than 65536 VCs on one port");
        self.vcs.push(vc);
        slot
    }

    /// The configuration the port was built with.
    pub fn config(&self) -> &PortConfig {
        &self.config
    }

    /// Cells queued (all queues).
    pub fn queued(&self) -> u32 {
        self.queued
    }

    /// Cells on the link.
    pub fn in_flight(&self) -> usize {
        self.channel.len()
    }

    /// Offers a cell (its `slot` set to its VC's index here) arriving at `now`.
    #[inline]
    pub fn offer(&mut self, now: SimTime, cell: Cell) -> Offer {
        let eof = cell.is_end_of_frame();
        let vc = &mut self.vcs[cell.slot as usize];
        let c = vc.category.index();
        let pool = self.pool_of[c] as usize;
        self.stats.cells_in += 1;
        self.stats.per_category[c].cells_in += 1;
        let room = self.pool_occ[pool] < self.pool_limit[pool];

        let accept = match vc.discard {
            Discard::No => {
                let ctx = AdmitContext {
                    first_cell_of_frame: vc.frame_start,
                    end_of_frame: eof,
                    clp: cell.clp,
                    pool_occupancy: self.pool_occ[pool],
                    pool_limit: self.pool_limit[pool],
                    vc_occupancy: vc.occupancy,
                    active_vcs: self.active_vcs,
                };
                let policy = &mut self.policies[c];
                match policy.admit(&ctx) {
                    Verdict::DiscardFrame => {
                        vc.discard = Discard::Whole;
                        Err(DropReason::FrameDiscard)
                    }
                    Verdict::Admit if room => Ok(()),
                    Verdict::Admit => {
                        if policy.on_overflow() == OverflowAction::DiscardRestOfFrame {
                            vc.discard = Discard::Partial;
                        }
                        Err(DropReason::Overflow)
                    }
                }
            }
            Discard::Partial if eof && room && self.policies[c].keeps_end_of_frame() => Ok(()),
            Discard::Partial | Discard::Whole => Err(DropReason::FrameDiscard),
        };
        vc.frame_start = eof;
        if eof {
            vc.discard = Discard::No;
        }
        match accept {
            Err(reason) => {
                vc.dropped += 1;
                self.stats.per_category[c].dropped += 1;
                match reason {
                    DropReason::Overflow => self.stats.dropped_overflow += 1,
                    DropReason::FrameDiscard => self.stats.dropped_frame += 1,
                }
                Offer::Dropped(reason)
            }
            Ok(()) => {
                if vc.occupancy == 0 {
                    self.active_vcs += 1;
                }
                vc.occupancy += 1;
                self.pool_occ[pool] += 1;
                self.queued += 1;
                self.stats.occupancy.set(now, u64::from(self.queued));
                self.queues[self.queue_of[c] as usize].push_back(cell);
                if self.busy {
                    Offer::Queued { wake: None }
                } else {
                    self.busy = true;
                    self.clock.seek(now);
                    Offer::Queued {
                        wake: Some(self.clock.boundary()),
                    }
                }
            }
        }
    }

    /// Sends one cell in the slot that starts `now` (the port's pending slot
    /// event). Returns the cell's arrival time at the far end, the cell,
    /// whether the channel was empty before (then the caller schedules the
    /// arrival event), and the next slot if the port stays busy.
    #[inline]
    pub fn transmit(&mut self, now: SimTime) -> Transmission {
        debug_assert!(self.busy && self.clock.boundary() == now);
        let q = self
            .scheduler
            .select(&self.queues)
            .expect("a busy port has a queued cell");
        let cell = self.queues[q]
            .pop_front()
            .expect("the scheduler picks a non-empty queue");
        let vc = &mut self.vcs[cell.slot as usize];
        let c = vc.category.index();
        vc.occupancy -= 1;
        if vc.occupancy == 0 {
            self.active_vcs -= 1;
        }
        self.pool_occ[self.pool_of[c] as usize] -= 1;
        self.queued -= 1;
        self.stats.occupancy.set(now, u64::from(self.queued));
        self.stats.cells_out += 1;
        self.stats.per_category[c].cells_out += 1;

        let arrival = now + self.cell_time + self.delay;
        let channel_was_empty = self.channel.is_empty();
        self.channel.push_back((arrival, cell));
        self.clock.advance();
        let next_slot = if self.queued > 0 {
            Some(self.clock.boundary())
        } else {
            self.busy = false;
            None
        };
        Transmission {
            arrival,
            cell,
            channel_was_empty,
            next_slot,
        }
    }

    /// Takes the head cell off the link (its arrival event is due) and returns
    /// it with the arrival time of the new head, if any.
    #[inline]
    pub fn deliver_head(&mut self) -> (Cell, Option<SimTime>) {
        let (_, cell) = self
            .channel
            .pop_front()
            .expect("an arrival event has a cell on the link");
        (cell, self.channel.front().map(|(t, _)| *t))
    }

    /// Bytes per second the link carries at full load, for reports.
    pub fn cell_bytes_per_s(&self) -> f64 {
        self.rate.cells_per_s() * f64::from(CELL_SIZE)
    }
}

/// One cell put on the link by [`Port::transmit`].
#[derive(Clone, Copy, Debug)]
pub struct Transmission {
    /// When the cell arrives at the far end.
    pub arrival: SimTime,
    /// The cell.
    pub cell: Cell,
    /// The link was empty before: schedule the arrival event.
    pub channel_was_empty: bool,
    /// The next slot, if the port stays busy.
    pub next_slot: Option<SimTime>,
}

#[cfg(test)]
#[path = "port_tests.rs"]
mod tests;
