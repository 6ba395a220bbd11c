# cprof-attach: top-level build.  `make` builds ./cprof-attach, `make check`
# runs every test, `make demo` installs what is missing and profiles the demo.
# Quiet by default; `make V=1` shows the full commands.

PKGS     := libunwind-generic libdw libelf libprotobuf-c zlib jansson
CC       ?= cc
CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Wshadow -Wno-unused-parameter
ifeq ($(CI),true)
WARN     += -Werror
endif
ifneq ($(SANITIZE),)
ifeq ($(SANITIZE),1)
SANITIZE := address,undefined
endif
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
endif
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
ALL_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) $(SANFLAGS) -I. -Ibuild $(PKG_CFLAGS) -D_GNU_SOURCE
LDLIBS     := $(PKG_LIBS) -lstdc++ -lm -pthread
PREFIX  ?= /usr/local
DESTDIR ?=

ifeq ($(V),1)
Q :=
else
Q := @
endif

VERSION := 0.1.0

SRCS := util/intern.c util/strbuf.c util/timeutil.c \
        attach/maps.c attach/target.c \
        unwind/unwinder.c \
        dwarf/symbolizer.c \
        output/stacks.c output/folded.c output/pprof.c output/svg.c output/speedscope.c \
        cli/options.c cli/profile.c
MAIN := cli/main.c
OBJS := $(SRCS:%.c=build/%.o) build/output/profile.pb-c.o
DEPS := $(OBJS:.o=.d) build/cli/main.d

.PHONY: all check unit bench demo deps install clean
all: cprof-attach

build/output/profile.pb-c.c build/output/profile.pb-c.h: output/profile.proto
	@mkdir -p build/output
	@echo "  PROTOC  $<"
	$(Q)protoc-c --c_out=build/output --proto_path=output $<

build/%.o: %.c build/output/profile.pb-c.h
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -DCPROF_VERSION='"$(VERSION)"' -MMD -MP -c -o $@ $<

build/output/profile.pb-c.o: build/output/profile.pb-c.c
	@echo "  CC      $<"
	$(Q)$(CC) $(filter-out -Wshadow -Werror,$(ALL_CFLAGS)) -c -o $@ $<

cprof-attach: $(OBJS) build/cli/main.o
	@echo "  LINK    $@"
	$(Q)$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $^ $(LDLIBS)

# Unit tests of the pure parts (maps parsing, interning, options, encoding).
build/tests/unit: tests/unit/unit.c $(OBJS)
	@mkdir -p build/tests
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

# The bundled demo program, built like the binaries we expect to meet:
# optimized, no frame pointers, PIE.
build/demo: contrib/demo/demo.c
	@mkdir -p build
	@echo "  CC      $<"
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -pthread -o $@ $<

-include tests/tests.mk

check: cprof-attach build/tests/unit $(TEST_BINS)
	@CPROF=./cprof-attach bash tests/run.sh

deps:
	@bash contrib/install-deps.sh

demo: deps
	@$(MAKE) --no-print-directory all build/demo
	@bash contrib/demo.sh

bench: cprof-attach
	@bash bench/run.sh

install: cprof-attach
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 755 cprof-attach $(DESTDIR)$(PREFIX)/bin/cprof-attach
	install -m 755 contrib/folded2svg $(DESTDIR)$(PREFIX)/bin/cprof-folded2svg
	install -m 644 contrib/cprof-attach.1 $(DESTDIR)$(PREFIX)/share/man/man1/cprof-attach.1
	install -m 644 contrib/cprof-attach.bash-completion \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/cprof-attach

clean:
	rm -rf build cprof-attach tests/bin

-include $(DEPS)
