package tiergraph.ci;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.util.concurrent.CountDownLatch;

/**
 * A MongoDB-wire server for tests: mongo-java-server's in-memory backend on
 * 127.0.0.1. Runs until killed; prints "mongo: ready" once it listens.
 *
 * Argument: the port.
 */
public final class MongoTestServer {
  private MongoTestServer() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: MongoTestServer <port>");
      System.exit(2);
    }
    MongoServer server = new MongoServer(new MemoryBackend());
    server.bind("127.0.0.1", Integer.parseInt(args[0]));
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.shutdown();
                  stopped.countDown();
                }));
    System.out.println("mongo: ready mongodb://127.0.0.1:" + args[0]);
    System.out.flush();
    stopped.await();
  }
}
