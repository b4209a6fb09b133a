// sleeplab probe for C++17 (libstdc++ on Linux): measures the standard
// library's wait functions with std::chrono::steady_clock and prints the
// `sleeplab-probe/1` line protocol (spec/probe-protocol.md).
//
// Build: c++ -O2 -std=c++17 -pthread -Wall -Wextra -o probe probes/cpp/probe.cpp

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <gnu/libc-version.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::nanoseconds;
using u64 = std::uint64_t;

constexpr u64 kDefaultMaxCount = 100000;
// Every number must fit std::chrono::nanoseconds (a signed 64-bit count).
constexpr u64 kMaxNumber = static_cast<u64>(std::numeric_limits<std::int64_t>::max());

enum class Kind { Oneshot, Yield };

const char* kind_name(Kind k) { return k == Kind::Oneshot ? "oneshot" : "yield"; }

enum class Id { SleepForNs, SleepForMs, SleepUntil, CvWaitFor, Yield };

struct Method {
    const char* name;
    Id id;
    Kind kind;
    const char* description;
};

const Method kMethods[] = {
    {"sleep_for-ns", Id::SleepForNs, Kind::Oneshot,
     "std::this_thread::sleep_for(std::chrono::nanoseconds(d))"},
    {"sleep_for-ms", Id::SleepForMs, Kind::Oneshot,
     "std::this_thread::sleep_for(duration_cast<milliseconds>(nanoseconds(d))) (truncated: "
     "sub-ms requests become 0ms)"},
    {"sleep_until", Id::SleepUntil, Kind::Oneshot,
     "std::this_thread::sleep_until(steady_clock::now() + nanoseconds(d))"},
    {"condition_variable::wait_for", Id::CvWaitFor, Kind::Oneshot,
     "std::condition_variable::wait_for(lock, nanoseconds(d)) without a predicate on a cv "
     "nobody notifies; one call, early returns kept"},
    {"yield", Id::Yield, Kind::Yield, "std::this_thread::yield()"},
};

// ------------------------------------------------------------------ errors

[[noreturn]] void die_usage(const std::string& message) {
    std::fprintf(stderr, "probe: %s\n", message.c_str());
    std::exit(2);
}

[[noreturn]] void die(const std::string& message) {
    std::fprintf(stderr, "probe: %s\n", message.c_str());
    std::exit(1);
}

// --------------------------------------------------------------- arguments

// Strict non-negative decimal integer: digits only, no sign, fits in int64.
u64 parse_number(const std::string& flag, const std::string& s) {
    if (s.empty()) die_usage("empty number for " + flag);
    u64 v = 0;
    for (char ch : s) {
        if (ch < '0' || ch > '9')
            die_usage("bad number for " + flag + ": '" + s + "' (expected decimal digits only)");
        const u64 digit = static_cast<u64>(ch - '0');
        if (v > (kMaxNumber - digit) / 10)
            die_usage("number out of range for " + flag + ": '" + s + "'");
        v = v * 10 + digit;
    }
    return v;
}

// Comma-separated list with no spaces and no empty elements.
std::vector<u64> parse_list(const std::string& flag, const std::string& s) {
    std::vector<u64> out;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = s.find(',', start);
        const std::string item = s.substr(start, comma == std::string::npos ? std::string::npos
                                                                            : comma - start);
        if (item.empty()) die_usage("empty element in " + flag + " list: '" + s + "'");
        out.push_back(parse_number(flag, item));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

struct Options {
    bool list = false;
    bool mlock = false;
    bool timestamps = false;
    // A flag that was not given is nullptr; the pointers refer into argv.
    const char* method = nullptr;
    const char* durations = nullptr;
    const char* count = nullptr;
    const char* budget = nullptr;
    const char* warmup = nullptr;
    const char* max_count = nullptr;
    const char* period = nullptr;
};

Options parse_args(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        const std::string arg = argv[i];
        if (arg == "--list") {
            if (o.list) die_usage("duplicate flag: '" + arg + "'");
            o.list = true;
            continue;
        }
        if (arg == "--mlock") {
            if (o.mlock) die_usage("duplicate flag: '" + arg + "'");
            o.mlock = true;
            continue;
        }
        if (arg == "--timestamps") {
            if (o.timestamps) die_usage("duplicate flag: '" + arg + "'");
            o.timestamps = true;
            continue;
        }
        const char** slot = nullptr;
        if (arg == "--method") slot = &o.method;
        else if (arg == "--durations-ns") slot = &o.durations;
        else if (arg == "--count") slot = &o.count;
        else if (arg == "--budget-ns") slot = &o.budget;
        else if (arg == "--warmup") slot = &o.warmup;
        else if (arg == "--max-count") slot = &o.max_count;
        else if (arg == "--period-ns") slot = &o.period;
        else if (arg.rfind("--", 0) == 0) die_usage("unknown flag: '" + arg + "'");
        else die_usage("unexpected argument: '" + arg + "'");
        if (*slot) die_usage("duplicate flag: '" + arg + "'");
        if (i + 1 >= argc) die_usage("missing value for " + arg);
        *slot = argv[++i];
    }
    return o;
}

// ------------------------------------------------------------------ output

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

// --timestamps: every line carries its call's start on CLOCK_MONOTONIC.
bool timestamps = false;

void print_header(const Method* m) {
    std::string version = __VERSION__;
#if defined(_GLIBCXX_RELEASE)
    version += ", libstdc++ " + std::to_string(_GLIBCXX_RELEASE);
#endif
    std::string platform = "unknown";
#if defined(__linux__)
    version += std::string(", glibc ") + gnu_get_libc_version();
    struct utsname u;
    if (uname(&u) == 0) {
        std::string sys = u.sysname;
        for (char& ch : sys)
            if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
        platform = sys + " " + u.machine;
    }
#endif
#if defined(__clang__)
    const char* implementation = "clang++";
#elif defined(__GNUC__)
    const char* implementation = "g++";
#else
    const char* implementation = "unknown";
#endif
    std::string line = "{\"protocol\":\"sleeplab-probe/1\",\"runtime\":\"cpp\",\"implementation\":" +
                       json_string(implementation) +
                       ",\"runtime_version\":" + json_string(version) +
                       ",\"clock\":\"std::chrono::steady_clock\",\"platform\":" +
                       json_string(platform);
#if defined(__linux__)
    // Extra field (allowed by the spec): the slack the kernel adds to this thread's timers.
    const int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (slack >= 0) line += ",\"timerslack_ns\":" + std::to_string(slack);
#endif
#if defined(__linux__)
    // The optional arguments this probe takes (spec: the --list header's `options`).
    // Timestamps: on Linux steady_clock is clock_gettime(CLOCK_MONOTONIC), its
    // time_since_epoch the absolute count the protocol asks for.
    if (!m) line += ",\"options\":[\"mlock\",\"timestamps\"]";
#endif
    if (m) line += ",\"method\":" + json_string(m->name) + ",\"mode\":\"oneshot\"";
#if defined(__linux__)
    // This thread measures: the kernel's id of it, for a trace of its waits.
    if (m) line += ",\"tid\":" + std::to_string(static_cast<long>(syscall(SYS_gettid)));
#endif
    if (m && timestamps) line += ",\"timestamps\":true";
    line += "}\n";
    std::fputs(line.c_str(), stdout);
}

void print_list() {
    print_header(nullptr);
    for (const Method& m : kMethods) {
        std::printf("{\"method\":%s,\"kind\":\"%s\",\"available\":true,\"description\":%s}\n",
                    json_string(m.name).c_str(), kind_name(m.kind),
                    json_string(m.description).c_str());
    }
    std::fputs("end\n", stdout);
}

// One line: tag, value and, with --timestamps, the call's start.
void print_line(char tag, u64 value, u64 start) {
    if (timestamps)
        std::printf("%c %llu %llu\n", tag, static_cast<unsigned long long>(value),
                    static_cast<unsigned long long>(start));
    else
        std::printf("%c %llu\n", tag, static_cast<unsigned long long>(value));
}

// A cell's values and each call's start (parallel vectors; `n` of the samples are used).
struct Series {
    std::vector<u64> warm, warm_start, samples, start;
};

void print_cell(u64 value, const Series& s, std::size_t n) {
    std::printf("cell %llu\n", static_cast<unsigned long long>(value));
    for (std::size_t i = 0; i < s.warm.size(); i++) print_line('w', s.warm[i], s.warm_start[i]);
    for (std::size_t i = 0; i < n; i++) print_line('s', s.samples[i], s.start[i]);
    std::printf("done %llu %llu\n", static_cast<unsigned long long>(value),
                static_cast<unsigned long long>(n));
    std::fflush(stdout);
}

// --------------------------------------------------------------- measuring

u64 elapsed_ns(Clock::time_point a, Clock::time_point b) {
    return static_cast<u64>(std::chrono::duration_cast<nanoseconds>(b - a).count());
}

// A reading as ns since the clock's epoch (on Linux: CLOCK_MONOTONIC's, for --timestamps).
u64 since_epoch_ns(Clock::time_point t) {
    return static_cast<u64>(
        std::chrono::duration_cast<nanoseconds>(t.time_since_epoch()).count());
}

// Everything a cell needs, prepared before the cell so that the timed region
// holds only the wait (and, for sleep_until, adding d to the opening reading).
struct Cell {
    nanoseconds ns;
    std::chrono::milliseconds ms;  // duration_cast truncates, as user code does
    std::mutex mutex;
    std::condition_variable cv;     // never notified
    std::unique_lock<std::mutex> lock{mutex};
    u64 no_timeout = 0;             // wait_for returns that claim a notification
};

// One timed call. Returns elapsed ns and stores the opening reading in `start`; the
// timed region is clock read, wait, clock read.
template <Id id>
inline u64 timed(Cell& c, u64& start) {
    const Clock::time_point t1 = Clock::now();
    if constexpr (id == Id::SleepForNs) {
        std::this_thread::sleep_for(c.ns);
    } else if constexpr (id == Id::SleepForMs) {
        std::this_thread::sleep_for(c.ms);
    } else if constexpr (id == Id::SleepUntil) {
        std::this_thread::sleep_until(t1 + c.ns);
    } else if constexpr (id == Id::CvWaitFor) {
        // One call, no loop: a spurious or early return is a finding, not hidden.
        const std::cv_status st = c.cv.wait_for(c.lock, c.ns);
        const Clock::time_point t2 = Clock::now();
        if (st == std::cv_status::no_timeout) c.no_timeout++;
        start = since_epoch_ns(t1);
        return elapsed_ns(t1, t2);
    } else {
        std::this_thread::yield();
    }
    const Clock::time_point t2 = Clock::now();
    start = since_epoch_ns(t1);
    return elapsed_ns(t1, t2);
}

struct Plan {
    bool by_budget;
    u64 count, budget, warmup, max_count;
};

template <Id id>
std::size_t measure_cell(Cell& c, const Plan& p, Series& s) {
    for (std::size_t i = 0; i < s.warm.size(); i++) s.warm[i] = timed<id>(c, s.warm_start[i]);
    std::size_t n = 0;
    u64 sum = 0;
    const std::size_t capacity = s.samples.size();
    do {
        const u64 e = timed<id>(c, s.start[n]);
        s.samples[n++] = e;
        sum += e;
    } while (p.by_budget ? (sum < p.budget && n < capacity) : n < capacity);
    return n;
}

std::size_t measure(Id id, Cell& c, const Plan& p, Series& s) {
    switch (id) {
        case Id::SleepForNs: return measure_cell<Id::SleepForNs>(c, p, s);
        case Id::SleepForMs: return measure_cell<Id::SleepForMs>(c, p, s);
        case Id::SleepUntil: return measure_cell<Id::SleepUntil>(c, p, s);
        case Id::CvWaitFor: return measure_cell<Id::CvWaitFor>(c, p, s);
        case Id::Yield: return measure_cell<Id::Yield>(c, p, s);
    }
    return 0;
}

std::vector<u64> alloc_samples(u64 n) {
    if (n > std::vector<u64>().max_size()) die("cannot allocate " + std::to_string(n) + " samples");
    try {
        // Value-initialised: every page is touched before measuring.
        return std::vector<u64>(static_cast<std::size_t>(n), 0);
    } catch (const std::bad_alloc&) {
        die("cannot allocate " + std::to_string(n) + " samples");
    }
}

void run_oneshot(const Method& m, const std::vector<u64>& durations, const Plan& p) {
    const u64 capacity = p.by_budget ? p.max_count : p.count;
    Series s{alloc_samples(p.warmup), alloc_samples(p.warmup), alloc_samples(capacity),
             alloc_samples(capacity)};

    for (u64 d : durations) {
        Cell c;
        c.ns = nanoseconds(static_cast<std::int64_t>(d));
        c.ms = std::chrono::duration_cast<std::chrono::milliseconds>(c.ns);
        // sleep_until and wait_for add d to steady_clock::now(); keep that sum
        // from overflowing int64 (146 years is still "forever").
        const bool adds_to_now = m.id == Id::SleepUntil || m.id == Id::CvWaitFor;
        const nanoseconds add_limit(std::numeric_limits<std::int64_t>::max() / 2);
        const bool clamped = adds_to_now && c.ns > add_limit;
        if (clamped) c.ns = add_limit;

        const std::size_t n = measure(m.id, c, p, s);

        // Notes on conversions and findings, printed before the cell.
        if (clamped)
            std::printf("# %s: %llu ns clamped to %lld ns so that now + d fits int64\n", m.name,
                        static_cast<unsigned long long>(d),
                        static_cast<long long>(c.ns.count()));
        if (m.kind == Kind::Yield && d != 0)
            std::printf("# %s takes no duration; requested %llu ns ignored\n", m.name,
                        static_cast<unsigned long long>(d));
        if (m.id == Id::SleepForMs && d % 1000000 != 0)
            std::printf("# sleep_for-ms: %llu ns passed as sleep_for(%lldms)\n",
                        static_cast<unsigned long long>(d),
                        static_cast<long long>(c.ms.count()));
        if (m.id == Id::CvWaitFor && c.no_timeout != 0)
            std::printf("# condition_variable::wait_for returned cv_status::no_timeout "
                        "(spurious wakeup) %llu times\n",
                        static_cast<unsigned long long>(c.no_timeout));
        print_cell(d, s, n);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse_args(argc, argv);

    if (o.list) {
        if (o.method || o.durations || o.count || o.budget || o.warmup || o.max_count || o.period ||
            o.mlock || o.timestamps)
            die_usage("--list takes no other flags");
        print_list();
        return 0;
    }
    if (!o.method) die_usage("missing --method (or --list)");

    const Method* m = nullptr;
    for (const Method& candidate : kMethods)
        if (std::strcmp(candidate.name, o.method) == 0) m = &candidate;
    if (!m) die_usage(std::string("unknown method: '") + o.method + "'");

    // Numbers are checked first, so a malformed one is always named.
    Plan p{};
    p.by_budget = o.budget != nullptr;
    p.count = o.count ? parse_number("--count", o.count) : 0;
    p.budget = o.budget ? parse_number("--budget-ns", o.budget) : 0;
    p.warmup = o.warmup ? parse_number("--warmup", o.warmup) : 0;
    p.max_count = o.max_count ? parse_number("--max-count", o.max_count) : kDefaultMaxCount;
    const u64 period = o.period ? parse_number("--period-ns", o.period) : 0;
    const std::vector<u64> durations =
        o.durations ? parse_list("--durations-ns", o.durations) : std::vector<u64>{};

    if (o.count && p.count == 0) die_usage(std::string("--count must be at least 1, got '") + o.count + "'");
    if (o.budget && p.budget == 0)
        die_usage(std::string("--budget-ns must be at least 1, got '") + o.budget + "'");
    if (o.max_count && p.max_count == 0)
        die_usage(std::string("--max-count must be at least 1, got '") + o.max_count + "'");
    if (o.period && period == 0)
        die_usage(std::string("--period-ns must be at least 1, got '") + o.period + "'");

    // This runtime has no periodic methods, so every method is oneshot or yield.
    if (o.period)
        die_usage(std::string("--period-ns is only valid for periodic methods, not '") + m->name + "'");
    if (!o.durations) die_usage(std::string("missing --durations-ns for method '") + m->name + "'");
    if (o.count && o.budget)
        die_usage(std::string("--count and --budget-ns are exclusive (got both, for '") + m->name + "')");
    if (!o.count && !o.budget)
        die_usage(std::string("one of --count or --budget-ns is required for '") + m->name + "'");

    static char outbuf[1 << 16];
    std::setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);

#if defined(__linux__)
    // --mlock: every page, now and later, stays in RAM (before the header: the harness
    // reads what is in force once the header is out).
    if (o.mlock && mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
        die(std::string("mlockall(MCL_CURRENT | MCL_FUTURE) failed: ") + std::strerror(errno));
#else
    if (o.mlock) die_usage("unknown flag: '--mlock' (Linux only)");
    if (o.timestamps) die_usage("unknown flag: '--timestamps' (Linux only)");
#endif
    timestamps = o.timestamps;
    print_header(m);
    std::fflush(stdout);  // the header goes out before the first measurement
    run_oneshot(*m, durations, p);
    std::fputs("end\n", stdout);
    if (std::fflush(stdout) != 0) die("writing stdout failed");
    return 0;
}
