//! Index newtypes. Every model object lives in a `Vec` owned by the
//! simulation and is named by its index; the newtypes keep them apart.

macro_rules! id {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
        pub struct $name(pub u32);
        impl $name {
            /// The index as `usize`.
            #[inline]
            pub const fn idx(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id!(
    /// An output port (one direction of a link).
    PortId
);
id!(
    /// A host.
    HostId
);
id!(
    /// A switch.
    SwitchId
);
id!(
    /// A TCP connection.
    ConnId
);
id!(
    /// A UDP flow.
    FlowId
);
id!(
    /// An ABR end system (at a host or a VS/VD switch).
    AbrEndId
);
id!(
    /// A group of cell sources that share their events.
    SourceGroupId
);
id!(
    /// A probe.
    ProbeId
);
id!(
    /// A port that pulls its arrivals (`sim/network/pull.rs`).
    PullId
);
