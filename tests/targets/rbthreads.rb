# rbthreads.rb READY: Ruby threads with a known split, for whole stacks
# (Ruby up to 3.2 puts each thread's VM stack, 1 MiB, on its native stack):
# compute (a loop in compute_outer -> compute_inner), a sleeper, a waiter
# on a queue nobody fills; the main thread joins.  Writes READY (its PID,
# then "NAME TID" per thread) once each thread has started.
def compute_inner(n)
  s = 0
  n.times { |i| s += i * i }
  s
end

def compute_outer(q)
  q << ["compute", File.read("/proc/thread-self/stat").split[0]]
  loop { compute_inner(20_000) }
end

def sleeper(q)
  q << ["sleeper", File.read("/proc/thread-self/stat").split[0]]
  loop { sleep 3600 }
end

def waiter(q)
  q << ["waiter", File.read("/proc/thread-self/stat").split[0]]
  Queue.new.pop
end

q = Queue.new
threads = [:compute_outer, :sleeper, :waiter].map { |f| Thread.new { send(f, q) } }
lines = Array.new(threads.size) { q.pop.join(" ") }
File.write(ARGV[0] + ".tmp", "#{Process.pid}\n" + lines.join("\n") + "\n")
File.rename(ARGV[0] + ".tmp", ARGV[0])
threads.each(&:join)
