// goalloc READY: a Go program that allocates without pause, so that the
// garbage collector makes its goroutines assist it (runtime.gcAssistAlloc,
// on the system stack through runtime.systemstack) and grow their stacks
// (runtime.morestack): for the tests of unwinding past the switch to the
// system stack (tests/t_goshipped.sh).  Two goroutines run main.allocate
// (through main.deep, which recurses, so that stacks grow); main waits.
// Writes READY (its PID) once both have started.
package main

import (
	"fmt"
	"os"
	"sync"
)

var (
	mu   sync.Mutex
	keep [][]byte
)

//go:noinline
func allocate(n int) int {
	local := make([][]byte, 0, 64)
	total := 0
	for i := 0; i < n; i++ {
		b := make([]byte, 512+i%4096)
		b[0] = byte(i)
		local = append(local, b)
		if len(local) == cap(local) {
			mu.Lock()
			keep = append(keep, local...)
			if len(keep) > 20000 {
				keep = keep[:0]
			}
			mu.Unlock()
			local = local[:0]
		}
		total += len(b)
	}
	return total
}

//go:noinline
func deep(d int) int {
	var pad [256]byte
	pad[d%256] = byte(d)
	if d == 0 {
		return allocate(20000) + int(pad[0])
	}
	return deep(d-1) + int(pad[d%256])
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: goalloc READY")
		os.Exit(2)
	}
	started := make(chan bool)
	for i := 0; i < 2; i++ {
		go func() {
			started <- true
			for {
				deep(64)
			}
		}()
	}
	<-started
	<-started
	if err := os.WriteFile(os.Args[1], []byte(fmt.Sprint(os.Getpid())), 0o644); err != nil {
		os.Exit(1)
	}
	select {}
}
