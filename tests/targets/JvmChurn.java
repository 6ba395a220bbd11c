// JvmChurn READY: Java code that changes under a profiler, for
// tests/t_jvm.sh.  Thread "deopt": a hot loop over shapes, all Circles
// until the file READY.go appears (looked at every 100 ms), then Squares
// too: the loop's compiled code, which assumed Circles only, is
// deoptimized and compiled again.  Thread "loader": over and over, a new
// class loader loads JvmChurned (tests/bin/java), runs it a while, drops
// the loader and asks for a GC: the class is unloaded and loaded again.
// Writes READY (its PID, then "NAME TID" per thread) once both run.
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentLinkedQueue;

public class JvmChurn {
    interface Shape { double area(); }
    static final class Circle implements Shape { public double area() { return 3.14159 * 2 * 2; } }
    static final class Square implements Shape { public double area() { return 3 * 3; } }

    static final ConcurrentLinkedQueue<String> started = new ConcurrentLinkedQueue<>();
    static volatile double sink;

    static String tid() {
        try {
            return Files.readString(Path.of("/proc/thread-self/stat")).split(" ")[0];
        } catch (Exception e) {
            return "0";
        }
    }

    static double total(Shape[] shapes) {
        double s = 0;
        for (Shape x : shapes)
            s += x.area();
        return s;
    }

    static void deoptLoop(String go) {
        started.add("deopt " + tid());
        Shape[] shapes = new Shape[64];
        for (int i = 0; i < shapes.length; i++)
            shapes[i] = new Circle();
        long next = System.nanoTime();
        boolean mixed = false;
        while (true) {
            sink += total(shapes);
            if (!mixed && System.nanoTime() > next) {
                next = System.nanoTime() + 100_000_000L;
                if (Files.exists(Path.of(go))) {
                    for (int i = 0; i < shapes.length; i += 2)
                        shapes[i] = new Square();
                    mixed = true;
                }
            }
        }
    }

    static void loaderLoop(URL dir) {
        started.add("loader " + tid());
        for (int n = 0;; n++) {
            try (URLClassLoader l = new URLClassLoader(new URL[] { dir }, null)) {
                Runnable r = (Runnable) l.loadClass("JvmChurned").getDeclaredConstructor().newInstance();
                r.run();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            if (n % 4 == 0)
                System.gc();
        }
    }

    public static void main(String[] args) throws Exception {
        URL dir = Path.of(System.getProperty("java.class.path")).toUri().toURL();
        Thread d = new Thread(() -> deoptLoop(args[0] + ".go"), "deopt");
        Thread l = new Thread(() -> loaderLoop(dir), "loader");
        d.start();
        l.start();
        while (started.size() < 2)
            Thread.sleep(1);
        StringBuilder b = new StringBuilder();
        b.append(ProcessHandle.current().pid()).append('\n');
        for (String s : started)
            b.append(s).append('\n');
        Files.writeString(Path.of(args[0] + ".tmp"), b.toString());
        Files.move(Path.of(args[0] + ".tmp"), Path.of(args[0]));
        d.join();
    }
}
