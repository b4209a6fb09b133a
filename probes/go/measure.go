package main

import (
	"bufio"
	"fmt"
	"runtime"
	"time"
)

type plan struct {
	byBudget                        bool
	count, budget, warmup, maxCount uint64
}

// waiter returns the wait of one call for method m and duration d, with
// everything it needs (timer, channel) created here, outside the timed region.
func waiter(m *method, d time.Duration) (wait func(), cleanup func()) {
	switch m.name {
	case "time.Sleep":
		return func() { time.Sleep(d) }, func() {}
	case "time.After":
		// The usual timeout idiom; `never` is never ready, so only the timer ends the wait.
		never := make(chan struct{})
		return func() {
			select {
			case <-never:
			case <-time.After(d):
			}
		}, func() {}
	case "time.Timer-reset":
		// One timer per cell, stopped; with go >= 1.23 semantics (go.mod) Reset
		// after Stop needs no drain and never delivers a stale value.
		t := time.NewTimer(time.Hour)
		t.Stop()
		return func() {
			t.Reset(d)
			<-t.C
		}, func() { t.Stop() }
	case "runtime.Gosched":
		return runtime.Gosched, func() {}
	}
	panic("no one-shot wait for " + m.name)
}

func runOneshot(w *bufio.Writer, m *method, durations []uint64, p plan) {
	capacity := p.count
	if p.byBudget {
		capacity = p.maxCount
	}
	// Allocated (and zeroed, so touched) once for all cells. Each call's start is a
	// CLOCK_MONOTONIC read taken just before the clock read that opens its timed region.
	warm := make([]int64, p.warmup)
	samples := make([]int64, capacity)
	st := stamps{warm: make([]int64, p.warmup), samples: make([]int64, capacity)}

	for _, dn := range durations {
		d := time.Duration(dn)
		wait, cleanup := waiter(m, d)
		// Collect garbage now rather than during the cell.
		runtime.GC()

		for i := range warm {
			s := monoNow()
			t1 := time.Now()
			wait()
			warm[i] = int64(time.Since(t1))
			st.warm[i] = s
		}
		n := uint64(0)
		sum := int64(0)
		for {
			s := monoNow()
			t1 := time.Now()
			wait()
			e := int64(time.Since(t1))
			samples[n] = e
			st.samples[n] = s
			n++
			sum += e
			if p.byBudget {
				if uint64(sum) >= p.budget || n >= capacity {
					break
				}
			} else if n >= capacity {
				break
			}
		}
		cleanup()

		var notes []string
		if m.kind == yield && dn != 0 {
			notes = append(notes, fmt.Sprintf("%s takes no duration; requested %d ns ignored", m.name, dn))
		}
		writeCell(w, dn, notes, warm, "s", samples[:n], stamps{warm: st.warm, samples: st.samples[:n]})
	}
}

// runTicker measures time.Ticker: tick k of warmup+count is due at k*P after
// t0, the clock reading taken just before NewTicker (so the cost of
// NewTicker counts as lateness, never as earliness). With --timestamps t0 is
// given as a CLOCK_MONOTONIC read taken just before it.
func runTicker(w *bufio.Writer, period, count, warmup uint64) {
	total := warmup + count
	arrivals := make([]int64, total)
	values := make([]time.Time, total) // what the runtime says each tick was due
	p := time.Duration(period)
	runtime.GC()

	t0mono := monoNow()
	t0 := time.Now()
	tk := time.NewTicker(p)
	for i := range arrivals {
		v := <-tk.C
		arrivals[i] = int64(time.Since(t0))
		values[i] = v
	}
	tk.Stop()

	// The runtime sends each tick with its scheduled time and, when the
	// receiver is late, skips the ticks it could not deliver. A gap of more
	// than one period between consecutive values is such a skip.
	dropped := int64(0)
	for i := 1; i < len(values); i++ {
		gap := (values[i].Sub(values[i-1]) + p/2) / p
		if gap > 1 {
			dropped += int64(gap - 1)
		}
	}
	var notes []string
	if dropped > 0 {
		notes = append(notes, fmt.Sprintf("time.Ticker: the runtime skipped %d ticks (receiver too late); arrivals are of the ticks delivered", dropped))
	}
	writeCell(w, period, notes, arrivals[:warmup], "t", arrivals[warmup:], stamps{t0: t0mono})
}
