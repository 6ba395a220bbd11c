/* layout: where CRuby keeps what a reader from outside needs, per minor
 * version (x86-64, Debian's default build).
 *
 * Only 3.1 so far (Debian 12's libruby-3.1.so.3.1, ruby 3.1.2p20).  The
 * ruby/ruby headers at v3_1_x could not be fetched here (the repository
 * snapshot is over the size limit and the index keeps one vm_core.h, of
 * the 2.6 era), so every number below was found against a live Debian
 * ruby 3.1.2 running tests/targets/rbthreads.rb and checked by what it
 * must equal (noted beside each entry); struct and field names are
 * those of ruby 3.1's vm_core.h, ractor_core.h, iseq.h and method.h.
 * Any other version is refused (ruby_layout__find returns NULL). */
#ifndef CPROF_RUBY_LAYOUT_H
#define CPROF_RUBY_LAYOUT_H

#include <stdint.h>

struct ruby_layout {
	int major, minor;
	/* rb_vm_t (*ruby_current_vm_ptr) */
	uint32_t vm_main_ractor, vm_main_thread;
	/* rb_ractor_t: threads.set (a ccan list_head), threads.cnt,
	 * threads.gvl.owner, threads.running_ec */
	uint32_t ractor_threads, ractor_thread_cnt, ractor_gvl_owner, ractor_running_ec;
	/* rb_thread_t: lt_node (the list node) at 0, ec, thread_id (a
	 * pthread_t), native_thread_data.tid (an int), name (a VALUE) */
	uint32_t th_ec, th_pthread, th_tid, th_name;
	/* rb_execution_context_t: vm_stack, vm_stack_size (VALUEs), cfp */
	uint32_t ec_vm_stack, ec_vm_stack_size, ec_cfp;
	/* rb_control_frame_t: its size; pc, iseq, ep (ep[0]: the frame's
	 * flags, ep[-2]: its method entry or cref) */
	uint32_t cfp_size, cfp_pc, cfp_iseq, cfp_ep;
	/* rb_iseq_t.body; rb_iseq_constant_body: iseq_encoded,
	 * location.{pathobj, label, first_lineno}, insns_info.{body,
	 * positions, size, succ_index_table}; sizeof iseq_insn_info_entry */
	uint32_t iseq_body, body_encoded, body_pathobj, body_label, body_first_lineno;
	uint32_t body_insns, body_positions, body_insns_size, body_succ, insn_entry_size;
	/* RString: heap len and ptr, embedded bytes; RArray (pathobj may be
	 * [path, realpath]): heap ptr, embedded elements */
	uint32_t str_len, str_ptr, str_embed, ary_ptr, ary_embed;
};

/* The layout of ruby MAJOR.MINOR, or NULL: not one we know. */
const struct ruby_layout *ruby_layout__find(int major, int minor);

/* Frame flags (vm_core.h: VM_FRAME_MAGIC_*, VM_FRAME_FLAG_*), 3.x. */
#define RUBY_FRAME_MAGIC_MASK 0x7fff0001u
#define RUBY_FRAME_MAGIC_CFUNC 0x55550001u
#define RUBY_FRAME_MAGIC_IFUNC 0x66660001u
#define RUBY_FRAME_MAGIC_DUMMY 0x79990001u
#define RUBY_FRAME_FLAG_FINISH 0x0020u
#define RUBY_FRAME_FLAG_CFRAME 0x0080u

/* Object types (ruby/internal/value_type.h): the low 5 bits of flags. */
#define RUBY_T_STRING 0x05
#define RUBY_T_ARRAY 0x07
#define RUBY_T_IMEMO 0x1a
#define RUBY_IMEMO_ISEQ 7       /* (flags >> 12) & 0xf, internal/imemo.h */

#endif
