/* jvm: a HotSpot JVM (JDK 11-21, x86-64) read from outside, through the
 * tables it exports for the Serviceability Agent (jvm/vmstructs.h): its
 * Java threads (OS thread id, state, last Java frame), the Java frames of
 * a thread from a frame's sp, pc and fp (interpreted and compiled, their
 * methods and bytecode index), and each method's class, name and lines.
 * Every pointer, count and size read from the target is bounded before
 * it is used. */
#ifndef CPROF_JVM_JVM_H
#define CPROF_JVM_JVM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jvm/vmstructs.h"

struct modules;
struct jvm;

#define JVM_MAX_THREADS 8192
#define JVM_MAX_FRAMES 1024
#define JVM_MAX_HEAPS 8

struct jvm_thread {
	uint64_t thread;                /* the JavaThread */
	pid_t tid;
	int state;                      /* JavaThreadState: JVM_IN_JAVA, ... */
	uint64_t sp, pc, fp;            /* its last Java frame (sp 0: none) */
};

/* JavaThreadState values the reader tells apart (the tables give each). */
enum { JVM_STATE_OTHER, JVM_IN_NATIVE, JVM_IN_VM, JVM_IN_JAVA, JVM_BLOCKED };

enum jvm_frame_kind {
	JVM_INTERPRETED,                /* method, bci */
	JVM_COMPILED,                   /* method (an nmethod's), pc */
	JVM_STUB,                       /* a code blob not a method's: name by jvm__blob_name */
};

struct jvm_frame {
	uint64_t method;                /* the Method*, 0 for a stub */
	uint64_t pc;                    /* the frame's pc */
	uint64_t blob;                  /* its code blob (compiled, stub), or 0 */
	int32_t bci;                    /* interpreted: the bytecode index; else -1 */
	uint8_t kind;
};

/* How a walk ended. */
enum jvm_walk_end {
	JVM_END_ENTRY,                  /* at the call stub: native frames go on from *NEXT */
	JVM_END_UNKNOWN,                /* a pc neither Java code nor the call stub */
	JVM_END_UNREADABLE,             /* a frame could not be read */
	JVM_END_DEEP,                   /* JVM_MAX_FRAMES (or MAX) frames read */
};

/* The JVM of process PID whose modules are MS (libjvm.so), or NULL (WHY,
 * if not empty, says why in one line). */
struct jvm *jvm__new(pid_t pid, const struct modules *ms, char *why, size_t whylen);
/* A JVM read by READ(CTX) whose tables are at SYM (tests, fuzzing). */
struct jvm *jvm__open(const struct jvm_symbols *sym, jvm_read_fn read, void *ctx, char *why,
		      size_t whylen);
void jvm__free(struct jvm *j);  /* accepts NULL */

/* The Java threads, at most MAX, into OUT: how many, or -1 (the list not
 * readable). */
int jvm__threads(struct jvm *j, struct jvm_thread *out, size_t max);

/* JavaThread THREAD (as jvm__threads() gave it) now: 0, or -1. */
int jvm__thread(struct jvm *j, uint64_t thread, struct jvm_thread *out);

/* The name of Java thread THREAD (its java.lang.Thread's, not cut as the
 * OS thread's is), into OUT: 0, or -1 (not read: the JVM's layout is not
 * the one this reader knows, compressed oops and class pointers). */
int jvm__thread_name(struct jvm *j, uint64_t thread, char *out, size_t len);

/* The Java frames from one with SP, PC (0: the word below SP) and FP,
 * innermost first, at most MAX, into OUT; *N how many; *NEXT_SP, *NEXT_PC,
 * *NEXT_FP the native frame that called the Java code, and *ENTRY_FP (if
 * not NULL) the call stub's frame (JVM_END_ENTRY). */
enum jvm_walk_end jvm__walk(struct jvm *j, uint64_t sp, uint64_t pc, uint64_t fp,
			    struct jvm_frame *out, size_t max, size_t *n, uint64_t *next_sp,
			    uint64_t *next_pc, uint64_t *next_fp, uint64_t *entry_fp);

/* The last Java frame of the Java code that called into the VM (or a
 * native method) which called the Java code whose call stub's frame is
 * ENTRY_FP: the anchor its JavaCallWrapper saved.  0, or -1: none (the
 * thread's first Java code). */
int jvm__caller_anchor(struct jvm *j, uint64_t entry_fp, uint64_t *sp, uint64_t *pc,
		       uint64_t *fp);

/* Reads of [ADDR, ADDR + LEN) come from COPY (a thread's stack as a
 * capture copied it) until the next call; COPY NULL: none. */
void jvm__set_stack(struct jvm *j, uint64_t addr, const unsigned char *copy, size_t len);

/* Whether PC is Java code: the interpreter or the code cache. */
bool jvm__is_java(struct jvm *j, uint64_t pc);

/* METHOD's "pkg.Class.method" into OUT (cut at LEN - 1), and its source
 * file name into FILE (or "").  0, or -1: not a method. */
int jvm__method_name(struct jvm *j, uint64_t method, char *out, size_t len, char *file,
		     size_t filelen);
/* The line of METHOD at BCI (its line table), or 0. */
int jvm__line(struct jvm *j, uint64_t method, int bci);
/* A stub's name (its CodeBlob's), into OUT: 0, or -1. */
int jvm__blob_name(struct jvm *j, uint64_t blob, char *out, size_t len);

#endif
