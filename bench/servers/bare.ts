/** Variant (a): a bare Node HTTP server answering constant JSON: the machine's HTTP ceiling. */
import * as http from 'node:http';
import { announce, statsRoute } from './common';

const BODY = JSON.stringify({ transactionId: 'tx', score: 0.1234, decision: 'approve' });

const server = http.createServer((req, res) => {
  if (statsRoute(req, res)) return;
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY) });
    res.end(BODY);
  });
});
server.listen(0, '127.0.0.1', () => announce((server.address() as { port: number }).port));
