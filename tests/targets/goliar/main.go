// goliar READY [dup N]: a Go program whose runtime lies about its
// goroutines, for the goroutine view's bounds (issue 27, items 2 and 7;
// tests/t_goroutines.sh).  Five goroutines sleep in main.sleeper and one
// computes in main.work; then runtime.allgs, the list of every goroutine
// that readers outside the scheduler walk, is replaced (the garbage
// collector, which walks it too, is turned off first; no goroutine is made
// after, so the runtime never looks at it again) by one of pointers to
// zeroed memory, or with "dup N" by N entries that repeat the real
// goroutines' pointers over and over.  Writes READY (its PID) once that is
// done.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"time"
	"unsafe"
)

//go:linkname allgs runtime.allgs
var allgs []unsafe.Pointer

//go:linkname allglen runtime.allglen
var allglen uintptr

var sink uint64

//go:noinline
func sleeper() {
	for {
		time.Sleep(20 * time.Millisecond)
	}
}

//go:noinline
func work() {
	x := uint64(1)
	for {
		for i := 0; i < 1000000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		sink = x
	}
}

var junk [8][512]byte
var lies [8]unsafe.Pointer

func main() {
	dup := 0
	if len(os.Args) == 4 && os.Args[2] == "dup" {
		dup, _ = strconv.Atoi(os.Args[3])
	}
	if len(os.Args) != 2 && dup <= 0 {
		fmt.Fprintln(os.Stderr, "usage: goliar READY [dup N]")
		os.Exit(2)
	}
	debug.SetGCPercent(-1)
	for i := 0; i < 5; i++ {
		go sleeper()
	}
	go work()
	time.Sleep(50 * time.Millisecond)
	if dup > 0 {
		real := append([]unsafe.Pointer(nil), allgs[:allglen]...)
		many := make([]unsafe.Pointer, dup)
		for i := range many {
			many[i] = real[i%len(real)]
		}
		allgs = many
		allglen = uintptr(dup)
	} else {
		for i := range lies {
			lies[i] = unsafe.Pointer(&junk[i])
		}
		allgs = lies[:]
		allglen = uintptr(len(lies))
	}
	if err := os.WriteFile(os.Args[1], []byte(fmt.Sprint(os.Getpid())), 0o644); err != nil {
		os.Exit(1)
	}
	select {}
}
