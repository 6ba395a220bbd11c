//go:build cgo

// Built into the externally linked variants of gounwind only (tests/tests.mk:
// CGO_ENABLED=1, -linkmode=external), as a distribution's Go programs are:
// some C code called through cgo, linked by the system linker, whose C
// start-up code comes before Go's text.
package main

/*
#include <unistd.h>
static long c_pid(void) { return (long)getpid(); }
*/
import "C"

var cgoPID = int(C.c_pid())
