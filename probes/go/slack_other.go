//go:build !linux

package main

// timerSlack is Linux-only; elsewhere the header omits it.
func timerSlack() int { return -1 }
