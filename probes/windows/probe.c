/*
 * sleeplab Windows probe: measures Win32 wait functions with QueryPerformanceCounter
 * and prints the results in the sleeplab probe protocol (spec/probe-protocol.md,
 * `sleeplab-probe/1`).
 *
 * Build (mingw-w64):  x86_64-w64-mingw32-gcc -O2 -Wall -Wextra -o probe.exe probe.c -lwinmm
 * Build (MSVC):       cl /O2 probe.c winmm.lib
 *
 * One translation unit: this file includes its parts (output.h, methods.h, args.h,
 * oneshot.h, periodic.h), each a topic, in order; the build compiles probe.c alone.
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
/* the parts, in order: each uses what comes before it (one translation unit)           */

#include "output.h"
#include "methods.h"
#include "args.h"
#include "oneshot.h"
#include "periodic.h"

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
