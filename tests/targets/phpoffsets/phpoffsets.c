/* phpoffsets: what PHP's own headers say of every field php/layout.c
 * reads, "NAME VALUE" lines in phplayout.c's words, for tests/t_php.sh.
 * Built by the test against the installed headers (php8.2-dev:
 * `php-config8.2 --includes`). */
#include "php.h"
#include "SAPI.h"
#include "zend_globals.h"

#include <stddef.h>
#include <stdio.h>

#define P(name, v) printf("%s %lu\n", name, (unsigned long)(v))

int main(void)
{
	P("major", PHP_MAJOR_VERSION);
	P("minor", PHP_MINOR_VERSION);
	P("eg_current_execute_data", offsetof(zend_executor_globals, current_execute_data));
	P("ed_opline", offsetof(zend_execute_data, opline));
	P("ed_func", offsetof(zend_execute_data, func));
	P("ed_call_info", offsetof(zend_execute_data, This) + offsetof(zval, u1.type_info));
	P("ed_prev", offsetof(zend_execute_data, prev_execute_data));
	P("ed_size", offsetof(zend_execute_data, prev_execute_data) + sizeof(void *));
	P("call_top", ZEND_CALL_TOP);
	P("fn_type", offsetof(zend_function, type));
	P("fn_name", offsetof(zend_function, common.function_name));
	P("fn_scope", offsetof(zend_function, common.scope));
	P("fn_filename", offsetof(zend_function, op_array.filename));
	P("fn_line_start", offsetof(zend_function, op_array.line_start));
	P("fn_size", offsetof(zend_function, op_array.line_start) + 8);
	P("user_function", ZEND_USER_FUNCTION);
	P("op_lineno", offsetof(zend_op, lineno));
	P("ce_name", offsetof(zend_class_entry, name));
	P("str_len", offsetof(zend_string, len));
	P("str_val", offsetof(zend_string, val));
	P("sg_request_method", offsetof(sapi_globals_struct, request_info.request_method));
	P("sg_path_translated", offsetof(sapi_globals_struct, request_info.path_translated));
	P("sg_request_uri", offsetof(sapi_globals_struct, request_info.request_uri));
	return 0;
}
