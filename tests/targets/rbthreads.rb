# rbthreads.rb READY: Ruby threads with a known split, for whole stacks
# (Ruby up to 3.2 puts each thread's VM stack, 1 MiB, on its native stack):
# compute (a loop in compute_outer -> compute_inner), a sleeper, a waiter
# on a queue nobody fills, a holder asleep with a Mutex held and a locked
# thread waiting for that Mutex; the main thread joins.  Each thread is
# named (Thread#name) after its method.  Writes READY (its PID, then
# "NAME TID" per thread) once each thread has started (the locked one just
# before it asks for the Mutex).
M = Mutex.new
HELD = Queue.new

def tid = File.read("/proc/thread-self/stat").split[0]

def compute_inner(n)
  s = 0
  n.times { |i| s += i * i }
  s
end

def compute_outer(q)
  q << ["compute", tid]
  loop { compute_inner(20_000) }
end

def sleeper(q)
  q << ["sleeper", tid]
  loop { sleep 3600 }
end

def waiter(q)
  q << ["waiter", tid]
  Queue.new.pop
end

def holder(q)
  M.synchronize { HELD << 1; q << ["holder", tid]; sleep 3600 }
end

def locked(q)
  HELD.pop
  q << ["locked", tid]
  M.synchronize { }
end

q = Queue.new
names = { compute_outer: "compute", sleeper: "sleeper", waiter: "waiter", holder: "holder", locked: "locked" }
threads = names.map { |f, name| Thread.new { Thread.current.name = name; send(f, q) } }
lines = Array.new(threads.size) { q.pop.join(" ") }
File.write(ARGV[0] + ".tmp", "#{Process.pid}\n" + lines.join("\n") + "\n")
File.rename(ARGV[0] + ".tmp", ARGV[0])
threads.each(&:join)
