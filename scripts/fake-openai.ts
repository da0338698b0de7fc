/**
 * `npm run openai:standin -- [--port 8089] [--delay-ms 200] [--mode ok]`: a local stand-in for an Azure
 * OpenAI chat deployment (see test/support/openai-peer.ts). Point the service at it with
 * `AZURE_OPENAI_ENDPOINT=http://127.0.0.1:8089 AZURE_OPENAI_DEPLOYMENT=gpt-4o-mini AZURE_OPENAI_API_KEY=local`.
 * Switch it to failing with `curl -X POST localhost:8089/_control -d '{"mode":"server-error"}'`.
 */
import { FakeOpenAI, type FakeMode } from '../test/support/openai-peer';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const fake = await FakeOpenAI.create({
    port: Number(arg('port') ?? 8089),
    behaviour: { mode: (arg('mode') ?? 'ok') as FakeMode, delayMs: Number(arg('delay-ms') ?? 200) },
  });
  console.log(
    `Fake Azure OpenAI listening on ${fake.endpoint} (POST /openai/deployments/{deployment}/chat/completions)`,
  );
  const stop = (): void => void fake.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
