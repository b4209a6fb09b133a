// Sleeps N times for REQUEST_US microseconds with Go's time.Sleep, logging each sleep
// from its own CLOCK_MONOTONIC reads (the clock the kernel's events are on) as a CSV
// row of OUT: before_ns,after_ns. For scripts/explain-real.sh.
//
//	go build -o /tmp/real-sleep-go scripts/real-sleep.go
//	/tmp/real-sleep-go OUT.csv N REQUEST_US
package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// now reads CLOCK_MONOTONIC itself: time.Now's monotonic reading is not exposed.
func now() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Sec*1e9 + ts.Nsec
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: real-sleep-go OUT.csv N REQUEST_US")
		os.Exit(2)
	}
	n, err1 := strconv.Atoi(os.Args[2])
	us, err2 := strconv.Atoi(os.Args[3])
	if err1 != nil || err2 != nil || n < 1 || us < 1 {
		fmt.Fprintln(os.Stderr, "real-sleep-go: N and REQUEST_US are whole numbers from 1")
		os.Exit(2)
	}
	rows := make([][2]int64, 0, n)
	for i := 0; i < n; i++ {
		b := now()
		time.Sleep(time.Duration(us) * time.Microsecond)
		rows = append(rows, [2]int64{b, now()})
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "real-sleep-go:", err)
		os.Exit(2)
	}
	fmt.Fprintln(f, "before_ns,after_ns")
	for _, r := range rows {
		fmt.Fprintf(f, "%d,%d\n", r[0], r[1])
	}
	f.Close()
}
