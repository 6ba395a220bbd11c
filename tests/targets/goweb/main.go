// goweb ADDR [READY]: a small net/http service for the Go web-service
// recipe of docs/go.md (tests/t_docs.sh runs it).  GET /work spends its
// time in three ways, each in a function of its own so that a profile
// names it: main.sleepPhase (time.Sleep, as a call to another service
// would), main.lockPhase (a sync.Mutex that every request takes and holds
// for 1 ms) and main.computePhase (hashing).  GET /
// answers at once.  Writes READY (its PID) once it listens.
package main

import (
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

var (
	mu    sync.Mutex
	table = map[[32]byte]int{}
)

//go:noinline
func hash(buf []byte, n int) [32]byte {
	var sum [32]byte
	for i := 0; i < n; i++ {
		sum = sha256.Sum256(buf)
		buf[0] ^= sum[0]
	}
	return sum
}

// sleepPhase: waiting on something else (a database, another service).
//go:noinline
func sleepPhase() { time.Sleep(3 * time.Millisecond) }

// lockPhase: every request records itself in one shared table under one
// mutex and, holding it, waits 1 ms (a flush, a call made under the lock):
// the other requests queue on mu.
//go:noinline
func lockPhase(buf []byte) {
	mu.Lock()
	table[sha256.Sum256(buf)]++
	time.Sleep(time.Millisecond)
	mu.Unlock()
}

// computePhase: work of the request's own.
//go:noinline
func computePhase(buf []byte) [32]byte { return hash(buf, 300) }

func handleWork(w http.ResponseWriter, r *http.Request) {
	buf := make([]byte, 4096)
	sleepPhase()
	lockPhase(buf)
	sum := computePhase(buf)
	fmt.Fprintf(w, "%x\n", sum[:4])
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: goweb ADDR [READY]")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	http.HandleFunc("/work", handleWork)
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	if len(os.Args) > 2 {
		tmp := os.Args[2] + ".tmp"
		os.WriteFile(tmp, []byte(fmt.Sprintf("%d\n", os.Getpid())), 0644)
		os.Rename(tmp, os.Args[2])
	}
	http.Serve(ln, nil)
}
