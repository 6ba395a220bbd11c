// fgbench READY SECONDS PROFILER: the known goroutine split of
// tests/targets/goroutines (main in select{}; main.compute computing;
// main.sleeper in time.Sleep; two main.locker goroutines contending on one
// sync.Mutex, each holding it 10 ms asleep, then waiting for it while the
// other holds it), profiled from inside for SECONDS by a main.window
// goroutine (in time.Sleep meanwhile).  PROFILER:
//   fgprof:FILE  fgprof (fgprof.Start, pprof format) writes FILE;
//   gp:FILE      fgprof's definition, counted without fgprof 0.9.2's loss
//                (see gpStart), writes FILE;
//   -            none: the program alone, for what the others cost.
// Writes READY (its PID) once the goroutines run and the profiler has
// started; after SECONDS, writes FILE and READY.stats ("wall_s cpu_s loops
// gp_s gp_calls": the window's wall time, the process's CPU time in it,
// main.compute's loops in it; with gp:, the time spent in and the number of
// calls to runtime.GoroutineProfile), then stays in select{} until killed.  bench/fgprof/compare.sh
// runs it.
package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/felixge/fgprof"
)

var (
	mu      sync.Mutex
	sink    [32]byte
	loops   int64
	started sync.WaitGroup
)

//go:noinline
func compute() {
	buf := make([]byte, 4096)
	started.Done()
	for {
		sink = sha256.Sum256(buf)
		buf[0] ^= sink[0]
		atomic.AddInt64(&loops, 1)
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

func cpu() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// window profiles (or not) for d, then writes what it measured.
//
//go:noinline
func window(ready, prof string, d time.Duration) {
	var f *os.File
	stop := func() error { return nil }
	if kind, out, ok := strings.Cut(prof, ":"); ok {
		var err error
		if f, err = os.Create(out); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		switch kind {
		case "fgprof":
			stop = fgprof.Start(f, fgprof.FormatPprof)
		case "gp":
			stop = gpStart(f)
		default:
			fmt.Fprintln(os.Stderr, "fgbench: PROFILER is fgprof:FILE, gp:FILE or -")
			os.Exit(2)
		}
	}
	t0, c0, l0 := time.Now(), cpu(), atomic.LoadInt64(&loops)
	publish(ready, fmt.Sprintf("%d\n", os.Getpid()))
	time.Sleep(d)
	wall, c1, l1 := time.Since(t0).Seconds(), cpu(), atomic.LoadInt64(&loops)
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if f != nil {
		f.Close()
	}
	publish(ready+".stats", fmt.Sprintf("%.3f %.3f %d %.6f %d\n", wall, c1-c0, l1-l0,
		gpBusy.Seconds(), gpCalls))
}

// publish writes TEXT to PATH whole (a rename), for a poller.
func publish(path, text string) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		os.Exit(99)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Exit(99)
	}
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: fgbench READY SECONDS fgprof:FILE|gp:FILE|-")
		os.Exit(2)
	}
	secs, err := strconv.ParseFloat(os.Args[2], 64)
	if err != nil || secs <= 0 {
		fmt.Fprintln(os.Stderr, "fgbench: SECONDS must be a positive number")
		os.Exit(2)
	}
	// FGBENCH_IDLE=1: no main.compute, so that what an in-process
	// profiler costs is most of the program's CPU time.
	if os.Getenv("FGBENCH_IDLE") == "1" {
		started.Add(3)
	} else {
		started.Add(4)
		go compute()
	}
	go sleeper()
	go locker()
	go locker()
	started.Wait()
	go window(os.Args[1], os.Args[3], time.Duration(secs*float64(time.Second)))
	select {}
}
