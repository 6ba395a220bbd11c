/* phplayout: php/layout.c's table for one PHP version, printed in
 * phpoffsets.c's words ("NAME VALUE"), for tests/t_php.sh to compare
 * line by line with the version's headers.
 *
 *     phplayout MAJOR MINOR   the table (exit 2: none) */
#include <stdio.h>
#include <stdlib.h>

#include "php/layout.h"

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	const struct php_layout *l = php_layout__of(atoi(argv[1]), atoi(argv[2]));
	if (!l)
		return 2;
#define P(f) printf("%s %lu\n", #f, (unsigned long)l->f)
	P(major);
	P(minor);
	P(eg_current_execute_data);
	P(ed_opline);
	P(ed_func);
	P(ed_call_info);
	P(ed_prev);
	P(ed_size);
	P(call_top);
	P(fn_type);
	P(fn_name);
	P(fn_scope);
	P(fn_filename);
	P(fn_line_start);
	P(fn_size);
	P(user_function);
	P(op_lineno);
	P(ce_name);
	P(str_len);
	P(str_val);
	P(sg_request_method);
	P(sg_path_translated);
	P(sg_request_uri);
	return 0;
}
