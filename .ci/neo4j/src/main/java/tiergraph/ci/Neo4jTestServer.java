package tiergraph.ci;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.harness.Neo4j;
import org.neo4j.harness.Neo4jBuilder;
import org.neo4j.harness.Neo4jBuilders;

/**
 * A Neo4j server for tests: Bolt only, on loopback, data in a directory of its own.
 * With NEO4J_PASSWORD set in its environment, authentication is on and user neo4j
 * has that password (so that the tests see a wrong one refused as a real server
 * refuses it); without, authentication is off. Runs until killed; prints "neo4j: ready bolt://..." once Bolt accepts
 * connections, which is what .ci/services.sh waits for.
 *
 * Arguments: working directory, Bolt port and, optionally, a data directory to
 * serve instead of a new, empty one: the `data` directory of a NEO4J_HOME into
 * which `neo4j-admin database import` wrote (its `databases` and `transactions`).
 */
public final class Neo4jTestServer {
  private Neo4jTestServer() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 2 || args.length > 3) {
      System.err.println("usage: Neo4jTestServer <work-dir> <bolt-port> [<data-dir>]");
      System.exit(2);
    }
    Path work = Path.of(args[0]).toAbsolutePath();
    int port = Integer.parseInt(args[1]);
    Files.createDirectories(work);

    String password = System.getenv("NEO4J_PASSWORD");
    if (password != null && password.isEmpty()) password = null;

    Neo4jBuilder builder = Neo4jBuilders.newInProcessBuilder(work);
    if (args.length == 3) {
      // The harness's own copyFrom puts a copy where this version does not look for it.
      Path data = Path.of(args[2]).toAbsolutePath();
      builder =
          builder
              .withConfig(GraphDatabaseInternalSettings.databases_root_path, data.resolve("databases"))
              .withConfig(GraphDatabaseSettings.transaction_logs_root_path, data.resolve("transactions"));
    }
    Neo4j server =
        builder
            .withDisabledServer() // no HTTP: the driver speaks Bolt only
            .withConfig(BoltConnector.enabled, true)
            .withConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
            .withConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
            .withConfig(HttpConnector.enabled, false)
            .withConfig(HttpsConnector.enabled, false)
            .withConfig(GraphDatabaseSettings.auth_enabled, password != null)
            // A bounded page cache: the server shares a small machine with the tests.
            .withConfig(GraphDatabaseSettings.pagecache_memory, 512L * 1024 * 1024)
            .build();

    if (password != null) {
      // Run in process, this statement needs no login; Bolt clients then need the password.
      server
          .databaseManagementService()
          .database("system")
          .executeTransactionally(
              "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED", Map.of("password", password));
    }

    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.close();
                  stopped.countDown();
                }));
    System.out.println("neo4j: ready " + server.boltURI());
    System.out.flush();
    stopped.await();
  }
}
