// goroutines READY [split | parked N | churn RATE]: a Go program with a
// known goroutine split, for the goroutine view (tests/t_goroutines.sh).
//   split (default): 5 user goroutines, each 20% of the wall time:
//     main in select{}; main.compute computing; main.sleeper in time.Sleep;
//     two main.locker goroutines contending on one sync.Mutex (each holds it
//     for 10 ms asleep, then waits for it while the other holds it).
//   parked N: N goroutines parked on a channel receive (main.parked), plus
//     main.sleeper and main in select{}.
//   churn RATE: RATE goroutines a second (main.brief, each asleep 1 ms),
//     started by main.spawner, plus main in select{}.
// Writes READY (its PID) once every long-lived goroutine has started.
package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strconv"
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
func compute() {
	buf := make([]byte, 4096)
	started.Done()
	for {
		sink = sha256.Sum256(buf)
		buf[0] ^= sink[0]
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
	for {
		mu.Lock()
		time.Sleep(10 * time.Millisecond)
		mu.Unlock()
	}
}

//go:noinline
func parked() {
	started.Done()
	<-never
}

//go:noinline
func brief(done chan struct{}) {
	time.Sleep(time.Millisecond)
	done <- struct{}{}
}

//go:noinline
func spawner(rate int) {
	started.Done()
	done := make(chan struct{}, 1<<16)
	period := time.Second / time.Duration(rate)
	next := time.Now()
	for {
		go brief(done)
		for len(done) > 0 {
			<-done
		}
		next = next.Add(period)
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
	}
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: goroutines READY [split | parked N | churn RATE]")
		os.Exit(2)
	}
	mode, n := "split", 0
	if len(os.Args) > 3 {
		mode = os.Args[2]
		n, _ = strconv.Atoi(os.Args[3])
	}
	switch mode {
	case "parked":
		// main.sleeper too: with every goroutine blocked for ever, Go's
		// runtime would end the program ("all goroutines are asleep").
		started.Add(n + 1)
		go sleeper()
		for i := 0; i < n; i++ {
			go parked()
		}
	case "churn":
		started.Add(1)
		go spawner(n)
	default:
		started.Add(4)
		go compute()
		go sleeper()
		go locker()
		go locker()
	}
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
