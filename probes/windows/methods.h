/*
 * Part of the Windows probe (probe.c includes it once, in order): the methods: their
 * table, which are available here (--list), and finding one by name. It relies on what
 * probe.c and the parts before it define.
 */
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
