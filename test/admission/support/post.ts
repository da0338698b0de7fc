import * as http from 'node:http';

/** An HTTP answer with its parsed JSON body. */
export interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly json: Record<string, unknown>;
}

/**
 * POSTs a JSON body on a fresh connection (no keep-alive, so no reuse race between bursts). Rejects
 * when no answer comes within `timeoutMs` (default 60 s): a hung request fails the test.
 */
export function postFresh(
  url: string,
  body: string,
  headers: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...headers }, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}
