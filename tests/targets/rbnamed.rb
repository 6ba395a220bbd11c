# rbnamed.rb READY: a thread named by Thread#name ("worker-xyz"), asleep;
# writes READY (its PID) once the name is set.  The main thread joins it.
t = Thread.new { Thread.current.name = "worker-xyz"; sleep 3600 }
sleep 0.01 until t.name
File.write(ARGV[0] + ".tmp", "#{Process.pid}\n")
File.rename(ARGV[0] + ".tmp", ARGV[0])
t.join
