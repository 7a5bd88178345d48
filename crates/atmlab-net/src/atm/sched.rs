//! Output-port schedulers: which queue sends in the next cell slot.
//!
//! The port calls [`Scheduler::select`] once at the start of every slot in
//! which at least one of its queues holds a cell, and sends the head cell of
//! the queue it gets back. A scheduler may keep state across slots (credits,
//! a round-robin pointer), which is what the guaranteed-rate scheduler of
//! 97-0424 and per-VC round robin need. Strict priority is stateless.

use std::collections::VecDeque;

use super::cell::Cell;

/// Picks the queue that sends in the current slot.
pub trait Scheduler {
    /// The index of a non-empty queue, or `None` if all are empty.
    fn select(&mut self, queues: &[VecDeque<Cell>]) -> Option<usize>;
    /// Whether, when only one queue ever holds cells, the scheduler sends its
    /// head cell in every slot (then the port can compute departures at
    /// arrival: pipelined mode). Conservative default.
    fn is_fifo_for_one_queue(&self) -> bool {
        false
    }
}

/// Strict priority: the lowest-numbered non-empty queue. With one queue per
/// service category in the order CBR, VBR, ABR, UBR, this is the classic
/// "VBR cells are always served before waiting UBR cells".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StrictPriority;

impl Scheduler for StrictPriority {
    #[inline]
    fn select(&mut self, queues: &[VecDeque<Cell>]) -> Option<usize> {
        queues.iter().position(|q| !q.is_empty())
    }
    fn is_fifo_for_one_queue(&self) -> bool {
        true
    }
}

/// The schedulers atmlab implements, dispatched statically.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedulerKind {
    /// See [`StrictPriority`].
    StrictPriority(StrictPriority),
}

impl Default for SchedulerKind {
    fn default() -> Self {
        SchedulerKind::StrictPriority(StrictPriority)
    }
}

impl Scheduler for SchedulerKind {
    #[inline]
    fn select(&mut self, queues: &[VecDeque<Cell>]) -> Option<usize> {
        match self {
            SchedulerKind::StrictPriority(s) => s.select(queues),
        }
    }
    fn is_fifo_for_one_queue(&self) -> bool {
        match self {
            SchedulerKind::StrictPriority(s) => s.is_fifo_for_one_queue(),
        }
    }
}

impl SchedulerKind {
    /// Short name for reports.
    pub fn name(&self) -> &'static str {
        match self {
            SchedulerKind::StrictPriority(_) => "strict_priority",
        }
    }
}
