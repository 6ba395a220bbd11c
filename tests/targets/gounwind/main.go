// gounwind READY [still]: a Go program whose OS threads sit where Go programs'
// threads sit, for the unwinding tests (tests/t_runtimes.sh).
//   - a goroutine computing: main.work -> main.hashLoop -> crypto/sha256
//     (sha256.block is assembly that uses RBP as a general register);
//   - a goroutine asleep in time.Sleep, one blocked on a sync.Mutex that
//     main holds for ever, one blocked on a channel nobody writes to;
//   - main in select{}.
// With a second argument "still", no goroutine computes: every thread sits
// still in a system call (for the frame-for-frame comparison with eu-stack).
// Built twice by tests/tests.mk: normally (.debug_frame, .symtab) and with
// -ldflags='-s -w' (neither: frame pointers and .gopclntab only).  Writes
// READY (its PID) once every goroutine has started.
package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
	"time"
)

var (
	mu      sync.Mutex
	sink    [32]byte
	started sync.WaitGroup
	never   chan int
)

//go:noinline
func hashLoop(buf []byte, n int) {
	for i := 0; i < n; i++ {
		sink = sha256.Sum256(buf)
		buf[0] ^= sink[0]
	}
}

//go:noinline
func work() {
	buf := make([]byte, 8192)
	started.Done()
	for {
		hashLoop(buf, 64)
	}
}

//go:noinline
func sleeper() {
	started.Done()
	for {
		time.Sleep(time.Hour)
	}
}

//go:noinline
func locker() {
	started.Done()
	mu.Lock()
	mu.Unlock()
}

//go:noinline
func receiver() {
	started.Done()
	<-never
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gounwind READY [still]")
		os.Exit(2)
	}
	still := len(os.Args) > 2 && os.Args[2] == "still"
	mu.Lock()
	started.Add(3)
	if !still {
		started.Add(1)
		go work()
	}
	go sleeper()
	go locker()
	go receiver()
	started.Wait()
	tmp := os.Args[1] + ".tmp"
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%d\n", os.Getpid())), 0o644); err != nil {
		os.Exit(99)
	}
	if err := os.Rename(tmp, os.Args[1]); err != nil {
		os.Exit(99)
	}
	select {}
}
