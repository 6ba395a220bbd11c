// JvmHttp READY: a Java HTTP server as services run it, for tests/t_jvm.sh:
// the JDK's com.sun.net.httpserver on 127.0.0.1 (a port the system picks)
// with 4 worker threads; each request goes Handler.handle ->
// handleRequest -> lookup (a short sleep, as a query) and renderPage (a
// computing loop).  Writes READY ("PID PORT") once it listens.
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Executors;

public class JvmHttp {
    static class Handler implements HttpHandler {
        public void handle(HttpExchange ex) throws java.io.IOException {
            byte[] body = handleRequest(ex.getRequestURI().getPath());
            ex.sendResponseHeaders(200, body.length);
            try (OutputStream os = ex.getResponseBody()) {
                os.write(body);
            }
        }

        byte[] handleRequest(String path) {
            lookup(path);
            return renderPage(path).getBytes();
        }

        void lookup(String path) {
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
            }
        }

        String renderPage(String path) {
            long s = 0;
            for (long i = 0; i < 2_000_000; i++)
                s += i ^ (s >>> 3);
            return path + " " + s + "\n";
        }
    }

    public static void main(String[] args) throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        server.createContext("/", new Handler());
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.start();
        String ready = ProcessHandle.current().pid() + " " + server.getAddress().getPort() + "\n";
        Files.writeString(Path.of(args[0] + ".tmp"), ready);
        Files.move(Path.of(args[0] + ".tmp"), Path.of(args[0]));
    }
}
