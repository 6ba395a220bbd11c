// goroutines READY [split | parked N | churn RATE | timers MS]: a Go program
// with a known goroutine split, for the goroutine view (tests/t_goroutines.sh).
//   split (default): 5 user goroutines, each 20% of the wall time:
//     main in select{}; main.compute computing; main.sleeper in time.Sleep,
//     with the pprof labels role=sleeper and tier=2 (SetGoroutineLabels);
//     two main.locker goroutines contending on one sync.Mutex (each holds it
//     for 10 ms asleep, then waits for it while the other holds it).
//   parked N: N goroutines parked on a channel receive (main.parked), plus
//     main.sleeper and main in select{}.
//   churn RATE: RATE goroutines a second (main.brief, each asleep 1 ms),
//     started by main.spawner, plus main in select{}.
//   timers MS: split's goroutines, main.ticker receiving from a
//     time.Ticker of MS milliseconds, and main.epoller in epoll_wait on a
//     thread of its own.  Each SIGUSR1 ends a window (the first one starts
//     at the first tick) and writes READY.ticks, "SEQ TICKS ELAPSED_US
//     WORST_GAP_US EINTR": the signal's number (1, 2, ...), the ticks
//     received in the window, its length, the longest time between two
//     ticks received in it, and how many of main.epoller's waits ended with
//     EINTR in it.
// Writes READY (its PID) once every long-lived goroutine has started.
package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
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
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("role", "sleeper", "tier", "2")))
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

// eintr counts main.epoller's waits that ended with EINTR.
var eintr atomic.Int64

// epoller waits in epoll_wait (1 s at a time, on an epoll set with nothing
// in it) on a thread of its own, where SIGUSR1 is blocked (the windows'
// signals go to another thread), and counts the waits that end with EINTR:
// a profiler that stopped this thread would cause them (Go retries its own
// waits, so its programs never show them).
//
//go:noinline
func epoller() {
	runtime.LockOSThread()
	set := uint64(1) << (uint(syscall.SIGUSR1) - 1)
	if _, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 0 /* SIG_BLOCK */,
		uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0); e != 0 {
		os.Exit(99)
	}
	epfd, err := syscall.EpollCreate1(0)
	if err != nil {
		os.Exit(99)
	}
	events := make([]syscall.EpollEvent, 1)
	started.Done()
	for {
		if _, err := syscall.EpollWait(epfd, events, 1000); err == syscall.EINTR {
			eintr.Add(1)
		}
	}
}

// What main.ticker saw in the current window.
var ticks struct {
	sync.Mutex
	n          int
	start      time.Time
	last       time.Time
	worst      time.Duration
}

//go:noinline
func ticker(period time.Duration) {
	t := time.NewTicker(period)
	<-t.C
	ticks.Lock()
	ticks.start = time.Now()
	ticks.last = ticks.start
	ticks.Unlock()
	started.Done()
	for {
		<-t.C
		now := time.Now()
		ticks.Lock()
		ticks.n++
		if gap := now.Sub(ticks.last); gap > ticks.worst {
			ticks.worst = gap
		}
		ticks.last = now
		ticks.Unlock()
	}
}

// windows ends a window of main.ticker's at each signal from SIG and
// writes it to PATH (whole: a rename).
//
//go:noinline
func windows(path string, sig chan os.Signal) {
	for seq := 1; ; seq++ {
		<-sig
		ticks.Lock()
		now := time.Now()
		line := fmt.Sprintf("%d %d %d %d %d\n", seq, ticks.n, now.Sub(ticks.start).Microseconds(),
			ticks.worst.Microseconds(), eintr.Swap(0))
		ticks.n, ticks.start, ticks.worst = 0, now, 0
		ticks.Unlock()
		if err := os.WriteFile(path+".tmp", []byte(line), 0o644); err != nil {
			os.Exit(99)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			os.Exit(99)
		}
	}
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
		fmt.Fprintln(os.Stderr, "usage: goroutines READY [split | parked N | churn RATE | timers MS]")
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
	case "timers":
		started.Add(6)
		go epoller()
		// Before READY: SIGUSR1 would end the program until then.
		sig := make(chan os.Signal, 8)
		signal.Notify(sig, syscall.SIGUSR1)
		go windows(os.Args[1]+".ticks", sig)
		go ticker(time.Duration(n) * time.Millisecond)
		go compute()
		go sleeper()
		go locker()
		go locker()
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
