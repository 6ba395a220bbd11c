# Test targets for the integration tests (tests/t_*.sh), included by the
# top-level Makefile.  Each tests/targets/NAME.c (or .cpp) becomes
# tests/bin/NAME, built like the binaries the profiler meets in the wild:
# -O2, no frame pointers, PIE, shared libc.  Most carry -g; the exceptions
# are the point of their test:
#   nodebug   no -g, names from .symtab only
#   stripped  -s, static functions only as "stripped+0xOFFSET"
#   cxx       g++, a namespaced method for demangling

TEST_NAMES := wallclock deep inlined cxx nodebug stripped \
              exiter latethread forker signals crowd eintr interrupter sigcount churn execer many mainexit cpuidle jit dutycycle switcher still stall
TEST_NAMES += prefork
TEST_NAMES += hostile
TEST_NAMES += deadlock cloner swapper

TEST_NAMES += sigtramp
TEST_NAMES += sigframe
TEST_NAMES += eintr-fp
TEST_NAMES += renamer
TEST_NAMES += timeouts syscaller
TEST_NAMES += bigframe
TEST_NAMES += noperf
TEST_BINS  := $(TEST_NAMES:%=tests/bin/%)
TEST_BINS  += tests/bin/libhostile.so tests/bin/libhostile-s.so
TEST_BINS  += tests/bin/libswapA.so tests/bin/libswapB.so
TEST_BINS  += tests/bin/libtimeouts.so
TEST_BINS  += tests/bin/unitsandbox

CXX             ?= g++
TEST_CFLAGS     := -O2 -fomit-frame-pointer -pthread -fPIE -pie -Wall -Wextra \
                   -Wno-unused-parameter
TEST_DEBUG      := -g
TEST_STRIP      :=

tests/bin/nodebug:  TEST_DEBUG :=
tests/bin/stripped: TEST_DEBUG :=
tests/bin/stripped: TEST_STRIP := -s

tests/bin/%: tests/targets/%.c tests/targets/ready.h tests/tests.mk
	@mkdir -p tests/bin
	@echo "  CC      $<"
	$(Q)$(CC) -std=gnu11 $(TEST_CFLAGS) $(TEST_DEBUG) $(TEST_STRIP) -o $@ $<

# unitsandbox: the seccomp side of the systemd unit's sandbox (t_install)
tests/bin/unitsandbox: tests/targets/unitsandbox.c tests/tests.mk
	@mkdir -p tests/bin
	@echo "  CC      $<"
	$(Q)$(CC) -std=gnu11 $(TEST_CFLAGS) -o $@ $< -lseccomp

tests/bin/%: tests/targets/%.cpp tests/targets/ready.h tests/tests.mk
	@mkdir -p tests/bin
	@echo "  CXX     $<"
	$(Q)$(CXX) $(TEST_CFLAGS) $(TEST_DEBUG) $(TEST_STRIP) -o $@ $<


# The library tests/bin/hostile loads (t_hostile.sh copies it to hostile
# file names): with symbols, and stripped.
tests/bin/libhostile.so tests/bin/libhostile-s.so: tests/targets/hostile_lib.c tests/tests.mk
	@mkdir -p tests/bin
	@echo "  CC      $< ($(notdir $@))"
	$(Q)$(CC) -std=gnu11 -O2 -fomit-frame-pointer -fPIC -shared -Wall -Wextra -g \
		-Wl,--build-id=none $(if $(findstring -s.so,$@),-s) -o $@ $<

# The two libraries tests/bin/swapper loads at one address (and
# tests/bin/churn, 10 times a second, in t_always and bench/always.sh):
# one source, two function names.
tests/bin/libswapA.so tests/bin/libswapB.so: tests/bin/libswap%.so: tests/targets/swaplib.c tests/tests.mk
	@mkdir -p tests/bin
	@echo "  CC      $< ($(notdir $@))"
	$(Q)$(CC) -std=gnu11 -O2 -fomit-frame-pointer -fPIC -shared -Wall -Wextra -g \
		-DSWAP_FN=inner_$* -DSWAP_LEAF=leaf_$* -o $@ $<

# tests/targets/timeouts.c as a library, for a CPython process to run
# (tests/targets/pytimeouts.py, t_timeouts.sh).
tests/bin/libtimeouts.so: tests/targets/timeouts.c tests/targets/ready.h tests/tests.mk
	@mkdir -p tests/bin
	@echo "  CC      $< ($(notdir $@))"
	$(Q)$(CC) -std=gnu11 -O2 -fomit-frame-pointer -fPIC -shared -pthread -Wall -Wextra \
		-Wno-unused-parameter -g -DTIMEOUTS_LIB -o $@ $<

# Go targets (tests/t_go.sh): tests/targets/gospin.go built by Go 1.19 as
# is and stripped (-s -w: no .symtab, no DWARF, names only in .gopclntab).
# The Go cache and path are under build/ (CI runs as root, offline); no
# module, no network.  Built only where the Go toolchain is installed
# (contrib/install-deps.sh installs it); t_go.sh skips without it.
GO_TOOL  ?= /usr/lib/go-1.19/bin/go
GO_ENV   := GOENV=off GOFLAGS= GO111MODULE=off CGO_ENABLED=0 \
            GOCACHE=$(CURDIR)/build/go/cache GOPATH=$(CURDIR)/build/go/path
ifneq ($(wildcard $(GO_TOOL)),)
TEST_BINS += tests/bin/gospin tests/bin/gospin-stripped
endif

tests/bin/gospin: tests/targets/gospin.go tests/tests.mk
	@mkdir -p tests/bin
	@echo "  GO      $<"
	$(Q)$(GO_ENV) $(GO_TOOL) build -o $@ $<

tests/bin/gospin-stripped: tests/targets/gospin.go tests/tests.mk
	@mkdir -p tests/bin
	@echo "  GO      $< (-s -w)"
	$(Q)$(GO_ENV) $(GO_TOOL) build -ldflags='-s -w' -o $@ $<

# Last: every TEST_BINS += above is in.

# Issue 13, unwinding beyond .eh_frame_hdr: static binaries (.eh_frame
# without .eh_frame_hdr; musl's libc without any unwind info), and a Go
# program built normally (.debug_frame, compressed) and with -s -w (no
# DWARF, no .symtab: frame pointers only).  Go's caches live under build/
# so that the build works offline and as root; a runtime that is absent
# builds nothing here (the test installs it, or skips with the reason).
tests/bin/static: TEST_CFLAGS := $(filter-out -fPIE -pie,$(TEST_CFLAGS)) -static
TEST_BINS += tests/bin/static

tests/bin/static-musl: tests/targets/static.c tests/targets/ready.h tests/tests.mk
	@mkdir -p tests/bin
	@echo "  MUSLCC  $<"
	$(Q)musl-gcc -std=gnu11 $(filter-out -fPIE -pie,$(TEST_CFLAGS)) -static $(TEST_DEBUG) -o $@ $<
ifneq ($(shell command -v musl-gcc 2>/dev/null),)
TEST_BINS += tests/bin/static-musl
endif

GO_BIN ?= $(GO_TOOL)
tests/bin/gounwind: tests/targets/gounwind/main.go tests/tests.mk
	@mkdir -p tests/bin build/go
	@echo "  GO      $<"
	$(Q)$(GO_ENV) $(GO_BIN) build -o $@ $<

tests/bin/gounwind-sw: tests/targets/gounwind/main.go tests/tests.mk
	@mkdir -p tests/bin build/go
	@echo "  GO      $< [-s -w]"
	$(Q)$(GO_ENV) $(GO_BIN) build -ldflags='-s -w' -o $@ $<
ifneq ($(wildcard $(GO_BIN)),)
TEST_BINS += tests/bin/gounwind tests/bin/gounwind-sw
endif

# Go as distributions ship it (tests/t_goshipped.sh): cgo, linked by the
# system linker (C start-up code before Go's text), with and without
# .symtab and DWARF; and a program whose goroutines assist the garbage
# collector, stripped (no DWARF: the goroutine found through the thread's
# TLS) and not (the goroutine view).
GO_EXT := CGO_ENABLED=1 $(GO_BIN) build -ldflags='-linkmode=external
tests/bin/gounwind-ext: tests/targets/gounwind/main.go tests/targets/gounwind/cgo.go tests/tests.mk
	@mkdir -p tests/bin build/go
	@echo "  GO      $< [cgo, -linkmode=external]"
	$(Q)$(GO_ENV) $(GO_EXT)' -o $@ $(filter %.go,$^)

tests/bin/gounwind-ext-sw: tests/targets/gounwind/main.go tests/targets/gounwind/cgo.go tests/tests.mk
	@mkdir -p tests/bin build/go
	@echo "  GO      $< [cgo, -linkmode=external -s -w]"
	$(Q)$(GO_ENV) $(GO_EXT) -s -w' -o $@ $(filter %.go,$^)

tests/bin/goalloc: tests/targets/goalloc/main.go tests/tests.mk
	@mkdir -p tests/bin build/go
	@echo "  GO      $<"
	$(Q)$(GO_ENV) $(GO_BIN) build -o $@ $<

tests/bin/goalloc-sw: tests/targets/goalloc/main.go tests/tests.mk
	@mkdir -p tests/bin build/go
	@echo "  GO      $< [-s -w]"
	$(Q)$(GO_ENV) $(GO_BIN) build -ldflags='-s -w' -o $@ $<
ifneq ($(wildcard $(GO_BIN)),)
TEST_BINS += tests/bin/gounwind-ext tests/bin/gounwind-ext-sw tests/bin/goalloc tests/bin/goalloc-sw
endif

# Go programs built as they are, one directory each (tests/targets/NAME/):
# pyroreceiver, a stand-in for Pyroscope's ingest API (tests/t_serve.sh);
# goweb, the net/http service of docs/go.md's recipe (tests/t_docs.sh).
GO_PLAIN := pyroreceiver goweb
$(GO_PLAIN:%=tests/bin/%): tests/bin/%: tests/targets/%/main.go tests/tests.mk
	@mkdir -p tests/bin build/go
	@echo "  GO      $<"
	$(Q)$(GO_ENV) $(GO_BIN) build -o $@ $<
ifneq ($(wildcard $(GO_BIN)),)
TEST_BINS += $(GO_PLAIN:%=tests/bin/%)
endif

# The goroutine view (tests/t_goroutines.sh): a known split of goroutines,
# built normally (DWARF says where the goroutines are) and with -w (none).
tests/bin/goroutines: tests/targets/goroutines/main.go tests/tests.mk
	@mkdir -p tests/bin build/go
	@echo "  GO      $<"
	$(Q)$(GO_ENV) $(GO_BIN) build -o $@ $<

tests/bin/goroutines-w: tests/targets/goroutines/main.go tests/tests.mk
	@mkdir -p tests/bin build/go
	@echo "  GO      $< [-w]"
	$(Q)$(GO_ENV) $(GO_BIN) build -ldflags='-w' -o $@ $<
ifneq ($(wildcard $(GO_BIN)),)
TEST_BINS += tests/bin/goroutines tests/bin/goroutines-w
endif

# A Go program that sets runtime.allglen past any bound (tests/t_goroutines.sh).
tests/bin/goliar: tests/targets/goliar/main.go tests/tests.mk
	@mkdir -p tests/bin build/go
	@echo "  GO      $<"
	$(Q)$(GO_ENV) $(GO_BIN) build -o $@ $<
ifneq ($(wildcard $(GO_BIN)),)
TEST_BINS += tests/bin/goliar
endif

# CPython's offsets (tests/t_python.sh): python/layout.c's table printed
# by tests/bin/pylayout, to compare with what each installed version's
# headers say (tests/targets/pyoffsets/pyoffsets.c, built by the test:
# it needs that version's headers).
tests/bin/pylayout: tests/targets/pyoffsets/pylayout.c python/layout.c python/layout.h tests/tests.mk
	@mkdir -p tests/bin
	@echo "  CC      $<"
	$(Q)$(CC) -std=gnu11 -O2 -Wall -Wextra -I. -o $@ $< python/layout.c
TEST_BINS += tests/bin/pylayout

# A hostile CPython (tests/t_python.sh): a fake 3.11 laid out with
# python/layout.c's offsets; named python3.11-* as CPython is found by its
# module's name.
tests/bin/python3.11-hostile: tests/targets/pyhostile.c tests/targets/ready.h python/layout.c python/layout.h tests/tests.mk
	@mkdir -p tests/bin
	@echo "  CC      $<"
	$(Q)$(CC) -std=gnu11 $(TEST_CFLAGS) -g -rdynamic -I. -o $@ $< python/layout.c
TEST_BINS += tests/bin/python3.11-hostile

# PHP's offsets (tests/t_php.sh): php/layout.c's table printed by
# tests/bin/phplayout, to compare with what the installed headers say
# (tests/targets/phpoffsets/phpoffsets.c, built by the test).
tests/bin/phplayout: tests/targets/phpoffsets/phplayout.c php/layout.c php/layout.h tests/tests.mk
	@mkdir -p tests/bin
	@echo "  CC      $<"
	$(Q)$(CC) -std=gnu11 -O2 -Wall -Wextra -I. -o $@ $< php/layout.c
TEST_BINS += tests/bin/phplayout

# The goroutine view's layout with DWARF and without, side by side
# (tests/t_goroutines.sh): tests/targets/golayout/golayout.c over the
# profiler's objects.
tests/bin/golayout: tests/targets/golayout/golayout.c $(OBJS) tests/tests.mk
	@mkdir -p tests/bin
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(OBJS) $(LDLIBS)
TEST_BINS += tests/bin/golayout

# The goroutines target as Go programs are shipped: -s -w (no .symtab, no
# DWARF), and linked by the system linker with cgo, with and without.
tests/bin/goroutines-sw: tests/targets/goroutines/main.go tests/tests.mk
	@mkdir -p tests/bin build/go
	@echo "  GO      $< [-s -w]"
	$(Q)$(GO_ENV) $(GO_BIN) build -ldflags='-s -w' -o $@ $<

tests/bin/goroutines-ext: tests/targets/goroutines/main.go tests/tests.mk
	@mkdir -p tests/bin build/go
	@echo "  GO      $< [-linkmode=external]"
	$(Q)$(GO_ENV) $(GO_EXT)' -o $@ $<

tests/bin/goroutines-ext-sw: tests/targets/goroutines/main.go tests/tests.mk
	@mkdir -p tests/bin build/go
	@echo "  GO      $< [-linkmode=external -s -w]"
	$(Q)$(GO_ENV) $(GO_EXT) -s -w' -o $@ $<
# ... and as a position-independent executable (-buildmode=pie), -s -w.
tests/bin/goroutines-pie-sw: tests/targets/goroutines/main.go tests/tests.mk
	@mkdir -p tests/bin build/go
	@echo "  GO      $< [-buildmode=pie -s -w]"
	$(Q)$(GO_ENV) $(GO_BIN) build -buildmode=pie -ldflags='-s -w' -o $@ $<
ifneq ($(wildcard $(GO_BIN)),)
TEST_BINS += tests/bin/goroutines-sw tests/bin/goroutines-ext tests/bin/goroutines-ext-sw \
	     tests/bin/goroutines-pie-sw
endif

.PHONY: test-bins
test-bins: $(TEST_BINS)

# eintr built as debug and frame-pointer builds are (issue 17 item 9).
tests/bin/eintr-fp: TEST_CFLAGS := -O0 -fno-omit-frame-pointer -pthread -fPIE -pie -Wall -Wextra \
                                   -Wno-unused-parameter
tests/bin/eintr-fp: tests/targets/eintr.c

# CRuby's layout checked against a live ruby (tests/t_ruby.sh): what
# ruby/vm.c reads, printed by tests/bin/rbdump.
tests/bin/rbdump: tests/targets/rbdump/rbdump.c ruby/vm.c ruby/vm.h ruby/layout.c ruby/layout.h util/remote.c util/xalloc.c tests/tests.mk
	@mkdir -p tests/bin
	@echo "  CC      $<"
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -I. -o $@ $< ruby/vm.c ruby/layout.c util/remote.c util/xalloc.c
TEST_BINS += tests/bin/rbdump

# What jvm/ reads of a HotSpot JVM, printed by tests/bin/jvmdump
# (tests/t_jvm.sh), over the profiler's objects.
tests/bin/jvmdump: tests/targets/jvmdump/jvmdump.c $(OBJS) tests/tests.mk
	@mkdir -p tests/bin
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(OBJS) $(LDLIBS)
TEST_BINS += tests/bin/jvmdump

# The JVM's test program (tests/t_jvm.sh), when a JDK is installed.
JAVAC := $(shell command -v javac 2>/dev/null)
ifneq ($(JAVAC),)
tests/bin/java/JvmSplit.class: tests/targets/JvmSplit.java tests/tests.mk
	@mkdir -p tests/bin/java
	@echo "  JAVAC   $<"
	$(Q)$(JAVAC) -d tests/bin/java $<
TEST_BINS += tests/bin/java/JvmSplit.class
tests/bin/java/JvmHttp.class: tests/targets/JvmHttp.java tests/tests.mk
	@mkdir -p tests/bin/java
	@echo "  JAVAC   $<"
	$(Q)$(JAVAC) -d tests/bin/java $<
TEST_BINS += tests/bin/java/JvmHttp.class
tests/bin/java/JvmChurn.class: tests/targets/JvmChurn.java tests/targets/JvmChurned.java tests/tests.mk
	@mkdir -p tests/bin/java
	@echo "  JAVAC   $<"
	$(Q)$(JAVAC) -d tests/bin/java $< tests/targets/JvmChurned.java
TEST_BINS += tests/bin/java/JvmChurn.class
endif
