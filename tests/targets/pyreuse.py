"""Code objects made and freed again and again, as exec'd templates,
namedtuple and dataclasses make them: a new code object often takes the
address of one just freed.  gen_a (in "gen_a.py") calls busy_a, gen_b (in
"gen_b.py") calls busy_b; a profile that names a code object by its
address alone shows gen_a calling busy_b.  Writes its PID to the file
named by its first argument, then runs until killed.
"""
import os
import random
import sys


def busy_a():
    s = 0
    for i in range(20000):
        s += i
    return s


def busy_b():
    s = 0
    for i in range(20000):
        s += i
    return s


def make(name, callee):
    src = "def %s():\n    return %s()\n" % (name, callee.__name__)
    ns = {}
    exec(compile(src, name + ".py", "exec"), {callee.__name__: callee}, ns)
    return ns[name]


def main():
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    r = random.Random(1)
    while True:
        if r.random() < 0.5:
            make("gen_a", busy_a)()
        else:
            make("gen_b", busy_b)()


if __name__ == "__main__":
    main()
