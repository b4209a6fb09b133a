//! The partial account `/proc` gives without kernel tracing: the time a wait spent on
//! a run queue (`/proc/thread-self/schedstat`, read before and after it) and the timer
//! slack in force (`prctl`). The rest of the lateness is unexplained.

use super::account::WakeAccount;
use super::component::{Component, Parts};

/// Splits `lateness_ns` knowing only the run-queue time of the wait and the timer
/// slack in force (`None` where slack does not apply to the mechanism, as for timerfd):
/// run queue first (measured), then slack up to what is left (the most slack can add),
/// the rest unexplained.
pub fn partial_account(lateness_ns: i64, run_queue_ns: u64, slack_ns: Option<u64>) -> WakeAccount {
    let mut parts = Parts::default();
    let late = lateness_ns.max(0) as u64;
    let rq = run_queue_ns.min(late);
    parts.add(Component::RunQueue, rq);
    let slack = slack_ns.unwrap_or(0).min(late - rq);
    parts.add(Component::Slack, slack);
    parts.add(Component::Unexplained, late - rq - slack);
    WakeAccount {
        lateness_ns,
        parts,
        holder: None,
        run_queue_by: Vec::new(),
        blocked: true,
        traced: false,
        host_told: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_queue_then_slack_then_the_rest() {
        let a = partial_account(80_000, 5_000, Some(50_000));
        assert_eq!(
            a.parts.nonzero().collect::<Vec<_>>(),
            vec![
                (Component::Slack, 50_000),
                (Component::RunQueue, 5_000),
                (Component::Unexplained, 25_000)
            ]
        );
        assert!(!a.traced);
        // Never more than the lateness, whatever /proc says.
        let a = partial_account(3_000, 9_000, Some(50_000));
        assert_eq!(a.parts.get(Component::RunQueue), 3_000);
        assert_eq!(a.parts.total(), 3_000);
        let a = partial_account(10_000, 0, None);
        assert_eq!(a.parts.get(Component::Unexplained), 10_000);
        assert_eq!(partial_account(-5, 7, Some(1)).parts.total(), 0);
    }
}
