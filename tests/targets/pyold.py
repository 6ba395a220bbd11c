"""A Python program of any version (2.7 too): writes its PID to the file
named by its first argument, then sleeps until killed."""
import os
import sys
import time

with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % os.getpid())
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    time.sleep(3600)
