import http from 'node:http';
import type { Server } from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { AppError } from '../domain/errors';
import { problemOf } from './problem';

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
  _parsedUrl: unknown;
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
    // parseurl's cache of the parsed URL, which the router asks for on the way to every route.
    self._parsedUrl = undefined;
  }
}

class ApiResponse extends http.ServerResponse {
  constructor(...args: ConstructorParameters<typeof http.ServerResponse>) {
    super(...args);
    // Express's `locals` (`req` is the response's own already).
    (this as unknown as { locals: unknown }).locals = undefined;
  }
}

/**
 * An HTTP server for `app`, as express's own `listen` makes one, but with the classes above, and
 * requests it cannot read (headers over Node's limit, bytes that are not HTTP, a request not
 * received in time) answered with a problem document, as every other failure is, where Node
 * answers with a status line alone.
 */
export function createHttpServer(app: http.RequestListener & AppPrototypes): Server {
  const server = http.createServer(messageClasses(app), app);
  server.on('clientError', unreadable);
  return server;
}

/** The prototypes an express app gives every request and response it handles. */
interface AppPrototypes {
  request?: object;
  response?: object;
}

/**
 * The classes this server makes `app`'s requests and responses with: ApiRequest and ApiResponse
 * with express's prototypes (`app.request`, `app.response`) from their making. Express sets its
 * prototype on every request and response it is handed. In V8 an object whose prototype is changed
 * after its making leaves the shared tree of shapes: each property added to it afterwards gives it
 * a shape of its own, and a response, holding more properties than its shape has room for, gets
 * one at the change itself. The server's property lookups then met every request with shapes they
 * had not seen, and each took V8's slow path: some eighty a request, a quarter of the main thread's
 * CPU for a health check on the benchmark machine (bench/README.md, 2026-12-01, morning). Here the
 * app's prototypes become these classes' own (each inheriting what express's had), so express finds
 * the prototype already in place, changes nothing, and requests share their shapes.
 */
function messageClasses(app: AppPrototypes): {
  IncomingMessage: typeof http.IncomingMessage;
  ServerResponse: typeof http.ServerResponse;
} {
  class Request extends ApiRequest {}
  class Response extends ApiResponse {}
  if (app.request) {
    Object.setPrototypeOf(Request.prototype, app.request);
    app.request = Request.prototype;
  }
  if (app.response) {
    Object.setPrototypeOf(Response.prototype, app.response);
    app.response = Response.prototype;
  }
  sizeObjects(Request, Response);
  return { IncomingMessage: Request, ServerResponse: Response as unknown as typeof http.ServerResponse };
}

/**
 * Makes the first objects of the two classes at once. V8 sizes the objects of a class by the first
 * few it makes (in-object slack tracking); a full garbage collection while those are being made
 * ends the sizing early, with room for none of their properties. A server's first requests come
 * while it loads its data, collecting garbage in between, and its responses and requests then had
 * all their properties outside the object: too many for V8 once a symbol-keyed one was added, so
 * each became a dictionary, slower to read. Made here, before any request, the first objects give
 * the classes room for every property their constructors set.
 */
function sizeObjects(Request: typeof ApiRequest, Response: typeof ApiResponse): void {
  const socket = new Socket();
  for (let i = 0; i < SIZING_OBJECTS; i++) new Response(new Request(socket));
  socket.destroy();
}

/** More than the objects V8 sizes a class by (seven in the V8 of Node 20). */
const SIZING_OBJECTS = 10;

/** Status line reasons of the answers `unreadable` gives. */
const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Content Too Large',
  431: 'Request Header Fields Too Large',
};

/** Answers a request the server could not read, as Node would (then closes), with a problem body. */
function unreadable(err: NodeJS.ErrnoException, socket: Duplex): void {
  // An answer under way, or a peer gone: nothing can be said any more.
  const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || answering?.headersSent) {
    socket.destroy();
    return;
  }
  const e =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError(
          'HEADERS_TOO_LARGE',
          `The request line and headers may take at most ${http.maxHeaderSize.toLocaleString('en-US')} bytes in all; shorten the URL or the headers.`,
        )
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError('REQUEST_TIMEOUT', 'The request was not received in time.')
        : err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
          ? new AppError('PAYLOAD_TOO_LARGE', 'The chunk extensions of the request body are too large.')
          : new AppError('BAD_REQUEST', 'The request could not be read as HTTP/1.1.');
  const body = JSON.stringify(problemOf(e));
  socket.end(
    `HTTP/1.1 ${e.status} ${REASONS[e.status] ?? 'Bad Request'}\r\n` +
      'Content-Type: application/problem+json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
    // Closed once written, as Node closes it: the server allows half-open connections otherwise.
    () => socket.destroy(),
  );
}
