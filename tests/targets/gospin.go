// A Go program for the profiler's Go tests (tests/t_go.sh): one goroutine
// computing in a named chain (main.hashLoop -> main.mixBytes and
// crypto/sha256), one sleeping, two waiting on a sync.Mutex that main
// holds, and main blocked in select{}.  It writes its PID to the ready
// file (os.Args[1]) once the computing goroutine runs, like the C targets
// (tests/targets/ready.h): PATH.tmp, then renamed to PATH.
package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
	"time"
)

var sink byte

// mixBytes is plain Go code, so that part of the samples are innermost in
// the main package (the unwinding of Go stacks is tested elsewhere).
//
//go:noinline
func mixBytes(buf []byte, rounds int) byte {
	var x byte
	for r := 0; r < rounds; r++ {
		for i := range buf {
			x = x*31 + buf[i]
			buf[i] = x
		}
	}
	return x
}

//go:noinline
func hashLoop(started chan<- struct{}) {
	buf := make([]byte, 4096)
	close(started)
	for {
		sum := sha256.Sum256(buf)
		buf[0] ^= sum[0]
		sink ^= mixBytes(buf, 4)
	}
}

//go:noinline
func sleeper() {
	for {
		time.Sleep(time.Hour)
	}
}

//go:noinline
func waiter(mu *sync.Mutex) {
	mu.Lock()
	mu.Unlock()
}

func ready(path string) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%d\n", os.Getpid())), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(99)
	}
	if err := os.Rename(tmp, path); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(99)
	}
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintf(os.Stderr, "usage: %s READY_FILE\n", os.Args[0])
		os.Exit(2)
	}
	var mu sync.Mutex
	mu.Lock() // held by main forever: the two waiters block on it
	started := make(chan struct{})
	go hashLoop(started)
	go sleeper()
	go waiter(&mu)
	go waiter(&mu)
	<-started
	ready(os.Args[1])
	select {}
}
