package main

import (
	"io"
	"runtime"
	"time"

	"github.com/google/pprof/profile"
)

// gpStart samples as fgprof does (runtime.GoroutineProfile 99 times a
// second, every goroutine it returns counted once, its own left out) and
// returns the function that stops it and writes the counts to w as pprof
// (sample types samples/count and wall/nanoseconds).
//
// It differs from fgprof 0.9.2 (Debian's golang-github-felixge-fgprof-dev)
// in one point: a record is keyed by the PCs its stack has (Stack()), not by
// the whole [32]uintptr Stack0.  GoroutineProfile ends a stack with one 0
// and leaves the rest of a reused record as it was, and fills the records
// in no fixed order (Go 1.19 records each goroutine as it next runs), so
// one stack shows up under several Stack0 keys; fgprof 0.9.2 then merges
// keys with the same function names by assignment (HumanMap: m[key] =
// count), keeping one count and losing the others.  fgprof's current
// version keeps every key as its own pprof sample, as this does.
func gpStart(w io.Writer) func() error {
	const hz = 99
	ticker := time.NewTicker(time.Second / hz)
	stopCh := make(chan struct{})
	done := make(chan map[string]*gpStack)
	go func() {
		defer ticker.Stop()
		var recs []runtime.StackRecord
		counts := map[string]*gpStack{}
		for {
			select {
			case <-ticker.C:
				t0 := time.Now()
				recs = gpProfile(recs)
				gpBusy += time.Since(t0)
				gpCalls++
				// recs[0] is this goroutine (Go 1.19 saves the caller first).
				for i := 1; i < len(recs); i++ {
					pcs := recs[i].Stack()
					k := string(pcKey(pcs))
					if c := counts[k]; c != nil {
						c.n++
					} else {
						counts[k] = &gpStack{pcs: append([]uintptr(nil), pcs...), n: 1}
					}
				}
			case <-stopCh:
				done <- counts
				return
			}
		}
	}()
	start := time.Now()
	return func() error {
		stopCh <- struct{}{}
		counts := <-done
		return gpPprof(counts, hz, time.Since(start)).Write(w)
	}
}

// The time gpStart's goroutine spent in runtime.GoroutineProfile, and its
// calls: read after the stop function returned.
var (
	gpBusy  time.Duration
	gpCalls int
)

type gpStack struct {
	pcs []uintptr
	n   int64
}

func gpProfile(recs []runtime.StackRecord) []runtime.StackRecord {
	for {
		n, ok := runtime.GoroutineProfile(recs[:cap(recs)])
		if ok {
			return recs[:n]
		}
		recs = make([]runtime.StackRecord, n+n/10+1)
	}
}

func pcKey(pcs []uintptr) []byte {
	b := make([]byte, 0, 8*len(pcs))
	for _, pc := range pcs {
		for s := 0; s < 64; s += 8 {
			b = append(b, byte(pc>>s))
		}
	}
	return b
}

// gpPprof names each stack's frames (as fgprof does: runtime.CallersFrames,
// function names only) and makes the profile.
func gpPprof(counts map[string]*gpStack, hz int64, d time.Duration) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"},
			{Type: "wall", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "wall", Unit: "nanoseconds"},
		Period:        1e9 / hz,
		DurationNanos: int64(d),
	}
	m := &profile.Mapping{ID: 1, HasFunctions: true}
	p.Mapping = []*profile.Mapping{m}
	funcs := map[string]*profile.Location{}
	for _, s := range counts {
		smp := &profile.Sample{Value: []int64{s.n, s.n * 1e9 / hz}}
		frames := runtime.CallersFrames(s.pcs)
		for {
			f, more := frames.Next()
			loc := funcs[f.Function]
			if loc == nil {
				fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: f.Function}
				p.Function = append(p.Function, fn)
				loc = &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: m,
					Line: []profile.Line{{Function: fn}}}
				p.Location = append(p.Location, loc)
				funcs[f.Function] = loc
			}
			smp.Location = append(smp.Location, loc)
			if !more {
				break
			}
		}
		p.Sample = append(p.Sample, smp)
	}
	return p
}
