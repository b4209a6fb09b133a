package main

import "syscall"

// canMlock says whether --mlock is offered (the --list header's "options").
const canMlock = true

// lockMemory keeps every page of the process, now and later, in RAM
// (mlockall(MCL_CURRENT | MCL_FUTURE)).
func lockMemory() error {
	return syscall.Mlockall(syscall.MCL_CURRENT | syscall.MCL_FUTURE)
}
