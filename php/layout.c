#include "php/layout.h"

#include <stddef.h>

/* PHP 8.2 (Zend Engine 4.2), non-ZTS, x86-64: offsetof() over
 * /usr/include/php/20220829 (checked by tests/t_php.sh "offsets").
 * zend_execute_data is { opline, call, return_value, func, This (a zval:
 * value, u1.type_info, u2), prev_execute_data, symbol_table,
 * run_time_cache, extra_named_params }; the call info is
 * Z_TYPE_INFO(This) above its type byte (ZEND_CALL_TOP = 1 << 17). */
static const struct php_layout php82 = {
	.major = 8, .minor = 2,
	.eg_current_execute_data = 488,
	.ed_opline = 0, .ed_func = 24, .ed_call_info = 40, .ed_prev = 48, .ed_size = 56,
	.call_top = 1u << 17,
	.fn_type = 0, .fn_name = 8, .fn_scope = 16, .fn_filename = 152, .fn_line_start = 160,
	.fn_size = 168,
	.user_function = 2,
	.op_lineno = 24,
	.ce_name = 8, .str_len = 16, .str_val = 24,
	.sg_request_method = 8, .sg_path_translated = 40, .sg_request_uri = 48,
};

const struct php_layout *php_layout__of(int major, int minor)
{
	if (major == 8 && minor == 2)
		return &php82;
	return NULL;
}

const char *php_layout__versions(void)
{
	return "8.2";
}
