"""A numpy matrix multiply called from Python, for cprof-attach's merged
stacks: multiply() (Python) above numpy's and BLAS's native frames.
Writes its PID to the file named by its first argument when the
matrices are ready, then multiplies until killed."""
import os
import sys

import numpy as np


def multiply(a, b):
    return a @ b


def main():
    rng = np.random.default_rng(1)
    a = rng.random((256, 256))
    b = rng.random((256, 256))
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    while True:
        multiply(a, b)


if __name__ == "__main__":
    main()
