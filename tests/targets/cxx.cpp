// cxx (g++ -g): a namespaced class method burning CPU; the profile must show
// the demangled name ns::Widget::spin(int).
#include "ready.h"

namespace ns {
struct Widget {
	void spin(int seed);
	volatile unsigned long sink;
};

__attribute__((noinline)) void Widget::spin(int seed)
{
	unsigned long x = (unsigned long)seed;

	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
}
} // namespace ns

int main(int argc, char **argv)
{
	ns::Widget w;
	volatile int r = 0;

	ready_announce(ready_path(argc, argv));
	w.spin(argc);
	return r;
}
