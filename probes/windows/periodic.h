/*
 * Part of the Windows probe (probe.c includes it once, in order): the periodic methods:
 * ticks recorded against t0 (callbacks under a lock), the watchdog, and the cell. It
 * relies on what probe.c and the parts before it define.
 */
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
