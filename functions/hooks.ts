import { app } from '@azure/functions';
import { disposeSharedEngine, sharedEngine } from '../lib/app';

/** Loads and warms the model when the app starts, so the first request does not pay for it. */
app.hook.appStart(async () => {
  const engine = await sharedEngine();
  if (engine.config.model.warmupOnStart) await engine.start().catch(() => undefined); // logged by the engine; readiness reports it
});

/** Releases native memory and connections when the app stops. */
app.hook.appTerminate(async () => {
  await disposeSharedEngine();
});
