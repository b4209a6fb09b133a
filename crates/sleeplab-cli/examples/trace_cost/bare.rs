//! The bare ftrace side of trace_cost: an instance of its own that records only the
//! events it is given (by default the five a wake's account cannot do without), and the
//! `--bare-events` list that names them; and, to ask what the tracer's layout costs,
//! `--bare-own` events recorded for the measuring thread only, either the tracer's way
//! (a second instance whose `set_event_pid` names the thread) or behind an event filter
//! on `common_pid` in the one instance.

use sleeplab_capture::{Instance, Tracefs, parse_cpu_list};

/// Tracepoints by `(system, event)`.
#[derive(Debug, Clone)]
pub struct EventList(pub Vec<(String, String)>);

impl std::fmt::Display for EventList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.0.iter().map(|(s, e)| format!("{s}:{e}")).collect();
        f.write_str(&names.join(", "))
    }
}

/// `sched:sched_waking,sched:sched_switch` as an [`EventList`].
pub fn parse_events(text: &str) -> Result<EventList, String> {
    text.split(',')
        .map(|item| {
            let (system, event) = item
                .trim()
                .split_once(':')
                .filter(|(s, e)| !s.is_empty() && !e.is_empty())
                .ok_or_else(|| format!("{item:?}: not system:event"))?;
            Ok((system.to_string(), event.to_string()))
        })
        .collect::<Result<Vec<_>, String>>()
        .map(EventList)
}

/// How the `--bare-own` events are kept to the measuring thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OwnBy {
    /// A second instance whose `set_event_pid` names the thread (the tracer's layout:
    /// the kernel hooks every switch and wakeup to know whether the CPU's task is
    /// followed).
    Pid,
    /// An event filter `common_pid == TID` on each event, in the one instance (every
    /// task's event is built and then dropped unless it is the thread's).
    Filter,
}

/// The bare side's instances, read and counted together.
pub struct Bare {
    /// The tracefs the instances live in (its page size sizes the reads).
    pub fs: Tracefs,
    /// The one instance, and the second that `OwnBy::Pid` adds.
    pub instances: Vec<Instance>,
}

/// A bare ftrace instance of every online CPU, recording `events` of every task, and
/// `own` of the thread `tid` only, kept to it as `by` says.
pub fn bare_instance(
    events: &EventList,
    own: Option<&EventList>,
    by: OwnBy,
    tid: i32,
) -> anyhow::Result<Bare> {
    let fs = Tracefs::find_or_mount()?;
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online")?;
    let cpus = parse_cpu_list(online.trim());
    let mut instances = vec![Instance::create(&fs, &cpus, 1024)?];
    for (system, event) in &events.0 {
        instances[0].enable_event(system, event)?;
    }
    if let Some(own) = own {
        if by == OwnBy::Pid {
            let second = Instance::create(&fs, &cpus, 1024)?;
            second.write("set_event_pid", &tid.to_string())?;
            instances.push(second);
        }
        let instance = instances.last().expect("one instance at least");
        for (system, event) in &own.0 {
            if by == OwnBy::Filter {
                let filter = format!("common_pid == {tid}");
                instance.write(&format!("events/{system}/{event}/filter"), &filter)?;
            }
            instance.enable_event(system, event)?;
        }
    }
    for instance in &instances {
        instance.set_on(true)?;
    }
    Ok(Bare { fs, instances })
}
