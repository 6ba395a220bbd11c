// JvmChurned: the class tests/targets/JvmChurn.java loads, runs and unloads
// over and over (a new class loader each time).
public class JvmChurned implements Runnable {
    static volatile long sink;

    public void run() {
        long s = 0;
        for (long i = 0; i < 3_000_000; i++)
            s += i % 7;
        sink = s;
    }
}
