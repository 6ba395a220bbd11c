/* The two libraries tests/bin/swapper swaps at one address: built twice
 * by tests/tests.mk, as libswapA.so (SWAP_FN inner_A) and libswapB.so
 * (inner_B), the same code under two names. */
#include <stdint.h>

static volatile uint64_t sink;

__attribute__((noinline)) static void SWAP_LEAF(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink += i;
}

void SWAP_FN(uint64_t n)
{
	SWAP_LEAF(n);
	sink++;
}
