// JvmSplit READY: a Java program with a known split, for the JVM reader
// (tests/t_jvm.sh): a thread computing (computeOuter -> computeMiddle ->
// computeInner, JIT-compiled once hot), one asleep, one blocked on a
// monitor that main holds while it sleeps, one asleep in a method called
// by reflection (Method.invoke: Java called from the VM called from Java).  Writes READY (its PID, then
// "NAME TID" per thread, the OS thread id read from /proc/thread-self)
// once every thread has started.
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentLinkedQueue;

public class JvmSplit {
    static final Object lock = new Object();
    static final ConcurrentLinkedQueue<String> started = new ConcurrentLinkedQueue<>();
    static volatile long sink;

    static String tid() {
        try {
            return Files.readString(Path.of("/proc/thread-self/stat")).split(" ")[0];
        } catch (Exception e) {
            return "0";
        }
    }

    static long computeInner(long n) {
        long s = 0;
        for (long i = 0; i < n; i++)
            s += i * i;
        return s;
    }

    static long computeMiddle(long n) {
        return computeInner(n) + 1;
    }

    static void computeOuter() {
        started.add("compute " + tid());
        while (true)
            sink += computeMiddle(100000);
    }

    static void sleeper() {
        started.add("sleeper " + tid());
        while (true) {
            try {
                Thread.sleep(3600_000);
            } catch (InterruptedException e) {
            }
        }
    }

    static void reflectTarget() throws InterruptedException {
        started.add("reflect " + tid());
        Thread.sleep(3600_000);
    }

    static void reflect() {
        try {
            JvmSplit.class.getDeclaredMethod("reflectTarget").invoke(null);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static void blocked() {
        started.add("blocked " + tid());
        synchronized (lock) {
            sink++;
        }
    }

    public static void main(String[] args) throws Exception {
        synchronized (lock) {
            for (String name : new String[] { "compute", "sleeper", "blocked", "reflect" }) {
                Runnable r = name.equals("compute") ? JvmSplit::computeOuter
                        : name.equals("sleeper") ? JvmSplit::sleeper
                        : name.equals("reflect") ? JvmSplit::reflect : JvmSplit::blocked;
                // the reflect thread's name is longer than an OS thread's 15 bytes
                Thread t = new Thread(r, name.equals("reflect") ? "reflect-worker-with-a-long-name" : name);
                t.setDaemon(true);
                t.start();
            }
            while (started.size() < 4)
                Thread.sleep(1);
            StringBuilder b = new StringBuilder();
            b.append(ProcessHandle.current().pid()).append('\n');
            b.append("main ").append(tid()).append('\n');
            for (String s : started)
                b.append(s).append('\n');
            Files.writeString(Path.of(args[0] + ".tmp"), b.toString());
            Files.move(Path.of(args[0] + ".tmp"), Path.of(args[0]));
            Thread.sleep(3600_000);
        }
    }
}
