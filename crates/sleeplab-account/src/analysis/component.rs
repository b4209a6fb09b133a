//! The components a wake's lateness splits into, in the order a wake passes them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One stretch of a wake's way from its deadline to the caller's clock read, named for
/// what the kernel (or the caller) was doing then. A wake's components add up to its
/// lateness exactly: what no traced event explains is [`Component::Unexplained`].
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    /// From the deadline to the start of a wait that began after it (an earlier frame
    /// overran the schedule): late before it waited at all.
    Overrun,
    /// From the caller's deadline to the timer's soft expiry: the timer armed later
    /// than asked — a relative wait's kernel counts from its own clock read at syscall
    /// entry, after the caller's, and a timeout in coarser units (epoll's milliseconds)
    /// is rounded up.
    Entry,
    /// From the soft expiry to the hard one (or to an earlier interrupt that ran the
    /// timer): the thread's timer slack.
    Slack,
    /// Timer delivery to an idle CPU: from the hard expiry to the guest's
    /// timer-interrupt entry on a CPU whose last switch went to the idle task, less the
    /// guest's own work recorded in that stretch (other interrupts and softirqs, and
    /// where the idle loop's states are recorded, every moment the CPU was not stopped
    /// in one: the idle loop running, or polling), which is [`Component::TimerIrq`]'s.
    /// What it measures is a delay between two events; on a VM whose idle loop halts
    /// the vCPU it reads as the host's time to run the vCPU again, on bare metal as the
    /// exit from a sleep state: a reading, not a measurement. Told only where the
    /// guest's interrupts were recorded ([`crate::Timeline::records_interrupts`]).
    /// Results written before it was told apart call it `host`, and that `host` also
    /// held [`Component::SpinGap`].
    #[serde(alias = "host")]
    IdleDelivery,
    /// From the hard expiry to the wakeup the timer's interrupt made, but for
    /// [`Component::IdleDelivery`]: on a running CPU the interrupt's delivery and the
    /// guest's handler; on an idle one the handler from the guest's interrupt entry,
    /// and the guest's own work recorded before it.
    TimerIrq,
    /// Woken, waiting for an idle CPU to run it: the wakeup interrupt and the exit from
    /// idle (on a VM, the host scheduling the vCPU).
    IdleWakeup,
    /// Woken (or preempted) and runnable while another task held the CPU.
    RunQueue,
    /// On the CPU again, in the kernel until the system call returned.
    KernelExit,
    /// From the system call's return to the caller's clock read: the runtime's and the
    /// library's own code after the wake.
    Return,
    /// Running in user space after the native wake on purpose (the precise sleeper's
    /// spin), or a wait that never blocked (spin, yield).
    Spin,
    /// The gaps of a spin (between two of its clock reads) in which the guest kernel
    /// recorded no interrupt, softirq or switch on the spinner's behalf: the spinner's
    /// CPU ran none of the guest's recorded code. On a VM read as the vCPU not running
    /// (the host ran something else), on bare metal as SMIs and firmware. Told only
    /// where the guest's interrupts were recorded and the spin's gaps logged.
    SpinGap,
    /// Time no traced event accounts for (an event the tracer lost, or a wake that was
    /// not a timer's).
    Unexplained,
}

/// Everything said about a component, in one row: what prints, charts or exports a
/// component reads it from [`Component::spec`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ComponentSpec {
    /// The component.
    pub component: Component,
    /// Its name in JSON, CSV column stems and metric labels.
    pub name: &'static str,
    /// What happened, in a person's words, for table headers and chart legends ("other
    /// tasks on the CPU").
    pub label: &'static str,
    /// The same, as a sentence says it after a duration ("waiting while another task
    /// held the CPU"): "spent 8 µs waiting while another task held the CPU".
    pub phrase: &'static str,
    /// The precise term, beside the label in legends ("run queue").
    pub term: &'static str,
    /// Short header for terminal tables.
    pub short: &'static str,
    /// One line on what it is (legends, metric help).
    pub help: &'static str,
    /// Its colour in every chart, RGB (Tableau 10, in the order a wake passes them;
    /// grey for what no event explains).
    pub rgb: (u8, u8, u8),
}

/// The components, in the order a wake passes them: the one table.
pub const COMPONENTS: [ComponentSpec; 12] = [
    ComponentSpec {
        component: Component::Overrun,
        name: "overrun",
        label: "late start",
        phrase: "starting after its deadline",
        term: "overrun",
        short: "ovrun",
        help: "the wait began after its deadline (an earlier frame overran)",
        rgb: (0x4e, 0x79, 0xa7),
    },
    ComponentSpec {
        component: Component::Entry,
        name: "entry",
        label: "timer set late",
        phrase: "on a timer set past the deadline (the kernel counted from its own later clock read, or rounded a timeout up)",
        term: "timer arming",
        short: "arm",
        help: "deadline to the timer's soft expiry (the kernel's own clock read, a timeout rounded up)",
        rgb: (0xf2, 0x8e, 0x2b),
    },
    ComponentSpec {
        component: Component::Slack,
        name: "slack",
        label: "timer slack",
        phrase: "in timer slack",
        term: "timer slack",
        short: "slack",
        help: "soft to hard expiry: the thread's timer slack",
        rgb: (0xe1, 0x57, 0x59),
    },
    ComponentSpec {
        component: Component::IdleDelivery,
        name: "idle_delivery",
        label: "idle CPU taking the timer",
        phrase: "waiting for an idle CPU to take the timer",
        term: "idle delivery",
        short: "deliv",
        help: "hard expiry to the guest's timer-interrupt entry on an idle CPU, less the guest's own work recorded there; read as the host's time only on a VM whose vCPU halted",
        rgb: (0x3d, 0x2b, 0x56),
    },
    ComponentSpec {
        component: Component::TimerIrq,
        name: "timer_irq",
        label: "timer interrupt",
        phrase: "in the timer interrupt",
        term: "timer interrupt",
        short: "irq",
        help: "hard expiry to the wakeup its interrupt made, less an idle CPU's timer delivery (its guest work kept here)",
        rgb: (0x59, 0xa1, 0x4f),
    },
    ComponentSpec {
        component: Component::IdleWakeup,
        name: "idle_wakeup",
        label: "idle CPU waking to run it",
        phrase: "waiting for an idle CPU to wake and run it",
        term: "idle wakeup",
        short: "idle",
        help: "woken, waiting for an idle CPU to run it",
        rgb: (0xb0, 0x7a, 0xa1),
    },
    ComponentSpec {
        component: Component::RunQueue,
        name: "run_queue",
        label: "other tasks on the CPU",
        phrase: "waiting while another task held the CPU",
        term: "run queue",
        short: "runq",
        help: "runnable while another task held the CPU",
        rgb: (0x76, 0xb7, 0xb2),
    },
    ComponentSpec {
        component: Component::KernelExit,
        name: "kernel_exit",
        label: "kernel's return",
        phrase: "returning through the kernel",
        term: "kernel exit",
        short: "kexit",
        help: "on the CPU in the kernel until the system call returned (from the wakeup, or the start of a call that did not sleep)",
        rgb: (0xed, 0xc9, 0x48),
    },
    ComponentSpec {
        component: Component::Return,
        name: "return",
        label: "caller's code after the wake",
        phrase: "in the caller's own code after the wake",
        term: "return path",
        short: "return",
        help: "the system call's return to the caller's clock read",
        rgb: (0x9c, 0x75, 0x5f),
    },
    ComponentSpec {
        component: Component::Spin,
        name: "spin",
        label: "spinning",
        phrase: "spinning",
        term: "spin",
        short: "spin",
        help: "spinning on purpose after the native wake, or a wait that never blocks",
        rgb: (0xff, 0x9d, 0xa7),
    },
    ComponentSpec {
        component: Component::SpinGap,
        name: "spin_gap",
        label: "spin interrupted by the host",
        phrase: "with the spinning vCPU not running (no guest event)",
        term: "spin gap",
        short: "gap",
        help: "gaps in a spin with no guest event on the spinner's behalf (on a VM read as the vCPU not running; on bare metal SMIs, firmware)",
        rgb: (0x1f, 0x1f, 0x1f),
    },
    ComponentSpec {
        component: Component::Unexplained,
        name: "unexplained",
        label: "unexplained",
        phrase: "unexplained",
        term: "unexplained",
        short: "unexpl",
        help: "time no recorded event accounts for",
        rgb: (0x79, 0x70, 0x6e),
    },
];

/// [`Component::SpinGap`]'s words on bare metal (no hypervisor in the fingerprint).
pub const HARDWARE_LABEL: &str = "spin interrupted by SMI or firmware";

/// [`Component::SpinGap`]'s sentence words on bare metal.
pub const HARDWARE_PHRASE: &str = "with the spinning CPU taken by SMI or firmware (no guest event)";

/// The machine a result was measured on, as far as the words for [`Component::SpinGap`]
/// go: what a spin's gap with no guest event is read as is a host on a virtual machine
/// and the hardware on bare metal (the library's noise probe names it the same way).
pub use sleeplab::lab::noise::NoiseSource as Machine;

impl Component {
    /// Every component, in the order a wake passes them.
    pub const ALL: [Component; 12] = [
        Component::Overrun,
        Component::Entry,
        Component::Slack,
        Component::IdleDelivery,
        Component::TimerIrq,
        Component::IdleWakeup,
        Component::RunQueue,
        Component::KernelExit,
        Component::Return,
        Component::Spin,
        Component::SpinGap,
        Component::Unexplained,
    ];

    /// The components told only where the guest's interrupts were recorded (and, for a
    /// spin, its gaps logged): each is a stretch the guest recorded nothing in, so
    /// unrecorded interrupts would leave it unknown, not zero.
    pub const NO_GUEST_EVENT: [Component; 2] = [Component::IdleDelivery, Component::SpinGap];

    /// How many components there are.
    pub const COUNT: usize = Self::ALL.len();

    /// Position in [`Component::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its row of `COMPONENTS`.
    pub fn spec(self) -> &'static ComponentSpec {
        &COMPONENTS[self.index()]
    }

    /// The name in JSON, CSV column stems and metric labels.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// What happened, for table headers and chart legends ("timer slack", "other tasks
    /// on the CPU") on the result's `machine`: on bare metal a spin's gap is read as
    /// the hardware's, not a host's.
    pub fn label(self, machine: Machine) -> &'static str {
        match (self, machine) {
            (Component::SpinGap, Machine::Hardware) => HARDWARE_LABEL,
            (c, _) => c.spec().label,
        }
    }

    /// What happened, as a sentence puts it after a duration ("8 µs waiting while
    /// another task held the CPU") on the result's `machine`.
    pub fn phrase(self, machine: Machine) -> &'static str {
        match (self, machine) {
            (Component::SpinGap, Machine::Hardware) => HARDWARE_PHRASE,
            (c, _) => c.spec().phrase,
        }
    }

    /// The precise term ("run queue"), which legends give beside the label.
    pub fn term(self) -> &'static str {
        self.spec().term
    }

    /// `label (term)`, or the label alone where the two are one: a legend's entry.
    pub fn legend(self, machine: Machine) -> String {
        let label = self.label(machine);
        if label == self.term() {
            label.to_string()
        } else {
            format!("{label} ({})", self.term())
        }
    }

    /// Short header for terminal tables.
    pub fn short(self) -> &'static str {
        self.spec().short
    }

    /// One line on what it is.
    pub fn help(self) -> &'static str {
        self.spec().help
    }

    /// Its colour in every chart, RGB.
    pub fn rgb(self) -> (u8, u8, u8) {
        self.spec().rgb
    }

    /// The component by its [`Component::name`].
    pub fn from_name(name: &str) -> Option<Component> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// Nanoseconds per component, indexed by [`Component::index`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Parts(pub [u64; Component::COUNT]);

impl Parts {
    /// The nanoseconds of `c`.
    pub fn get(&self, c: Component) -> u64 {
        self.0[c.index()]
    }

    /// Adds `ns` to `c`.
    pub fn add(&mut self, c: Component, ns: u64) {
        self.0[c.index()] += ns;
    }

    /// The sum over every component (the lateness, for a wake's parts).
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// The sum over every component but [`Component::Unexplained`].
    pub fn explained(&self) -> u64 {
        self.total() - self.get(Component::Unexplained)
    }

    /// `(component, ns)` for every component with a non-zero share.
    pub fn nonzero(&self) -> impl Iterator<Item = (Component, u64)> + '_ {
        Component::ALL
            .into_iter()
            .map(|c| (c, self.get(c)))
            .filter(|&(_, ns)| ns > 0)
    }

    /// The component with the most time (ties: the earlier on the wake's way); `None`
    /// when none has any.
    pub fn biggest(&self) -> Option<Component> {
        self.nonzero()
            .fold(None, |best: Option<(Component, u64)>, (c, ns)| match best {
                Some((_, b)) if b >= ns => best,
                _ => Some((c, ns)),
            })
            .map(|(c, _)| c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_index_in_order() {
        for (i, c) in Component::ALL.into_iter().enumerate() {
            assert_eq!(c.index(), i);
            assert_eq!(
                COMPONENTS[i].component, c,
                "the table is in the wake's order"
            );
            assert_eq!(Component::from_name(c.name()), Some(c));
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.name()));
        }
        assert_eq!(Component::from_name("nope"), None);
        // Only a spin gap's reading changes on bare metal.
        for c in Component::ALL {
            assert_eq!(c.label(Machine::Host), c.spec().label);
            let same = c.label(Machine::Hardware) == c.label(Machine::Host);
            assert_eq!(same, c != Component::SpinGap);
        }
        // A result written before the delivery was named for what it measures reads.
        let old: Component = serde_json::from_str("\"host\"").unwrap();
        assert_eq!(old, Component::IdleDelivery);
        // The delivery's words name the delay, and the host only as a reading.
        let d = Component::IdleDelivery.spec();
        assert!(!d.label.contains("host") && d.help.contains("read as the host's"));
        let mut fp = sleeplab::system::Fingerprint::collect();
        fp.virtualization = None;
        assert_eq!(Machine::of(&fp), Machine::Hardware);
        fp.virtualization = Some("kvm".into());
        assert_eq!(Machine::of(&fp), Machine::Host);
        // Every row says something of its own.
        for (i, a) in COMPONENTS.iter().enumerate() {
            for b in &COMPONENTS[i + 1..] {
                assert!(a.name != b.name && a.label != b.label && a.short != b.short);
                assert!(a.help != b.help && a.rgb != b.rgb);
            }
        }
    }

    #[test]
    fn parts_add_up() {
        let mut p = Parts::default();
        p.add(Component::Slack, 50);
        p.add(Component::Unexplained, 7);
        p.add(Component::Slack, 1);
        assert_eq!(
            (p.total(), p.explained(), p.get(Component::Slack)),
            (58, 51, 51)
        );
        assert_eq!(
            p.nonzero().collect::<Vec<_>>(),
            vec![(Component::Slack, 51), (Component::Unexplained, 7)]
        );
        assert_eq!(p.biggest(), Some(Component::Slack));
        // A tie goes to the earlier component on the wake's way.
        p.add(Component::Unexplained, 44);
        assert_eq!(p.biggest(), Some(Component::Slack));
        p.add(Component::Unexplained, 1);
        assert_eq!(p.biggest(), Some(Component::Unexplained));
        assert_eq!(Parts::default().biggest(), None);
    }
}
