/*
 * Part of the C probe (probe.c includes it once, in order): what the probe prints: JSON
 * strings, the header, the method list and the protocol's lines. It relies on what
 * probe.c and the parts before it define.
 */
/* ---------------------------------------------------------------- output */

static void print_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* --timestamps: every one-shot line carries its call's start, every periodic cell its t0. */
static bool timestamps;

static void print_header(const char *method, const char *mode)
{
    struct utsname u;
    char platform[sizeof u.sysname + sizeof u.machine + 2] = "unknown";
    if (uname(&u) == 0) {
        for (char *p = u.sysname; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                *p = (char)(*p - 'A' + 'a');
        snprintf(platform, sizeof platform, "%s %s", u.sysname, u.machine);
    }
    char version[256];
    snprintf(version, sizeof version, "%s, glibc %s", __VERSION__, gnu_get_libc_version());

    fputs("{\"protocol\":\"sleeplab-probe/1\",\"runtime\":\"c\",\"implementation\":", stdout);
#if defined(__clang__)
    print_json_string("clang");
#elif defined(__GNUC__)
    print_json_string("gcc");
#else
    print_json_string("unknown");
#endif
    fputs(",\"runtime_version\":", stdout);
    print_json_string(version);
    fputs(",\"clock\":\"CLOCK_MONOTONIC\",\"platform\":", stdout);
    print_json_string(platform);
    /* Extra field (allowed by the spec): the slack the kernel adds to this thread's timers. */
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (slack >= 0)
        printf(",\"timerslack_ns\":%d", slack);
    if (!method) /* the optional arguments this probe takes (spec: --list header) */
        fputs(",\"options\":[\"mlock\",\"timestamps\"]", stdout);
    if (method) {
        fputs(",\"method\":", stdout);
        print_json_string(method);
        fputs(",\"mode\":", stdout);
        print_json_string(mode);
        /* This thread measures: the kernel's id of it, for a trace of its waits. */
        printf(",\"tid\":%ld", (long)syscall(SYS_gettid));
        if (timestamps)
            fputs(",\"timestamps\":true", stdout);
    }
    fputs("}\n", stdout);
}

static void print_list(void)
{
    print_header(NULL, NULL);
    for (size_t i = 0; i < N_METHODS; i++) {
        fputs("{\"method\":", stdout);
        print_json_string(methods[i].name);
        const char *why = unavailable_reason(&methods[i]);
        printf(",\"kind\":\"%s\",\"available\":%s", kind_names[methods[i].kind],
               why ? "false" : "true");
        if (why) {
            fputs(",\"reason\":", stdout);
            print_json_string(why);
        }
        fputs(",\"description\":", stdout);
        print_json_string(methods[i].description);
        fputs("}\n", stdout);
    }
    fputs("end\n", stdout);
}

/*
 * What a cell prints with --timestamps (ignored without): each one-shot call's start
 * (`warm`, `samples`, parallel to the values), or the periodic cell's t0.
 */
struct stamps {
    const uint64_t *warm;
    const uint64_t *samples;
    uint64_t t0;
};

/* One line: tag, value and, with --timestamps, the start when there is one. */
static void print_line(const char *tag, uint64_t value, const uint64_t *start)
{
    if (timestamps && start)
        printf("%s %" PRIu64 " %" PRIu64 "\n", tag, value, *start);
    else
        printf("%s %" PRIu64 "\n", tag, value);
}

static void print_cell(uint64_t value, const char *tag, const uint64_t *warm, uint64_t n_warm,
                       const uint64_t *samples, uint64_t n, const struct stamps *st)
{
    bool periodic = strcmp(tag, "t") == 0;
    printf("cell %" PRIu64 "\n", value);
    if (timestamps && periodic)
        printf("t0 %" PRIu64 "\n", st->t0);
    for (uint64_t i = 0; i < n_warm; i++)
        print_line("w", warm[i], periodic ? NULL : &st->warm[i]);
    for (uint64_t i = 0; i < n; i++)
        print_line(tag, samples[i], periodic ? NULL : &st->samples[i]);
    printf("done %" PRIu64 " %" PRIu64 "\n", value, n);
    fflush(stdout);
}
