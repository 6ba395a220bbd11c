/* Private to module/: each module's CFI reader (module/ehframe.c), made
 * and freed with the module (module/modules.c). */
#ifndef CPROF_MODULE_CFI_H
#define CPROF_MODULE_CFI_H

struct module_cfi;
struct module_cfi *module_cfi__new(void);
void module_cfi__free(struct module_cfi *c);     /* accepts NULL */

#endif
