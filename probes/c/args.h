/*
 * Part of the C probe (probe.c includes it once, in order): the arguments: every bad one
 * exits 2 with one line on stderr, before any output. It relies on what probe.c and the
 * parts before it define.
 */
/* ------------------------------------------------------------- arguments */

/* Strict non-negative decimal integer: digits only, no sign, fits in int64. */
static uint64_t parse_number(const char *flag, const char *s)
{
    uint64_t v = 0;
    if (*s == '\0')
        die_usage("empty number for %s", flag);
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            die_usage("bad number for %s: '%s' (expected decimal digits only)", flag, s);
        unsigned digit = (unsigned)(*p - '0');
        if (v > (MAX_NUMBER - digit) / 10)
            die_usage("number out of range for %s: '%s'", flag, s);
        v = v * 10 + digit;
    }
    return v;
}

/* Comma-separated list with no spaces and no empty elements. */
static uint64_t *parse_list(const char *flag, const char *s, size_t *n_out)
{
    size_t n = 1;
    for (const char *p = s; *p; p++)
        n += (*p == ',');
    uint64_t *v = malloc(n * sizeof *v);
    char *copy = strdup(s);
    if (!v || !copy)
        die_sys("malloc", ENOMEM);
    char *item = copy;
    for (size_t i = 0; i < n; i++) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        if (*item == '\0')
            die_usage("empty element in %s list: '%s'", flag, s);
        v[i] = parse_number(flag, item);
        item = comma ? comma + 1 : item + strlen(item);
    }
    free(copy);
    *n_out = n;
    return v;
}

struct options {
    bool list;
    bool mlock;
    bool timestamps;
    const char *method;
    const char *durations;
    const char *count, *budget, *warmup, *max_count, *period;
};

static void parse_args(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--list") == 0) {
            if (o->list)
                die_usage("duplicate flag: '%s'", arg);
            o->list = true;
            continue;
        }
        if (strcmp(arg, "--mlock") == 0) {
            if (o->mlock)
                die_usage("duplicate flag: '%s'", arg);
            o->mlock = true;
            continue;
        }
        if (strcmp(arg, "--timestamps") == 0) {
            if (o->timestamps)
                die_usage("duplicate flag: '%s'", arg);
            o->timestamps = true;
            continue;
        }
        const char **slot = NULL;
        if (strcmp(arg, "--method") == 0)
            slot = &o->method;
        else if (strcmp(arg, "--durations-ns") == 0)
            slot = &o->durations;
        else if (strcmp(arg, "--count") == 0)
            slot = &o->count;
        else if (strcmp(arg, "--budget-ns") == 0)
            slot = &o->budget;
        else if (strcmp(arg, "--warmup") == 0)
            slot = &o->warmup;
        else if (strcmp(arg, "--max-count") == 0)
            slot = &o->max_count;
        else if (strcmp(arg, "--period-ns") == 0)
            slot = &o->period;
        else if (strncmp(arg, "--", 2) == 0)
            die_usage("unknown flag: '%s'", arg);
        else
            die_usage("unexpected argument: '%s'", arg);
        if (*slot)
            die_usage("duplicate flag: '%s'", arg);
        if (i + 1 >= argc)
            die_usage("missing value for %s", arg);
        *slot = argv[++i];
    }
}
