//go:build !linux

package main

import "errors"

// canMlock: --mlock is Linux-only here.
const canMlock = false

func lockMemory() error { return errors.New("mlockall is Linux-only") }
