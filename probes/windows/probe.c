/*
 * sleeplab Windows probe: measures Win32 wait functions with QueryPerformanceCounter
 * and prints the results in the sleeplab probe protocol (spec/probe-protocol.md,
 * `sleeplab-probe/1`).
 *
 * Build (mingw-w64):  x86_64-w64-mingw32-gcc -O2 -Wall -Wextra -o probe.exe probe.c -lwinmm
 * Build (MSVC):       cl /O2 probe.c winmm.lib
 *
 * Rules this file keeps:
 *  - timed region = one QPC read, the wait, one QPC read; raw tick differences are
 *    stored in pre-allocated arrays, converted to ns and printed after the cell;
 *  - every bad argument exits 2 with one line on stderr and nothing on stdout;
 *  - numbers are formatted by our own u64 formatter (no %llu / %I64u ambiguity between
 *    msvcrt, UCRT and mingw's ANSI stdio), stdout is in binary mode so lines end in "\n".
 */
#ifndef _WIN32_WINNT
#define _WIN32_WINNT 0x0A00
#endif
/* C99 printf family under mingw-w64 (only used for messages and notes; samples use our
 * own formatter) */
#ifndef __USE_MINGW_ANSI_STDIO
#define __USE_MINGW_ANSI_STDIO 1
#endif
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <mmsystem.h>
#include <fcntl.h>
#include <io.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _MSC_VER
#pragma comment(lib, "winmm.lib")
#pragma comment(lib, "user32.lib")
#endif

#ifndef CREATE_WAITABLE_TIMER_HIGH_RESOLUTION
#define CREATE_WAITABLE_TIMER_HIGH_RESOLUTION 0x00000002
#endif
#ifndef USER_TIMER_MINIMUM
#define USER_TIMER_MINIMUM 0x0000000A
#endif

#define NS_PER_S 1000000000ULL
#define NS_PER_MS 1000000ULL
/* Largest duration or period accepted: 2^31-1 ms (what the ms-based APIs can take). */
#define MAX_NS (2147483647ULL * NS_PER_MS)

/* ------------------------------------------------------------------------------------ */
/* errors                                                                               */

static void die(int code, const char *fmt, ...)
{
    va_list ap;
    fputs("windows probe: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    exit(code);
}

#define BAD_ARGS(...) die(2, __VA_ARGS__)

/* ------------------------------------------------------------------------------------ */
/* clock                                                                                */

static uint64_t g_qpf; /* QPC ticks per second */

static inline int64_t qpc(void)
{
    LARGE_INTEGER v;
    QueryPerformanceCounter(&v);
    return v.QuadPart;
}

/* ticks -> ns without overflow: whole seconds and remainder separately.
 * (rem * 1e9) < qpf * 1e9, fine for any qpf below 1.8e10 Hz. */
static uint64_t ticks_to_ns(uint64_t t)
{
    return (t / g_qpf) * NS_PER_S + ((t % g_qpf) * NS_PER_S) / g_qpf;
}

/* ns -> ticks, rounded up (so a spin never ends before the requested time). */
static uint64_t ns_to_ticks_ceil(uint64_t ns)
{
    uint64_t r = (ns % NS_PER_S) * g_qpf;
    return (ns / NS_PER_S) * g_qpf + r / NS_PER_S + (r % NS_PER_S != 0);
}

/* ------------------------------------------------------------------------------------ */
/* output                                                                               */

static char *u64_str(uint64_t v, char buf[24])
{
    char *p = buf + 23;
    *p = '\0';
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p;
}

static void out(const char *s) { fputs(s, stdout); }

static void out_u64(uint64_t v)
{
    char b[24];
    fputs(u64_str(v, b), stdout);
}

/* "<tag> <v>\n" */
static void out_line(const char *tag, uint64_t v)
{
    out(tag);
    out(" ");
    out_u64(v);
    out("\n");
}

/* JSON string with escaping */
static void out_json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            putchar('\\');
            putchar(c);
        } else if (c < 0x20) {
            printf("\\u%04x", c);
        } else {
            putchar(c);
        }
    }
    putchar('"');
}

static void out_kv(const char *k, const char *v, int first)
{
    if (!first) putchar(',');
    out_json_str(k);
    putchar(':');
    out_json_str(v);
}

/* ------------------------------------------------------------------------------------ */
/* platform description                                                                  */

static char g_platform[256];
static char g_runtime_version[512];
static const char *g_implementation = "windows";
static unsigned long g_res_min = 0, g_res_max = 0, g_res_cur = 0; /* 100 ns units */
static int g_have_res = 0;

typedef const char *(__cdecl *wine_get_version_fn)(void);
typedef void(__cdecl *wine_get_host_version_fn)(const char **sysname, const char **release);
typedef LONG(WINAPI *rtl_get_version_fn)(OSVERSIONINFOW *);
typedef LONG(WINAPI *nt_query_timer_resolution_fn)(ULONG *, ULONG *, ULONG *);

static void detect_platform(void)
{
    HMODULE ntdll = GetModuleHandleA("ntdll.dll");
    wine_get_version_fn wgv = NULL;
    wine_get_host_version_fn wghv = NULL;
    rtl_get_version_fn rgv = NULL;
    nt_query_timer_resolution_fn nqtr = NULL;

    if (ntdll) {
        /* casts through FARPROC -> void* keep -Wcast-function-type quiet */
        wgv = (wine_get_version_fn)(void *)GetProcAddress(ntdll, "wine_get_version");
        wghv = (wine_get_host_version_fn)(void *)GetProcAddress(ntdll, "wine_get_host_version");
        rgv = (rtl_get_version_fn)(void *)GetProcAddress(ntdll, "RtlGetVersion");
        nqtr = (nt_query_timer_resolution_fn)(void *)GetProcAddress(ntdll, "NtQueryTimerResolution");
    }
    if (wgv) {
        const char *sys = NULL, *rel = NULL;
        g_implementation = "wine";
        if (wghv) wghv(&sys, &rel);
        if (sys && rel)
            snprintf(g_platform, sizeof g_platform, "wine %s on %s %s", wgv(), sys, rel);
        else if (sys)
            snprintf(g_platform, sizeof g_platform, "wine %s on %s", wgv(), sys);
        else
            snprintf(g_platform, sizeof g_platform, "wine %s", wgv());
    } else {
        OSVERSIONINFOW vi;
        memset(&vi, 0, sizeof vi);
        vi.dwOSVersionInfoSize = sizeof vi;
        if (rgv && rgv(&vi) == 0)
            snprintf(g_platform, sizeof g_platform, "Windows %lu.%lu.%lu", (unsigned long)vi.dwMajorVersion,
                     (unsigned long)vi.dwMinorVersion, (unsigned long)vi.dwBuildNumber);
        else
            snprintf(g_platform, sizeof g_platform, "Windows (version unknown)");
    }
    if (nqtr) {
        ULONG mx = 0, mn = 0, cur = 0;
        if (nqtr(&mx, &mn, &cur) == 0) {
            /* NtQueryTimerResolution(Maximum, Minimum, Current): "maximum" is the coarsest */
            g_res_max = mx;
            g_res_min = mn;
            g_res_cur = cur;
            g_have_res = 1;
        }
    }

#if defined(__GNUC__)
#if defined(__MINGW64_VERSION_STR)
    snprintf(g_runtime_version, sizeof g_runtime_version, "gcc %s, mingw-w64 %s; %s", __VERSION__,
             __MINGW64_VERSION_STR, g_platform);
#else
    snprintf(g_runtime_version, sizeof g_runtime_version, "gcc %s; %s", __VERSION__, g_platform);
#endif
#elif defined(_MSC_FULL_VER)
    snprintf(g_runtime_version, sizeof g_runtime_version, "MSVC %lu; %s", (unsigned long)_MSC_FULL_VER,
             g_platform);
#else
    snprintf(g_runtime_version, sizeof g_runtime_version, "unknown compiler; %s", g_platform);
#endif
}

static void print_header(const char *method, const char *mode)
{
    putchar('{');
    out_kv("protocol", "sleeplab-probe/1", 1);
    out_kv("runtime", "windows", 0);
    out_kv("implementation", g_implementation, 0);
    out_kv("runtime_version", g_runtime_version, 0);
    out_kv("clock", "QueryPerformanceCounter", 0);
    out_kv("platform", g_platform, 0);
    if (method) {
        out_kv("method", method, 0);
        out_kv("mode", mode, 0);
    }
    /* extra fields (allowed by the protocol, ignored by the parser) */
    out(",\"qpc_hz\":");
    out_u64(g_qpf);
    if (g_have_res) {
        out(",\"timer_resolution_current_100ns\":");
        out_u64(g_res_cur);
        out(",\"timer_resolution_finest_100ns\":");
        out_u64(g_res_min);
        out(",\"timer_resolution_coarsest_100ns\":");
        out_u64(g_res_max);
    }
    out("}\n");
}

/* ------------------------------------------------------------------------------------ */
/* methods                                                                              */

enum kind { K_ONESHOT, K_YIELD, K_PERIODIC };

enum method_id {
    M_SLEEP,
    M_SLEEPEX,
    M_WT,
    M_WT_HR,
    M_TBP_SLEEP,
    M_BUSY,
    M_SEED002,
    M_SLEEP0,
    M_SWITCH,
    M_SETTIMER,
    M_TIMESETEVENT,
    M_TQT,
    M_WT_PERIODIC,
    M_COUNT
};

struct method {
    const char *name;
    enum kind kind;
    const char *description;
};

static const struct method g_methods[M_COUNT] = {
    [M_SLEEP] = {"Sleep", K_ONESHOT, "Sleep(ms) with ms = d / 1000000 (integer division), default timer resolution"},
    [M_SLEEPEX] = {"SleepEx", K_ONESHOT, "SleepEx(ms, FALSE) with ms = d / 1000000 (integer division)"},
    [M_WT] = {"waitable-timer", K_ONESHOT,
              "CreateWaitableTimerW(NULL,FALSE,NULL) once; per call SetWaitableTimer(relative -d/100 x 100 ns) + "
              "WaitForSingleObject(INFINITE)"},
    [M_WT_HR] = {"waitable-timer-high-res", K_ONESHOT,
                 "CreateWaitableTimerExW(CREATE_WAITABLE_TIMER_HIGH_RESOLUTION) once; per call SetWaitableTimer("
                 "relative -d/100 x 100 ns) + WaitForSingleObject(INFINITE)"},
    [M_TBP_SLEEP] = {"timeBeginPeriod1-Sleep", K_ONESHOT,
                     "timeBeginPeriod(1) once for the run, Sleep(d / 1000000), timeEndPeriod(1) at exit"},
    [M_BUSY] = {"qpc-busy-wait", K_ONESHOT, "spin on QueryPerformanceCounter until ceil(d * qpc_hz / 1e9) ticks passed"},
    [M_SEED002] = {"seed002-timer-sleep", K_ONESHOT,
                   "waitable timer for (remaining - estimate), estimate = running mean + 1 sigma of the timer's "
                   "overshoot (Welford, kept for the whole run), then spin on QPC to the deadline"},
    [M_SLEEP0] = {"Sleep0", K_YIELD, "Sleep(0)"},
    [M_SWITCH] = {"SwitchToThread", K_YIELD, "SwitchToThread()"},
    [M_SETTIMER] = {"SetTimer", K_PERIODIC,
                    "SetTimer(NULL, 0, ms, NULL) on the thread message queue, GetMessage loop, arrival = GetMessage "
                    "returning WM_TIMER; ms = P/1e6, clamped to USER_TIMER_MINIMUM (10 ms)"},
    [M_TIMESETEVENT] = {"timeSetEvent", K_PERIODIC,
                        "timeSetEvent(ms, 0, cb, TIME_PERIODIC|TIME_CALLBACK_FUNCTION|TIME_KILL_SYNCHRONOUS); "
                        "arrival = QPC read in the callback; ms = P/1e6 (API granularity 1 ms)"},
    [M_TQT] = {"CreateTimerQueueTimer", K_PERIODIC,
               "CreateTimerQueueTimer(default queue, due ms, period ms, WT_EXECUTEDEFAULT); arrival = QPC read in "
               "the callback; ms = P/1e6 (API granularity 1 ms)"},
    [M_WT_PERIODIC] = {"waitable-timer-periodic", K_PERIODIC,
                       "SetWaitableTimer(due -P/100 x 100 ns, lPeriod = P/1e6 ms) + WaitForSingleObject loop; "
                       "lPeriod is in ms (API granularity 1 ms)"},
};

/* availability, filled by probe_availability() */
static int g_available[M_COUNT];
static char g_reason[M_COUNT][160];

static void probe_availability(void)
{
    int i;
    for (i = 0; i < M_COUNT; i++) g_available[i] = 1;
    {
        HANDLE h = CreateWaitableTimerExW(NULL, NULL, CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, TIMER_ALL_ACCESS);
        if (h) {
            CloseHandle(h);
        } else {
            g_available[M_WT_HR] = 0;
            snprintf(g_reason[M_WT_HR], sizeof g_reason[M_WT_HR],
                     "CreateWaitableTimerExW(CREATE_WAITABLE_TIMER_HIGH_RESOLUTION) failed, GetLastError=%lu "
                     "(needs Windows 10 1803+)",
                     (unsigned long)GetLastError());
        }
    }
}

static int find_method(const char *name)
{
    int i;
    for (i = 0; i < M_COUNT; i++)
        if (strcmp(g_methods[i].name, name) == 0) return i;
    return -1;
}

static void do_list(void)
{
    int i;
    print_header(NULL, NULL);
    for (i = 0; i < M_COUNT; i++) {
        const char *k = g_methods[i].kind == K_ONESHOT ? "oneshot" : g_methods[i].kind == K_YIELD ? "yield" : "periodic";
        putchar('{');
        out_kv("method", g_methods[i].name, 1);
        out_kv("kind", k, 0);
        out(g_available[i] ? ",\"available\":true" : ",\"available\":false");
        if (!g_available[i]) out_kv("reason", g_reason[i], 0);
        if (i == M_WT_HR && strcmp(g_implementation, "wine") == 0) {
            char d[512];
            snprintf(d, sizeof d, "%s; on wine the flag is accepted and ignored (same timer as waitable-timer)",
                     g_methods[i].description);
            out_kv("description", d, 0);
        } else {
            out_kv("description", g_methods[i].description, 0);
        }
        out("}\n");
    }
    out("end\n");
}

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

/* ------------------------------------------------------------------------------------ */
/* one-shot waits                                                                       */

static HANDLE g_timer;         /* waitable timer for waitable-timer(-high-res) */
static HANDLE g_seed_timer;    /* waitable timer for seed002 */
static int g_period_begun = 0; /* timeBeginPeriod(1) active */

/* per-cell precomputed arguments, so the timed region holds only the call */
struct cell_args {
    DWORD ms;           /* Sleep/SleepEx */
    LARGE_INTEGER due;  /* waitable timers: negative = relative, 100 ns units */
    uint64_t ticks;     /* busy wait */
    uint64_t ns;        /* seed002 */
};

/* seed002 state: a running estimate of how much a waitable timer oversleeps, kept for the
 * whole run (the seed keeps it in statics). Initial values as in the seed: 5 ms, count 1. */
static double s_mean = 5e6, s_m2 = 0.0, s_estimate = 5e6;
static int64_t s_n = 1;

static void seed002_wait(uint64_t d_ns, uint64_t d_ticks)
{
    int64_t start = qpc();
    int64_t deadline = start + (int64_t)d_ticks;
    (void)d_ns;
    for (;;) {
        int64_t now = qpc();
        double remaining = now >= deadline ? 0.0 : (double)ticks_to_ns((uint64_t)(deadline - now));
        double to_wait = remaining - s_estimate;
        LARGE_INTEGER due;
        int64_t a, b;
        double observed, err, delta;
        if (to_wait <= 100.0) break; /* less than one 100 ns unit left for the timer */
        due.QuadPart = -(LONGLONG)(to_wait / 100.0);
        a = qpc();
        SetWaitableTimer(g_seed_timer, &due, 0, NULL, NULL, FALSE);
        WaitForSingleObject(g_seed_timer, INFINITE);
        b = qpc();
        observed = (double)ticks_to_ns((uint64_t)(b - a));
        err = observed - to_wait;
        s_n++;
        delta = err - s_mean;
        s_mean += delta / (double)s_n;
        s_m2 += delta * (err - s_mean);
        s_estimate = s_mean + sqrt(s_m2 / (double)(s_n - 1));
    }
    while (qpc() < deadline) YieldProcessor();
}

static inline void busy_wait(uint64_t ticks)
{
    int64_t s = qpc();
    while ((uint64_t)(qpc() - s) < ticks) YieldProcessor();
}

/* One measured call; returns elapsed QPC ticks. The switch happens outside the region. */
static uint64_t timed_call(int m, const struct cell_args *c)
{
    int64_t t0, t1;
    switch (m) {
    case M_SLEEP:
    case M_TBP_SLEEP:
        t0 = qpc();
        Sleep(c->ms);
        t1 = qpc();
        break;
    case M_SLEEPEX:
        t0 = qpc();
        SleepEx(c->ms, FALSE);
        t1 = qpc();
        break;
    case M_WT:
    case M_WT_HR:
        t0 = qpc();
        SetWaitableTimer(g_timer, &c->due, 0, NULL, NULL, FALSE);
        WaitForSingleObject(g_timer, INFINITE);
        t1 = qpc();
        break;
    case M_BUSY:
        t0 = qpc();
        busy_wait(c->ticks);
        t1 = qpc();
        break;
    case M_SEED002:
        t0 = qpc();
        seed002_wait(c->ns, c->ticks);
        t1 = qpc();
        break;
    case M_SLEEP0:
        t0 = qpc();
        Sleep(0);
        t1 = qpc();
        break;
    case M_SWITCH:
        t0 = qpc();
        SwitchToThread();
        t1 = qpc();
        break;
    default:
        t0 = t1 = 0;
        break;
    }
    return (uint64_t)(t1 - t0);
}

static void *alloc_samples(uint64_t n)
{
    void *p;
    if (n == 0) n = 1;
    if (n > (uint64_t)(SIZE_MAX / sizeof(uint64_t))) die(1, "cannot allocate %llu samples", (unsigned long long)n);
    p = malloc((size_t)n * sizeof(uint64_t));
    if (!p) die(1, "cannot allocate %llu samples", (unsigned long long)n);
    memset(p, 0, (size_t)n * sizeof(uint64_t)); /* touch the pages before measuring */
    return p;
}

static void run_oneshot(const struct args *a, int m)
{
    uint64_t cap = a->have_count ? a->count : a->max_count;
    uint64_t *warm = (uint64_t *)alloc_samples(a->warmup);
    uint64_t *samp = (uint64_t *)alloc_samples(cap);
    size_t ci;

    /* set-up before anything is printed, so failures leave stdout empty */
    if (m == M_WT) {
        g_timer = CreateWaitableTimerW(NULL, FALSE, NULL);
        if (!g_timer) die(1, "CreateWaitableTimerW failed, GetLastError=%lu", (unsigned long)GetLastError());
    } else if (m == M_WT_HR) {
        g_timer = CreateWaitableTimerExW(NULL, NULL, CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, TIMER_ALL_ACCESS);
        if (!g_timer)
            die(3, "method 'waitable-timer-high-res' unavailable: CreateWaitableTimerExW failed, GetLastError=%lu",
                (unsigned long)GetLastError());
    } else if (m == M_SEED002) {
        g_seed_timer = CreateWaitableTimerW(NULL, FALSE, NULL);
        if (!g_seed_timer) die(1, "CreateWaitableTimerW failed, GetLastError=%lu", (unsigned long)GetLastError());
    } else if (m == M_TBP_SLEEP) {
        MMRESULT r = timeBeginPeriod(1);
        if (r != TIMERR_NOERROR) die(3, "method 'timeBeginPeriod1-Sleep' unavailable: timeBeginPeriod(1) returned %u", r);
        g_period_begun = 1;
    }

    print_header(g_methods[m].name, "oneshot");
    fflush(stdout);

    for (ci = 0; ci < a->n_durations; ci++) {
        uint64_t d = a->durations[ci];
        struct cell_args c;
        uint64_t i, n = 0, sum_ns = 0;

        memset(&c, 0, sizeof c);
        c.ms = (DWORD)(d / NS_PER_MS);
        c.due.QuadPart = -(LONGLONG)(d / 100);
        c.ticks = ns_to_ticks_ceil(d);
        c.ns = d;

        /* notes on roundings this probe knows of */
        switch (m) {
        case M_SLEEP:
        case M_SLEEPEX:
        case M_TBP_SLEEP:
            if (d % NS_PER_MS) {
                out("# API takes whole ms: requested ");
                out_u64(d);
                out(" ns, called with ");
                out_u64(c.ms);
                out(" ms (");
                out_u64((uint64_t)c.ms * NS_PER_MS);
                out(" ns)");
                if (c.ms == 0) out("; 0 ms only yields");
                out("\n");
            }
            break;
        case M_WT:
        case M_WT_HR:
            if (m == M_WT_HR && ci == 0 && strcmp(g_implementation, "wine") == 0)
                out("# wine's CreateWaitableTimerExW ignores CREATE_WAITABLE_TIMER_HIGH_RESOLUTION: this is the "
                    "plain waitable timer\n");
            if (d % 100) {
                out("# due time in 100 ns units: requested ");
                out_u64(d);
                out(" ns, relative due time ");
                out_u64(d / 100);
                out(" x 100 ns");
                if (d / 100 == 0) out(" (0 = absolute time 0, already past: fires at once)");
                out("\n");
            }
            break;
        case M_SLEEP0:
        case M_SWITCH:
            if (d) {
                out("# yield method: requested duration ");
                out_u64(d);
                out(" ns ignored\n");
            }
            break;
        default:
            break;
        }

        /* warm-up calls, timed the same way */
        for (i = 0; i < a->warmup; i++) warm[i] = timed_call(m, &c);
        /* measured calls */
        if (a->have_count) {
            for (n = 0; n < a->count; n++) samp[n] = timed_call(m, &c);
        } else {
            while (n < a->max_count && sum_ns < a->budget) {
                uint64_t t = timed_call(m, &c);
                samp[n++] = t;
                sum_ns += ticks_to_ns(t); /* after the region; the budget counts measured ns */
            }
        }

        out_line("cell", d);
        for (i = 0; i < a->warmup; i++) out_line("w", ticks_to_ns(warm[i]));
        for (i = 0; i < n; i++) out_line("s", ticks_to_ns(samp[i]));
        out("done ");
        out_u64(d);
        out(" ");
        out_u64(n);
        out("\n");
        fflush(stdout);
    }
    out("end\n");
    fflush(stdout);
    free(warm);
    free(samp);
}

/* ------------------------------------------------------------------------------------ */
/* periodic                                                                             */

/* Recorder shared by the callback-based timers. Callbacks may run on different pool
 * threads (CreateTimerQueueTimer with WT_EXECUTEDEFAULT), so the clock is read under a
 * lock: arrival order = index order, and the values are non-decreasing. */
static struct {
    CRITICAL_SECTION lock;
    int64_t *arr;
    LONG need;
    LONG n;
    HANDLE done;
} g_rec;

static void record_tick(void)
{
    EnterCriticalSection(&g_rec.lock);
    {
        int64_t t = qpc();
        if (g_rec.n < g_rec.need) {
            g_rec.arr[g_rec.n++] = t;
            if (g_rec.n == g_rec.need) SetEvent(g_rec.done);
        }
    }
    LeaveCriticalSection(&g_rec.lock);
}

static void CALLBACK tse_cb(UINT id, UINT msg, DWORD_PTR user, DWORD_PTR r1, DWORD_PTR r2)
{
    (void)id;
    (void)msg;
    (void)user;
    (void)r1;
    (void)r2;
    record_tick();
}

static void CALLBACK tqt_cb(PVOID param, BOOLEAN fired)
{
    (void)param;
    (void)fired;
    record_tick();
}

/* watchdog: a broken timer must not hang the probe forever */
static DWORD g_watchdog_ms;
static HANDLE g_watchdog_cancel;

static DWORD WINAPI watchdog(LPVOID p)
{
    (void)p;
    if (WaitForSingleObject(g_watchdog_cancel, g_watchdog_ms) == WAIT_TIMEOUT) {
        fprintf(stderr, "windows probe: periodic timer delivered only %ld of %ld ticks within %lu ms, giving up\n",
                (long)g_rec.n, (long)g_rec.need, (unsigned long)g_watchdog_ms);
        fflush(stderr);
        ExitProcess(1);
    }
    return 0;
}

static void run_periodic(const struct args *a, int m)
{
    uint64_t total = a->warmup + a->count;
    uint64_t P = a->period;
    uint64_t ms = P / NS_PER_MS;
    uint64_t eff_ms;
    int64_t t0 = 0;
    int64_t *arr;
    uint64_t i;
    char note[2][200];
    int nnotes = 0;
    HANDLE wd;

    if (total > 0x7FFFFFFFULL) BAD_ARGS("--warmup + --count too large for periodic mode ('%llu')", (unsigned long long)total);
    arr = (int64_t *)alloc_samples(total);

    /* effective period the API is given */
    eff_ms = ms;
    if (m == M_SETTIMER && ms < USER_TIMER_MINIMUM) {
        eff_ms = USER_TIMER_MINIMUM;
        snprintf(note[nnotes++], sizeof note[0],
                 "# SetTimer clamps periods below USER_TIMER_MINIMUM: requested %llu ns, timer set to %u ms",
                 (unsigned long long)P, (unsigned)USER_TIMER_MINIMUM);
    } else if (ms == 0) {
        eff_ms = 1;
        snprintf(note[nnotes++], sizeof note[0],
                 "# API period is whole ms (0 not allowed): requested %llu ns, timer set to 1 ms", (unsigned long long)P);
    } else if (P % NS_PER_MS) {
        snprintf(note[nnotes++], sizeof note[0],
                 "# API period is whole ms: requested %llu ns, timer set to %llu ms", (unsigned long long)P,
                 (unsigned long long)ms);
    }
    if (m == M_TIMESETEVENT) {
        TIMECAPS tc;
        if (timeGetDevCaps(&tc, sizeof tc) == TIMERR_NOERROR && (eff_ms < tc.wPeriodMin || eff_ms > tc.wPeriodMax))
            BAD_ARGS("bad value for --period-ns: '%s' (timeSetEvent takes %u..%u ms)", a->period_s, tc.wPeriodMin,
                     tc.wPeriodMax);
    }

    InitializeCriticalSection(&g_rec.lock);
    g_rec.arr = arr;
    g_rec.need = (LONG)total;
    g_rec.n = 0;
    g_rec.done = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (!g_rec.done) die(1, "CreateEventW failed");

    /* watchdog: 4x the time the ticks should take at max(effective period, 16 ms), + 10 s */
    {
        uint64_t per = eff_ms < 16 ? 16 : eff_ms;
        uint64_t w = total * per * 4 + 10000;
        g_watchdog_ms = w > 0xFFFFFFF0ULL ? 0xFFFFFFF0UL : (DWORD)w;
        g_watchdog_cancel = CreateEventW(NULL, TRUE, FALSE, NULL);
        wd = CreateThread(NULL, 0, watchdog, NULL, 0, NULL);
        if (!g_watchdog_cancel || !wd) die(1, "cannot start watchdog thread");
    }

    switch (m) {
    case M_SETTIMER: {
        MSG msg;
        UINT_PTR id;
        /* make sure this thread has a message queue before arming */
        PeekMessageW(&msg, NULL, WM_USER, WM_USER, PM_NOREMOVE);
        t0 = qpc();
        id = SetTimer(NULL, 0, (UINT)eff_ms, NULL);
        if (!id) die(1, "SetTimer failed, GetLastError=%lu", (unsigned long)GetLastError());
        while (g_rec.n < g_rec.need) {
            BOOL r = GetMessageW(&msg, NULL, 0, 0);
            int64_t t = qpc();
            if (r == -1) die(1, "GetMessageW failed, GetLastError=%lu", (unsigned long)GetLastError());
            if (r == 0) die(1, "unexpected WM_QUIT");
            if (msg.message == WM_TIMER && msg.hwnd == NULL && msg.wParam == id)
                arr[g_rec.n++] = t;
            else
                DispatchMessageW(&msg);
        }
        KillTimer(NULL, id);
        break;
    }
    case M_TIMESETEVENT: {
        MMRESULT id;
        t0 = qpc();
        id = timeSetEvent((UINT)eff_ms, 0, tse_cb, 0, TIME_PERIODIC | TIME_CALLBACK_FUNCTION | TIME_KILL_SYNCHRONOUS);
        if (!id) die(1, "timeSetEvent failed");
        WaitForSingleObject(g_rec.done, INFINITE);
        timeKillEvent(id);
        break;
    }
    case M_TQT: {
        HANDLE h = NULL;
        BOOL ok;
        t0 = qpc();
        ok = CreateTimerQueueTimer(&h, NULL, tqt_cb, NULL, (DWORD)eff_ms, (DWORD)eff_ms, WT_EXECUTEDEFAULT);
        if (!ok) die(1, "CreateTimerQueueTimer failed, GetLastError=%lu", (unsigned long)GetLastError());
        WaitForSingleObject(g_rec.done, INFINITE);
        DeleteTimerQueueTimer(NULL, h, INVALID_HANDLE_VALUE); /* waits for running callbacks */
        break;
    }
    case M_WT_PERIODIC: {
        HANDLE h = CreateWaitableTimerW(NULL, FALSE, NULL);
        LARGE_INTEGER due;
        if (!h) die(1, "CreateWaitableTimerW failed, GetLastError=%lu", (unsigned long)GetLastError());
        /* first tick one (effective) period after arming, then every lPeriod ms */
        due.QuadPart = (eff_ms == ms) ? -(LONGLONG)(P / 100) : -(LONGLONG)(eff_ms * 10000);
        if (eff_ms == ms && P % 100) {
            snprintf(note[nnotes++], sizeof note[0], "# first due time in 100 ns units: %llu x 100 ns",
                     (unsigned long long)(P / 100));
        }
        t0 = qpc();
        if (!SetWaitableTimer(h, &due, (LONG)eff_ms, NULL, NULL, FALSE))
            die(1, "SetWaitableTimer failed, GetLastError=%lu", (unsigned long)GetLastError());
        while (g_rec.n < g_rec.need) {
            WaitForSingleObject(h, INFINITE);
            arr[g_rec.n++] = qpc();
        }
        CancelWaitableTimer(h);
        CloseHandle(h);
        break;
    }
    default:
        break;
    }
    SetEvent(g_watchdog_cancel);
    WaitForSingleObject(wd, INFINITE);

    print_header(g_methods[m].name, "periodic");
    for (i = 0; i < (uint64_t)nnotes; i++) {
        out(note[i]);
        out("\n");
    }
    out_line("cell", P);
    for (i = 0; i < total; i++) {
        /* the clock never goes back; guard the cast anyway */
        uint64_t rel = arr[i] >= t0 ? ticks_to_ns((uint64_t)(arr[i] - t0)) : 0;
        out_line(i < a->warmup ? "w" : "t", rel);
    }
    out("done ");
    out_u64(P);
    out(" ");
    out_u64(a->count);
    out("\n");
    out("end\n");
    fflush(stdout);
}

/* ------------------------------------------------------------------------------------ */

static void at_exit(void)
{
    if (g_period_begun) timeEndPeriod(1);
}

int main(int argc, char **argv)
{
    struct args a;
    LARGE_INTEGER f;
    int m;

    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stderr), _O_BINARY);
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    atexit(at_exit);

    parse_args(argc, argv, &a); /* exits 2 on any bad argument, before any output */

    QueryPerformanceFrequency(&f);
    g_qpf = (uint64_t)f.QuadPart;
    if (g_qpf == 0) die(1, "QueryPerformanceFrequency returned 0");
    detect_platform();
    probe_availability();

    if (a.list) {
        do_list();
    } else {
        m = find_method(a.method);
        if (!g_available[m]) die(3, "method '%s' unavailable: %s", a.method, g_reason[m]);
        if (g_methods[m].kind == K_PERIODIC)
            run_periodic(&a, m);
        else
            run_oneshot(&a, m);
    }
    fflush(stdout);
    if (ferror(stdout)) die(1, "error writing stdout");
    return 0;
}
