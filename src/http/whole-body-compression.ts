import zlib from 'node:zlib';
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestHandler } from 'express';

/** The largest answer compressed in one call on the serving thread; larger ones take the stream path. */
const MAX_BYTES = 64 * 1024;

/** Types worth compressing: JSON (problems included), text, scripts, XML and SVG. */
const COMPRESSIBLE =
  /^(?:application\/(?:[\w.+-]*\+)?json|text\/|application\/(?:javascript|xml)|image\/svg\+xml)/i;

/**
 * The coding to compress an answer with for this Accept-Encoding: 'br' or 'gzip', whichever the client
 * weighs more (br on a tie, as the stream path prefers it), or null when it accepts neither or prefers
 * the answer as it is (identity with a higher q).
 */
export function wholeBodyCoding(acceptEncoding: string | undefined): 'br' | 'gzip' | null {
  if (!acceptEncoding) return null;
  const q: Record<string, number> = {};
  for (const part of acceptEncoding.split(',')) {
    const [rawName, ...params] = part.toLowerCase().split(';');
    const name = rawName!.trim();
    if (!name) continue;
    let weight = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m) weight = Number(m[1]);
    }
    if (Number.isFinite(weight)) q[name] = weight;
  }
  const of = (coding: string) => q[coding] ?? q['*'] ?? 0;
  const br = of('br');
  const gzip = Math.max(of('gzip'), q['x-gzip'] ?? 0);
  const best = Math.max(br, gzip);
  if (best <= 0 || (q.identity ?? 0) > best) return null;
  return br >= gzip ? 'br' : 'gzip';
}

function accepts(headers: IncomingHttpHeaders): 'br' | 'gzip' | null {
  const value = headers['accept-encoding'];
  return wholeBodyCoding(Array.isArray(value) ? value.join(',') : value);
}

/**
 * Compresses an answer sent whole (`res.json`, `res.send`: one `end` with the body and no `write`
 * before it) in one synchronous call and sends it with its length, before the streaming `compression`
 * middleware sees it; that one leaves an answer already encoded alone and still handles streams
 * (exports, files) and larger bodies. For a search page of about 5 KB, the stream path cost the server
 * about 150 µs of CPU a request across threads (a compressor set up per answer, its work on the thread
 * pool, chunked transfer). The call runs on the serving thread, which is what limits answers served
 * from memory (list pages), so it uses a fast setting: brotli quality 1 takes about 15 µs for such a
 * page (quality 4, about 40 µs, made list pages slower than the stream path did; the same call on the
 * thread pool cost searches as much CPU as the stream path). Mount it after `compression`, so that its
 * `end` runs first.
 */
export function compressWholeBodies(o: {
  /** Answers smaller than this go as they are (COMPRESS_MIN_BYTES). */
  minBytes: number;
  brotliQuality: number;
  gzipLevel: number;
}): RequestHandler {
  return (req, res, next) => {
    const coding = req.method === 'HEAD' ? null : accepts(req.headers);
    if (coding === null) {
      next();
      return;
    }
    const end = res.end.bind(res);
    const write = res.write.bind(res);
    let streamed = false;
    res.write = ((...args: Parameters<typeof write>) => {
      streamed = true;
      return write(...args);
    }) as typeof res.write;
    res.end = ((chunk?: unknown, encoding?: unknown, cb?: unknown) => {
      const whole =
        !streamed &&
        !res.headersSent &&
        (typeof chunk === 'string' || Buffer.isBuffer(chunk)) &&
        res.statusCode !== 204 &&
        res.statusCode !== 304;
      if (!whole) return end(chunk as never, encoding as never, cb as never);
      const textEncoding = typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8';
      const length = typeof chunk === 'string' ? Buffer.byteLength(chunk, textEncoding) : chunk.length;
      const type = String(res.getHeader('Content-Type') ?? '');
      const cacheControl = String(res.getHeader('Cache-Control') ?? '');
      if (
        length < o.minBytes ||
        length > MAX_BYTES ||
        res.getHeader('Content-Encoding') !== undefined ||
        !COMPRESSIBLE.test(type) ||
        /(?:^|,)\s*no-transform\s*(?:,|$)/i.test(cacheControl)
      )
        return end(chunk as never, encoding as never, cb as never);
      const body = typeof chunk === 'string' ? Buffer.from(chunk, textEncoding) : chunk;
      const out =
        coding === 'br'
          ? zlib.brotliCompressSync(body, {
              params: {
                [zlib.constants.BROTLI_PARAM_QUALITY]: o.brotliQuality,
                [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
              },
            })
          : zlib.gzipSync(body, { level: o.gzipLevel });
      res.setHeader('Content-Encoding', coding);
      res.setHeader('Content-Length', out.length);
      // The stream middleware adds it too, but only for the types its own filter takes.
      const vary = String(res.getHeader('Vary') ?? '');
      if (!/(?:^|,)\s*(?:accept-encoding|\*)\s*(?:,|$)/i.test(vary))
        res.setHeader('Vary', vary ? `${vary}, Accept-Encoding` : 'Accept-Encoding');
      const callback = typeof encoding === 'function' ? encoding : cb;
      return end(out, callback as never);
    }) as typeof res.end;
    next();
  };
}

/**
 * Runs `compress` (the streaming `compression` middleware) only for requests that send an
 * Accept-Encoding. Without one the answer goes as it is anyway, yet the middleware would still wrap the
 * response's `write`, `end`, `on` and `writeHead` and negotiate on every request: 25 to 60 µs of CPU a
 * request on the benchmark machine, a fifth of a health check's and a tenth or more of a profile read's.
 * Such answers still say that they vary by Accept-Encoding, as the middleware would have said for the
 * types it compresses (here for every type: harmless for the rest).
 */
export function compressWhenAccepted(compress: RequestHandler): RequestHandler {
  return (req, res, next) => {
    if (req.headers['accept-encoding']) {
      compress(req, res, next);
      return;
    }
    res.setHeader('Vary', 'Accept-Encoding');
    next();
  };
}
