import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { disposeSharedEngine, sharedEngine } from '../lib/app';
import { invocationHookWanted, tracePreInvocation, type PreInvocationLike } from '../lib/telemetry/invocation-tracing';

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
 * Runs every invocation in a root span, a child of the host's trace context. Registered only when tracing is on
 * and the preload did not already install it through `@azure/functions-core`: a registered hook costs every
 * invocation its hook context (built by the worker and `@azure/functions`), even when it does nothing.
 */
if (invocationHookWanted())
  app.hook.preInvocation((context) => tracePreInvocation(context as unknown as PreInvocationLike));
