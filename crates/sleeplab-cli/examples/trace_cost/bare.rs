//! The bare ftrace side of trace_cost: an instance of its own that records only the
//! events it is given (by default `sched_waking` and `sched_switch`, the least a tracer
//! of wakes records), and the `--bare-events` list that names them.

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

/// A bare ftrace instance of every online CPU, recording `events`.
pub fn bare_instance(events: &EventList) -> anyhow::Result<(Tracefs, Instance)> {
    let fs = Tracefs::find_or_mount()?;
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online")?;
    let instance = Instance::create(&fs, &parse_cpu_list(online.trim()), 1024)?;
    for (system, event) in &events.0 {
        instance.enable_event(system, event)?;
    }
    instance.set_on(true)?;
    Ok((fs, instance))
}
