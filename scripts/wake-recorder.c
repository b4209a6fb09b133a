// The reader of scripts/wake-recorder.bpf.c, for scripts/bench-floor.sh: loads the BPF
// object, attaches every program, says "ready" on stdout, then drains the ring buffer
// every 100 ms until SIGINT or SIGTERM (during the block, on whichever CPU the scheduler
// gives it: a cost the BPF side pays inside its block, where the ftrace side is read
// after its block ends), and prints "records N dropped D switch-ins
// K": K of the switches it read brought a task named COMM onto a CPU (each record's
// fields read back, so a side that recorded nothing or garbage shows it).
//
//   wake-recorder OBJECT [COMM]
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/// The BPF side's record (scripts/wake-recorder.bpf.c).
struct record {
    unsigned long long time_ns;
    unsigned cpu, kind;
    unsigned long long a, b, c;
    char comm[16];
    char other_comm[16];
};

enum { SWITCH = 1 };

static volatile sig_atomic_t stop;
static unsigned long long records, switch_ins;
static const char *watched;

static void on_signal(int sig) { (void)sig; stop = 1; }

static int on_record(void *ctx, void *data, size_t size)
{
    (void)ctx;
    const struct record *r = data;
    records++;
    if (watched && size >= sizeof *r && r->kind == SWITCH &&
        strncmp(r->comm, watched, sizeof r->comm) == 0)
        switch_ins++;
    return 0;
}

/// The records the kernel dropped for want of room, summed over CPUs.
static unsigned long long dropped(struct bpf_object *obj)
{
    int fd = bpf_object__find_map_fd_by_name(obj, "dropped");
    int cpus = libbpf_num_possible_cpus();
    if (fd < 0 || cpus <= 0)
        return 0;
    unsigned long long *per_cpu = calloc((size_t)cpus, sizeof *per_cpu), sum = 0;
    unsigned zero = 0;
    if (per_cpu && bpf_map_lookup_elem(fd, &zero, per_cpu) == 0)
        for (int i = 0; i < cpus; i++)
            sum += per_cpu[i];
    free(per_cpu);
    return sum;
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: wake-recorder OBJECT [COMM]\n");
        return 2;
    }
    watched = argc == 3 ? argv[2] : NULL;
    struct bpf_object *obj = bpf_object__open_file(argv[1], NULL);
    if (!obj || bpf_object__load(obj)) {
        fprintf(stderr, "wake-recorder: cannot load %s\n", argv[1]);
        return 1;
    }
    struct bpf_program *prog;
    bpf_object__for_each_program(prog, obj) {
        if (!bpf_program__attach(prog)) {
            fprintf(stderr, "wake-recorder: cannot attach %s\n", bpf_program__name(prog));
            return 1;
        }
    }
    struct ring_buffer *rb = ring_buffer__new(bpf_object__find_map_fd_by_name(obj, "records"),
                                              on_record, NULL, NULL);
    if (!rb) {
        fprintf(stderr, "wake-recorder: cannot open the ring buffer\n");
        return 1;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    printf("ready\n");
    fflush(stdout);
    struct timespec period = {0, 100 * 1000 * 1000};
    while (!stop) {
        ring_buffer__consume(rb);
        nanosleep(&period, NULL);
    }
    ring_buffer__consume(rb);
    printf("records %llu dropped %llu switch-ins %llu\n", records, dropped(obj), switch_ins);
    ring_buffer__free(rb);
    bpf_object__close(obj);
    return 0;
}
