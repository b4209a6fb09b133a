package main

import _ "unsafe" // go:linkname

// canTimestamp says whether --timestamps is offered (the --list header's "options").
const canTimestamp = true

// monoNow reads CLOCK_MONOTONIC as an absolute count of ns (the kernel trace's clock):
// the runtime's own vDSO clock_gettime(CLOCK_MONOTONIC), which time.Now's monotonic
// reading offsets by the process's start, so it cannot serve itself.
//
//go:linkname monoNow runtime.nanotime
func monoNow() int64
