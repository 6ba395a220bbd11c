# Test targets for the integration tests (tests/t_*.sh), included by the
# top-level Makefile.  Each tests/targets/NAME.c (or .cpp) becomes
# tests/bin/NAME, built like the binaries the profiler meets in the wild:
# -O2, no frame pointers, PIE, shared libc.  Most carry -g; the exceptions
# are the point of their test:
#   nodebug   no -g, names from .symtab only
#   stripped  -s, static functions only as "stripped+0xOFFSET"
#   cxx       g++, a namespaced method for demangling

TEST_NAMES := wallclock deep inlined cxx nodebug stripped \
              exiter latethread forker signals crowd eintr interrupter sigcount churn execer many mainexit cpuidle jit dutycycle switcher still
TEST_NAMES += prefork
TEST_NAMES += sigframe
TEST_BINS  := $(TEST_NAMES:%=tests/bin/%)

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

tests/bin/%: tests/targets/%.cpp tests/targets/ready.h tests/tests.mk
	@mkdir -p tests/bin
	@echo "  CXX     $<"
	$(Q)$(CXX) $(TEST_CFLAGS) $(TEST_DEBUG) $(TEST_STRIP) -o $@ $<

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

GO_BIN ?= /usr/lib/go-1.19/bin/go
GO_ENV := GOCACHE=$(CURDIR)/build/go/cache GOPATH=$(CURDIR)/build/go/path GO111MODULE=off \
          GOFLAGS= CGO_ENABLED=0
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

.PHONY: test-bins
test-bins: $(TEST_BINS)
