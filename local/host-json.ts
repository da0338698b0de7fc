/**
 * What the local host reads from the app's `host.json`, as the Functions host does: the HTTP settings
 * (`extensions.http`: route prefix and throttles), `functionTimeout` and the Service Bus trigger's concurrency and
 * batching.
 * @module
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_FUNCTION_TIMEOUT_MS, parseFunctionTimeout } from './function-timeout';
import type { HttpThrottleOptions } from './http-throttle';

/** host.json `extensions.http`, as far as the local host applies it. */
export interface HostJsonHttp extends HttpThrottleOptions {
  readonly routePrefix: string;
  /** Read but not emulated (see `./http-throttle`). */
  readonly dynamicThrottlesEnabled: boolean;
}

interface HostJson {
  functionTimeout?: string | number;
  extensions?: {
    http?: Partial<HostJsonHttp>;
    serviceBus?: {
      maxConcurrentCalls?: number;
      maxMessageBatchSize?: number;
      minMessageBatchSize?: number;
      maxBatchWaitTime?: string;
    };
  };
}

function read(root: string): HostJson {
  return JSON.parse(readFileSync(path.join(root, 'host.json'), 'utf8')) as HostJson;
}

/** `extensions.http`: route prefix (default `api`) and throttles (default unbounded, as on dedicated plans). */
export function hostJsonHttp(root: string): HostJsonHttp {
  const http = read(root).extensions?.http ?? {};
  return {
    routePrefix: http.routePrefix ?? 'api',
    ...(http.maxConcurrentRequests === undefined ? {} : { maxConcurrentRequests: http.maxConcurrentRequests }),
    ...(http.maxOutstandingRequests === undefined ? {} : { maxOutstandingRequests: http.maxOutstandingRequests }),
    dynamicThrottlesEnabled: http.dynamicThrottlesEnabled === true,
  };
}

/**
 * `functionTimeout` in ms (`Infinity` for `-1`); 30 min when absent, the host's default off Consumption.
 * @throws Error naming `functionTimeout` when it is not a time span (the Functions host does not start either).
 */
export function hostJsonFunctionTimeout(root: string): number {
  const value = read(root).functionTimeout;
  return value === undefined ? DEFAULT_FUNCTION_TIMEOUT_MS : parseFunctionTimeout(value);
}

/** The Service Bus trigger settings of host.json that the local host applies. */
export interface HostJsonServiceBus {
  readonly maxConcurrentCalls: number;
  readonly maxMessageBatchSize: number;
  /** A batch trigger waits for this many messages, at most `maxBatchWaitMs` (1: no wait, the default). */
  readonly minMessageBatchSize: number;
  readonly maxBatchWaitMs: number;
}

/**
 * `extensions.serviceBus`: `maxConcurrentCalls`, `maxMessageBatchSize`, `minMessageBatchSize` and `maxBatchWaitTime`
 * (the extension's defaults when absent: 16 per core, 1000, 1, 30 s).
 * @throws Error naming `maxBatchWaitTime` when it is not a time span.
 */
export function hostJsonServiceBus(root: string): HostJsonServiceBus {
  const sb = read(root).extensions?.serviceBus;
  let maxBatchWaitMs = 30_000;
  if (sb?.maxBatchWaitTime !== undefined) {
    try {
      maxBatchWaitMs = parseFunctionTimeout(sb.maxBatchWaitTime);
    } catch {
      throw new Error(`host.json extensions.serviceBus.maxBatchWaitTime must be a time span: ${sb.maxBatchWaitTime}`);
    }
  }
  return {
    maxConcurrentCalls: sb?.maxConcurrentCalls ?? 16,
    maxMessageBatchSize: sb?.maxMessageBatchSize ?? 1000,
    minMessageBatchSize: sb?.minMessageBatchSize ?? 1,
    maxBatchWaitMs,
  };
}
