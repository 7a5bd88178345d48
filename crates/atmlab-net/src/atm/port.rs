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
//! * **Acceptance.** Each category has a [`AdmissionRule`] policy; the port
//!   keeps the per-VC frame state the policies need (see `drop_policy.rs`).
//! * **Slots.** The port is slotted: it starts a cell only at a slot boundary
//!   of its [`SlotClock`] (epoch `t = 0`), as a SONET/SDH transmitter fills
//!   empty slots with idle cells. A busy port has exactly one pending
//!   slot event; an idle port has none. (A port that runs its slots late
//!   has at most one pending wake-up instead: below.)
//! * **Channel.** The link is a fixed-delay FIFO: a cell sent in slot `k`
//!   arrives at the far end at `b_k + cell_time + delay`. Only the head of the
//!   channel has an event in the queue.
//!
//! ## Two modes, one behaviour
//!
//! A port whose cells all share one queue (a host adapter, or a switch port
//! whose VCs are all of one category), whose policies look only at the pool
//! occupancy and whose scheduler then serves that queue in every slot is a
//! FIFO: the slot a cell departs in is known the moment it is accepted. Such a
//! port runs **pipelined**: it assigns the slot on acceptance and puts the
//! cell on the link at once with its future departure, so it needs no slot
//! events at all. Every other port runs **slotted**: one event per slot while
//! it is busy, and the scheduler chooses at the start of each slot. Both modes
//! give the same departures, drops and statistics (`sim/tests.rs` checks that
//! whole runs are identical); pipelined is just cheaper. The mode is chosen
//! by [`Port::finalize`] once all VCs are known.
//!
//! ## Slots run late
//!
//! A slotted port's slot event does nothing the rest of the network can
//! see before the cell it sends reaches the far end of the link, a cell
//! time and the propagation delay later. So with event elision on
//! ([`set_lazy`](Port::set_lazy)) a slotted port has no event per slot: its
//! slots run when the port is next touched (a cell offered, a controller or
//! probe reading its queue, the end of the run), each with the time it
//! starts, in order, and one wake-up event per busy stretch runs those due
//! just before the first unrun slot's cell would arrive. Whoever touches the
//! port at `t` first runs the slots that start before `t` (at `t` too if it
//! comes after slots in the order of simultaneous events, as a probe does),
//! so the port is seen, and decides, exactly as with an event per slot: on a
//! long link that is hundreds of slots per event instead of one.
//!
//! Where the cells a port sends are seen only at a frame's end (every VC
//! goes on by an eager hop into a port that leads into hosts, whose links
//! give an event only to frame ends and RM cells), the wake-up waits for
//! the soonest such cell instead of the next slot's
//! ([`Port::set_frame_reach`]): on a short link too.
//!
//! ## The top category passed through
//!
//! A lazy slotted port whose first category by priority has one VC, a
//! queue of its own that the scheduler serves whenever it holds a cell
//! (strict priority, or GR 0: [`SchedulerKind::serves_first`]) and a
//! lossless link sends that category's cells as a FIFO of their own would,
//! whatever the other categories hold: each in the first slot at or after
//! its arrival that the one before it left free. So the port takes such a
//! cell as a pipelined port would: it goes on the link at once, holding
//! ("reserving") its slot, which the other categories skip; it counts as
//! queued, in every count and time average, until that slot runs
//! ([`Port::send_slot`]). In the 97-0177 satellite runs, where VBR video
//! shares the bottleneck with ABR by strict priority, a VBR cell costs no
//! queue entry and no scheduler choice, its slot only brings the counts up,
//! and a port that sends only such cells needs no wake-up
//! ([`Port::pass_top_through`], set by `Simulation::plan` with elision on
//! and no capture).

use super::category::ServiceCategory;
use super::cell::{CELL_SIZE, Carries, Cell, VcLabel};
use super::drop_policy::{AdmissionRule, AdmitContext, DropPolicy, OverflowAction, Verdict};
use super::sched::{RoundRobin, Scheduler, SchedulerKind};
use crate::ids::{HostId, PortId};
use atmlab_engine::{BitRate, CELL_BITS, Duration, Follow, SimTime, SlotGrid, SlotPos, TimeAverage};
use serde::Serialize;
use std::collections::VecDeque;

/// Where a cell goes after crossing a port's link, per VC: the forwarding
/// entry compiled from the far switch's VC table (or the far host's VC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextHop {
    /// Relabel and offer to output port `port` of the far switch, where the
    /// VC has index `vc`.
    Port {
        /// The far switch's output port.
        port: PortId,
        /// The label on that port's link.
        label: VcLabel,
        /// The VC's index at that port.
        vc: u16,
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
    /// One FIFO per VC: categories in priority order, the VCs of a category
    /// served round robin, a cell each (the FORE ASX-200's UBR, 002 s5.2).
    PerVc,
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
    pub policies: [DropPolicy; 4],
    /// The scheduler between queues.
    pub scheduler: SchedulerKind,
    /// CLP-selective discard: a tagged cell (CLP = 1) is dropped when its
    /// pool holds this many cells or more (`None`: only when full).
    pub clp_threshold: Option<u32>,
}

impl PortConfig {
    /// A host adapter: one unlimited FIFO.
    pub fn host_adapter() -> PortConfig {
        PortConfig {
            queueing: Queueing::Fifo,
            buffer: None,
            class_buffers: [None; 4],
            policies: [DropPolicy::default(); 4],
            scheduler: SchedulerKind::default(),
            clp_threshold: None,
        }
    }
}

/// Cells lost on a link on purpose: the police function board of the KPN
/// pilot, or random loss for tests and studies of TCP under loss.
#[derive(Clone, Debug)]
pub enum LinkLoss {
    /// No loss.
    None,
    /// Every cell is lost with probability `p`, independently, drawn from
    /// the link's own stream.
    Bernoulli {
        /// Loss probability.
        p: f64,
        /// The link's random stream.
        rng: Box<atmlab_engine::SimRng>,
    },
    /// Cells `n`, `2n`, `3n`, ... are lost ("499 cells pass and the next is
    /// discarded", 004 s7.5.6).
    Periodic {
        /// One cell in `n` is lost.
        one_in: u64,
        /// Cells seen so far.
        seen: u64,
    },
    /// Chosen AAL5 frames are lost, every cell of each (see `FrameLoss`).
    Frames(Box<FrameLoss>),
}

impl LinkLoss {
    /// Loses the AAL5 frames numbered `frames` (from 1) on the link
    /// direction (see `FrameLoss`).
    pub fn frames(frames: Vec<u64>) -> LinkLoss {
        LinkLoss::Frames(Box::new(FrameLoss::new(frames)))
    }
}

/// Deterministic loss of chosen frames (`loss = { kind = "frames" }`): the
/// link direction numbers the AAL5 frames that start on it 1, 2, 3, ... in
/// the order their first cells are sent (retransmissions are new frames, the
/// frames of all VCs share one count) and loses every cell of the frames
/// listed. RM cells and cells of cell sources (which carry no PDU) are
/// neither counted nor lost. A frame counts where its first cell crosses
/// the link: a frame cut short upstream still counts. This is ns-3's
/// `ReceiveListErrorModel` for a link that carries one packet per frame.
#[derive(Clone, Debug)]
pub struct FrameLoss {
    /// The frame numbers to lose, ascending.
    frames: Vec<u64>,
    /// Index in `frames` of the next one to lose.
    next: usize,
    /// Frames started so far.
    started: u64,
    /// Per VC slot at the port: `None` between frames, else whether the
    /// frame being sent is lost.
    in_frame: Vec<Option<bool>>,
}

impl FrameLoss {
    /// Loses the frames numbered `frames` (from 1; sorted and deduplicated
    /// here).
    pub fn new(mut frames: Vec<u64>) -> FrameLoss {
        frames.sort_unstable();
        frames.dedup();
        FrameLoss { frames, next: 0, started: 0, in_frame: Vec::new() }
    }

    /// Frames started on the link so far.
    pub fn frames_started(&self) -> u64 {
        self.started
    }

    /// Whether the link loses `cell`, the next cell put on it.
    pub fn loses(&mut self, cell: &Cell) -> bool {
        if !matches!(cell.carries(), Carries::Frame(_)) {
            return false;
        }
        let vc = cell.vc() as usize;
        if vc >= self.in_frame.len() {
            self.in_frame.resize(vc + 1, None);
        }
        let lose = match self.in_frame[vc] {
            Some(lose) => lose,
            None => {
                self.started += 1;
                let lose = self.frames.get(self.next) == Some(&self.started);
                if lose {
                    self.next += 1;
                }
                lose
            }
        };
        self.in_frame[vc] = (!cell.is_end_of_frame()).then_some(lose);
        lose
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
    /// It was tagged (CLP = 1) and its pool was at the CLP threshold.
    Clp,
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
    /// Accepted by a pipelined port, which has assigned its departure slot:
    /// the caller puts `cell` on the link, arriving at the far end at
    /// `arrival`.
    Departs {
        /// When the cell reaches the far end.
        arrival: SimTime,
        /// The cell.
        cell: Cell,
    },
    /// Not queued.
    Dropped(DropReason),
}

/// A slotted port runs its slots late only if its cells take at least this
/// many slot times to reach the far end of its link (see
/// [`Port::set_lazy`]).
pub const LAZY_SLOTS: u64 = 2;

/// How a port computes departures (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PortMode {
    /// One event per slot; the scheduler chooses at each slot.
    Slotted,
    /// The departure slot is assigned when a cell is accepted.
    Pipelined,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Discard {
    No,
    /// Drop through the end-of-frame cell included.
    Whole,
    /// Drop through the end of frame; keep the last cell if the policy says so.
    Partial,
}

/// [`Port::top`] of a port that passes no category through.
const NO_TOP: u8 = u8::MAX;

/// [`PortVc::upc`] of a VC that is not policed.
pub const NO_UPC: u32 = u32::MAX;

/// State of one VC at one port.
#[derive(Clone, Debug)]
pub struct PortVc {
    /// The VC's service category.
    pub category: ServiceCategory,
    /// Where its cells go after the link.
    pub next: NextHop,
    /// The next hop is a pipelined port fed by this link alone, which may
    /// accept the cell the moment it is put on the link (set by the
    /// simulation; see `sim/mod.rs`).
    pub eager: bool,
    /// The eager hop leads into a pipelined tail-drop port whose lossless
    /// link ends at a host, and nothing where this link ends (a policer,
    /// ABR switching, a capture) acts on the cell: it passes through that
    /// port in one step (set by the simulation; `Simulation::pass_into_host`).
    pub into_host: bool,
    /// Where this link ends, nothing acts on the VC's cells before the next
    /// port (no policer, no ABR switching, VS/VD or capture), and that port
    /// offers a frame's later cells the short way ([`Port::offer_later`]):
    /// the link's alike cells are taken that way (set by the simulation;
    /// `Simulation::on_link_arrival`).
    pub later_short: bool,
    /// Where this link ends, the VC's cells go on to a port that holds
    /// runs (`atm/port_runs.rs`) with nothing acting on them before it, and
    /// every VC of the link does so: each cell, or a frame's cells at once,
    /// goes to that port as a run when it is put on the link, and stays
    /// on the link, without an arrival event, only to be counted there
    /// until that port takes it off (set by the simulation;
    /// `Simulation::hand_over`).
    pub hands_over: bool,
    /// The usage parameter control that polices this VC where the link
    /// ends (an index into the simulation's policers), or [`NO_UPC`].
    pub upc: u32,
    /// At a switch: the same switch's output port of the VC's opposite
    /// direction, and the VC's index there. A backward RM cell leaving by
    /// this port belongs to the control loop of that port's direction, whose
    /// ABR controller writes its ER (TM 4.0 s5.10.6; docs/models/abr.md, "ERICA and ERICA+").
    pub feedback: Option<(PortId, u16)>,
    /// At a VS/VD switch, the ABR end whose virtual source sends this VC's
    /// cells into this port: cells for it go there, not into the queue.
    pub vs: Option<u32>,
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
            eager: false,
            into_host: false,
            later_short: false,
            hands_over: false,
            upc: NO_UPC,
            feedback: None,
            vs: None,
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CategoryCounts {
    /// Cells offered.
    pub cells_in: u64,
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
    /// Tagged cells dropped at the CLP threshold.
    pub dropped_clp: u64,
    /// Cells sent but lost on the link (see [`LinkLoss`]).
    pub lost_on_link: u64,
    /// Counters per category.
    pub per_category: [CategoryCounts; 4],
    /// Cells queued over time (all queues; slotted mode only, and not kept
    /// with per-category counts: `Port::mean_queue` sums theirs).
    pub occupancy: TimeAverage,
    /// Cells queued per category over time (kept only by a slotted port with
    /// VCs of more than one category; with one, the port's `occupancy` is
    /// that category's).
    pub category_occupancy: [TimeAverage; 4],
}

/// An output port and the simplex link it drives.
///
/// The fields are laid out in declaration order (`repr(C)`), those every
/// cell reads or writes first: a run touches many ports between two visits
/// to the same one, so each cache line a cell needs is a miss, and with the
/// compiler's order the fields of one offer were spread over 14 of the
/// struct's 20 lines (the 97-0177 WAN: 5 first-level misses per event in
/// `offer` alone).
#[repr(C)]
pub struct Port {
    // --- read or written for every cell ---
    mode: PortMode,
    busy: bool,
    /// More than one category: per-category queues are counted apart (with
    /// one, the port's own counters are the category's).
    per_category: bool,
    to_host: bool,
    /// Some VC's later cells are taken the short way where the link ends
    /// ([`PortVc::later_short`]; [`note_later_short`](Port::note_later_short)).
    later_short: bool,
    /// The categories of the port's VCs (bit `c` for category index `c`).
    categories: u8,
    /// One queue per VC (`config.queueing` is `PerVc`).
    per_vc_queues: bool,
    /// Slotted, its slots run when the port is next touched (see the
    /// module docs, "Slots run late").
    lazy: bool,
    /// Lazy, and what its slots send is seen only where a frame ends
    /// (see [`set_frame_reach`](Port::set_frame_reach)): the wake-up waits
    /// for the first cell that could be seen.
    frame_wake: bool,
    /// With a frame wake, it holds its cells as runs (`runs`,
    /// [`hold_runs`](Port::hold_runs)): its queues, slots and counts are
    /// the model's.
    holds_runs: bool,
    /// Every category present drops by [`TailDrop`](super::drop_policy::TailDrop),
    /// with no CLP threshold: a cell is accepted if its pool has room, and
    /// `offer` skips the policies (set by `finalize`).
    tail_drop: bool,
    /// Every category present has a policy that judges frames at their
    /// first cells alone (`judges_first_cells_only`): `offer` skips the
    /// policy for a frame's later cells (set by `finalize`).
    judged_at_first: bool,
    queue_of: [u8; 4],
    pool_of: [u8; 4],
    max_queued: u32,
    queued: u32,
    /// `config.clp_threshold`.
    clp_threshold: Option<u32>,
    pool_limit: [u32; 5],
    pool_occ: [u32; 5],
    active_vcs: [u32; 5],
    /// Slotted, with more than one category: cells queued per category.
    category_queued: [u32; 4],
    cell_time: Duration,
    /// Propagation delay.
    pub delay: Duration,
    accepted: u64,
    wait_area: u128,
    /// The slots of the port's rate.
    grid: SlotGrid,
    /// Slotted: the slot the port sends in next (or starts from when idle).
    /// Pipelined: the first slot not yet assigned to a cell.
    tail: SlotPos,
    /// Pipelined: the first assigned slot that has not started yet.
    head: SlotPos,
    /// Pipelined: the start of the last assigned slot (before it, none):
    /// once it has passed the port is idle, without walking `head` there.
    last_start: Option<SimTime>,
    /// Per-VC state, indexed by [`Cell::vc`].
    pub vcs: Vec<PortVc>,
    channel: VecDeque<(SimTime, Cell)>,
    /// Into a host: when the cells that need an event there arrive (frame
    /// ends, which AAL5 acts on, and RM cells, which the ABR end system
    /// acts on at once).
    due: VecDeque<SimTime>,
    /// Into a host: when the RM cells among them arrive (what an ABR end
    /// that sends ahead must not pass: `sim/abr.rs`).
    rm_due: VecDeque<SimTime>,
    loss: LinkLoss,
    queues: Vec<VecDeque<Cell>>,
    policies: [DropPolicy; 4],
    /// Counters.
    pub stats: PortStats,
    scheduler: SchedulerKind,
    /// Slotted: when the last cell was sent.
    last_tx: SimTime,
    /// Lazy: when the pending wake-up is ([`SimTime::MAX`]: none). An
    /// event at another time is one an earlier wake-up replaced.
    wake_at: SimTime,
    /// Frame wake: per queue, the cells ahead of its first cell that the
    /// far end can see ([`u32::MAX`]: none queued).
    before_mark: Vec<u32>,
    /// Frame wake: how long after it reaches the far end of this port's
    /// link a cell can at the soonest be seen (the next hop's transit).
    beyond: Duration,
    /// The category whose cells pass through at their arrival
    /// ([`pass_top_through`](Port::pass_top_through)), [`NO_TOP`] if none.
    top: u8,
    /// The top category's one VC.
    top_vc: u16,
    /// The cells of the top category on the link whose slots have not run
    /// yet hold the slots from `res_head` to `res_tail` (excluded), one
    /// after the other ([`reserved`](Port::reserved) counts them).
    res_head: SlotPos,
    res_tail: SlotPos,
    // --- the rest ---
    /// `owner->peer`.
    pub name: String,
    /// The rate the port sends cells at: the link's rate, or less when the
    /// port shapes its output (a host adapter's peak cell rate, a shaped
    /// VP). Slots are spaced by this rate.
    pub rate: BitRate,
    /// The link's rate: a cell takes `424 / line` on the wire.
    pub line: BitRate,
    /// Where slot 0 starts.
    phase: SimTime,
    /// How cells are queued (one FIFO, per category, per VC).
    queueing: Queueing,
    /// The round robin run in horizons, when the port holds runs.
    runs: Option<Box<super::runs::RoundRobinRuns>>,
    /// Its link hands its cells over to a port holding runs
    /// ([`PortVc::hands_over`]): they are kept here as runs, not on the
    /// link's FIFO, until that port takes them off.
    hands_over: bool,
    handed: VecDeque<super::runs::ArrivalRun>,
    /// Cells in `handed` not yet taken off, and of its first run, those
    /// taken.
    handed_cells: u64,
    handed_taken: u64,
}

impl Port {
    /// A port named `name` on a link of `rate` and `delay`.
    pub fn new(name: String, rate: BitRate, delay: Duration, config: PortConfig) -> Port {
        let queue_of = match config.queueing {
            Queueing::Fifo => [0; 4],
            // Per VC: the queues are made when the VCs are known (finalize).
            Queueing::PerCategory | Queueing::PerVc => [0, 1, 2, 3],
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
        // Queues grow as they fill (amortised doubling, once per run); a
        // large preallocation per queue would cost megabytes per port in a
        // scenario of thousands of ports, most of which never queue much.
        let prealloc = config.buffer.map_or(64, |b| b.min(64) as usize);
        Port {
            name,
            rate,
            line: rate,
            delay,
            mode: PortMode::Slotted,
            phase: SimTime::ZERO,
            grid: SlotGrid::new(rate, CELL_BITS, SimTime::ZERO),
            tail: SlotPos::default(),
            head: SlotPos::default(),
            cell_time: rate.cell_time(),
            busy: false,
            lazy: false,
            frame_wake: false,
            holds_runs: false,
            runs: None,
            hands_over: false,
            handed: VecDeque::new(),
            handed_cells: 0,
            handed_taken: 0,
            wake_at: SimTime::MAX,
            before_mark: Vec::new(),
            beyond: Duration::ZERO,
            top: NO_TOP,
            top_vc: 0,
            res_head: SlotPos::default(),
            res_tail: SlotPos::default(),
            tail_drop: false,
            judged_at_first: false,
            last_tx: SimTime::MAX,
            accepted: 0,
            wait_area: 0,
            last_start: None,
            max_queued: 0,
            queues: (0..nqueues).map(|_| VecDeque::with_capacity(prealloc)).collect(),
            queue_of,
            pool_of,
            pool_limit,
            pool_occ: [0; 5],
            policies: config.policies,
            per_vc_queues: config.queueing == Queueing::PerVc,
            clp_threshold: config.clp_threshold,
            scheduler: config.scheduler,
            queueing: config.queueing,
            vcs: Vec::new(),
            active_vcs: [0; 5],
            queued: 0,
            category_queued: [0; 4],
            categories: 0,
            per_category: false,
            channel: VecDeque::with_capacity(64),
            to_host: false,
            later_short: false,
            due: VecDeque::new(),
            rm_due: VecDeque::new(),
            loss: LinkLoss::None,
            stats: PortStats::default(),
        }
    }

    /// Shifts the port's slot grid: slot `k` starts at `phase + ceil(k * 424e12
    /// / rate)`. Call before the port carries traffic.
    pub fn set_slot_phase(&mut self, phase: SimTime) {
        self.set_clock(self.rate, self.line, phase);
    }

    /// Sends at most at `rate` (at most the line rate): cells leave in slots
    /// spaced `424 / rate` apart and take `424 / line` on the wire.
    pub fn set_service_rate(&mut self, rate: BitRate) {
        assert!(rate <= self.line, "a port cannot send faster than its link");
        self.set_clock(rate, self.line, SimTime::ZERO);
    }

    /// Runs the port at `rate` on a link of `line` (clocks a little fast or
    /// slow) with slot 0 at `phase`. Call before the port carries traffic.
    pub fn set_clock(&mut self, rate: BitRate, line: BitRate, phase: SimTime) {
        debug_assert!(self.accepted == 0, "the clock is set before any traffic");
        self.rate = rate;
        self.line = line;
        self.cell_time = line.cell_time();
        self.phase = phase;
        self.grid = SlotGrid::new(rate, CELL_BITS, phase);
        self.tail = SlotPos::default();
        self.head = SlotPos::default();
    }

    /// Sets the drop policy of `category` (before the port carries traffic).
    pub fn set_drop_policy(&mut self, category: ServiceCategory, policy: DropPolicy) {
        debug_assert!(self.accepted == 0, "policies are set before any traffic");
        self.policies[category.index()] = policy;
        self.tail_drop = false; // until `finalize` looks again
        self.judged_at_first = false;
    }

    /// The drop policy of `category`.
    pub fn drop_policy(&self, category: ServiceCategory) -> &DropPolicy {
        &self.policies[category.index()]
    }

    /// Adds a VC and returns its index at this port (what its cells carry: [`Cell::vc`]).
    pub fn add_vc(&mut self, vc: PortVc) -> u16 {
        let index = u16::try_from(self.vcs.len()).expect("more than 65536 VCs on one port");
        self.vcs.push(vc);
        index
    }

    /// How the port computes departures.
    pub fn mode(&self) -> PortMode {
        self.mode
    }

    /// Chooses the mode once all VCs are added: pipelined when the port is a
    /// FIFO in effect (see the module docs) and `allow_pipelining`.
    pub fn finalize(&mut self, allow_pipelining: bool) {
        let present: Vec<usize> = {
            let mut c: Vec<usize> = self.vcs.iter().map(|v| v.category.index()).collect();
            c.sort_unstable();
            c.dedup();
            c
        };
        self.categories = present.iter().fold(0, |m, &c| m | 1 << c);
        self.per_category = present.len() > 1;
        if self.queueing == Queueing::PerVc {
            self.queues = (0..self.vcs.len()).map(|_| VecDeque::new()).collect();
            let categories = self.vcs.iter().map(|v| v.category.index() as u8).collect();
            self.scheduler = SchedulerKind::RoundRobin(Box::new(RoundRobin::new(categories)));
        }
        let one_queue = match self.queueing {
            Queueing::PerVc => self.vcs.len() <= 1,
            _ => present.iter().map(|&c| self.queue_of[c]).collect::<std::collections::BTreeSet<_>>().len() <= 1,
        };
        let one_pool = present.iter().map(|&c| self.pool_of[c]).collect::<std::collections::BTreeSet<_>>().len() <= 1;
        // A policy that reads the VC's own queue and the active VCs still
        // sees a FIFO at a port with one VC: its queue is the port's, and
        // it is active while the port holds a cell (what `offer` gives it
        // in pipelined mode). So a switch port into a host, with Selective
        // Drop or FBA, is pipelined too.
        let policies = self.vcs.len() == 1 || present.iter().all(|&c| !self.policies[c].uses_per_vc_occupancy());
        self.tail_drop = self.clp_threshold.is_none()
            && present.iter().all(|&c| matches!(self.policies[c], DropPolicy::TailDrop(_)));
        self.judged_at_first = present.iter().all(|&c| self.policies[c].judges_first_cells_only());
        let fifo = self.scheduler.is_fifo_for_one_queue();
        self.mode = if allow_pipelining && one_queue && one_pool && policies && fifo {
            PortMode::Pipelined
        } else {
            PortMode::Slotted
        };
    }

    /// Brings a pipelined port's counters up to `now` (the end of a run):
    /// cells whose slot starts at or after `now` count as queued.
    pub fn settle(&mut self, now: SimTime) {
        if self.mode == PortMode::Pipelined {
            self.queued = self.pipeline_queued(now);
            self.stats.cells_out = self.accepted - u64::from(self.queued);
        }
    }

    /// Cells queued (for a pipelined port: as of the last [`settle`](Self::settle)).
    pub fn queued(&self) -> u32 {
        self.queued
    }

    /// Cells on the link (sent, not yet arrived).
    pub fn in_flight(&self) -> usize {
        let on_link = self.channel.len() + self.handed_cells as usize;
        match self.mode {
            // Passed-through cells whose slots have not run are queued.
            PortMode::Slotted => on_link - self.reserved() as usize,
            PortMode::Pipelined => on_link - self.queued as usize,
        }
    }

    /// The largest number of cells queued at once.
    pub fn max_queue(&self) -> u64 {
        u64::from(self.max_queued)
    }

    /// The time-averaged queue over `[0, end]` (call after
    /// [`settle`](Self::settle) at `end`).
    pub fn mean_queue(&self, end: SimTime) -> f64 {
        match self.mode {
            // With one queue count per category, the whole queue's is
            // not kept: its area is the sum of theirs, exactly.
            PortMode::Slotted if self.per_category => {
                let area: u128 = self.stats.category_occupancy.iter().map(|o| o.area_until(end)).sum();
                if end.as_ps() == 0 { 0.0 } else { area as f64 / end.as_ps() as f64 }
            }
            PortMode::Slotted => match &self.runs {
                Some(runs) if end.as_ps() > 0 => runs.area_at(end) as f64 / end.as_ps() as f64,
                _ => self.stats.occupancy.mean(end),
            },
            PortMode::Pipelined => {
                // Each accepted cell waited from arrival to its slot; the ones
                // still waiting at `end` only count up to `end`.
                let mut area = self.wait_area;
                let mut slot = self.head;
                while slot.slot() < self.tail.slot() {
                    area -= u128::from(self.grid.boundary(&slot).saturating_since(end).as_ps());
                    self.grid.advance(&mut slot);
                }
                if end.as_ps() == 0 { 0.0 } else { area as f64 / end.as_ps() as f64 }
            }
        }
    }

    /// Offers a cell (carrying its VC's index here, [`Cell::vc`]) arriving at `now`.
    ///
    /// Always inlined: the simulation's one hot call site keeps the cell in
    /// registers (called out of line, as LLVM chooses once a second caller
    /// exists, it costs instructions per cell: `docs/benchmark.md`).
    #[inline(always)]
    pub fn offer(&mut self, now: SimTime, cell: Cell) -> Offer {
        self.offer_as::<false>(now, cell)
    }

    /// A frame's later cell (not its first, not its end) arriving at `now`:
    /// what [`offer`](Self::offer) gives, without asking the policy where it
    /// would only admit the cell. That is the case at a port that offers
    /// later cells the short way ([`offers_later_cells`](Self::offers_later_cells)),
    /// for a VC in the middle of an admitted frame (no discard under way),
    /// with room in the cell's pool and no CLP threshold the cell could
    /// cross; anything else, `offer` itself (out of line: it drops, or the
    /// port is of another kind). The link's alike cells come this way
    /// (`Simulation::on_link_arrival`): most cells into a bottleneck that
    /// judges frames, where a source sends a frame at a time.
    #[inline(always)]
    pub fn offer_later(&mut self, now: SimTime, cell: Cell) -> Offer {
        self.offer_as::<true>(now, cell)
    }

    /// Whether [`offer_later`](Self::offer_later) takes a frame's later
    /// cells the short way here (when it has room): a slotted port whose
    /// every policy judges frames at their first cells.
    #[inline]
    pub fn offers_later_cells(&self) -> bool {
        self.mode == PortMode::Slotted && !self.holds_runs && (self.judged_at_first || self.tail_drop)
    }

    /// [`offer`](Self::offer), out of line: for a later cell that
    /// [`offer_later`](Self::offer_later) does not take the short way.
    #[inline(never)]
    fn offer_out_of_line(&mut self, now: SimTime, cell: Cell) -> Offer {
        self.offer(now, cell)
    }

    /// [`offer`](Self::offer) (`LATER` false) or
    /// [`offer_later`](Self::offer_later) (true): one body, so that the
    /// short way queues a cell exactly as the long one does.
    #[inline(always)]
    fn offer_as<const LATER: bool>(&mut self, now: SimTime, cell: Cell) -> Offer {
        debug_assert!(!self.holds_runs, "a port holding runs takes them by `offer_run`");
        // A later cell is never a frame's end (its caller's word).
        let eof = !LATER && cell.is_end_of_frame();
        let c = self.vcs[cell.vc() as usize].category.index();
        let pool = self.pool_of[c] as usize;
        if LATER {
            debug_assert!(!cell.is_end_of_frame(), "a frame's later cell is not its end");
            let vc = &self.vcs[cell.vc() as usize];
            let short = self.offers_later_cells()
                && !vc.frame_start
                && vc.discard == Discard::No
                && self.pool_occ[pool] < self.pool_limit[pool]
                && !(cell.clp() && self.clp_threshold.is_some_and(|t| self.pool_occ[pool] >= t));
            if !short {
                return self.offer_out_of_line(now, cell);
            }
        }
        // A pipelined port's cells all share one pool, whose occupancy is the
        // number of cells not yet started.
        let occupancy = match self.mode {
            _ if LATER => self.pool_occ[pool],
            PortMode::Pipelined => self.pipeline_queued(now),
            PortMode::Slotted => self.pool_occ[pool],
        };
        let vc = &mut self.vcs[cell.vc() as usize];
        self.stats.cells_in += 1;
        self.stats.per_category[c].cells_in += 1;
        let room = occupancy < self.pool_limit[pool];

        let accept = match vc.discard {
            // The short way: the policy would admit the cell, it has room
            // and crosses no CLP threshold (checked above).
            _ if LATER => Ok(()),
            // Tail drop never discards a frame (`vc.discard` stays `No`).
            _ if self.tail_drop => {
                if room {
                    Ok(())
                } else {
                    Err(DropReason::Overflow)
                }
            }
            Discard::No => {
                // A frame's later cells need no rule where every policy
                // judges frames at their first cells (`finalize`): most
                // cells, at a port with frame-based discard.
                let verdict = if vc.frame_start || !self.judged_at_first {
                    // A pipelined port keeps no per-VC counts: its policies
                    // read none, or it has one VC, whose queue is the port's
                    // (`finalize`).
                    let (vc_occupancy, active_vcs) = match self.mode {
                        PortMode::Pipelined => (occupancy, u32::from(occupancy > 0)),
                        PortMode::Slotted => (vc.occupancy, self.active_vcs[pool]),
                    };
                    let ctx = AdmitContext {
                        first_cell_of_frame: vc.frame_start,
                        end_of_frame: eof,
                        clp: cell.clp(),
                        pool_occupancy: occupancy,
                        pool_limit: self.pool_limit[pool],
                        vc_occupancy,
                        active_vcs,
                    };
                    self.policies[c].admit(&ctx)
                } else {
                    Verdict::Admit
                };
                let policy = &self.policies[c];
                let clp_full = cell.clp() && self.clp_threshold.is_some_and(|t| occupancy >= t);
                match verdict {
                    Verdict::Admit if clp_full => {
                        if policy.on_overflow() == OverflowAction::DiscardRestOfFrame {
                            vc.discard = Discard::Partial;
                        }
                        Err(DropReason::Clp)
                    }
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
            Discard::Whole if eof && room && self.policies[c].keeps_end_of_refused_frame() => Ok(()),
            Discard::Partial | Discard::Whole => Err(DropReason::FrameDiscard),
        };
        // (A later cell leaves both as they are: in the middle of a frame.)
        if !LATER {
            vc.frame_start = eof;
            if eof {
                vc.discard = Discard::No;
            }
        }
        match accept {
            Err(reason) => {
                vc.dropped += 1;
                self.stats.per_category[c].dropped += 1;
                match reason {
                    DropReason::Overflow => self.stats.dropped_overflow += 1,
                    DropReason::FrameDiscard => self.stats.dropped_frame += 1,
                    DropReason::Clp => self.stats.dropped_clp += 1,
                }
                Offer::Dropped(reason)
            }
            Ok(()) => {
                self.accepted += 1;
                let cell_queue = if self.per_vc_queues { cell.vc() as usize } else { self.queue_of[c] as usize };
                match self.mode {
                    PortMode::Pipelined => self.pipeline(now, cell),
                    PortMode::Slotted => {
                        self.pool_occ[pool] += 1;
                        if vc.occupancy == 0 {
                            self.active_vcs[pool] += 1;
                        }
                        vc.occupancy += 1;
                        self.queued += 1;
                        self.max_queued = self.max_queued.max(self.queued);
                        if self.per_category {
                            self.category_queued[c] += 1;
                            self.stats.category_occupancy[c].set(now, u64::from(self.category_queued[c]));
                        } else {
                            self.stats.occupancy.set(now, u64::from(self.queued));
                        }
                        if c == usize::from(self.top) {
                            // Counted as queued until its slot runs
                            // (`pass_reserved`), it goes on the link now.
                            return self.reserve(now, cell);
                        }
                        if self.per_vc_queues && vc.occupancy == 1 {
                            // A VC's queue is its cells here: it just filled.
                            self.scheduler.note(cell_queue, true);
                        }
                        self.queues[cell_queue].push_back(cell);
                        if self.busy {
                            if self.frame_wake && cell.needs_host_event() {
                                return Offer::Queued { wake: self.mark_queued(cell_queue) };
                            }
                            Offer::Queued { wake: None }
                        } else {
                            self.busy = true;
                            self.grid.seek(&mut self.tail, now);
                            if self.frame_wake {
                                let seen = cell.needs_host_event();
                                Offer::Queued { wake: if seen { self.mark_queued(cell_queue) } else { None } }
                            } else if self.lazy {
                                Offer::Queued { wake: self.arm_wake() }
                            } else {
                                Offer::Queued { wake: Some(self.grid.boundary(&self.tail)) }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Pipelined: cells whose slot started before `now` have left; returns
    /// how many are still waiting (a slot starting exactly at `now` counts as
    /// waiting, as in slotted mode where arrivals run before slot events).
    #[inline]
    fn pipeline_queued(&mut self, now: SimTime) -> u32 {
        if self.last_start.is_some_and(|s| s < now) {
            // Every assigned slot has started: the port is idle.
            self.head = self.tail;
            return 0;
        }
        while self.head.slot() < self.tail.slot() && self.grid.boundary(&self.head) < now {
            self.grid.advance(&mut self.head);
        }
        (self.tail.slot() - self.head.slot()) as u32
    }

    /// Pipelined: assigns the next free slot to an accepted cell.
    #[inline]
    fn pipeline(&mut self, now: SimTime, cell: Cell) -> Offer {
        Offer::Departs { arrival: self.pipeline_slot(now), cell }
    }

    /// Pipelined: assigns the next free slot to a cell accepted at `now`;
    /// returns when the cell reaches the far end. Always inlined: out of
    /// line (as LLVM chose once `offer_frame` called it too) it cost the
    /// 97-0177 WAN 2.5 % more instructions.
    #[inline(always)]
    fn pipeline_slot(&mut self, now: SimTime) -> SimTime {
        self.pipeline_slot_from::<false>(now)
    }

    /// [`pipeline_slot`](Self::pipeline_slot), an idle port's slot found by
    /// `SlotGrid::seek_near` (`NEAR`: the cell likely comes a few slots
    /// after the last) or by `seek`.
    #[inline(always)]
    fn pipeline_slot_from<const NEAR: bool>(&mut self, now: SimTime) -> SimTime {
        if self.tail.slot() == self.head.slot() {
            // Seek a copy and store it twice: seeking `tail` in place and
            // then copying it to `head` read the three words just stored
            // back as wider loads, a store-forwarding stall per cell into
            // an idle port.
            let mut pos = self.tail;
            if NEAR {
                self.grid.seek_near(&mut pos, now);
            } else {
                self.grid.seek(&mut pos, now);
            }
            self.tail = pos;
            self.head = pos;
        }
        let start = self.grid.boundary(&self.tail);
        self.last_start = Some(start);
        self.grid.advance(&mut self.tail);
        let queued = (self.tail.slot() - self.head.slot()) as u32;
        self.max_queued = self.max_queued.max(queued);
        self.wait_area += u128::from(start.saturating_since(now).as_ps());
        // A slot past 2^64 ps (a huge queue on a very slow link) is "never".
        start.saturating_add(self.cell_time).saturating_add(self.delay)
    }

    /// Whether [`offer_frame`](Self::offer_frame) may take a frame's cells
    /// at once: a pipelined port that drops by tail drop alone.
    #[inline]
    pub fn takes_frames(&self) -> bool {
        self.mode == PortMode::Pipelined && self.tail_drop
    }

    /// Offers the `cells` cells of a frame on VC `vc`, all arriving at
    /// `now` (a host handing its adapter a frame), at a port that
    /// [`takes_frames`](Self::takes_frames): the state `cells` calls of
    /// [`offer`](Self::offer) leave, the last cell ending the frame.
    /// Pushes onto `arrivals` when each accepted cell reaches the far end
    /// and returns how many were accepted: the first ones (under tail drop
    /// at one instant the queue only grows, so once a cell finds the pool
    /// full so does every later one); the rest were dropped for overflow.
    ///
    /// A frame's cells one by one each paid for the port's checks (its mode,
    /// its policies, its counters): a sixth of EXPERT's instructions went to
    /// the host adapters' offers (`docs/benchmark.md`).
    #[inline]
    pub fn offer_frame(&mut self, now: SimTime, vc: u16, cells: u32, arrivals: &mut Vec<SimTime>) -> u32 {
        let taken = self.admit_frame(now, vc, cells);
        arrivals.extend((0..taken).map(|_| self.pipeline_slot(now)));
        taken
    }

    /// [`offer_frame`](Self::offer_frame), then the accepted cells onto a
    /// plain link into a switch, in one pass: the same state, and on the
    /// link what [`put_on_link`](Self::put_on_link) puts there called for
    /// each in turn, the `i`-th (from 1) being `cell(i)`. Returns how many
    /// were accepted, the first's arrival if the link was empty (its head
    /// needs an event), and the first's slot (the others take the slots
    /// after it).
    ///
    /// A frame's cells take consecutive slots from the first's, so what
    /// `pipeline_slot` keeps per cell is kept once per frame: the last
    /// start, the largest queue (the last cell's, as the queue only grows
    /// within the frame) and the waits' sum. The cells went onto the link
    /// in a second pass over a list of their arrivals: about 70 instructions
    /// a cell in EXPERT, a seventh of its instructions (`docs/benchmark.md`).
    #[inline]
    pub fn offer_frame_onto_link(
        &mut self,
        now: SimTime,
        vc: u16,
        cells: u32,
        cell: impl Fn(u32) -> Cell,
    ) -> (u32, Option<SimTime>, u64) {
        debug_assert!(!self.to_host, "a link into a host schedules its frame ends");
        let taken = self.admit_frame(now, vc, cells);
        if taken == 0 {
            return (0, None, 0);
        }
        if self.tail.slot() == self.head.slot() {
            let mut pos = self.tail;
            self.grid.seek(&mut pos, now);
            self.tail = pos;
            self.head = pos;
        }
        let first_slot = self.tail.slot();
        let was_empty = self.channel.is_empty();
        let first = self.grid.boundary(&self.tail).saturating_add(self.cell_time).saturating_add(self.delay);
        let reach = self.cell_time.as_ps().checked_add(self.delay.as_ps());
        match reach.filter(|&r| self.grid.starts_in_time(&self.tail, taken, Duration::from_ps(r))) {
            Some(reach) => {
                // Every slot starts, and its cell arrives, before 2^64 ps.
                // A frame's first slot is at or after `now` (`seek`, or the
                // slot after the queue's last), so `start - now` is a wait.
                let (grid, mut pos, now) = (self.grid, self.tail, now.as_ps());
                let (mut start, mut waited) = (0, 0u128);
                let cells = (1..=taken).map(|i| {
                    start = grid.take_slot(&mut pos);
                    waited += u128::from(start - now);
                    (SimTime::from_ps(start + reach), cell(i))
                });
                if self.hands_over {
                    // The port holding runs has them (`keep_handed`).
                    cells.for_each(drop);
                } else {
                    self.channel.extend(cells);
                }
                self.tail = pos;
                self.last_start = Some(SimTime::from_ps(start));
                self.wait_area += waited;
            }
            None => {
                for i in 1..=taken {
                    let arrival = self.pipeline_slot(now);
                    if !self.hands_over {
                        self.channel.push_back((arrival, cell(i)));
                    }
                }
            }
        }
        self.max_queued = self.max_queued.max((self.tail.slot() - self.head.slot()) as u32);
        (taken, was_empty.then_some(first), first_slot)
    }

    /// What a frame's offer at a port that [`takes_frames`](Self::takes_frames)
    /// does before its cells take their slots: the counts, and how many of
    /// its `cells` are accepted (the first ones: under tail drop at one
    /// instant the queue only grows, so once a cell finds the pool full so
    /// does every later one; the rest are dropped for overflow).
    #[inline(always)]
    fn admit_frame(&mut self, now: SimTime, vc: u16, cells: u32) -> u32 {
        debug_assert!(self.takes_frames() && cells > 0);
        let occupancy = self.pipeline_queued(now);
        let v = &mut self.vcs[vc as usize];
        let c = v.category.index();
        let pool = self.pool_of[c] as usize;
        let taken = cells.min(self.pool_limit[pool].saturating_sub(occupancy));
        let dropped = cells - taken;
        self.stats.cells_in += u64::from(cells);
        self.stats.per_category[c].cells_in += u64::from(cells);
        if dropped > 0 {
            v.dropped += u64::from(dropped);
            self.stats.per_category[c].dropped += u64::from(dropped);
            self.stats.dropped_overflow += u64::from(dropped);
        }
        // The frame ends with its last cell (tail drop leaves `discard` alone).
        v.frame_start = true;
        self.accepted += u64::from(taken);
        taken
    }

    /// [`offer`](Self::offer) at a port that [`takes_frames`](Self::takes_frames)
    /// (pipelined, tail drop alone), in fewer steps: the same state, and
    /// `Some` arrival at the far end for [`Offer::Departs`], `None` for a
    /// drop for overflow. For a hop through a switch into a host
    /// (`sim/network/mod.rs`, `pass_into_host`). Always inlined, as
    /// `pass_into_host` is (`docs/benchmark.md`, session of 2026-12-02).
    #[inline(always)]
    pub fn offer_pipelined(&mut self, now: SimTime, cell: Cell) -> Option<SimTime> {
        debug_assert!(self.takes_frames());
        let eof = cell.is_end_of_frame();
        let occupancy = self.pipeline_queued(now);
        let vc = &mut self.vcs[cell.vc() as usize];
        let c = vc.category.index();
        let pool = self.pool_of[c] as usize;
        self.stats.cells_in += 1;
        self.stats.per_category[c].cells_in += 1;
        vc.frame_start = eof;
        if eof {
            vc.discard = Discard::No;
        }
        if occupancy < self.pool_limit[pool] {
            self.accepted += 1;
            Some(self.pipeline_slot(now))
        } else {
            vc.dropped += 1;
            self.stats.per_category[c].dropped += 1;
            self.stats.dropped_overflow += 1;
            None
        }
    }

    /// The `count` cells of a piece of a frame on their way into a host,
    /// `data` but the last, `last` (which may end the frame), the `j`-th
    /// (from 0) reaching this port `from.transit` after the start of slot
    /// `from.first + j from.step` of the grid `from.grid` (a port holding
    /// runs), taken as [`offer_pipelined`](Self::offer_pipelined) then
    /// [`put_on_link`](Self::put_on_link) take them one by one: the same
    /// state, the same cells on the link. Both are of one VC. Returns how
    /// many were dropped for overflow, whether the last cell was one of
    /// them, and the arrival of a cell the host must act on if the link had
    /// none due before (it needs its event).
    ///
    /// The cells come close behind each other, so where the port is idle
    /// at a cell's arrival its slot is found without dividing: from the one
    /// after the last, jumped ahead first where the two grids' slots are
    /// equally long (the cell's slot is then at least `step - 1` after the
    /// last cell's, if that one left at its arrival: a jump of `step - 2`
    /// whose slot starts before the arrival is always right), then walked
    /// (`SlotGrid::seek_near`). And what `offer_pipelined` counts per cell
    /// is counted once.
    ///
    /// Where an upstream slot lasts a whole number of the port's (`k`:
    /// 1, or 4 for a port shaped to a quarter of its link) and the cells
    /// are two or more of the port's slots apart (`k step >= 2`), a cell
    /// that finds the port idle leaves within a slot of its arrival,
    /// before the next arrives: the next finds it idle too, and so on.
    /// From such a cell on, each of the piece's data cells takes the first
    /// slot at or after its arrival, which its upstream slot leads to
    /// (`SlotGrid::follow`), with no test of the buffer: a jump and a
    /// comparison a cell (`follow_piece`).
    #[inline]
    pub fn offer_piece_into_host(&mut self, count: u64, from: PieceFrom<'_>, data: Cell, last: Cell) -> PieceTaken {
        debug_assert!(self.takes_frames() && self.to_host && count > 0 && data.vc() == last.vc());
        let PieceFrom { grid: upstream, first, step, transit } = from;
        let v = usize::from(last.vc());
        let c = self.vcs[v].category.index();
        let limit = self.pool_limit[self.pool_of[c] as usize];
        let same = self.grid.same_period(upstream);
        let ahead = (step >= 3 && same).then(|| self.grid.position(step - 2));
        // The shift from an upstream slot to this port's, where from an
        // idle cell on the rest follow (see above).
        let follow = if limit > 0 && count > 2 && !data.needs_host_event() {
            // (Products that would outgrow 64 bits: the cells would arrive
            // past 2^64 ps, "never", which the way above handles.)
            let apart = |f: &Follow| f.periods().checked_mul(step).filter(|s| s.checked_mul(count).is_some());
            self.grid.follow(upstream, transit).filter(|f| apart(f).is_some_and(|s| s >= 2))
        } else {
            None
        };
        let by_step = upstream.position(step);
        let mut slot = first;
        let mut taken = PieceTaken { dropped: 0, last_dropped: false, due: None };
        let mut j = 0;
        while j < count {
            let now = upstream.boundary(&slot).saturating_add(transit);
            upstream.jump(&mut slot, &by_step);
            let cell = if j + 1 == count { last } else { data };
            j += 1;
            let queued = self.pipeline_queued(now);
            if queued >= limit {
                taken.dropped += 1;
                taken.last_dropped = j == count;
                continue;
            }
            if let Some(by) = &ahead
                && self.tail.slot() == self.head.slot()
            {
                // Idle: the slot is after any that starts before `now`.
                let mut guess = self.tail;
                self.grid.jump(&mut guess, by);
                if self.grid.boundary(&guess) < now {
                    self.grid.advance(&mut guess);
                    self.tail = guess;
                    self.head = guess;
                }
            }
            let at = self.pipeline_slot_from::<true>(now);
            self.channel.push_back((at, cell));
            if cell.needs_host_event() {
                if cell.pti().is_rm() {
                    self.rm_due.push_back(at);
                }
                self.due.push_back(at);
                if self.due.len() == 1 {
                    taken.due = Some(at);
                }
            }
            if queued == 0
                && j + 1 < count
                && let Some(follow) = &follow
                && let Some(from) = self.grid.followed(follow, slot.slot())
            {
                // The data cells before the last (which may end the frame)
                // follow; the last takes the way above, from its own slot.
                let n = count - 1 - j;
                self.follow_piece(n, follow, from, step, data);
                upstream.jump(&mut slot, &upstream.position(n * step));
                j += n;
            }
        }
        self.stats.cells_in += count;
        self.stats.per_category[c].cells_in += count;
        self.accepted += count - taken.dropped;
        let vc = &mut self.vcs[v];
        if taken.dropped > 0 {
            vc.dropped += taken.dropped;
            self.stats.per_category[c].dropped += taken.dropped;
            self.stats.dropped_overflow += taken.dropped;
        }
        // Each cell sets them as its offer would: the last one's stand
        // (only the last can end the frame).
        let eof = last.is_end_of_frame();
        vc.frame_start = eof;
        if eof {
            vc.discard = Discard::No;
        }
        taken
    }

    /// `n` data cells of a piece, the first leaving the upstream slot that
    /// is this grid's `from` (`SlotGrid::followed`), each `step` upstream
    /// slots after the last, two or more of this port's, the cell before
    /// them having found this port idle: each takes the first slot at or
    /// after its arrival (`SlotGrid::first_following`; see
    /// [`offer_piece_into_host`](Self::offer_piece_into_host)) and goes on
    /// the link. No cell waits behind another: the largest queue is one
    /// cell.
    #[inline]
    fn follow_piece(&mut self, n: u64, follow: &Follow, from: SlotPos, step: u64, cell: Cell) {
        let by_step = self.grid.position(follow.periods() * step);
        let mut waited: u128 = 0;
        let mut last_start = SimTime::ZERO;
        let extra = self.cell_time.saturating_add(self.delay);
        let (channel, grid) = (&mut self.channel, &self.grid);
        let (tail, mut busy_until) = (self.tail.slot(), self.last_start);
        let last = grid.follow_each(follow, (from, &by_step), n, extra, |now, start, leaves| {
            debug_assert!(busy_until.is_none_or(|s| s < now), "the port is idle at each arrival");
            debug_assert!(grid.slots_before(start) >= tail, "a slot not yet taken");
            busy_until = Some(start);
            waited += u128::from(start.saturating_since(now).as_ps());
            channel.push_back((leaves, cell));
            last_start = start;
        });
        if let Some(mut pos) = last {
            self.grid.advance(&mut pos);
            (self.tail, self.head) = (pos, pos);
            self.last_start = Some(last_start);
            self.max_queued = self.max_queued.max(1);
            self.wait_area += waited;
        }
    }

    /// Sends one cell in the slot that starts `now` (the port's pending slot
    /// event). Returns the cell and its arrival time at the far end (the
    /// caller puts it on the link), and the next slot if the port stays busy.
    #[inline]
    pub fn transmit(&mut self, now: SimTime) -> Transmission {
        debug_assert!(self.mode == PortMode::Slotted && self.busy && self.grid.boundary(&self.tail) == now);
        let q = self.scheduler.select(&self.queues).expect("a busy port has a queued cell");
        let cell = self.queues[q].pop_front().expect("the scheduler picks a non-empty queue");
        if self.frame_wake {
            self.mark_sent(q, &cell);
        }
        self.count_departure::<false>(now, q, cell.vc());

        let arrival = now.saturating_add(self.cell_time).saturating_add(self.delay);
        self.grid.advance(&mut self.tail);
        // (No passed-through cell holds a later slot: one that arrived
        // before this slot holds the first free one at or after its
        // arrival, and one that arrives later finds this slot run.)
        debug_assert!(self.reserved() == 0, "a slot sends only with no reserved slot after it");
        let next_slot = if self.queued > 0 {
            Some(self.grid.boundary(&self.tail))
        } else {
            self.busy = false;
            None
        };
        Transmission { arrival, cell, next_slot }
    }

    /// Makes a slotted port run its slots late, when it is next touched
    /// (`lazy`), or at their own events; a pipelined port has no slots to
    /// run. Call before the port carries traffic.
    ///
    /// Only a port whose cells take at least `LAZY_SLOTS` slots to reach
    /// the far end runs late: on a shorter link a wake-up would run about
    /// one slot, and cost more than the slot's own event.
    pub fn set_lazy(&mut self, lazy: bool) {
        let reach = (self.cell_time + self.delay).as_ps();
        let slot = self.rate.cell_time().as_ps();
        self.lazy = lazy && self.mode == PortMode::Slotted && reach >= LAZY_SLOTS * slot;
    }

    /// Whether the port runs its slots late.
    #[inline]
    pub fn is_lazy(&self) -> bool {
        self.lazy
    }

    /// A lazy port's next slot, if the port is busy and the slot starts
    /// before `t` (or at `t`, if `inclusive`): the caller runs it with
    /// [`transmit`](Self::transmit) before it looks at or changes the port
    /// at `t`.
    ///
    /// With a top category passed through, that is the next slot either
    /// the port sends in or a passed cell holds: [`send_slot`](Self::send_slot)
    /// runs it.
    #[inline]
    pub fn slot_due(&self, t: SimTime, inclusive: bool) -> Option<SimTime> {
        let next = if self.lazy && self.busy {
            &self.tail
        } else if self.reserved() != 0 {
            &self.res_head
        } else {
            return None;
        };
        let s = self.grid.boundary(next);
        (s < t || (inclusive && s == t)).then_some(s)
    }

    /// Runs the slot [`slot_due`](Self::slot_due) gave, starting at `now`:
    /// the cell the port sends in it ([`transmit`](Self::transmit)), or
    /// `None` for a slot a passed-through cell holds, already on the link
    /// (the slot's counts are brought up: `pass_reserved`).
    #[inline(always)]
    pub fn send_slot(&mut self, now: SimTime) -> Option<Transmission> {
        if self.reserved() != 0 {
            // The port's next slot is the first reserved one (a cell that
            // reserved a later one would have found this slot run).
            debug_assert!(!self.busy || self.res_head.slot() == self.tail.slot());
            self.pass_reserved(now);
            return None;
        }
        Some(self.transmit(now))
    }

    /// Makes the port pass the cells of its top category through at their
    /// arrival, where that is exact, and says whether it does. Call on a
    /// port that runs its slots late ([`set_lazy`](Self::set_lazy)), after
    /// its link's loss model is set, when nothing writes what crosses the
    /// link (a capture) and the run elides events.
    ///
    /// The top category is the first of the port's categories by priority.
    /// It passes through when it has one queue (one VC, queues per
    /// category) that the scheduler serves in every slot it holds a cell,
    /// its state the same either way ([`SchedulerKind::serves_first`]:
    /// strict priority, or GR 0), on a lossless link: its cells then leave
    /// as from a FIFO of their own, whatever the other categories hold, each
    /// in the first slot at or after its arrival that the one before it
    /// left free. When such a cell is accepted the port has run every slot
    /// before its arrival, so the slots from there to its own are those of
    /// the top cells ahead of it, already on the link: it goes on the link
    /// at once (the link stays in order) and reserves its slot, which the
    /// other categories skip (`send_slot`). It counts as queued, in every
    /// count and integral, until that slot runs, as an event per slot has
    /// it; only the queue's storage, the scheduler's choice and the slot's
    /// work for it are saved. With event elision off (the reference) no
    /// port passes cells through; `sim/tests.rs` compares the two.
    pub fn pass_top_through(&mut self) -> bool {
        if self.mode != PortMode::Slotted
            || !self.lazy
            || self.holds_runs
            || self.queueing != Queueing::PerCategory
            || !self.per_category
            || !self.is_lossless()
        {
            return false;
        }
        let top = self.categories.trailing_zeros() as usize;
        let mut vcs = self.vcs.iter().enumerate().filter(|(_, v)| v.category.index() == top);
        let (Some((vc, _)), None) = (vcs.next(), vcs.next()) else { return false };
        if !self.scheduler.serves_first(self.queue_of[top] as usize) {
            return false;
        }
        debug_assert!(self.accepted == 0, "set before any traffic");
        self.top = top as u8;
        self.top_vc = vc as u16;
        true
    }

    /// Whether the port passes a top category through
    /// ([`pass_top_through`](Self::pass_top_through)).
    pub fn passes_top(&self) -> bool {
        self.top != NO_TOP
    }

    /// A cell of the passed-through top category accepted at `now` (and
    /// counted as queued): reserves the first slot at or after `now` that
    /// the top cells ahead of it leave free. All slots before `now` have
    /// run, so the reserved slots not yet run are the ones after the first
    /// at or after `now`, one after the other.
    ///
    /// Out of line, as `pass_reserved` is: inlined into every offer and
    /// slot, they cost the ports that pass nothing through (the LAN
    /// dumbbell 2.2 % more instructions instead of 1.4 %,
    /// `docs/benchmark.md`, session of 2026-12-02, third).
    #[inline(never)]
    fn reserve(&mut self, now: SimTime, cell: Cell) -> Offer {
        if self.reserved() == 0 {
            // A busy port's next slot is the first at or after `now` (it
            // sends in every slot, and those before `now` have run); an
            // idle one's is found as an idle port's is.
            let mut pos = if self.busy { self.tail } else { self.res_tail };
            self.grid.seek(&mut pos, now);
            self.res_head = pos;
            self.res_tail = pos;
        }
        debug_assert!(self.grid.boundary(&self.res_head) >= now, "the slots before the offer have run");
        let start = self.grid.boundary(&self.res_tail);
        self.grid.advance(&mut self.res_tail);
        Offer::Departs { arrival: start.saturating_add(self.cell_time).saturating_add(self.delay), cell }
    }

    /// The slot starting at `now` is a passed-through cell's: what
    /// [`transmit`](Self::transmit) would count for it, its cell already on
    /// the link.
    #[inline(never)]
    fn pass_reserved(&mut self, now: SimTime) {
        debug_assert!(self.grid.boundary(&self.res_head) == now);
        self.grid.advance(&mut self.res_head);
        if self.busy {
            // The other categories' next slot was this one.
            self.grid.advance(&mut self.tail);
        }
        let q = self.queue_of[usize::from(self.top)] as usize;
        self.count_departure::<true>(now, q, self.top_vc);
    }

    /// The counts of a cell of `vc`, from queue `q`, that leaves in the
    /// slot starting at `now`: the one place [`transmit`](Self::transmit)
    /// and a reserved slot (`pass_reserved`, `TOP`) bring them up. A
    /// passed-through category's port has queues and counts per category
    /// (`pass_top_through`), so `TOP` needs no test of either: tested, they
    /// cost 97-0424's WAN 11 M instructions in 5 s (`docs/benchmark.md`,
    /// session of 2026-12-02, fourth).
    #[inline(always)]
    fn count_departure<const TOP: bool>(&mut self, now: SimTime, q: usize, vc: u16) {
        debug_assert!(!TOP || (self.per_category && !self.per_vc_queues));
        let vc = &mut self.vcs[usize::from(vc)];
        let c = vc.category.index();
        let pool = self.pool_of[c] as usize;
        vc.occupancy -= 1;
        if vc.occupancy == 0 {
            self.active_vcs[pool] -= 1;
            if !TOP && self.per_vc_queues {
                self.scheduler.note(q, false);
            }
        }
        self.pool_occ[pool] -= 1;
        self.queued -= 1;
        if TOP || self.per_category {
            self.category_queued[c] -= 1;
            self.stats.category_occupancy[c].set(now, u64::from(self.category_queued[c]));
        } else {
            self.stats.occupancy.set(now, u64::from(self.queued));
        }
        self.stats.cells_out += 1;
        self.last_tx = now;
    }

    /// Cells of the passed-through top category on the link whose slots
    /// have not run yet (each counts as queued until its slot runs).
    #[inline]
    pub fn reserved(&self) -> u64 {
        self.res_tail.slot() - self.res_head.slot()
    }

    /// A lazy port's wake-up, if it is busy and none is pending by then:
    /// the latest instant its next slot may still run, just before that
    /// slot's cell reaches the far end of the link (nothing outside the
    /// port can have seen the slot by then). With a frame wake, the latest
    /// instant before the first queued cell that can be seen could be
    /// (see [`set_frame_reach`](Self::set_frame_reach)); none if no such
    /// cell is queued.
    #[inline]
    pub fn arm_wake(&mut self) -> Option<SimTime> {
        if self.holds_runs {
            return self.arm_held_wake();
        }
        if !self.lazy || !self.busy {
            return None;
        }
        if self.frame_wake {
            return self.arm_frame_wake();
        }
        if self.wake_at != SimTime::MAX {
            return None;
        }
        let lag = (self.cell_time + self.delay).as_ps() - 1;
        self.wake_at = self.grid.boundary(&self.tail).saturating_add(Duration::from_ps(lag));
        Some(self.wake_at)
    }

    /// Whether a lazy port's wake-up event at `t` is the pending one (else
    /// an earlier one replaced it, and it does nothing).
    #[inline]
    pub fn wake_is(&self, t: SimTime) -> bool {
        self.wake_at == t
    }

    /// A lazy port's wake-up event is being handled.
    #[inline]
    pub fn woken(&mut self) {
        self.wake_at = SimTime::MAX;
    }

    /// Makes a slotted port run its slots late until a cell the far side
    /// can see might have been sent: on a link whose every VC goes on to a
    /// pipelined port fed by this link alone and from there into a host
    /// (an eager hop, `sim/network/mod.rs`, then a link into a host, which
    /// gives an event only to frame ends and RM cells,
    /// [`Cell::needs_host_event`]; a cell source's cell only adds to its
    /// sink's count, and a probe, which may read it, runs the port's slots
    /// first: `sim/settle.rs`), nothing outside sees a slot's cell before such
    /// a cell reaches the host, at the soonest `beyond` (that port's
    /// transit) after it reaches the far end of this link. A queue's cells
    /// leave in order, a cell per slot, so a cell with `n` cells ahead of
    /// it in its queue leaves `n` slots after the next at the soonest: the
    /// wake-up can wait for the soonest such cell of all the queues. (A
    /// reader that touches the port, an offer, a probe, the end of the run,
    /// runs the slots due as with any lazy port.) Call after `finalize`, on
    /// a slotted port.
    pub fn set_frame_reach(&mut self, beyond: Duration) {
        debug_assert!(self.mode == PortMode::Slotted && self.accepted == 0);
        self.lazy = true;
        self.frame_wake = true;
        self.beyond = beyond;
        self.before_mark = vec![u32::MAX; self.queues.len()];
    }

    /// Whether the port's wake-ups wait for cells the far side can see
    /// ([`set_frame_reach`](Self::set_frame_reach)).
    pub fn has_frame_wake(&self) -> bool {
        self.frame_wake
    }

    /// [`arm_wake`](Self::arm_wake) with a frame wake: for the soonest
    /// cell the far side can see of all the queues. Apart: the other lazy
    /// ports' wake-ups stay inlined.
    #[inline(never)]
    fn arm_frame_wake(&mut self) -> Option<SimTime> {
        let before = self.before_mark.iter().copied().min().unwrap_or(u32::MAX);
        self.wake_before(before)
    }

    /// Frame wake: a cell the far side can see was queued last on queue
    /// `q`; the wake-up its slot needs if it is the queue's first such
    /// cell and it could leave before the pending wake-up.
    #[inline(never)]
    fn mark_queued(&mut self, q: usize) -> Option<SimTime> {
        if self.before_mark[q] != u32::MAX {
            return None;
        }
        let before = (self.queues[q].len() - 1) as u32;
        self.before_mark[q] = before;
        self.wake_before(before)
    }

    /// Frame wake: `cell` left queue `q`.
    #[inline(always)]
    fn mark_sent(&mut self, q: usize, cell: &Cell) {
        match self.before_mark[q] {
            u32::MAX => {}
            0 => {
                debug_assert!(cell.needs_host_event());
                let next = self.queues[q].iter().position(Cell::needs_host_event);
                self.before_mark[q] = next.map_or(u32::MAX, |i| i as u32);
            }
            n => self.before_mark[q] = n - 1,
        }
    }

    /// Frame wake: the wake-up for a cell with `before` cells ahead of it
    /// in its queue, if it is sooner than the pending one (slot
    /// `tail + before` starts at least `before` whole slot periods after
    /// slot `tail`: [`SlotGrid::whole_period`]).
    #[inline]
    fn wake_before(&mut self, before: u32) -> Option<SimTime> {
        if before == u32::MAX {
            return None;
        }
        let ahead = self.grid.whole_period().as_ps().saturating_mul(u64::from(before));
        let lag = (self.cell_time + self.delay + self.beyond).as_ps() - 1;
        let t = self.grid.boundary(&self.tail).saturating_add(Duration::from_ps(ahead.saturating_add(lag)));
        (t < self.wake_at).then(|| {
            self.wake_at = t;
            t
        })
    }

    /// Sets the loss model of the port's link.
    pub fn set_loss(&mut self, loss: LinkLoss) {
        self.loss = loss;
    }

    /// Whether the link loses `cell`, the cell being put on it now (counts
    /// it).
    #[inline]
    pub fn loses_cell(&mut self, cell: &Cell) -> bool {
        let lost = match &mut self.loss {
            LinkLoss::None => return false,
            LinkLoss::Bernoulli { p, rng } => {
                use rand::RngExt;
                rng.random_bool(*p)
            }
            LinkLoss::Periodic { one_in, seen } => {
                *seen += 1;
                *seen % *one_in == 0
            }
            LinkLoss::Frames(f) => f.loses(cell),
        };
        if lost {
            self.stats.lost_on_link += 1;
        }
        lost
    }

    /// Cells queued at `now` (a probe's view).
    pub fn queued_at(&mut self, now: SimTime) -> u32 {
        match self.mode {
            PortMode::Slotted => self.queued,
            PortMode::Pipelined => self.pipeline_queued(now),
        }
    }

    /// Of the cells [`queued_at`](Self::queued_at) counts at `now`, those
    /// whose slot starts exactly at `now`: for a reader that comes after the
    /// slots of an instant (a probe), they are sent, as a slotted port's slot
    /// event at `now` has sent its cell by then. (A slotted port's reader has
    /// run that slot: 0.)
    pub fn starting_at(&mut self, now: SimTime) -> u32 {
        match self.mode {
            PortMode::Slotted => 0,
            PortMode::Pipelined => {
                let queued = self.pipeline_queued(now);
                u32::from(queued > 0 && self.grid.boundary(&self.head) == now)
            }
        }
    }

    /// Whether the port has VCs of `category`.
    #[inline]
    pub fn carries_category(&self, category: ServiceCategory) -> bool {
        self.categories & 1 << category.index() != 0
    }

    /// How long after its slot starts a cell reaches the far end of the
    /// link: a cell time and the propagation delay.
    pub fn transit(&self) -> Duration {
        self.cell_time + self.delay
    }

    /// Cells of `category` queued at `now` (what ERICA+ calls the port's ABR
    /// queue, for ABR).
    #[inline]
    pub fn category_queued_at(&mut self, category: ServiceCategory, now: SimTime) -> u32 {
        let c = category.index();
        if self.categories & 1 << c == 0 {
            return 0;
        }
        match self.mode {
            PortMode::Slotted if self.per_category => self.category_queued[c],
            PortMode::Slotted => self.queued,
            PortMode::Pipelined => self.pipeline_queued(now),
        }
    }

    /// The largest queue of `category` and its time average over `[0, end]`
    /// (call after [`settle`](Self::settle) at `end`).
    pub fn category_queue(&self, category: ServiceCategory, end: SimTime) -> (u64, f64) {
        let c = category.index();
        if self.categories & 1 << c == 0 {
            return (0, 0.0);
        }
        if self.mode == PortMode::Slotted && self.per_category {
            let occ = &self.stats.category_occupancy[c];
            (occ.max(), occ.mean(end))
        } else {
            (self.max_queue(), self.mean_queue(end))
        }
    }

    /// Cells whose transmission started before `now` (a probe's view).
    pub fn sent_by(&mut self, now: SimTime) -> u64 {
        match self.mode {
            // The cell of a slot starting exactly now has been sent already
            // (slot events run before probes) but counts from now on, as in
            // pipelined mode.
            PortMode::Slotted => self.stats.cells_out - u64::from(self.last_tx == now),
            PortMode::Pipelined => self.accepted - u64::from(self.pipeline_queued(now)),
        }
    }

    /// Marks the port as the adapter-facing end of a link into a host: only
    /// frame-ending cells then need arrival events (see
    /// [`put_on_link`](Self::put_on_link)).
    pub fn set_to_host(&mut self, to_host: bool) {
        self.to_host = to_host;
    }

    /// Whether the link ends at a host.
    pub fn is_to_host(&self) -> bool {
        self.to_host
    }

    /// Notes whether some VC's later cells are taken the short way where
    /// the link ends (after the simulation set [`PortVc::later_short`]).
    pub fn note_later_short(&mut self) {
        self.later_short = self.vcs.iter().any(|v| v.later_short);
    }

    /// Whether some VC's later cells may be taken the short way where the
    /// link ends ([`PortVc::later_short`]).
    #[inline]
    pub fn has_later_short(&self) -> bool {
        self.later_short
    }

    /// Puts a cell on the link. Returns the time of the arrival event the
    /// caller must schedule, if one is needed: for a link into a switch, when
    /// the cell is the new head of the link; for a link into a host, when it
    /// ends a frame or is an RM cell and no earlier such cell is waiting (the
    /// host's AAL5 only acts on frame ends, its ABR end system on RM cells;
    /// the cells before one are taken with it, in order).
    #[inline(always)]
    pub fn put_on_link(&mut self, arrival: SimTime, cell: Cell) -> Option<SimTime> {
        let was_empty = self.channel.is_empty();
        self.channel.push_back((arrival, cell));
        if !self.to_host {
            return was_empty.then_some(arrival);
        }
        if !cell.needs_host_event() {
            return None;
        }
        if cell.pti().is_rm() {
            self.rm_due.push_back(arrival);
        }
        self.due.push_back(arrival);
        (self.due.len() == 1).then_some(arrival)
    }

    /// Whether the link loses no cell (no loss model).
    #[inline]
    pub fn is_lossless(&self) -> bool {
        matches!(self.loss, LinkLoss::None)
    }

    /// Takes the head cell off the link (its arrival is due).
    #[inline]
    pub fn take_arrival(&mut self) -> (SimTime, Cell) {
        self.channel.pop_front().expect("an arrival event has a cell on the link")
    }

    /// Into a host, behind a cell just taken that needs no event there:
    /// takes the cells right behind it that are equal to it (the rest of
    /// its frame's run on the link, which arrived before the frame end
    /// being handled) and returns how many. A host handles them as one.
    #[inline]
    pub fn take_equal(&mut self, cell: Cell) -> u32 {
        debug_assert!(self.to_host && !cell.needs_host_event());
        let mut n = 0;
        while self.channel.front().is_some_and(|&(_, c)| c == cell) {
            self.channel.pop_front();
            n += 1;
        }
        n
    }

    /// Into a switch: the arrival time of the new head cell, if any.
    #[inline]
    pub fn next_arrival(&self) -> Option<SimTime> {
        self.channel.front().map(|(t, _)| *t)
    }

    /// Into a switch: whether the head cell is alike to `cell` (the same
    /// VC, payload type, CLP and PDU: a frame's cells before its end).
    #[inline]
    pub fn next_is(&self, cell: Cell) -> bool {
        self.channel.front().is_some_and(|&(_, c)| c == cell)
    }

    /// Asks for the cache line of the cell `ahead` places behind the head
    /// of the link (a hint: see `atmlab_engine::hint`).
    #[inline]
    pub fn prefetch_arrival(&self, ahead: usize) {
        if let Some(entry) = self.channel.get(ahead) {
            atmlab_engine::hint::prefetch(entry);
        }
    }

    /// Into a host: no RM cell put on the link from `now` on reaches the
    /// host before this, and of the RM cells on it none arrives before it
    /// either (frame ends may: what an ABR end that sends ahead must not
    /// pass, `sim/abr.rs`). A cell the port sends from now on starts in a
    /// slot at or after `now`, except the slots of a port that runs them
    /// late (`arm_wake` runs those before their cells arrive).
    pub fn quiet_until_rm(&self, now: SimTime) -> SimTime {
        debug_assert!(self.to_host);
        let first_slot = match self.slot_due(now, true) {
            Some(s) => s.min(now),
            None => now,
        };
        let unsent = first_slot.saturating_add(self.cell_time).saturating_add(self.delay);
        self.rm_due.front().map_or(unsent, |&t| t.min(unsent))
    }

    /// Into a host: the RM cell that was due has been taken.
    #[inline]
    pub fn took_rm(&mut self) {
        self.rm_due.pop_front();
    }

    /// Into a host: the frame end or RM cell that was due has been taken;
    /// returns the arrival time of the next one, if any.
    #[inline]
    pub fn next_due(&mut self) -> Option<SimTime> {
        self.due.pop_front();
        self.due.front().copied()
    }

    /// Into a host, at the end of a run: takes a cell that arrived before
    /// `end` (it is neither a frame end nor an RM cell: those have had their
    /// events).
    pub fn take_arrived_before(&mut self, end: SimTime) -> Option<Cell> {
        match self.channel.front() {
            Some((t, _)) if *t < end => self.channel.pop_front().map(|(_, c)| c),
            _ => None,
        }
    }

    /// Cells the port holds: queued, and on its link (for a pipelined port
    /// its queue is the front of the link's FIFO, so that is the link alone).
    pub fn held_cells(&self) -> u64 {
        let queued: usize = self.queues.iter().map(VecDeque::len).sum();
        (queued + self.channel.len()) as u64 + self.held_as_runs().0
    }

    /// What the port holds, in cells' worth of memory, for the memory
    /// guard (`sim/guard.rs`): its cells and the records of the runs it
    /// holds.
    pub fn held_memory(&self) -> u64 {
        self.held_cells() + self.held_as_runs().1
    }

    /// Cell entries allocated for the port's queues and link, and for the
    /// frame ends of a link into a host.
    pub fn cell_capacity(&self) -> u64 {
        let queues: usize = self.queues.iter().map(VecDeque::capacity).sum();
        (queues + self.channel.capacity() + self.due.capacity() + self.rm_due.capacity() + self.handed.capacity())
            as u64
    }

    /// Slots that start strictly before `t`: the cells the port could have
    /// started by then (its utilization is cells sent over this count).
    pub fn slots_before(&self, t: SimTime) -> u64 {
        self.grid.slots_before(t)
    }

    /// Cells dropped at the port, for every reason.
    pub fn dropped(&self) -> u64 {
        self.stats.dropped_overflow + self.stats.dropped_frame + self.stats.dropped_clp
    }

    /// Bytes per second the link carries at full load, for reports.
    pub fn cell_bytes_per_s(&self) -> f64 {
        self.rate.cells_per_s() * f64::from(CELL_SIZE)
    }
}

/// Where the cells of a piece of a frame come from, for
/// [`Port::offer_piece_into_host`]: the `j`-th leaves slot `first + j step`
/// of `grid` (a port holding runs) and arrives `transit` after its start.
#[derive(Clone, Copy, Debug)]
pub struct PieceFrom<'a> {
    /// The grid of the port the cells leave.
    pub grid: &'a SlotGrid,
    /// The first cell's slot on it.
    pub first: SlotPos,
    /// Slots from one cell to the next.
    pub step: u64,
    /// From a slot's start to the cell's arrival.
    pub transit: Duration,
}

/// What [`Port::offer_piece_into_host`] did with a piece of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PieceTaken {
    /// Cells dropped for overflow.
    pub dropped: u64,
    /// Whether the last cell of the piece was one of them.
    pub last_dropped: bool,
    /// The arrival of a cell the host must act on, if the link had none
    /// due before it (its event is to be scheduled).
    pub due: Option<SimTime>,
}

/// One cell put on the link by [`Port::transmit`].
#[derive(Clone, Copy, Debug)]
pub struct Transmission {
    /// When the cell arrives at the far end.
    pub arrival: SimTime,
    /// The cell.
    pub cell: Cell,
    /// The next slot, if the port stays busy.
    pub next_slot: Option<SimTime>,
}

#[path = "port_runs.rs"]
mod held;

#[cfg(test)]
#[path = "port_tests.rs"]
mod tests;

#[cfg(test)]
mod frame_loss_tests {
    use super::*;
    use crate::atm::Pti;
    use crate::pdu::{PduId, PduTable};

    /// A FIFO port with two UBR VCs (slots 0 and 1), slotted or pipelined,
    /// losing frames `lose`.
    fn port(pipelined: bool, lose: &[u64]) -> Port {
        let cfg = PortConfig { buffer: Some(1000), ..PortConfig::host_adapter() };
        let mut p = Port::new("a->b".into(), BitRate::from_bps(155_520_000).unwrap(), Duration::from_us(5), cfg);
        let next = NextHop::Host { host: HostId(0), vc: 0 };
        p.add_vc(PortVc::new(ServiceCategory::Ubr, next));
        p.add_vc(PortVc::new(ServiceCategory::Ubr, next));
        p.finalize(pipelined);
        assert_eq!(p.mode() == PortMode::Pipelined, pipelined);
        p.set_loss(LinkLoss::frames(lose.to_vec()));
        p
    }

    fn cell(slot: u16, pdu: PduId, pti: Pti) -> Cell {
        Cell::new(VcLabel::new(0, 32 + slot), pdu, pti, false, slot)
    }

    /// Sends `cells` in order; returns which the link lost.
    fn send(p: &mut Port, cells: &[Cell]) -> Vec<bool> {
        let mut now = SimTime::ZERO;
        cells
            .iter()
            .map(|&c| {
                now = now.saturating_add(Duration::from_us(3));
                match p.offer(now, c) {
                    Offer::Departs { .. } => {}
                    Offer::Queued { wake } => {
                        let t = p.transmit(wake.expect("an idle port wakes"));
                        assert_eq!(t.cell, c);
                        now = t.arrival;
                    }
                    Offer::Dropped(r) => panic!("dropped: {r:?}"),
                }
                p.loses_cell(&c)
            })
            .collect()
    }

    #[test]
    fn test_frames_loss_loses_every_cell_of_the_chosen_frames_only() {
        let mut pdus = PduTable::<()>::new();
        let mut id = || pdus.insert((), 1, SimTime::ZERO).unwrap();
        let (a, b, c, d) = (id(), id(), id(), id());
        let (data, eof) = (Pti::DATA, Pti::DATA_EOF);
        // Frames start in the order a (VC 0), b (VC 1), c (VC 0), d (VC 1);
        // a and b interleave; an RM cell and a cell source's cell between
        // frames are not frames.
        let cells = [
            cell(0, a, data),
            cell(1, b, data),
            cell(0, a, data),
            cell(1, b, eof),
            cell(0, a, eof),
            cell(1, PduId::NONE, data),
            cell(0, c, data),
            cell(1, b, Pti::RM),
            cell(0, c, eof),
            cell(1, d, eof),
        ];
        for pipelined in [false, true] {
            let mut p = port(pipelined, &[2, 4]);
            let lost = send(&mut p, &cells);
            let expect = [false, true, false, true, false, false, false, false, false, true];
            assert_eq!(lost, expect, "frames 2 (b) and 4 (d), every cell; pipelined {pipelined}");
            assert_eq!(p.stats.lost_on_link, 3);
            let LinkLoss::Frames(f) = &p.loss else { panic!("frames loss") };
            assert_eq!(f.frames_started(), 4);

            // Frames 1 and 3 instead: a's three cells and c's two.
            let mut p = port(pipelined, &[1, 3]);
            let lost = send(&mut p, &cells);
            let expect = [true, false, true, false, true, false, true, false, true, false];
            assert_eq!(lost, expect, "pipelined {pipelined}");
        }
        // No loss listed beyond the frames sent: nothing lost.
        assert!(send(&mut port(false, &[5]), &cells).iter().all(|l| !l));
    }
}
