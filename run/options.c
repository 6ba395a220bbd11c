/* options: what follows from the options, said once (run/options.h). */
#include "run/options.h"

int options__always_on(const struct options *o)
{
	return o->period > 0 || o->history > 0 || o->listen || o->push;
}

int options__served_only(const struct options *o)
{
	return (o->listen || o->push) && !o->output_given;
}

int options__whole_run(const struct options *o)
{
	return o->period <= 0 && !options__served_only(o);
}

uint64_t options__sample_period_ns(const struct options *o)
{
	return 1000000000ull / (uint64_t)o->hz;
}
