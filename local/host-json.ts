/**
 * What the local host reads from the app's `host.json`, as the Functions host does: the HTTP settings
 * (`extensions.http`: route prefix and throttles), `functionTimeout` and the Service Bus trigger's concurrency.
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
    serviceBus?: { maxConcurrentCalls?: number; maxMessageBatchSize?: number };
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

/** `extensions.serviceBus.maxConcurrentCalls` and `maxMessageBatchSize` (the host's defaults when absent). */
export function hostJsonServiceBus(root: string): { maxConcurrentCalls: number; maxMessageBatchSize: number } {
  const sb = read(root).extensions?.serviceBus;
  return { maxConcurrentCalls: sb?.maxConcurrentCalls ?? 16, maxMessageBatchSize: sb?.maxMessageBatchSize ?? 1000 };
}
