# cprof-attach: top-level build.  `make` builds ./cprof-attach, `make check`
# runs every test, `make demo` installs what is missing and profiles the demo.
# Quiet by default; `make V=1` shows the full commands.

PKGS     := libunwind-generic libdw libelf libprotobuf-c zlib jansson libseccomp libmicrohttpd libcurl
CC       ?= cc
CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Wshadow -Wno-unused-parameter
ifeq ($(CI),true)
WARN     += -Werror
endif
# Sanitizers: SANITIZE=1 means address,undefined.  The sanitizer build has
# its objects in $(SAN), never mixed with the plain ones in build/; `make
# SANITIZE=1` makes ./cprof-attach from it, `make check` tests both builds.
comma    := ,
ifeq ($(SANITIZE),1)
override SANITIZE := address,undefined
endif
SAN_LIST := $(if $(SANITIZE),$(SANITIZE),address$(comma)undefined)
# (GCC's UBSan instrumentation makes -Wformat-truncation see NULL formats
# that are not there: a false alarm, fatal with CI's -Werror.)
SANFLAGS := -fsanitize=$(SAN_LIST) -fno-omit-frame-pointer -Wno-format-truncation
SAN      := build/san-$(subst $(comma),-,$(SAN_LIST))
B        := $(if $(SANITIZE),$(SAN),build)
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
ALL_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) -I. -Ibuild $(PKG_CFLAGS) -D_GNU_SOURCE
LDLIBS     := $(PKG_LIBS) -lstdc++ -lm -pthread
# libiberty (libiberty-dev: a static library, no pkg-config file): the
# demangler of C++ and Rust names.
LDLIBS     += -liberty
PREFIX  ?= /usr/local
DESTDIR ?=

ifeq ($(V),1)
Q :=
else
Q := @
endif

VERSION := 0.1.0

SRCS := util/xalloc.c util/hist.c util/syscalls.c util/intern.c util/strbuf.c util/timeutil.c \
        module/modules.c module/image.c module/unwind_info.c module/cfi_rows.c module/roots.c attach/proc.c attach/seize.c attach/tables.c attach/captures.c attach/blocked.c attach/target.c attach/perf.c attach/nostop.c \
        sample/sampler.c \
        unwind/unwinder.c unwind/libunwind.c unwind/capture.c unwind/py_trampoline.c \
        dwarf/symbolizer.c \
        profile/stacks.c profile/timeline.c output/frames.c output/output.c output/formats.c output/readers.c output/folded.c output/pprof.c output/svg.c output/speedscope.c \
        cli/options.c run/options.c run/run.c run/naming.c run/namer.c run/dump.c run/periods.c run/pattern.c run/writer.c run/pidfile.c
SRCS += util/text.c
SRCS += util/secret.c
SRCS += util/remote.c util/sparse.c
SRCS += run/outfile.c
SRCS += run/watchdog.c
SRCS += run/follow.c run/cgroup.c
SRCS += run/serve.c run/push.c
SRCS += module/gopclntab.c module/gopclntab_rows.c module/symbols.c module/perfmap.c
SRCS += dwarf/debuginfod.c
SRCS += unwind/cfi.c
SRCS += goroutine/goroutines.c goroutine/curg.c goroutine/golayout.c
SRCS += sample/rt_syms.c sample/rt_chain.c sample/rt_go.c sample/rt_python.c sample/rt_php.c sample/rt_ruby.c sample/rt_java.c sample/spaces.c sample/capture.c sample/count.c sample/views.c sample/tracer.c
SRCS += dwarf/symcache.c
SRCS += python/layout.c python/lines.c python/interp.c python/names.c python/str.c
SRCS += php/layout.c php/interp.c
SRCS += ruby/layout.c ruby/vm.c ruby/find.c
SRCS += jvm/vmstructs.c jvm/jvm.c
MAIN := cli/main.c
OBJS := $(SRCS:%.c=build/%.o) build/output/profile.pb-c.o
objs  = $(OBJS:build/%=$(1)/%)
FLAVOURS := build $(SAN) build/fuzz
DEPS := $(foreach f,$(FLAVOURS),$(patsubst %.o,%.d,$(call objs,$(f)) $(f)/cli/main.o))

.PHONY: all check check-bins unit bench soak demo deps install clean fuzz FORCE
all: cprof-attach

build/output/profile.pb-c.c build/output/profile.pb-c.h: output/profile.proto
	@mkdir -p build/output
	@echo "  PROTOC  $<"
	$(Q)protoc-c --c_out=build/output --proto_path=output $<

# $(call flavour,DIR,CC,FLAGS): the objects, the profiler and the unit tests
# built in DIR by CC with the extra FLAGS.  Flavours share no object, so a
# sanitizer build never links an object compiled without it, or the reverse.
define flavour
$(1)/%.o: %.c build/output/profile.pb-c.h
	@mkdir -p $$(dir $$@)
	@echo "  CC      $$<$(if $(3), [$(1)])"
	$$(Q)$(2) $$(ALL_CFLAGS) $(3) -DCPROF_VERSION='"$$(VERSION)"' -MMD -MP -c -o $$@ $$<

$(1)/output/profile.pb-c.o: build/output/profile.pb-c.c
	@mkdir -p $$(dir $$@)
	@echo "  CC      $$<$(if $(3), [$(1)])"
	$$(Q)$(2) $$(filter-out -Wshadow -Werror,$$(ALL_CFLAGS)) $(3) -c -o $$@ $$<

$(1)/cprof-attach: $(call objs,$(1)) $(1)/cli/main.o
	@echo "  LINK    $$@"
	$$(Q)$(2) $$(CFLAGS) $(3) -o $$@ $$^ $$(LDLIBS)

# Unit tests of the pure parts (maps parsing, interning, options, encoding).
$(1)/tests/unit: tests/unit/unit.c $(call objs,$(1))
	@mkdir -p $$(dir $$@)
	@echo "  CC      $$<$(if $(3), [$(1)])"
	$$(Q)$(2) $$(ALL_CFLAGS) $(3) -o $$@ $$^ $$(LDLIBS)
endef
$(eval $(call flavour,build,$(CC),))
$(eval $(call flavour,$(SAN),$(CC),$(SANFLAGS)))

# ./cprof-attach: the plain build, or with SANITIZE the sanitizer build;
# copied again whenever it came from the other one.
cprof-attach: $(B)/cprof-attach
	$(Q)cp $< $@.tmp && mv -f $@.tmp $@ && echo $(B) >build/.cprof-attach.from
ifneq ($(shell cat build/.cprof-attach.from 2>/dev/null),$(B))
cprof-attach: FORCE
endif
FORCE:

# The bundled demo program, built like the binaries we expect to meet:
# optimized, no frame pointers, PIE.
build/demo: contrib/demo/demo.c
	@mkdir -p build
	@echo "  CC      $<"
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -pthread -o $@ $<

-include tests/tests.mk

-include tests/fuzz/fuzz.mk

# `make check`: every test on the plain build, then again on the sanitizer
# build (ASan + UBSan; CHECK_SAN=0 skips that pass), plus the replay of the
# fuzz corpus and a valgrind run; one "N passed, N failed" line for all.
# `make check SANITIZE=1`: the sanitizer build only.
# Before building, the packages (contrib/install-deps.sh: as root it
# installs what is missing, otherwise it names it and the tests that need
# it skip, saying so); the build then uses every CPU.
# T='t_python t_eintr' runs only those files (T=unit:WORD the unit tests
# whose group name holds WORD); JOBS=N (or make -jN) files side by side.
CHECK_SAN ?= 1
NPROC := $(shell nproc 2>/dev/null || echo 2)
ifeq ($(SANITIZE),)
CHECK_BINS := cprof-attach build/tests/unit $(if $(filter 1,$(CHECK_SAN)),$(SAN)/cprof-attach $(SAN)/tests/unit)
check: CHECK_ENV := CPROF=./cprof-attach UNIT=build/tests/unit \
	$(if $(filter 1,$(CHECK_SAN)),SAN_CPROF=./$(SAN)/cprof-attach SAN_UNIT=$(SAN)/tests/unit)
else
CHECK_BINS := $(SAN)/cprof-attach $(SAN)/tests/unit
check: CHECK_ENV := CPROF=./$(SAN)/cprof-attach UNIT=$(SAN)/tests/unit CPROF_SANITIZED=1
endif
check-bins: $(CHECK_BINS) $(TEST_BINS) $(FUZZ_REPLAY_BINS)
check:
	@bash contrib/install-deps.sh all || echo "make check: the tests that need those packages skip, saying so"
	@$(MAKE) --no-print-directory -j$(NPROC) check-bins
	@$(CHECK_ENV) FUZZ_REPLAY=$(SAN)/fuzz bash tests/run.sh $(T)

# deps: everything, the tests' packages too; demo: what it builds with.
deps:
	@bash contrib/install-deps.sh all

demo:
	@bash contrib/install-deps.sh build
	@$(MAKE) --no-print-directory all build/demo
	@bash contrib/demo.sh

bench: cprof-attach
	@bash bench/run.sh
	@bash bench/always.sh $(if $(QUICK),120,600)
	@bash bench/serve.sh $(if $(QUICK),45,150)
	@bash bench/python.sh $(if $(QUICK),2 2,5 3)
	@bash bench/runtimes.sh $(if $(QUICK),2 2,5 3)
	@bash bench/slowdown.sh $(if $(QUICK),2 2,5 3)
	@bash bench/watchdog.sh $(if $(QUICK),5,10)
	@bash bench/mariadb.sh $(if $(QUICK),10,15)

# Always on for an hour (bench/always.sh): RSS and descriptors at 1 and 5
# minutes and at the end, on a churning target.
soak: cprof-attach
	@bash bench/always.sh 3600

# Unwinding cost per frame on real captures (bench/unwind_cost.c).
build/bench/unwind_cost: bench/unwind_cost.c $(call objs,build)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

install: cprof-attach
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/lib/systemd/system
	install -m 755 cprof-attach $(DESTDIR)$(PREFIX)/bin/cprof-attach
	install -m 755 contrib/folded2svg $(DESTDIR)$(PREFIX)/bin/cprof-folded2svg
	install -m 644 contrib/cprof-attach.1 $(DESTDIR)$(PREFIX)/share/man/man1/cprof-attach.1
	install -m 644 contrib/cprof-attach.bash-completion \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/cprof-attach
	sed 's|/usr/local/bin/cprof-attach|$(PREFIX)/bin/cprof-attach|' contrib/cprof-attach@.service \
		>$(DESTDIR)$(PREFIX)/lib/systemd/system/cprof-attach@.service
	chmod 644 $(DESTDIR)$(PREFIX)/lib/systemd/system/cprof-attach@.service

clean:
	rm -rf build cprof-attach tests/bin

-include $(DEPS)
