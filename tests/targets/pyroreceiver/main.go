// pyroreceiver READY DIR [FAIL]: a stand-in for a Pyroscope server's ingest
// API, for tests/t_serve.sh.  Listens on 127.0.0.1 (a port of its own) and
// writes "http://127.0.0.1:PORT" to READY.  Each POST /ingest is checked
// against Pyroscope's documented HTTP API (query: name=APP{labels},
// from and until in unix seconds, format=pprof, sampleRate, spyName; body:
// multipart/form-data with the profile in the field "profile"); a request
// that passes gets its profile saved as DIR/N.pprof and its query as
// DIR/N.query, and 200.  One that does not: 400, and the reason appended to
// DIR/errors.  The first FAIL requests (default 0) are answered 503 without
// a look, as a store that is down.  FAIL "refuse": the first request is
// answered 429 (too many requests: to be retried), then every request
// carrying that same profile 400 with a reason, as Pyroscope refuses an
// invalid one (each refusal a line in DIR/refused); the others are taken.
package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
)

var nameRE = regexp.MustCompile(`^[^{}=,]+\{([A-Za-z_.][A-Za-z0-9_.]*=[^{}=,]*)(,[A-Za-z_.][A-Za-z0-9_.]*=[^{}=,]*)*\}$`)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: pyroreceiver READY DIR [FAIL]")
		os.Exit(2)
	}
	ready, dir := os.Args[1], os.Args[2]
	fail, refuse400 := 0, false
	if len(os.Args) > 3 {
		if os.Args[3] == "refuse" {
			refuse400 = true
		} else {
			fail, _ = strconv.Atoi(os.Args[3])
		}
	}
	var refusedSum [32]byte
	haveRefused := false
	var mu sync.Mutex
	seen, saved := 0, 0
	refuse := func(w http.ResponseWriter, why string) {
		f, err := os.OpenFile(filepath.Join(dir, "errors"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, why)
			f.Close()
		}
		http.Error(w, why, http.StatusBadRequest)
	}
	http.HandleFunc("/ingest", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen <= fail {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if r.Method != http.MethodPost {
			refuse(w, "method "+r.Method)
			return
		}
		q := r.URL.Query()
		if !nameRE.MatchString(q.Get("name")) {
			refuse(w, "name "+q.Get("name"))
			return
		}
		from, e1 := strconv.ParseInt(q.Get("from"), 10, 64)
		until, e2 := strconv.ParseInt(q.Get("until"), 10, 64)
		if e1 != nil || e2 != nil || from <= 0 || until < from {
			refuse(w, "from/until "+q.Get("from")+" "+q.Get("until"))
			return
		}
		if q.Get("format") != "pprof" {
			refuse(w, "format "+q.Get("format"))
			return
		}
		if _, err := strconv.Atoi(q.Get("sampleRate")); err != nil {
			refuse(w, "sampleRate "+q.Get("sampleRate"))
			return
		}
		if q.Get("spyName") == "" {
			refuse(w, "no spyName")
			return
		}
		if err := r.ParseMultipartForm(32 << 20); err != nil {
			refuse(w, "multipart: "+err.Error())
			return
		}
		files := r.MultipartForm.File["profile"]
		if len(files) != 1 {
			refuse(w, "no profile field")
			return
		}
		f, err := files[0].Open()
		if err != nil {
			refuse(w, "profile: "+err.Error())
			return
		}
		body, err := io.ReadAll(f)
		f.Close()
		if err != nil || len(body) == 0 {
			refuse(w, "empty profile")
			return
		}
		if refuse400 {
			sum := sha256.Sum256(body)
			if !haveRefused {
				refusedSum, haveRefused = sum, true
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			}
			if sum == refusedSum {
				f, err := os.OpenFile(filepath.Join(dir, "refused"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err == nil {
					fmt.Fprintln(f, r.URL.RawQuery)
					f.Close()
				}
				http.Error(w, "invalid profile: refused by the test store\nsecond line", http.StatusBadRequest)
				return
			}
		}
		base := filepath.Join(dir, strconv.Itoa(saved))
		os.WriteFile(base+".query", []byte(r.URL.RawQuery+"\n"), 0o644)
		os.WriteFile(base+".pprof", body, 0o644)
		// what the sender authenticated with (t_push's secrets section)
		os.WriteFile(base+".auth", []byte(r.Header.Get("Authorization")+"\n"+
			"X-Scope-OrgID: "+r.Header.Get("X-Scope-OrgID")+"\n"), 0o644)
		saved++
		w.WriteHeader(http.StatusOK)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tmp := ready + ".tmp"
	os.WriteFile(tmp, []byte("http://"+ln.Addr().String()+"\n"), 0o644)
	os.Rename(tmp, ready)
	http.Serve(ln, nil)
}
