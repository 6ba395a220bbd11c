/* hostile_lib: the shared library tests/targets/hostile.c loads, copied by
 * tests/t_hostile.sh to hostile file names.  Its own names are hostile
 * too: symbols that are markup, invalid UTF-8, control characters, CJK
 * (one longer than any cap a writer has), 4-byte characters (emoji, two
 * UTF-16 units each in the flame graph's script), and a source file name
 * (#line below, in the DWARF line table) with markup, quotes and a byte
 * that is not UTF-8.  hostile_entry() calls each function in turn, so
 * every one of them gets samples under every copy of the library.
 * Built twice (tests/tests.mk): with symbols, and stripped (-s), where the
 * static anonymous_work() is named after its module: "FILE+0xOFFSET".
 * Without a build ID, so that pprof, which merges mappings by build ID,
 * keeps each copy's own file name. */
#line 1 "<src&\"'>\xff.c"
#define N10 "名名名名名名名名名名"
#define N100 N10 N10 N10 N10 N10 N10 N10 N10 N10 N10
#define SPIN(n, k) for (unsigned long i = 0; i < (n); i++) sink += i * (k)

volatile unsigned long sink;

void markup(unsigned long n) __asm__("\"<svg onload=alert(2)>\"");
void badutf(unsigned long n) __asm__("\"bad\xff\xc3name\"");
void ctl(unsigned long n) __asm__("\"tab\there\x1b[1m\x7f\"");
void longcjk(unsigned long n) __asm__("\"" N100 N100 N100 N100 N100 N100 N100 N100 N100 N100
				       N100 N100 N100 N100 "\"");      /* 1400 x 3 bytes */
void emoji(unsigned long n) __asm__("\"🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥\"");

__attribute__((noinline)) void markup(unsigned long n) { SPIN(n, 3); }
__attribute__((noinline)) void badutf(unsigned long n) { SPIN(n, 5); }
__attribute__((noinline)) void ctl(unsigned long n) { SPIN(n, 7); }
__attribute__((noinline)) void longcjk(unsigned long n) { SPIN(n, 11); }
__attribute__((noinline)) void emoji(unsigned long n) { SPIN(n, 19); }
__attribute__((noinline)) void 计算非常长的函数名字测试用例(unsigned long n) { SPIN(n, 13); }
/* Four times the work: the stripped copy's frame of it must get samples. */
__attribute__((noinline)) static void anonymous_work(unsigned long n) { SPIN(4 * n, 17); }

void hostile_entry(unsigned long n)
{
	markup(n);
	badutf(n);
	ctl(n);
	longcjk(n);
	计算非常长的函数名字测试用例(n);
	emoji(n);
	anonymous_work(n);
	sink++;         /* no tail call: hostile_entry stays on every stack */
}
