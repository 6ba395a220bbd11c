// goalloc READY: a Go program that allocates without pause, so that the
// garbage collector makes its goroutines assist it (runtime.gcAssistAlloc,
// on the system stack through runtime.systemstack) and grow their stacks
// (runtime.morestack): for the tests of unwinding past the switch to the
// system stack (tests/t_goshipped.sh).  Two goroutines run main.allocate
// (through main.deep, which recurses, so that stacks grow); main waits.
// Writes READY (its PID) once both have started.
//
// The live heap is a pointer-rich table of nodes (marking it is work in
// proportion to its pointers) that the allocators keep replacing: with
// GOGC=10 the collector is nearly always marking, and a goroutine that
// allocates while it marks pays for it in assists.  A heap of []byte alone
// (no pointers to follow) is marked at once and left assists to chance
// (2 to 12 assist samples of about 1,500 in 3 s).
package main

import (
	"fmt"
	"os"
	"sync"
)

type node struct {
	data []byte
	tag  *int
}

const live = 1 << 17

var (
	mu   sync.Mutex
	keep [live]*node
	at   uint32
)

//go:noinline
func allocate(n int) int {
	local := make([]*node, 0, 64)
	total := 0
	for i := 0; i < n; i++ {
		b := &node{data: make([]byte, 64+i%512)}
		b.data[0] = byte(i)
		local = append(local, b)
		if len(local) == cap(local) {
			mu.Lock()
			for _, x := range local {
				j := at % live
				at = at*1664525 + 1013904223
				x.tag = &total
				keep[j] = x
			}
			mu.Unlock()
			local = local[:0]
		}
		total += len(b.data)
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
