//! The TCP segment as the simulator carries it (header fields and options,
//! no payload bytes).
//!
//! Sequence numbers are 64-bit and start at 0 (the ISN), so they never wrap
//! inside a run; on the wire they would be the low 32 bits. The `window` field
//! holds the 16-bit value as sent, i.e. already right-shifted by the sender's
//! window scale (RFC 1323); SYN segments are never scaled.

use crate::aal5::TCP_HEADER;

/// TCP flags the model uses.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct TcpFlags(u8);

impl TcpFlags {
    /// FIN.
    pub const FIN: TcpFlags = TcpFlags(0x01);
    /// SYN.
    pub const SYN: TcpFlags = TcpFlags(0x02);
    /// ACK.
    pub const ACK: TcpFlags = TcpFlags(0x10);
    /// SYN and ACK.
    pub const SYN_ACK: TcpFlags = TcpFlags(0x12);

    /// The flags as the TCP header's flag byte.
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// Whether every flag of `other` is set.
    pub const fn contains(self, other: TcpFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

/// Up to four SACK blocks `[start, end)` (RFC 2018).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct SackBlocks {
    blocks: [(u64, u64); 4],
    len: u8,
}

impl SackBlocks {
    /// The blocks, most recent first.
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len as usize]
    }
    /// Appends a block; returns `false` when four are already present.
    pub fn push(&mut self, start: u64, end: u64) -> bool {
        if self.len as usize == self.blocks.len() {
            return false;
        }
        self.blocks[self.len as usize] = (start, end);
        self.len += 1;
        true
    }
    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// Whether there is no block.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// TCP options carried by a segment.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct TcpOptions {
    /// Maximum segment size (SYN only; kind 2, 4 bytes).
    pub mss: Option<u16>,
    /// Window scale shift (SYN only; kind 3, 3 bytes).
    pub window_scale: Option<u8>,
    /// SACK permitted (SYN only; kind 4, 2 bytes).
    pub sack_permitted: bool,
    /// SACK blocks (kind 5, 2 + 8n bytes).
    pub sack: SackBlocks,
}

impl TcpOptions {
    /// Bytes of options, padded with NOPs to a multiple of four.
    pub fn len(&self) -> u32 {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        if self.window_scale.is_some() {
            n += 3;
        }
        if self.sack_permitted {
            n += 2;
        }
        if !self.sack.is_empty() {
            n += 2 + 8 * self.sack.len() as u32;
        }
        n.div_ceil(4) * 4
    }
    /// Whether no option is present.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A TCP segment.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TcpSegment {
    /// Sequence number of the first byte (or of the SYN/FIN).
    pub seq: u64,
    /// Acknowledgement number (valid with ACK).
    pub ack: u64,
    /// Payload bytes.
    pub len: u32,
    /// Flags.
    pub flags: TcpFlags,
    /// The 16-bit window field as sent.
    pub window: u16,
    /// Options.
    pub options: TcpOptions,
}

impl TcpSegment {
    /// Header bytes, options included.
    pub fn header_len(&self) -> u32 {
        TCP_HEADER + self.options.len()
    }
    /// Sequence space the segment occupies (payload plus SYN and FIN).
    pub fn seq_len(&self) -> u64 {
        u64::from(self.len)
            + u64::from(self.flags.contains(TcpFlags::SYN))
            + u64::from(self.flags.contains(TcpFlags::FIN))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_option_lengths_are_padded() {
        let syn = TcpOptions { mss: Some(512), window_scale: Some(4), ..TcpOptions::default() };
        assert_eq!(syn.len(), 8); // 4 + 3 -> 8
        let mut sack = TcpOptions::default();
        sack.sack.push(10, 20);
        assert_eq!(sack.len(), 12); // 2 + 8 -> 12
        assert_eq!(TcpOptions::default().len(), 0);
    }
}
