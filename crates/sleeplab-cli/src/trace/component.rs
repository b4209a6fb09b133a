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
    /// From the hard expiry to the wakeup the timer's interrupt made: interrupt
    /// delivery (on a VM, the host waking a halted vCPU) and the handler.
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
    /// Time no traced event accounts for (an event the tracer lost, or a wake that was
    /// not a timer's).
    Unexplained,
}

impl Component {
    /// Every component, in the order a wake passes them.
    pub const ALL: [Component; 10] = [
        Component::Overrun,
        Component::Entry,
        Component::Slack,
        Component::TimerIrq,
        Component::IdleWakeup,
        Component::RunQueue,
        Component::KernelExit,
        Component::Return,
        Component::Spin,
        Component::Unexplained,
    ];

    /// How many components there are.
    pub const COUNT: usize = Self::ALL.len();

    /// Position in [`Component::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The name in JSON, CSV column stems and metric labels.
    pub fn name(self) -> &'static str {
        match self {
            Component::Overrun => "overrun",
            Component::Entry => "entry",
            Component::Slack => "slack",
            Component::TimerIrq => "timer_irq",
            Component::IdleWakeup => "idle_wakeup",
            Component::RunQueue => "run_queue",
            Component::KernelExit => "kernel_exit",
            Component::Return => "return",
            Component::Spin => "spin",
            Component::Unexplained => "unexplained",
        }
    }

    /// Words for sentences and table headers ("timer slack", "the run queue").
    pub fn label(self) -> &'static str {
        match self {
            Component::Overrun => "overrun",
            Component::Entry => "timer arming",
            Component::Slack => "timer slack",
            Component::TimerIrq => "timer interrupt",
            Component::IdleWakeup => "idle wakeup",
            Component::RunQueue => "run queue",
            Component::KernelExit => "kernel exit",
            Component::Return => "return path",
            Component::Spin => "spin",
            Component::Unexplained => "unexplained",
        }
    }

    /// Short header for terminal tables.
    pub fn short(self) -> &'static str {
        match self {
            Component::Overrun => "ovrun",
            Component::Entry => "arm",
            Component::Slack => "slack",
            Component::TimerIrq => "irq",
            Component::IdleWakeup => "idle",
            Component::RunQueue => "runq",
            Component::KernelExit => "kexit",
            Component::Return => "return",
            Component::Spin => "spin",
            Component::Unexplained => "unexpl",
        }
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
            assert_eq!(Component::from_name(c.name()), Some(c));
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.name()));
        }
        assert_eq!(Component::from_name("nope"), None);
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
