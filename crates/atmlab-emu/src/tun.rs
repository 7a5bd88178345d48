//! Linux: the wall clock and TUN devices (`IFF_TUN | IFF_NO_PI`: each read
//! or write is one bare IP packet), polled with `poll(2)`.
//!
//! The devices are made in the namespace of the process and keep their
//! descriptors when `ip link set DEV netns NS` moves them (the Linux
//! networking documentation, `tuntap.rst`); a device disappears when its
//! descriptor closes, so dropping [`TunIo`] removes them.

use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};

use crate::{Clock, PacketIo};

/// The wall clock: a monotonic clock since an origin.
#[derive(Clone, Copy, Debug)]
pub struct WallClock {
    origin: Instant,
}

impl WallClock {
    /// A clock whose origin is now.
    #[allow(clippy::disallowed_methods)] // the one place that reads the wall clock (docs/architecture.md)
    pub fn start() -> WallClock {
        WallClock { origin: Instant::now() }
    }
}

impl Clock for WallClock {
    fn now(&mut self) -> Duration {
        self.origin.elapsed()
    }
}

/// TUN devices, one per external host.
pub struct TunIo {
    devs: Vec<tun_rs::SyncDevice>,
    origin: Instant,
}

impl TunIo {
    /// Makes one TUN device per name, non-blocking, without packet
    /// information; `clock` is the driver's (deadlines are on it; see
    /// [`set_clock`](Self::set_clock)).
    pub fn create(names: &[String], clock: &WallClock) -> std::io::Result<TunIo> {
        let mut devs = Vec::new();
        for name in names {
            // Down until it is in its host's namespace (`atmlab emulate`
            // brings it up there): up in the first namespace, the kernel
            // queued an IPv6 router solicitation on it, which the network
            // then refused.
            let dev = tun_rs::DeviceBuilder::new()
                .name(name.clone())
                .enable(false)
                .build_sync()
                .map_err(|e| std::io::Error::new(e.kind(), format!("TUN device {name}: {e}")))?;
            dev.set_nonblocking(true)?;
            devs.push(dev);
        }
        Ok(TunIo { devs, origin: clock.origin })
    }

    /// Deadlines are on `clock` from now on (the emulation starts).
    pub fn set_clock(&mut self, clock: &WallClock) {
        self.origin = clock.origin;
    }
}

impl PacketIo for TunIo {
    fn wait(&mut self, watch: &[bool], deadline: Option<Duration>) -> std::io::Result<()> {
        let mut fds: Vec<PollFd<'_>> =
            self.devs.iter().zip(watch).filter(|(_, w)| **w).map(|(d, _)| PollFd::new(d, PollFlags::IN)).collect();
        let timeout = deadline.map(|d| {
            let left = d.saturating_sub(self.origin.elapsed());
            Timespec { tv_sec: left.as_secs() as i64, tv_nsec: i64::from(left.subsec_nanos()) }
        });
        match rustix::event::poll(&mut fds, timeout.as_ref()) {
            Ok(_) | Err(rustix::io::Errno::INTR) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    fn recv(&mut self, dev: usize, buf: &mut [u8]) -> std::io::Result<Option<usize>> {
        match self.devs[dev].recv(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn send(&mut self, dev: usize, packet: &[u8]) -> std::io::Result<()> {
        self.devs[dev].send(packet).map(|_| ())
    }
}
