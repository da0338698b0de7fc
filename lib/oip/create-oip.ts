/**
 * Builds the Open Inference Protocol service: the rollout's model (its versions from the fleet pointer) and,
 * optionally, models served as they are, loaded through the same backend factory (micro-batcher included).
 */
import type { BackendFactory } from '../inference/backend';
import type { SessionManager } from '../inference/session-manager';
import type { FleetStore } from '../model-rollout/fleet-store';
import type { TrafficRouter } from '../model-rollout/traffic-router';
import { RolloutCatalog, StaticCatalog, type ModelCatalog, type StaticModel } from './model-catalog';
import { OipService } from './oip-service';

/** What {@link createOip} serves and reads. */
export interface OipWiring {
  /** The rollout's model name (`MODEL_NAME`). */
  readonly name: string;
  readonly sessions: SessionManager;
  readonly router: TrafficRouter;
  readonly store: FleetStore;
  readonly factory: BackendFactory;
  /** Models served as they are (no manifest, no fraud validation). Default none. */
  readonly staticModels?: readonly StaticModel[];
  /** Wraps each catalog (spans); default none. */
  readonly decorateCatalog?: (c: ModelCatalog) => ModelCatalog;
  /** Server name and version (`GET v2`). */
  readonly server: { readonly name: string; readonly version: string };
  /** Whether the engine is ready (a sample inference through the active model succeeded). */
  readonly isReady: () => boolean;
  readonly now?: () => number;
}

/** The service, and what to dispose with the engine (the static models' backends). */
export interface Oip {
  readonly service: OipService;
  readonly disposables: readonly { dispose(): Promise<void> }[];
}

/**
 * Builds the service; loads the static models at once.
 * @throws AppError `model_invalid` if a static model cannot be read or loaded.
 */
export async function createOip(w: OipWiring): Promise<Oip> {
  const extra = w.staticModels === undefined ? undefined : await StaticCatalog.create(w.staticModels, w.factory);
  const decorate = w.decorateCatalog ?? ((c: ModelCatalog) => c);
  const catalogs: ModelCatalog[] = [
    new RolloutCatalog({ name: w.name, sessions: w.sessions, router: w.router, store: w.store }),
    ...(extra === undefined ? [] : [extra]),
  ].map(decorate);
  const service = new OipService({
    catalogs,
    server: w.server,
    // anonymous (v2/health/ready): a fixed reason, never the load error (that is the admin view's)
    ready: () =>
      Promise.resolve(
        w.isReady() ? { ready: true } : { ready: false, reason: 'No model is ready on this instance yet.' },
      ),
    ...(w.now === undefined ? {} : { now: w.now }),
  });
  return { service, disposables: extra === undefined ? [] : [extra] };
}
