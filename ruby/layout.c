/* CRuby's layouts, per minor version (see layout.h).  3.1: each number
 * was found in a live Debian ruby 3.1.2 and is checked by what it must
 * equal; tests/t_ruby.sh checks the whole against a script whose
 * methods, paths and lines are known. */
#include "ruby/layout.h"

#include <stddef.h>

static const struct ruby_layout layouts[] = {
	{
		.major = 3, .minor = 1,
		/* rb_vm_t: self (8), then the ractor block: set (a
		 * list_head, 16) at 8, cnt 24, blocking_cnt 28, main_ractor
		 * 32 (== ruby_single_main_ractor), main_thread 40 */
		.vm_main_ractor = 32, .vm_main_thread = 40,
		/* rb_ractor_t.threads: set at 304 (its next is the main
		 * thread's lt_node; 4 threads: cnt 4 at 320, blocking 3 at
		 * 324, sleeper 2 at 328), gvl (184 bytes) at 336 whose
		 * owner comes first (the computing thread), running_ec 520,
		 * main 528 (== vm main_thread) */
		.ractor_threads = 304, .ractor_thread_cnt = 320, .ractor_gvl_owner = 336,
		.ractor_running_ec = 520,
		/* rb_thread_t: lt_node 0 (16), self 16, ractor 24 (== the
		 * main ractor), vm 32 (== the vm), ec 40; thread_id 80 (a
		 * pthread_t: the main thread's is its TLS block, another's
		 * sits just above its VM stack); native_thread_data.tid 88
		 * (== each thread's /proc/thread-self/stat tid) */
		.th_ec = 40, .th_pthread = 80, .th_tid = 88,
		/* name 352: Thread#name's String ("worker-xyz" set by a
		 * thread of a test script, embedded, length 10 in its
		 * flags), nil (8) when unnamed */
		.th_name = 352,
		/* rb_execution_context_t: vm_stack 0, vm_stack_size 8
		 * (0x20000 VALUEs: 1 MiB), cfp 16 */
		.ec_vm_stack = 0, .ec_vm_stack_size = 8, .ec_cfp = 16,
		/* rb_control_frame_t: pc, sp, iseq, self, ep, block_code,
		 * __bp__, jit_return: 64 bytes (56 reads garbage between
		 * the frames; 64 lines up every frame up to the stack's
		 * end, ep[0] a frame magic in each) */
		.cfp_size = 64, .cfp_pc = 0, .cfp_iseq = 16, .cfp_ep = 32,
		/* rb_iseq_t: flags, wrapper, body 16.  Body: type 0,
		 * iseq_size 4, iseq_encoded 8, param (48) at 16, location
		 * at 64: pathobj 64, base_label 72, label 80, first_lineno
		 * 88 (a Fixnum); node_id 96, code_location 100 (16);
		 * insns_info at 120: body 120, positions 128 (NULL once
		 * the succinct table is built), size 136,
		 * succ_index_table 144.  iseq_insn_info_entry: line_no,
		 * node_id, events: 12 bytes (compute_inner's 7 entries
		 * read lines 7,7,8,8,8,9 with events CALL|LINE, LINE at
		 * the right ones) */
		.iseq_body = 16, .body_encoded = 8, .body_pathobj = 64, .body_label = 80,
		.body_first_lineno = 88, .body_insns = 120, .body_positions = 128,
		.body_insns_size = 136, .body_succ = 144, .insn_entry_size = 12,
		/* RString (no RVARGC in 3.1): RBasic (16), heap len 16,
		 * ptr 24 (RSTRING_NOEMBED, FL_USER1: bit 13); embedded
		 * bytes at 16, their length in flags bits 14-18.  RArray:
		 * heap ptr at 32 (len 16, aux 24), embedded at 16
		 * (RARRAY_EMBED_FLAG, FL_USER1) */
		.str_len = 16, .str_ptr = 24, .str_embed = 16, .ary_ptr = 32, .ary_embed = 16,
	},
};

const struct ruby_layout *ruby_layout__find(int major, int minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}
