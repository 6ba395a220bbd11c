/* eintr-fp: tests/targets/eintr.c built -O0 -fno-omit-frame-pointer (see
 * tests/tests.mk), as frame-pointer and debug builds are: unwinding its
 * blocked threads needs RBP, which /proc does not give. */
#include "eintr.c"
