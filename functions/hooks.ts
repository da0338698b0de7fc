import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { disposeSharedEngine, sharedEngine } from '../lib/app';
import { tracePreInvocation, type PreInvocationLike } from '../lib/telemetry/invocation-tracing';

/** Loads and warms the model when the app starts, so the first request does not pay for it. */
app.hook.appStart(async () => {
  const engine = await sharedEngine();
  if (engine.config.model.warmupOnStart) await engine.start().catch(() => undefined); // logged by the engine; readiness reports it
});

/** Releases native memory and connections when the app stops. */
app.hook.appTerminate(async () => {
  await disposeSharedEngine();
});

/**
 * Runs every invocation in a root span, a child of the host's trace context (no-op when tracing is off,
 * or when the preload already installed it through `@azure/functions-core`).
 */
app.hook.preInvocation((context) => tracePreInvocation(context as unknown as PreInvocationLike));
