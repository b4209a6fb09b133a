// Command probe is the sleeplab probe for Go (gc): it measures the Go
// runtime's own wait functions with the monotonic reading of time.Now and
// prints the `sleeplab-probe/1` line protocol (spec/probe-protocol.md).
//
// Build: cd probes/go && go build -o probe .
package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

const defaultMaxCount = 100000

type kind int

const (
	oneshot kind = iota
	yield
	periodic
)

func (k kind) String() string {
	return [...]string{"oneshot", "yield", "periodic"}[k]
}

type method struct {
	name        string
	kind        kind
	description string
}

var methods = []method{
	{"time.Sleep", oneshot, "time.Sleep(d)"},
	{"time.After", oneshot, "select { case <-never: case <-time.After(d): } (a new timer per call)"},
	{"time.Timer-reset", oneshot, "t.Reset(d); <-t.C on one time.Timer per cell (created with NewTimer, stopped)"},
	{"runtime.Gosched", yield, "runtime.Gosched()"},
	{"time.Ticker", periodic, "time.NewTicker(P) at t0; <-t.C (the runtime drops ticks for a slow receiver)"},
}

// usageError is a bad argument: one line on stderr, nothing on stdout, exit 2.
func usageError(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "probe: "+format+"\n", args...)
	os.Exit(2)
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "probe: "+format+"\n", args...)
	os.Exit(1)
}

// parseNumber accepts a strict non-negative decimal integer (digits only, no
// sign) that fits in an int64, since every value becomes a time.Duration.
func parseNumber(flag, s string) uint64 {
	if s == "" {
		usageError("empty number for %s", flag)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			usageError("bad number for %s: '%s' (expected decimal digits only)", flag, s)
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		usageError("number out of range for %s: '%s'", flag, s)
	}
	return uint64(v)
}

// parseList parses a comma-separated list with no spaces and no empty elements.
func parseList(flag, s string) []uint64 {
	parts := strings.Split(s, ",")
	out := make([]uint64, 0, len(parts))
	for _, p := range parts {
		if p == "" {
			usageError("empty element in %s list: '%s'", flag, s)
		}
		out = append(out, parseNumber(flag, p))
	}
	return out
}

type options struct {
	list       bool
	mlock      bool
	timestamps bool
	// values holds each given flag's raw value; a missing key means "not given".
	values map[string]string
}

func (o *options) has(flag string) bool { _, ok := o.values[flag]; return ok }

var valueFlags = map[string]bool{
	"--method": true, "--durations-ns": true, "--count": true, "--budget-ns": true,
	"--warmup": true, "--max-count": true, "--period-ns": true,
}

func parseArgs(args []string) options {
	o := options{values: map[string]string{}}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--list":
			if o.list {
				usageError("duplicate flag: '%s'", arg)
			}
			o.list = true
			continue
		case arg == "--mlock" && canMlock:
			if o.mlock {
				usageError("duplicate flag: '%s'", arg)
			}
			o.mlock = true
			continue
		case arg == "--timestamps" && canTimestamp:
			if o.timestamps {
				usageError("duplicate flag: '%s'", arg)
			}
			o.timestamps = true
			continue
		case valueFlags[arg]:
		case strings.HasPrefix(arg, "--"):
			usageError("unknown flag: '%s'", arg)
		default:
			usageError("unexpected argument: '%s'", arg)
		}
		if o.has(arg) {
			usageError("duplicate flag: '%s'", arg)
		}
		if i+1 >= len(args) {
			usageError("missing value for %s", arg)
		}
		i++
		o.values[arg] = args[i]
	}
	return o
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// timestamps: every one-shot line carries its call's start, every periodic cell its t0.
var timestamps bool

func writeHeader(w *bufio.Writer, m *method) {
	fmt.Fprintf(w, `{"protocol":"sleeplab-probe/1","runtime":"go","implementation":%s,"runtime_version":%s,"clock":"time.Now (monotonic)","platform":%s`,
		jsonString(runtime.Compiler), jsonString(runtime.Version()),
		jsonString(runtime.GOOS+" "+runtime.GOARCH))
	// Extra fields (allowed by the spec): parallelism and timer slack shape the numbers.
	fmt.Fprintf(w, `,"gomaxprocs":%d`, runtime.GOMAXPROCS(0))
	if s := timerSlack(); s >= 0 {
		fmt.Fprintf(w, `,"timerslack_ns":%d`, s)
	}
	if m == nil {
		// The optional arguments this probe takes (spec: the --list header's "options").
		var opts []string
		if canMlock {
			opts = append(opts, `"mlock"`)
		}
		if canTimestamp {
			opts = append(opts, `"timestamps"`)
		}
		if len(opts) > 0 {
			w.WriteString(`,"options":[` + strings.Join(opts, ",") + `]`)
		}
	}
	if m != nil {
		mode := "oneshot"
		if m.kind == periodic {
			mode = "periodic"
		}
		fmt.Fprintf(w, `,"method":%s,"mode":%s`, jsonString(m.name), jsonString(mode))
		// No "tid": the measuring goroutine moves between threads (see README), and
		// runtime.LockOSThread would add a thread hand-off to every wake-up measured.
		if timestamps {
			w.WriteString(`,"timestamps":true`)
		}
	}
	w.WriteString("}\n")
}

func writeList(w *bufio.Writer) {
	writeHeader(w, nil)
	for _, m := range methods {
		fmt.Fprintf(w, `{"method":%s,"kind":%s,"available":true,"description":%s}`+"\n",
			jsonString(m.name), jsonString(m.kind.String()), jsonString(m.description))
	}
	w.WriteString("end\n")
}

// stamps is what a cell prints with --timestamps: each one-shot call's start
// (parallel to the values), or the periodic cell's t0.
type stamps struct {
	warm, samples []int64
	t0            int64
}

// writeLine prints one line: tag, value and, with --timestamps, the call's start.
func writeLine(w *bufio.Writer, tag string, v int64, starts []int64, i int) {
	if timestamps && starts != nil {
		fmt.Fprintf(w, "%s %d %d\n", tag, v, starts[i])
	} else {
		fmt.Fprintf(w, "%s %d\n", tag, v)
	}
}

// writeCell prints one cell; tag is "s" (one-shot) or "t" (periodic).
func writeCell(w *bufio.Writer, value uint64, notes []string, warm []int64, tag string, samples []int64, st stamps) {
	for _, n := range notes {
		w.WriteString("# " + n + "\n")
	}
	fmt.Fprintf(w, "cell %d\n", value)
	if timestamps && tag == "t" {
		fmt.Fprintf(w, "t0 %d\n", st.t0)
	}
	for i, v := range warm {
		writeLine(w, "w", v, st.warm, i)
	}
	for i, v := range samples {
		writeLine(w, tag, v, st.samples, i)
	}
	fmt.Fprintf(w, "done %d %d\n", value, len(samples))
	if err := w.Flush(); err != nil {
		fatal("writing stdout failed: %v", err)
	}
}

// maxSamples bounds the pre-allocated sample buffers (16 GiB of int64s): a
// larger request fails with exit 1 instead of a runtime panic, because a Go
// panic exits with status 2, which the harness would read as a bad argument.
const maxSamples = 1 << 31

func main() {
	defer func() {
		if r := recover(); r != nil {
			fatal("internal error: %v", r)
		}
	}()
	o := parseArgs(os.Args[1:])
	out := bufio.NewWriterSize(os.Stdout, 1<<16)

	if o.list {
		if len(o.values) != 0 || o.mlock || o.timestamps {
			usageError("--list takes no other flags")
		}
		writeList(out)
		if err := out.Flush(); err != nil {
			fatal("writing stdout failed: %v", err)
		}
		return
	}
	if !o.has("--method") {
		usageError("missing --method (or --list)")
	}
	var m *method
	for i := range methods {
		if methods[i].name == o.values["--method"] {
			m = &methods[i]
		}
	}
	if m == nil {
		usageError("unknown method: '%s'", o.values["--method"])
	}

	// Numbers are checked first, so a malformed one is always named.
	num := func(flag string, def uint64) uint64 {
		if v, ok := o.values[flag]; ok {
			return parseNumber(flag, v)
		}
		return def
	}
	count := num("--count", 0)
	budget := num("--budget-ns", 0)
	warmup := num("--warmup", 0)
	maxCount := num("--max-count", defaultMaxCount)
	period := num("--period-ns", 0)
	var durations []uint64
	if o.has("--durations-ns") {
		durations = parseList("--durations-ns", o.values["--durations-ns"])
	}
	for _, f := range []struct {
		flag  string
		value uint64
	}{{"--count", count}, {"--budget-ns", budget}, {"--max-count", maxCount}, {"--period-ns", period}} {
		if o.has(f.flag) && f.value == 0 {
			usageError("%s must be at least 1, got '%s'", f.flag, o.values[f.flag])
		}
	}

	if m.kind == periodic {
		switch {
		case o.has("--durations-ns"):
			usageError("--durations-ns is not valid for periodic method '%s' (use --period-ns)", m.name)
		case o.has("--budget-ns"):
			usageError("--budget-ns is not valid for periodic method '%s'", m.name)
		case o.has("--max-count"):
			usageError("--max-count is not valid for periodic method '%s'", m.name)
		case !o.has("--period-ns"):
			usageError("missing --period-ns for periodic method '%s'", m.name)
		case !o.has("--count"):
			usageError("missing --count for periodic method '%s'", m.name)
		case warmup+count > (1<<63-1)/period:
			usageError("--period-ns x (--warmup + --count) overflows")
		}
	} else {
		switch {
		case o.has("--period-ns"):
			usageError("--period-ns is only valid for periodic methods, not '%s'", m.name)
		case !o.has("--durations-ns"):
			usageError("missing --durations-ns for method '%s'", m.name)
		case o.has("--count") && o.has("--budget-ns"):
			usageError("--count and --budget-ns are exclusive (got both, for '%s')", m.name)
		case !o.has("--count") && !o.has("--budget-ns"):
			usageError("one of --count or --budget-ns is required for '%s'", m.name)
		}
	}

	samplesKept := warmup + count
	if o.has("--budget-ns") {
		samplesKept = warmup + maxCount
	}
	if samplesKept > maxSamples {
		fatal("cannot keep %d samples in memory (limit %d)", samplesKept, uint64(maxSamples))
	}

	timestamps = o.timestamps
	// --mlock before the header: the harness reads what is in force once it is out.
	if o.mlock {
		if err := lockMemory(); err != nil {
			fatal("mlockall(MCL_CURRENT | MCL_FUTURE) failed: %v", err)
		}
	}
	writeHeader(out, m)
	// The header goes out before the first measurement.
	if err := out.Flush(); err != nil {
		fatal("writing stdout failed: %v", err)
	}
	if m.kind == periodic {
		runTicker(out, period, count, warmup)
	} else {
		plan := plan{byBudget: o.has("--budget-ns"), count: count, budget: budget, warmup: warmup, maxCount: maxCount}
		runOneshot(out, m, durations, plan)
	}
	out.WriteString("end\n")
	if err := out.Flush(); err != nil {
		fatal("writing stdout failed: %v", err)
	}
}
