//go:build !linux

package main

// canTimestamp: --timestamps is Linux-only here (CLOCK_MONOTONIC, the kernel trace's clock).
const canTimestamp = false

// monoNow is never called where timestamps are not offered.
func monoNow() int64 { return 0 }
