package main

import "syscall"

// timerSlack reads the calling thread's timer slack (PR_GET_TIMERSLACK), or -1.
func timerSlack() int {
	const prGetTimerslack = 30
	r, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerslack, 0, 0)
	if errno != 0 {
		return -1
	}
	return int(r)
}
