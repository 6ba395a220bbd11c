/* layout: where the Zend Engine keeps what a reader from outside needs,
 * per PHP version (x86-64, non-ZTS: Debian's php8.2-cli and php8.2-fpm).
 *
 * One table per minor version, taken from that version's headers
 * (offsetof over Zend/zend_globals.h, zend_compile.h, zend_types.h and
 * main/SAPI.h); tests/t_php.sh compiles tests/targets/phpoffsets.c
 * against the installed headers (php8.2-dev) and compares every entry with
 * what tests/bin/phplayout prints of this table. */
#ifndef CPROF_PHP_LAYOUT_H
#define CPROF_PHP_LAYOUT_H

#include <stdint.h>

struct php_layout {
	int major, minor;
	/* zend_executor_globals */
	uint32_t eg_current_execute_data;
	/* zend_execute_data: opline, func, This.u1.type_info (the call info
	 * in its upper bits), prev_execute_data; bytes read of one */
	uint32_t ed_opline, ed_func, ed_call_info, ed_prev, ed_size;
	uint32_t call_top;              /* ZEND_CALL_TOP: called from C */
	/* zend_function (common and op_array) */
	uint32_t fn_type, fn_name, fn_scope, fn_filename, fn_line_start, fn_size;
	uint8_t user_function;          /* ZEND_USER_FUNCTION */
	/* zend_op */
	uint32_t op_lineno;
	/* zend_class_entry, zend_string */
	uint32_t ce_name, str_len, str_val;
	/* sapi_globals_struct: request_info.request_method, .path_translated,
	 * .request_uri */
	uint32_t sg_request_method, sg_path_translated, sg_request_uri;
};

/* The table of PHP MAJOR.MINOR, or NULL: not one this reader reads. */
const struct php_layout *php_layout__of(int major, int minor);

/* Every version with a table, "8.2" (for notes). */
const char *php_layout__versions(void);

#endif
