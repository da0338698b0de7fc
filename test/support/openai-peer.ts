/**
 * A local stand-in for an Azure OpenAI chat deployment, speaking the wire protocol on loopback:
 * `POST /openai/deployments/{deployment}/chat/completions?api-version=...` with `api-key` or
 * `Authorization: Bearer` auth, answering chat completions (structured output in `message.content`).
 * Its behaviour is switchable at run time (tests call {@link FakeOpenAI.set}; other processes
 * `POST /_control {"mode": ..., "delayMs": ...}`), and `GET /_stats` returns the request count.
 * Used by the tests, the escalation benchmark and `npm run openai:standin`.
 */
import { once } from 'node:events';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the stand-in answers. */
export type FakeMode =
  | 'ok' // a valid verdict (see `verdict`)
  | 'slow-body' // headers at once, the body only after `stallMs`
  | 'rate-limit' // 429 with Retry-After: `retryAfterSec`
  | 'server-error' // 500
  | 'malformed-json' // 200 whose HTTP body is not JSON
  | 'bad-content' // 200, message content not JSON
  | 'schema-violation' // 200, content JSON that violates the verdict schema
  | 'refusal' // 200, message.refusal set
  | 'length' // 200, finish_reason length
  | 'content-filter'; // 200, finish_reason content_filter

/** Behaviour of the stand-in. */
export interface FakeBehaviour {
  readonly mode: FakeMode;
  /** Delay before answering anything, ms. */
  readonly delayMs: number;
  /** `slow-body`: delay between headers and body, ms. */
  readonly stallMs: number;
  /** `rate-limit`: the Retry-After header, s. */
  readonly retryAfterSec: number;
  /** `ok`: the verdict returned. */
  readonly verdict: {
    readonly riskLevel: 'low' | 'medium' | 'high';
    readonly score: number;
    readonly reasons: string[];
  };
}

/** One request the stand-in received. */
export interface FakeRequest {
  readonly deployment: string;
  readonly apiVersion: string | null;
  readonly headers: http.IncomingHttpHeaders;
  /** The raw body text (what went over the wire). */
  readonly body: string;
}

const DEFAULTS: FakeBehaviour = {
  mode: 'ok',
  delayMs: 0,
  stallMs: 5000,
  retryAfterSec: 60,
  verdict: { riskLevel: 'high', score: 0.91, reasons: ['note asks to bypass checks'] },
};

const PATH = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/;
const MAX_BODY = 1024 * 1024;

/** The stand-in server. */
export class FakeOpenAI {
  /** Requests received on the chat-completions path, in order (bounded to the last 1000). */
  readonly requests: FakeRequest[] = [];
  /** Requests received on the chat-completions path since start. */
  count = 0;
  private behaviour: FakeBehaviour = DEFAULTS;
  private readonly sockets = new Set<import('node:net').Socket>();

  private constructor(
    private readonly server: http.Server,
    /** Base URL, e.g. `http://127.0.0.1:41234` (the `AZURE_OPENAI_ENDPOINT`). */
    readonly endpoint: string,
  ) {}

  /** Starts on 127.0.0.1 (`port` 0 = a free port). */
  static async create(options: { port?: number; behaviour?: Partial<FakeBehaviour> } = {}): Promise<FakeOpenAI> {
    const server = http.createServer();
    server.listen(options.port ?? 0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    const fake = new FakeOpenAI(server, `http://127.0.0.1:${port}`);
    if (options.behaviour !== undefined) fake.set(options.behaviour);
    server.on('connection', (s) => {
      fake.sockets.add(s);
      s.once('close', () => fake.sockets.delete(s));
    });
    server.on('request', (req, res) => void fake.handle(req, res));
    return fake;
  }

  /** Changes the behaviour (unnamed fields keep their values). */
  set(b: Partial<FakeBehaviour>): void {
    this.behaviour = { ...this.behaviour, ...b };
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    let body = '';
    for await (const chunk of req) {
      body += (chunk as Buffer).toString('utf8');
      if (body.length > MAX_BODY) return void res.writeHead(413).end();
    }
    if (url.pathname === '/_stats' && req.method === 'GET')
      return json(res, 200, { requests: this.count, mode: this.behaviour.mode });
    if (url.pathname === '/_control' && req.method === 'POST') {
      try {
        this.set(JSON.parse(body) as Partial<FakeBehaviour>);
        return json(res, 200, this.behaviour);
      } catch {
        return json(res, 400, { error: 'body must be JSON' });
      }
    }
    const m = PATH.exec(url.pathname);
    if (m === null || req.method !== 'POST')
      return json(res, 404, { error: { code: 'NotFound', message: 'Resource not found' } });
    const apiVersion = url.searchParams.get('api-version');
    if (apiVersion === null) return json(res, 404, { error: { code: '404', message: 'Resource not found' } });
    const auth = req.headers['api-key'] ?? req.headers['authorization'];
    if (auth === undefined || auth === '')
      return json(res, 401, { error: { code: '401', message: 'Access denied due to missing subscription key.' } });
    this.count++;
    this.requests.push({ deployment: decodeURIComponent(m[1] as string), apiVersion, headers: req.headers, body });
    if (this.requests.length > 1000) this.requests.shift();
    const b = this.behaviour;
    if (b.delayMs > 0) await sleep(b.delayMs);
    let request: { messages?: { content?: string }[]; response_format?: { type?: string } };
    try {
      request = JSON.parse(body) as typeof request;
    } catch {
      return json(res, 400, { error: { code: 'BadRequest', message: 'invalid JSON body' } });
    }
    if (request.response_format?.type !== 'json_schema')
      return json(res, 400, { error: { code: 'BadRequest', message: 'response_format json_schema expected' } });
    const promptTokens = Math.ceil(
      (request.messages ?? []).reduce((n, msg) => n + String(msg.content ?? '').length, 0) / 4,
    );
    switch (b.mode) {
      case 'rate-limit':
        res.setHeader('retry-after', String(b.retryAfterSec));
        return json(res, 429, { error: { code: '429', message: 'Rate limit is exceeded.' } });
      case 'server-error':
        return json(res, 500, { error: { code: 'InternalServerError', message: 'The server had an error.' } });
      case 'malformed-json':
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('{"id": "chatcmpl-x", "choices": [');
      case 'slow-body':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders();
        await sleep(b.stallMs);
        if (res.destroyed) return;
        return void res.end(JSON.stringify(completion(JSON.stringify(b.verdict), 'stop', promptTokens)));
      case 'bad-content':
        return json(res, 200, completion('riskLevel: high (not JSON)', 'stop', promptTokens));
      case 'schema-violation':
        return json(
          res,
          200,
          completion(JSON.stringify({ riskLevel: 'extreme', score: 7, reasons: 'x' }), 'stop', promptTokens),
        );
      case 'refusal':
        return json(res, 200, completion(null, 'stop', promptTokens, "I'm sorry, I can't help with that."));
      case 'length':
        return json(res, 200, completion('{"riskLevel": "hi', 'length', promptTokens));
      case 'content-filter':
        return json(res, 200, completion(null, 'content_filter', promptTokens));
      case 'ok':
        return json(res, 200, completion(JSON.stringify(b.verdict), 'stop', promptTokens));
    }
  }

  /** Stops the server, closing open connections. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function completion(
  content: string | null,
  finish: string,
  promptTokens: number,
  refusal: string | null = null,
): object {
  const completionTokens = Math.ceil((content ?? refusal ?? '').length / 4);
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: 'gpt-4o-mini-2024-07-18',
    choices: [{ index: 0, finish_reason: finish, message: { role: 'assistant', content, refusal } }],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
