import http from 'node:http';
import type { Server } from 'node:http';

/**
 * Properties that express, its router and this server's middleware give every request as it passes
 * through: express its response, the router its state (`next`, `baseUrl`, `originalUrl`, `params`,
 * `route`), the body parser the body, the request id and authentication their own. Not `query`, which
 * express reads through a getter of its request prototype. Each is set by name (a store V8 caches),
 * not in a loop over names.
 */
interface RequestFields {
  res: unknown;
  next: unknown;
  baseUrl: unknown;
  originalUrl: unknown;
  params: unknown;
  route: unknown;
  body: unknown;
  id: unknown;
  keyId: unknown;
}

/**
 * A request with those properties from its making. Added one by one to every request, after express
 * has replaced its prototype with its own, they changed its shape again and again; how V8 settled
 * those shapes differed from one process to the next, and with it the CPU a request took: on the
 * benchmark machine 78 to 92 µs for a health check in some processes, 138 to 220 µs in others, for
 * the life of the process. With the properties in place from the start it took 99 to 108 µs in
 * every process. Express still replaces the prototype, which keeps these own properties.
 */
class ApiRequest extends http.IncomingMessage {
  constructor(...args: ConstructorParameters<typeof http.IncomingMessage>) {
    super(...args);
    const self = this as unknown as RequestFields;
    self.res = undefined;
    self.next = undefined;
    self.baseUrl = undefined;
    self.originalUrl = undefined;
    self.params = undefined;
    self.route = undefined;
    self.body = undefined;
    self.id = undefined;
    self.keyId = undefined;
  }
}

class ApiResponse extends http.ServerResponse {
  constructor(...args: ConstructorParameters<typeof http.ServerResponse>) {
    super(...args);
    // Express's `locals` (`req` is the response's own already).
    (this as unknown as { locals: unknown }).locals = undefined;
  }
}

/** An HTTP server for `app`, as express's own `listen` makes one, but with the classes above. */
export function createHttpServer(app: http.RequestListener): Server {
  return http.createServer(
    {
      IncomingMessage: ApiRequest,
      ServerResponse: ApiResponse as unknown as typeof http.ServerResponse,
    },
    app,
  );
}
