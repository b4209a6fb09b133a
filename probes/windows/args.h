/*
 * Part of the Windows probe (probe.c includes it once, in order): the arguments: every
 * bad one exits 2 with one line on stderr, before any output. It relies on what probe.c
 * and the parts before it define.
 */
/* ------------------------------------------------------------------------------------ */
/* argument parsing                                                                     */

struct args {
    int list;
    const char *method;
    const char *durations_s; /* raw, for messages */
    const char *period_s;
    uint64_t *durations;
    size_t n_durations;
    int have_count, have_budget, have_warmup, have_max, have_period;
    uint64_t count, budget, warmup, max_count, period;
};

/* strict non-negative decimal integer: digits only, fits in u64 */
static int parse_u64(const char *s, uint64_t *out_v)
{
    uint64_t v = 0;
    if (!*s) return 0;
    for (; *s; s++) {
        unsigned d;
        if (*s < '0' || *s > '9') return 0;
        d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    *out_v = v;
    return 1;
}

static uint64_t need_u64(const char *flag, const char *s)
{
    uint64_t v;
    if (!parse_u64(s, &v))
        BAD_ARGS("bad value for %s: '%s' (expected a non-negative decimal integer)", flag, s);
    return v;
}

static void parse_durations(struct args *a, const char *s)
{
    size_t n = 1, i = 0;
    const char *p;
    char tok[32];
    for (p = s; *p; p++)
        if (*p == ',') n++;
    a->durations = (uint64_t *)malloc(n * sizeof(uint64_t));
    if (!a->durations) die(1, "out of memory");
    p = s;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 0) BAD_ARGS("bad value for --durations-ns: '%s' (empty list element)", s);
        if (len >= sizeof tok)
            BAD_ARGS("bad value for --durations-ns: '%.*s' in '%s' (not a non-negative decimal integer)", (int)len, p, s);
        memcpy(tok, p, len);
        tok[len] = '\0';
        if (!parse_u64(tok, &a->durations[i])) {
            if (n == 1)
                BAD_ARGS("bad value for --durations-ns: '%s' (expected a non-negative decimal integer)", tok);
            BAD_ARGS("bad value for --durations-ns: '%s' in '%s' (expected a non-negative decimal integer)", tok, s);
        }
        if (a->durations[i] > MAX_NS)
            BAD_ARGS("bad value for --durations-ns: '%s' (larger than 2^31-1 ms, more than the APIs take)", tok);
        i++;
        if (!e) break;
        p = e + 1;
    }
    a->n_durations = i;
}

static void parse_args(int argc, char **argv, struct args *a)
{
    int i;
    memset(a, 0, sizeof *a);
    a->max_count = 100000;
    if (argc < 2) BAD_ARGS("no arguments (expected --list or --method M ...)");
    for (i = 1; i < argc; i++) {
        const char *f = argv[i];
        const char *v;
        if (strcmp(f, "--list") == 0) {
            if (a->list) BAD_ARGS("--list given twice");
            a->list = 1;
            continue;
        }
        if (strcmp(f, "--method") && strcmp(f, "--durations-ns") && strcmp(f, "--count") && strcmp(f, "--budget-ns") &&
            strcmp(f, "--warmup") && strcmp(f, "--max-count") && strcmp(f, "--period-ns"))
            BAD_ARGS("unknown argument '%s'", f);
        if (i + 1 >= argc) BAD_ARGS("%s needs a value", f);
        v = argv[++i];
        if (strcmp(f, "--method") == 0) {
            if (a->method) BAD_ARGS("--method given twice ('%s')", v);
            a->method = v;
        } else if (strcmp(f, "--durations-ns") == 0) {
            if (a->durations_s) BAD_ARGS("--durations-ns given twice ('%s')", v);
            a->durations_s = v;
            parse_durations(a, v);
        } else if (strcmp(f, "--count") == 0) {
            if (a->have_count) BAD_ARGS("--count given twice ('%s')", v);
            a->have_count = 1;
            a->count = need_u64(f, v);
            if (a->count == 0) BAD_ARGS("bad value for --count: '%s' (must be at least 1)", v);
        } else if (strcmp(f, "--budget-ns") == 0) {
            if (a->have_budget) BAD_ARGS("--budget-ns given twice ('%s')", v);
            a->have_budget = 1;
            a->budget = need_u64(f, v);
            if (a->budget == 0) BAD_ARGS("bad value for --budget-ns: '%s' (must be at least 1)", v);
        } else if (strcmp(f, "--warmup") == 0) {
            if (a->have_warmup) BAD_ARGS("--warmup given twice ('%s')", v);
            a->have_warmup = 1;
            a->warmup = need_u64(f, v);
        } else if (strcmp(f, "--max-count") == 0) {
            if (a->have_max) BAD_ARGS("--max-count given twice ('%s')", v);
            a->have_max = 1;
            a->max_count = need_u64(f, v);
            if (a->max_count == 0) BAD_ARGS("bad value for --max-count: '%s' (must be at least 1)", v);
        } else { /* --period-ns */
            if (a->have_period) BAD_ARGS("--period-ns given twice ('%s')", v);
            a->have_period = 1;
            a->period_s = v;
            a->period = need_u64(f, v);
            if (a->period == 0) BAD_ARGS("bad value for --period-ns: '%s' (must be at least 1)", v);
            if (a->period > MAX_NS)
                BAD_ARGS("bad value for --period-ns: '%s' (larger than 2^31-1 ms, more than the APIs take)", v);
        }
    }

    if (a->list) {
        for (i = 1; i < argc; i++)
            if (strcmp(argv[i], "--list") != 0) BAD_ARGS("--list takes no other arguments (got '%s')", argv[i]);
        return;
    }
    if (!a->method) BAD_ARGS("missing --method (or --list)");
    {
        int m = find_method(a->method);
        if (m < 0) BAD_ARGS("unknown method '%s' (see --list)", a->method);
        if (g_methods[m].kind == K_PERIODIC) {
            if (a->durations_s)
                BAD_ARGS("method '%s' is periodic: --durations-ns '%s' not allowed, use --period-ns", a->method,
                         a->durations_s);
            if (a->have_budget) BAD_ARGS("method '%s' is periodic: --budget-ns not allowed, use --count", a->method);
            if (a->have_max) BAD_ARGS("method '%s' is periodic: --max-count not allowed", a->method);
            if (!a->have_period) BAD_ARGS("method '%s' is periodic: missing --period-ns", a->method);
            if (!a->have_count) BAD_ARGS("method '%s' is periodic: missing --count", a->method);
        } else {
            if (a->have_period)
                BAD_ARGS("method '%s' is %s: --period-ns '%s' not allowed, use --durations-ns", a->method,
                         g_methods[m].kind == K_YIELD ? "yield" : "oneshot", a->period_s);
            if (!a->durations_s) BAD_ARGS("method '%s': missing --durations-ns", a->method);
            if (a->have_count && a->have_budget) BAD_ARGS("--count and --budget-ns given together (use one)");
            if (!a->have_count && !a->have_budget) BAD_ARGS("neither --count nor --budget-ns given (use one)");
        }
    }
}
