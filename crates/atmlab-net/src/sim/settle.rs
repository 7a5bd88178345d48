//! One way to bring deferred state up to a time: [`Simulation::settle`].
//!
//! The event elision (`docs/architecture.md`, "Speed: the events a run does
//! not need") leaves some state behind true time, to be brought up to date
//! only when something reads it. A reader says *what* it is about to read
//! ([`Reader`]) and calls [`Simulation::settle`] first; `settle` alone knows
//! which schemes leave that state behind and runs them, in the one order
//! that keeps a run identical to the reference (every slot and every
//! cell-hop an event: `NetworkBuilder::set_event_elision(false)`).
//!
//! The schemes, what each leaves behind, its invariant, and the test that
//! guards it (each test runs networks with elision on and off and requires
//! the same result; `sim/tests.rs` and `sim/abr_tests.rs`):
//!
//! | scheme | left behind | invariant | brought up to date by | guard |
//! |---|---|---|---|---|
//! | 1. pipelined ports (`atm/port.rs`) | nothing: a FIFO port assigns a cell's slot when it takes it (a tail-drop adapter takes a host's frame in one call, `Port::offer_frame`, or onto a plain link into a switch in one pass, `Port::offer_frame_onto_link`) | the port is a FIFO in effect | (none needed) | `test_event_elision_gives_the_same_run_as_the_reference`, `prop_a_frame_taken_at_once_is_its_cells_offered_one_by_one` |
//! | 2. eager hops (`sim/network/mod.rs`) | a cell taken into the next port when put on the link, up to a link delay early (through a tail-drop port that only passes cells on into a host, in one step: `PortVc::into_host`, `Port::offer_pipelined`) | that port has one feeder and is pipelined, so nothing can come between | (none: the port's state at the cell's arrival is exact) | `test_event_elision_gives_the_same_run_as_the_reference`, `test_switches_with_abr_controllers_taking_cells_ahead_of_time_give_the_reference_run`, `test_cells_passing_through_a_port_into_a_host_give_the_reference_run`, `prop_offer_pipelined_is_offer` |
//! | 3. frame ends into hosts (`sim/network/mod.rs`) | cells before a frame's end wait on the link into the host | a host's AAL5 acts only on frame ends and RM cells | the end of the run ([`Reader::End`]) | `test_event_elision_gives_the_same_run_as_the_reference` |
//! | 4. slots run late (`atm/port.rs`) | a slotted port's slots since its last wake-up | what a slot does is seen only a cell time and the link delay later; with a frame wake (every VC on into hosts by eager hops), only when a frame end or RM cell reaches a host, or a probe reads a cell source's count | [`Reader::Wake`], [`Reader::Adapter`], [`Reader::Probe`], [`Reader::ControlDeadline`], [`Reader::End`]; and the port itself before it takes a cell | `test_slotted_ports_running_their_slots_late_give_the_reference_run`, `test_a_bottleneck_waking_for_frame_ends_gives_the_reference_run` |
//! | 5. ABR sources send ahead (`sim/abr.rs`) | an end's in-rate slots run before their time | nothing can reach the end or see what it sent before the stretch's end | the end itself (its stretch stops before any such moment) | `test_abr_elision_matches_the_reference` |
//! | 6. ports pull their arrivals (`sim/network/pull.rs`) | cells that reached a pulling port's link end, not yet taken | their effects are seen only through the port's slots or controllers | every reader but [`Reader::Adapter`] and [`Reader::Port`]; the port's wake-up | `test_pulled_arrivals_match_the_reference` |
//! | 7. counting controllers count late (`sim/control.rs`) | cells a port took ahead of time, not yet counted by its controller | the controller changes no cell (`Timing::Counted`) | [`Reader::Controller`], [`Reader::ControlDeadline`], [`Reader::End`] | `test_switches_with_abr_controllers_taking_cells_ahead_of_time_give_the_reference_run` |
//! | 8. ports holding runs (`atm/port_runs.rs`, `atm/runs.rs`) | a frame-wake port with a queue per VC and the round robin holds its cells as runs: its slots run in horizons of many slots and a run is judged at its first cell; a link whose every VC goes to it hands it each cell, or a frame's cells at once, when it puts them on (`Simulation::hand_over`), and keeps them, with no arrival event, until the port takes them off | as scheme 4, the wake-up set from a bound on the soonest frame end that no cell still to come and no drop can bring forward (`RoundRobinRuns::earliest_frame_end`: the cells already arrived, the round robin's least share for the others); and every cell the port judges at `t` was handed to it by `t` (handed over ahead, or by its arrival event, which comes before any reader at its instant); its VCs come in by links in the order of their indices (the tie at one instant); each VC goes on to a port of its own | [`Reader::Wake`], [`Reader::Probe`], [`Reader::End`] (which has none of the arrivals at its instant) | `test_a_bottleneck_holding_runs_gives_the_reference_run`, `prop_a_bottleneck_holding_runs_gives_the_reference_run`, `test_arrivals_run_ahead_as_the_loop_would_take_them`, the model's tests (`atm/runs_tests.rs`, the bound's among them: `prop_a_frame_end_leaves_no_sooner_than_its_bound`, `prop_at_a_nearly_full_buffer_a_frame_end_leaves_no_sooner_than_its_bound`, `test_with_every_vc_backlogged_the_frame_end_bound_is_the_slot`) |
//! | 9. the top category passed through (`atm/port.rs`) | a lazy slotted port's cells of its first category (one VC, served whenever it holds a cell: `SchedulerKind::serves_first`) go on the link when accepted, their slots reserved; their counts (queued, the VC's occupancy, the category's time average, cells sent) stay as if queued until each slot runs | the port's slots before the accepted cell's arrival have run, so the slots from there to its own are those of the top cells ahead of it; the link is lossless; nothing writes the cells as they cross it (no capture) | as scheme 4 (`Port::send_slot` brings a reserved slot's counts up) | `test_a_top_category_passed_through_gives_the_reference_run`, `prop_a_top_category_passed_through_leaves_as_if_queued`, `prop_a_first_served_queue_leaves_as_if_passed_through`, `test_abr_sources_sending_ahead_give_the_reference_run` |
//!
//! Not a scheme, since it leaves nothing behind: a link's next cell is
//! handled at once, without the heap, when it is the loop's next event
//! (`Simulation::run_ahead`, `EventQueue::take_keyed_if_next`); the events'
//! order is the queue's. Guards: `test_arrivals_run_ahead_as_the_loop_would_take_them`,
//! `prop_take_if_next_matches_a_push_and_a_pop`. Nor is the short way of a
//! frame's later cells, each still at its own time: cells alike to the one
//! before them on a link (the same VC, payload type and PDU) go to the next
//! port's `Port::offer_later`, which queues them as `offer` would without
//! asking a policy that judges frames at their first cells, where nothing
//! at the link's end acts on them (`PortVc::later_short`, set in
//! `Simulation::plan`). Guards: `prop_a_later_cell_offered_the_short_way_is_offered`,
//! `test_a_frames_later_cells_taken_the_short_way_give_the_reference_run`,
//! `test_policed_frames_into_a_port_with_a_queue_per_vc_give_the_reference_run`.
//!
//! **Traffic from outside** (`sim/external.rs`). A packet injected at an
//! external host is an event at a time no earlier than the end of the
//! stretch already run, and its host sends it as its transport would send
//! a datagram then; so every scheme that waits for a reader (4, 6, 7) or
//! keeps a port exact as cells come (1, 2, 3) is exact with it as with any
//! datagram. The two that decide ahead what a host will send are off
//! there: an ABR end at an external host never sends ahead (5; the
//! stretch of any other end stops at the end of the stretch being run,
//! before which no injection can fall), and the cell sources of an
//! external host are never merged ahead of it (it counts as one more
//! sender). Guard: `test_traffic_from_outside_gives_the_reference_run_with_elision`.
//!
//! The order within `settle` is the reference's order of simultaneous
//! events: arrivals (class 0, by link) before anything else at an instant,
//! then what the reader reads. A reader that is itself an arrival on link
//! `l` passes `tie = Some(l)`: arrivals on links before `l` at its instant
//! come first, those after it do not.

use super::Simulation;
use crate::ids::PortId;
use atmlab_engine::SimTime;

/// What a reader is about to read (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reader {
    /// A port's controller, for a backward RM cell's ER: the arrivals
    /// before the reader, then the cells the port's controller counts late.
    Controller(PortId),
    /// A port's controller at its deadline, which reads the port's ABR
    /// queue: as [`Reader::Controller`], then the port's slots before `t`.
    ControlDeadline(PortId),
    /// A lazy port's wake-up (its own event): the arrivals up to `t`, then
    /// its slots up to `t` inclusive (slot events at `t` come before the
    /// wake-up's).
    Wake(PortId),
    /// A probe, after everything at its instant: the arrivals up to `t`,
    /// the frame-wake ports' slots up to `t` inclusive (what they send
    /// reaches cell sources' counts without an event), and, for a probe
    /// of a port, its slots up to `t` inclusive.
    Probe(Option<PortId>),
    /// A host's CPU reading its adapter's queue: the adapter's slots
    /// before `t` (nothing pulls into an adapter).
    Adapter(PortId),
    /// The end of the run: every arrival before it, every port's slots
    /// that start before it, every controller's late counts.
    End,
}

impl Simulation {
    /// Brings the state `reader` reads up to `t` (a reader that is an
    /// arrival on link `l` at `t` passes `tie = Some(l)`; others `None`):
    /// the one place that runs the event elision's deferred work for a
    /// reader (see the module docs).
    #[inline]
    pub(super) fn settle(&mut self, t: SimTime, tie: Option<u32>, reader: Reader) {
        match reader {
            Reader::Controller(p) => {
                self.take_all_pulled(t, tie);
                self.count_deferred(p, t, tie);
            }
            Reader::ControlDeadline(p) => {
                self.take_all_pulled(t, tie);
                self.count_deferred(p, t, tie);
                if !self.control.defers(p) {
                    self.run_slots(p, t, false);
                }
            }
            Reader::Wake(p) => {
                self.take_all_pulled(t, None);
                // The wake-up is spent: a cell the port takes from now on
                // may set the next one.
                self.net.port_mut(p).woken();
                self.run_slots(p, t, true);
            }
            Reader::Probe(port) => {
                self.take_all_pulled(t, None);
                // What a frame-wake port sends reaches hosts' counts (a
                // cell source's sink) without a frame end: a probe may read
                // them. (Its eager targets are never probed.)
                for i in 0..self.net.frame_wake_ports().len() {
                    let q = self.net.frame_wake_ports()[i];
                    self.run_slots(q, t, true);
                }
                if let Some(p) = port {
                    self.run_slots(p, t, true);
                }
            }
            Reader::Adapter(p) => self.run_slots(p, t, false),
            Reader::End => {
                self.take_all_pulled(t, Some(0));
                for p in 0..self.net.ports().len() {
                    self.run_slots(PortId(p as u32), t, false);
                }
                self.take_all_pulled(t, Some(0));
                for p in 0..self.net.ports().len() {
                    self.count_deferred(PortId(p as u32), t, Some(0));
                }
            }
        }
    }
}
