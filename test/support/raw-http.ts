import http from 'node:http';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The bytes as they came: not decompressed, as fetch would. */
  body: Buffer;
}

/** One request on its own connection (nothing kept alive past the test), answered undecoded. */
export function rawRequest(
  url: string,
  headers: Record<string, string>,
  method: 'GET' | 'HEAD' = 'GET',
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
