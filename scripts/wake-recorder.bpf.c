// SPDX-License-Identifier: GPL-2.0
// The wake recorder of scripts/bench-floor.sh, in BPF: the five tracepoints a wake's
// account cannot do without (who woke the thread and when it ran, the timer armed and
// its expiry, the call's return), every task's, as BTF-typed raw tracepoints. Each
// writes one record of the fields the account reads (the tasks' ids and names, the
// switched-out task's state, the timer and its expiries, the call and its return) into
// a BPF ring buffer without waking its reader, who drains it on a period; a record that
// finds the buffer full is counted in `dropped`. Built against the running kernel's
// BTF (vmlinux.h, from `bpftool btf dump`).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/// One event: CLOCK_MONOTONIC time, CPU, which tracepoint, three fields and up to two
/// task names.
struct record {
    __u64 time_ns;
    __u32 cpu;
    __u32 kind;
    __u64 a, b, c;
    char comm[16];
    char other_comm[16];
};

enum kind { WAKING, SWITCH, TIMER_START, TIMER_EXPIRE, SYS_EXIT };

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 1 << 24);
} records SEC(".maps");

/// Records the buffer had no room for, per CPU.
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} dropped SEC(".maps");

static __always_inline struct record *reserve(enum kind kind)
{
    struct record *r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
    if (!r) {
        __u32 zero = 0;
        __u64 *n = bpf_map_lookup_elem(&dropped, &zero);
        if (n)
            *n += 1;
        return 0;
    }
    r->time_ns = bpf_ktime_get_ns();
    r->cpu = bpf_get_smp_processor_id();
    r->kind = kind;
    return r;
}

static __always_inline int submit(struct record *r)
{
    bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
    return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(on_waking, struct task_struct *p)
{
    struct record *r = reserve(WAKING);
    if (!r)
        return 0;
    r->a = p->pid;
    r->b = p->prio;
    r->c = p->wake_cpu;
    bpf_probe_read_kernel(r->comm, sizeof(r->comm), p->comm);
    return submit(r);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
             unsigned int prev_state)
{
    struct record *r = reserve(SWITCH);
    if (!r)
        return 0;
    r->a = prev->pid;
    r->b = next->pid;
    r->c = prev_state;
    bpf_probe_read_kernel(r->comm, sizeof(r->comm), next->comm);
    bpf_probe_read_kernel(r->other_comm, sizeof(r->other_comm), prev->comm);
    return submit(r);
}

SEC("tp_btf/hrtimer_start")
int BPF_PROG(on_timer_start, struct hrtimer *timer, enum hrtimer_mode mode)
{
    struct record *r = reserve(TIMER_START);
    if (!r)
        return 0;
    r->a = (__u64)timer;
    r->b = timer->_softexpires;
    r->c = timer->node.expires;
    return submit(r);
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(on_timer_expire, struct hrtimer *timer, ktime_t *now)
{
    struct record *r = reserve(TIMER_EXPIRE);
    if (!r)
        return 0;
    r->a = (__u64)timer;
    bpf_probe_read_kernel(&r->b, sizeof(r->b), now);
    r->c = (__u64)timer->function;
    return submit(r);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
    struct record *r = reserve(SYS_EXIT);
    if (!r)
        return 0;
    r->a = regs->orig_ax;
    r->b = ret;
    r->c = bpf_get_current_pid_tgid();
    return submit(r);
}
