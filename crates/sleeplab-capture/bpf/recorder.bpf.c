// SPDX-License-Identifier: GPL-2.0
// sleeplab's BPF recorder of a followed program (`explain --pid PID --bpf`):
// the tracepoints a wake's account reads, as BTF-typed raw tracepoints writing records
// into one ring buffer, which the session drains on a period (no wakeup per record).
//
// * Every task's scheduler and timer events, and the guest's interrupts and softirqs
//   (and with the idle path, the local timer and the idle states), each program
//   loaded only where the session asks for it.
// * The system calls' entries and returns of the followed threads only: `followed`
//   holds their ids, and a thread a followed thread creates (a thread or a process) is
//   added to it in the kernel as it is born, so that its first call is kept; a thread
//   that exits leaves it. A child the map has no room for is counted in `late`.
// * A record that finds the ring full is counted in `dropped`, per CPU.
//
// Every record starts with the same header (`struct head`): CLOCK_MONOTONIC time, CPU,
// the current task's id (for an interrupt's events, the task it interrupted), the
// interrupt context as ftrace's `common_flags` spell it (from the CPU's preempt count,
// see `context_flags`), and the kind. The layouts
// are read by `src/bpf/record.rs`; change both together.
//
// No vmlinux.h: the few kernel structures read are declared below with
// `preserve_access_index`, so that the loader (aya) relocates each field to where the
// running kernel's BTF puts it (CO-RE).

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed int s32;
typedef signed long long s64;
typedef _Bool bool;

/* What libbpf's headers would give, spelled out so that clang alone builds this file:
 * the section and map-definition macros, and the helpers used (by their stable uapi
 * numbers). */
#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#define __always_inline inline __attribute__((always_inline))

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
                                   u64 flags) = (void *)2;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)3;
static u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static u32 (*bpf_get_smp_processor_id)(void) = (void *)8;
static u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static u64 (*bpf_get_current_task)(void) = (void *)35;
static long (*bpf_probe_read_kernel)(void *dst, u32 size, const void *src) = (void *)113;
static void *(*bpf_ringbuf_reserve)(void *ringbuf, u64 size, u64 flags) = (void *)131;
static void (*bpf_ringbuf_submit)(void *data, u64 flags) = (void *)132;

/* The map types and flags used (uapi values; stable). */
#define BPF_MAP_TYPE_HASH 1
#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_MAP_TYPE_RINGBUF 27
#define BPF_RB_NO_WAKEUP 1

char LICENSE[] SEC("license") = "GPL";

struct thread_info {
    u32 cpu;
} __attribute__((preserve_access_index));

struct rq {
    int cpu;
} __attribute__((preserve_access_index));

struct cfs_rq {
    struct rq *rq;
} __attribute__((preserve_access_index));

struct sched_entity {
    struct cfs_rq *cfs_rq;
} __attribute__((preserve_access_index));

struct task_struct {
    struct thread_info thread_info;
    struct sched_entity se;
    int pid;
    int exit_state;
    char comm[16];
} __attribute__((preserve_access_index));

struct timerqueue_node {
    s64 expires;
} __attribute__((preserve_access_index));

struct hrtimer {
    struct timerqueue_node node;
    s64 _softexpires;
} __attribute__((preserve_access_index));

struct pt_regs {
    unsigned long r10, r9, r8, dx, si, di, orig_ax;
} __attribute__((preserve_access_index));

/* ftrace's TRACE_FLAG_* bits, which `Event::flags` carries. */
#define FLAG_HARDIRQ 0x08
#define FLAG_SOFTIRQ 0x10
#define FLAG_NMI 0x40

enum kind {
    K_WAKING = 1,
    K_SWITCH,
    K_TIMER_START,
    K_TIMER_EXPIRE,
    K_SYS_ENTER,
    K_SYS_EXIT,
    K_IRQ_ENTRY,
    K_IRQ_EXIT,
    K_IDLE,
};

/* Which interrupt an IRQ record is (`Interrupt` in the Rust decoder). */
enum irq_what { DEVICE = 0, LOCAL_TIMER, VECTOR, SOFTIRQ };

struct head {
    u64 time_ns;
    u32 cpu;
    s32 pid;
    u8 flags;
    u8 kind;
    u8 pad[6];
};

struct waking {
    struct head h;
    s32 pid;
    s32 target_cpu;
};

struct switching {
    struct head h;
    s32 prev_pid;
    s32 next_pid;
    u32 prev_state;
    s32 prev_exit_state;
    u32 preempt;
    u32 pad;
    char prev_comm[16];
    char next_comm[16];
};

struct timer_start {
    struct head h;
    u64 timer;
    s64 soft_ns;
    s64 hard_ns;
};

struct timer_expire {
    struct head h;
    u64 timer;
    s64 now_ns;
};

struct sys_enter {
    struct head h;
    s64 id;
    u64 args[6];
};

struct sys_exit {
    struct head h;
    s64 id;
    s64 ret;
};

struct irq {
    struct head h;
    u32 what;
    s32 number;
};

struct idle {
    struct head h;
    u32 state;
    u32 pad;
};

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 1 << 23);
} records SEC(".maps");

/* Records the ring had no room for, per CPU. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, u32);
    __type(value, u64);
} dropped SEC(".maps");

/* The followed threads, by id. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 16384);
    __type(key, s32);
    __type(value, u8);
} followed SEC(".maps");

/* Children of followed threads `followed` had no room for. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, u32);
    __type(value, u64);
} late SEC(".maps");

static __always_inline void count(void *map)
{
    u32 zero = 0;
    u64 *n = bpf_map_lookup_elem(map, &zero);
    if (n)
        __sync_fetch_and_add(n, 1);
}

/* Which context an event fired in is the CPU's preempt count, as ftrace reads it for
 * `common_flags`. That count is the per-CPU variable `__preempt_count`, which a BPF
 * program could name as a `__ksym` only if the kernel listed its data symbols
 * (CONFIG_KALLSYMS_ALL), which these kernels do not. So it is found from a per-CPU
 * object the program can reach: the CPU's run queue (`runqueues`), through the current
 * task's scheduling entity. Both variables lie in the same per-CPU area, as far apart
 * as the kernel's BTF places them in `.data..percpu`: the loader writes that distance
 * into every CPU's `preempt_count` entry, and each CPU's first event finds its address
 * (checking the run queue is this CPU's) and keeps it. */
struct preempt_count {
    s64 from_runqueue;
    u64 address;
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, u32);
    __type(value, struct preempt_count);
} preempt_count SEC(".maps");

#define NMI_MASK 0x00f00000
#define HARDIRQ_MASK 0x000f0000
#define SOFTIRQ_OFFSET 0x00000100

static __always_inline u8 context_flags(void)
{
    u32 zero = 0;
    struct preempt_count *p = bpf_map_lookup_elem(&preempt_count, &zero);
    if (!p || !p->from_runqueue)
        return 0;
    if (!p->address) {
        /* Read as plain values (probe reads): the verifier allows no arithmetic on a
         * typed pointer. */
        struct task_struct *t = (struct task_struct *)bpf_get_current_task();
        struct cfs_rq *cfs = 0;
        struct rq *rq = 0;
        int cpu = -1;
        bpf_probe_read_kernel(&cfs, sizeof(cfs), &t->se.cfs_rq);
        if (cfs)
            bpf_probe_read_kernel(&rq, sizeof(rq), &cfs->rq);
        if (rq)
            bpf_probe_read_kernel(&cpu, sizeof(cpu), &rq->cpu);
        if (!rq || cpu != (int)bpf_get_smp_processor_id())
            return 0;
        p->address = (u64)rq + p->from_runqueue;
    }
    int pc = 0;
    bpf_probe_read_kernel(&pc, sizeof(pc), (void *)p->address);
    u8 flags = 0;
    if (pc & NMI_MASK)
        flags |= FLAG_NMI;
    if (pc & HARDIRQ_MASK)
        flags |= FLAG_HARDIRQ;
    if (pc & SOFTIRQ_OFFSET)
        flags |= FLAG_SOFTIRQ;
    return flags;
}

/* Reserves a record of `size` bytes of `kind` with its header filled, or counts it
 * dropped. */
static __always_inline void *reserve(u64 size, u8 kind)
{
    struct head *h = bpf_ringbuf_reserve(&records, size, 0);
    if (!h) {
        count(&dropped);
        return 0;
    }
    h->time_ns = bpf_ktime_get_ns();
    h->cpu = bpf_get_smp_processor_id();
    h->pid = (s32)bpf_get_current_pid_tgid();
    h->flags = context_flags();
    h->kind = kind;
    __builtin_memset(h->pad, 0, sizeof(h->pad));
    return h;
}

#define RESERVE(type, kind) ((struct type *)reserve(sizeof(struct type), kind))

static __always_inline int submit(void *r)
{
    bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
    return 0;
}

static __always_inline bool current_followed(void)
{
    s32 tid = (s32)bpf_get_current_pid_tgid();
    return bpf_map_lookup_elem(&followed, &tid) != 0;
}

SEC("tp_btf/sched_waking")
int on_waking(u64 *ctx)
{
    struct task_struct *p = (void *)ctx[0];
    struct waking *r = RESERVE(waking, K_WAKING);
    if (!r)
        return 0;
    r->pid = p->pid;
    r->target_cpu = p->thread_info.cpu;
    return submit(r);
}

SEC("tp_btf/sched_switch")
int on_switch(u64 *ctx)
{
    bool preempt = (bool)ctx[0];
    struct task_struct *prev = (void *)ctx[1];
    struct task_struct *next = (void *)ctx[2];
    unsigned int prev_state = (unsigned int)ctx[3];
    struct switching *r = RESERVE(switching, K_SWITCH);
    if (!r)
        return 0;
    r->prev_pid = prev->pid;
    r->next_pid = next->pid;
    r->prev_state = prev_state;
    r->prev_exit_state = prev->exit_state;
    r->preempt = preempt;
    r->pad = 0;
    bpf_probe_read_kernel(r->prev_comm, sizeof(r->prev_comm), prev->comm);
    bpf_probe_read_kernel(r->next_comm, sizeof(r->next_comm), next->comm);
    return submit(r);
}

SEC("tp_btf/hrtimer_start")
int on_timer_start(u64 *ctx)
{
    struct hrtimer *timer = (void *)ctx[0];
    struct timer_start *r = RESERVE(timer_start, K_TIMER_START);
    if (!r)
        return 0;
    r->timer = (u64)timer;
    r->soft_ns = timer->_softexpires;
    r->hard_ns = timer->node.expires;
    return submit(r);
}

SEC("tp_btf/hrtimer_expire_entry")
int on_timer_expire(u64 *ctx)
{
    struct hrtimer *timer = (void *)ctx[0];
    s64 *now = (void *)ctx[1];
    struct timer_expire *r = RESERVE(timer_expire, K_TIMER_EXPIRE);
    if (!r)
        return 0;
    r->timer = (u64)timer;
    r->now_ns = 0;
    bpf_probe_read_kernel(&r->now_ns, sizeof(r->now_ns), now);
    return submit(r);
}

SEC("tp_btf/sys_enter")
int on_sys_enter(u64 *ctx)
{
    struct pt_regs *regs = (void *)ctx[0];
    long id = (long)ctx[1];
    if (!current_followed())
        return 0;
    struct sys_enter *r = RESERVE(sys_enter, K_SYS_ENTER);
    if (!r)
        return 0;
    r->id = id;
    r->args[0] = regs->di;
    r->args[1] = regs->si;
    r->args[2] = regs->dx;
    r->args[3] = regs->r10;
    r->args[4] = regs->r8;
    r->args[5] = regs->r9;
    return submit(r);
}

SEC("tp_btf/sys_exit")
int on_sys_exit(u64 *ctx)
{
    struct pt_regs *regs = (void *)ctx[0];
    long ret = (long)ctx[1];
    if (!current_followed())
        return 0;
    struct sys_exit *r = RESERVE(sys_exit, K_SYS_EXIT);
    if (!r)
        return 0;
    r->id = regs->orig_ax;
    r->ret = ret;
    return submit(r);
}

SEC("tp_btf/sched_process_fork")
int on_fork(u64 *ctx)
{
    struct task_struct *parent = (void *)ctx[0];
    struct task_struct *child = (void *)ctx[1];
    s32 parent_tid = parent->pid;
    if (!bpf_map_lookup_elem(&followed, &parent_tid))
        return 0;
    s32 child_tid = child->pid;
    u8 one = 1;
    if (bpf_map_update_elem(&followed, &child_tid, &one, 0) != 0)
        count(&late);
    return 0;
}

SEC("tp_btf/sched_process_exit")
int on_exit(u64 *ctx)
{
    struct task_struct *task = (void *)ctx[0];
    s32 tid = task->pid;
    bpf_map_delete_elem(&followed, &tid);
    return 0;
}

static __always_inline int irq(u8 kind, u32 what, int number)
{
    struct irq *r = RESERVE(irq, kind);
    if (!r)
        return 0;
    r->what = what;
    r->number = number;
    return submit(r);
}

SEC("tp_btf/irq_handler_entry")
int on_irq_entry(u64 *ctx)
{
    int irq_number = (int)ctx[0];
    return irq(K_IRQ_ENTRY, DEVICE, irq_number);
}

SEC("tp_btf/irq_handler_exit")
int on_irq_exit(u64 *ctx)
{
    int irq_number = (int)ctx[0];
    return irq(K_IRQ_EXIT, DEVICE, irq_number);
}

SEC("tp_btf/softirq_entry")
int on_softirq_entry(u64 *ctx)
{
    unsigned int vec = (unsigned int)ctx[0];
    return irq(K_IRQ_ENTRY, SOFTIRQ, vec);
}

SEC("tp_btf/softirq_exit")
int on_softirq_exit(u64 *ctx)
{
    unsigned int vec = (unsigned int)ctx[0];
    return irq(K_IRQ_EXIT, SOFTIRQ, vec);
}

/* x86's system vectors: each entry and exit is a program of its own. */
#define VECTOR(name)                                                                   \
    SEC("tp_btf/" #name "_entry")                                                      \
    int on_##name##_entry(u64 *ctx)                                                    \
    {                                                                                  \
        return irq(K_IRQ_ENTRY, VECTOR, (int)ctx[0]);                                  \
    }                                                                                  \
    SEC("tp_btf/" #name "_exit")                                                       \
    int on_##name##_exit(u64 *ctx)                                                     \
    {                                                                                  \
        return irq(K_IRQ_EXIT, VECTOR, (int)ctx[0]);                                   \
    }

VECTOR(reschedule)
VECTOR(call_function)
VECTOR(call_function_single)
VECTOR(irq_work)

SEC("tp_btf/local_timer_entry")
int on_local_timer_entry(u64 *ctx)
{
    int vector = (int)ctx[0];
    return irq(K_IRQ_ENTRY, LOCAL_TIMER, vector);
}

SEC("tp_btf/local_timer_exit")
int on_local_timer_exit(u64 *ctx)
{
    int vector = (int)ctx[0];
    return irq(K_IRQ_EXIT, LOCAL_TIMER, vector);
}

SEC("tp_btf/cpu_idle")
int on_cpu_idle(u64 *ctx)
{
    unsigned int state = (unsigned int)ctx[0];
    struct idle *r = RESERVE(idle, K_IDLE);
    if (!r)
        return 0;
    r->state = state;
    r->pad = 0;
    return submit(r);
}
