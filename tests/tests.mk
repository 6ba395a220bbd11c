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
TEST_NAMES += eintr-fp
TEST_NAMES += renamer
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

.PHONY: test-bins
test-bins: $(TEST_BINS)

# eintr built as debug and frame-pointer builds are (issue 17 item 9).
tests/bin/eintr-fp: TEST_CFLAGS := -O0 -fno-omit-frame-pointer -pthread -fPIE -pie -Wall -Wextra \
                                   -Wno-unused-parameter
tests/bin/eintr-fp: tests/targets/eintr.c
