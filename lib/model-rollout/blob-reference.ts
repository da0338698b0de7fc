/**
 * The blob trigger's deferred binding (`sdkBinding: true`): the runtime hands the function a reference to
 * the blob (`ModelBindingData` of source `AzureStorageBlobs`, JSON content `{ Connection, ContainerName,
 * BlobName }`) instead of its content, so nothing is read before the size is checked. The trigger adapter
 * registers {@link blobReferenceFactory} with `@azure/functions-extensions-base`; the handler then reads the
 * blob through the model repository, with a cap.
 */

/** The `source` of the blob trigger's model binding data. */
export const BLOB_BINDING_SOURCE = 'AzureStorageBlobs';

/** A blob named by the trigger, not yet read. */
export interface BlobReference {
  readonly kind: 'blob-reference';
  /** The binding's connection setting name, e.g. `ModelStorage`. */
  readonly connection: string;
  readonly container: string;
  /** Blob name inside the container, e.g. `fraud/1.2.0.onnx`. */
  readonly blobName: string;
}

/** Model binding data as `@azure/functions` passes it to a resource factory. */
export interface BindingData {
  readonly content?: Uint8Array | string | null;
  readonly contentType?: string | null;
  readonly source?: string | null;
  readonly version?: string | null;
}

/** Whether a trigger value is a {@link BlobReference}. */
export function isBlobReference(value: unknown): value is BlobReference {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'blob-reference';
}

/**
 * Turns the runtime's model binding data into a {@link BlobReference}.
 * @throws Error when it is not blob binding data (the runtime then retries and poisons the blob: it is a deployment fault).
 */
export function blobReferenceFactory(data: BindingData | BindingData[]): BlobReference {
  const one = Array.isArray(data) ? data[0] : data;
  if (one?.source !== BLOB_BINDING_SOURCE)
    throw new Error(`blob binding data of source ${BLOB_BINDING_SOURCE} expected, got ${String(one?.source)}`);
  const raw = one.content;
  const text = typeof raw === 'string' ? raw : raw == null ? '' : Buffer.from(raw).toString('utf8');
  let c: Record<string, unknown>;
  try {
    c = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error('blob binding data content is not JSON');
  }
  const str = (k: string): string => (typeof c[k] === 'string' ? (c[k] as string) : '');
  if (str('ContainerName') === '' || str('BlobName') === '')
    throw new Error('blob binding data must name ContainerName and BlobName');
  return {
    kind: 'blob-reference',
    connection: str('Connection'),
    container: str('ContainerName'),
    blobName: str('BlobName'),
  };
}

/** The model binding data the runtime sends for a blob (what the local host's feeder sends too). */
export function blobBindingData(
  connection: string,
  container: string,
  blobName: string,
): { version: string; source: string; contentType: string; content: Buffer } {
  return {
    version: '1.0',
    source: BLOB_BINDING_SOURCE,
    contentType: 'application/json',
    content: Buffer.from(JSON.stringify({ Connection: connection, ContainerName: container, BlobName: blobName })),
  };
}
