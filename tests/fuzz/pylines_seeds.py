"""Seeds for tests/fuzz/fuzz_pylines.c, from the Python that runs this:
a real line table of a small function (3.8-3.9 co_lnotab, 3.10
co_linetable, 3.11+ the location table) with the offset of an instruction
in its loop, and real str objects' state words (one a kind: ASCII,
Latin-1, UCS-2, UCS-4) with their characters.

    for v in ~/.pyenv/versions/3.{8..13}*; do
        $v/bin/python3 tests/fuzz/pylines_seeds.py tests/fuzz/corpus/pylines
    done
"""
import ctypes
import dis
import os
import struct
import sys


def sample(n):
    total = 0
    for i in range(n):
        if i % 3:
            total += i * i
    return total


def write(d, name, mode, word, off, rest):
    with open(os.path.join(d, name), "wb") as f:
        f.write(struct.pack("<BIQ", mode, word & 0xffffffff, off & (2**64 - 1)) + rest)


def table_seed(d, ver):
    code = sample.__code__
    # The instruction that adds to total: a line inside the loop.
    ins = [i for i in dis.get_instructions(code) if i.opname in ("INPLACE_ADD", "BINARY_OP")]
    off = ins[-1].offset
    if sys.version_info < (3, 10):
        write(d, "seed-lnotab-" + ver, 0, code.co_firstlineno, off, code.co_lnotab)
    elif sys.version_info < (3, 11):
        write(d, "seed-linetable-" + ver, 1, code.co_firstlineno, off, code.co_linetable)
    else:
        # Code units (2 bytes each), as the reader counts them.
        write(d, "seed-locations-" + ver, 2, code.co_firstlineno, off // 2, code.co_linetable)


def str_seeds(d, ver):
    for name, s, codec, width in (("ascii", "compute_total", "ascii", 1),
                                  ("latin1", "caf\xe9_na\xefve", "latin-1", 1),
                                  ("ucs2", "\u03bb_\u4e2d\u6587", "utf-16-le", 2),
                                  ("ucs4", "f\U0001f600_\U00010348", "utf-32-le", 4)):
        s = "".join(list(s))            # a new object, not an interned constant
        state = ctypes.c_uint32.from_address(id(s) + 32).value
        write(d, "seed-str-%s-%s" % (name, ver), 3, state, 200, s.encode(codec))


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    ver = "%d.%d" % sys.version_info[:2]
    table_seed(d, ver)
    str_seeds(d, ver)


main()
