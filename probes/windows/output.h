/*
 * Part of the Windows probe (probe.c includes it once, in order): what the probe prints:
 * numbers by its own u64 formatter, JSON strings, the protocol's lines, and the
 * measurement header with the platform it describes. It relies on what probe.c and the
 * parts before it define.
 */
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
