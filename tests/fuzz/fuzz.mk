# Fuzzing the parsers of what the target controls, included by the
# top-level Makefile.  One harness per parser, tests/fuzz/fuzz_NAME.c, each
# an LLVMFuzzerTestOneInput():
#   maps    lines of /proc/PID/maps (maps__parse_line)
#   elf     an ELF file mapped by the target: our ELF reading (segments,
#           .eh_frame_hdr, build ID), libunwind's .eh_frame parsing, and
#           libdw's symbols, lines, inlines and demangling (the symbolizer)
#   unwind  the registers and stack bytes we unwind, against real modules
#   writers --convert input (names that are any bytes) through the parser
#           and every writer, each output checked (fuzz_writers.c)
#   gopclntab  a Go binary's .gopclntab (module/gopclntab.c), alone or in an
#           ELF file; seeds cut from tests/bin/gospin-stripped by
#           tests/fuzz/gopclntab_seeds.py, one per table layout
#   goroutines  a Go program's memory as the goroutine reader reads it
#           (goroutine/goroutines.c, goroutine/curg.c): allgs, each g,
#           its M, the waitReason strings, a thread's g and m.curg; the
#           harness is the memory (it links in place of util/remote.c)
#   golayout  a Go binary without DWARF (goroutine/golayout.c): its
#           .go.buildinfo, its version, runtime.allgadd's and
#           runtime.waitReason.String's code; seeds from Go 1.19's
#           tests/bin/goroutines-sw (tests/fuzz/corpus/golayout/seed-*)
#   cfi     .eh_frame without .eh_frame_hdr and .debug_frame (compressed or
#           not) in a small ELF file around the input's bytes: libdw's
#           reading, our rules (module__cfi_row, unwind/cfi.c) and the
#           frame-pointer step, unwound from a stack of the input
#   pylines CPython's line tables (3.8-3.9 lnotab, 3.10 linetable, 3.11+
#           location table) and str objects (python/lines.c); seeds from
#           each Python by tests/fuzz/pylines_seeds.py
#   pyinterp a CPython interpreter in a fake process memory of the input
#           (python/interp.c): threads, frames, names, lines, the GIL, in
#           the layout of each version or of a 3.13 _Py_DebugOffsets, and
#           py_layout__from_debug alone; seeds by FUZZ_PYINTERP_SEEDS
#   phpinterp a PHP process's chain of calls in a fake memory of the input
#           (php/interp.c, 8.2's layout): calls, names, lines; a seed of
#           three calls (tests/fuzz/corpus/phpinterp/seed-chain)
#   rbvm    a CRuby 3.1 VM in a fake process memory of the input
#           (ruby/vm.c): threads, frames, names, lines
#   jvm     a HotSpot JVM in a fake process memory of the input (jvm/):
#           its exported tables, threads, frames, names, lines; a seed by
#           FUZZ_JVM_SEED (tests/fuzz/corpus/jvm/seed-thread)
# Two builds of each:
#   build/fuzz/fuzz_NAME     libFuzzer (clang), by `make fuzz`;
#                            FUZZ_SECS=N also runs each for N seconds
#   $(SAN)/fuzz/replay_NAME  no fuzzing: runs given inputs through the
#                            harness, with ASan + UBSan; `make check` replays
#                            tests/fuzz/corpus/NAME/ with it (t_fuzz.sh)
# The corpus is kept small: what fuzzing found, minimized to one input per
# coverage edge (fuzz_NAME -merge=1 -use_counters=0 NEW OLD...; full
# features for maps, whose inputs are tiny), plus named inputs: seed-*
# (real maps lines, real stack captures: FUZZ_UNWIND_SEEDS in
# fuzz_unwind.c) and regress-* (inputs that crashed us before a fix).

FUZZ_NAMES  := maps elf unwind
FUZZ_NAMES  += writers
FUZZ_NAMES  += gopclntab
FUZZ_NAMES  += cfi
FUZZ_NAMES  += pylines pyinterp phpinterp
FUZZ_NAMES  += goroutines
FUZZ_NAMES  += golayout
FUZZ_NAMES  += rbvm
FUZZ_NAMES  += jvm
# FUZZ_OWN_NAME: objects harness NAME replaces with its own definitions
# (the goroutine reader's memory is the fuzz input, not a process).
FUZZ_OWN_goroutines := util/remote.o
FUZZ_CC     ?= clang
FUZZ_FLAGS  := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
FUZZ_SECS   ?=
FUZZ_BINS        := $(FUZZ_NAMES:%=build/fuzz/fuzz_%)
FUZZ_REPLAY_BINS := $(FUZZ_NAMES:%=$(SAN)/fuzz/replay_%)

$(eval $(call flavour,build/fuzz,$(FUZZ_CC),$(FUZZ_FLAGS)))

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(call objs,build/fuzz)
	@mkdir -p $(dir $@)
	@echo "  FUZZ    $<"
	$(Q)$(FUZZ_CC) $(ALL_CFLAGS) -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer \
		-o $@ $(filter-out $(FUZZ_OWN_$*:%=build/fuzz/%),$^) $(LDLIBS)

$(SAN)/fuzz/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(call objs,$(SAN))
	@mkdir -p $(dir $@)
	@echo "  CC      $< [replay]"
	$(Q)$(CC) $(ALL_CFLAGS) $(SANFLAGS) -o $@ $(filter-out $(FUZZ_OWN_$*:%=$(SAN)/%),$^) $(LDLIBS)

fuzz: $(FUZZ_BINS)
	@[ -z "$(FUZZ_SECS)" ] || bash tests/fuzz/run.sh "$(FUZZ_SECS)" $(FUZZ_NAMES)
