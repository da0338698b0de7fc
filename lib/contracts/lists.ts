/**
 * The lists' contracts (docs/lists.md, docs/console.md): the people routes (`/api/lists`, `/api/list-entries`; values
 * in bodies, never in the URL) and the admin routes (`/api/lists/{name}…`, the host's master key). The lists service
 * reads and checks the add and remove bodies itself (each bad value named by its index): the bodies declared here are
 * what it takes, for the reference page and the console's types.
 * @module
 */
import { z } from 'zod';
import { LIST_KEY_FIELDS } from '../decisioning/ruleset-schema';
import { defineContract } from '../http/contract';
import { VersionRef, pathParam, queryParam } from './common';

/** An add carries up to 1000 values (and, from the console, a reason). */
export const LIST_BODY_LIMIT_BYTES = 256 * 1024;
/** A remove carries one value and a reason. */
export const LIST_REMOVE_BODY_LIMIT_BYTES = 4096;

const name = z.strictObject({ name: pathParam("The list's name (declared by the active ruleset).") });
const cursor = z.strictObject({ cursor: queryParam("The previous page's `cursor`.") });

export const ListSummary = z
  .strictObject({
    name: z.string(),
    key: z.enum(LIST_KEY_FIELDS).describe('The event field its values are.'),
    entries: z.number().describe('How many entries it holds.'),
  })
  .meta({ id: 'ListSummary', description: 'One declared list.' });

export const ListsAnswer = z
  .strictObject({
    ruleset: VersionRef.nullable().describe('The active ruleset (`null`: none, and no lists).'),
    lists: z.array(ListSummary),
  })
  .meta({ id: 'ListsAnswer', description: 'The lists the active ruleset declares, by name.' });

export const ListEntry = z
  .strictObject({
    value: z.string(),
    expiresAt: z.number().optional().describe('Epoch ms after which the entry no longer counts; absent: no expiry.'),
  })
  .meta({ id: 'ListEntry', description: 'One list entry.' });

export const ListPage = z
  .strictObject({
    entries: z.array(ListEntry),
    cursor: z.string().optional().describe("The next page's cursor (absent at the end)."),
  })
  .meta({ id: 'ListPage', description: 'One page of entries (at most 100, in value order).' });

export const ListAdded = z
  .strictObject({ name: z.string(), added: z.number(), ttlSeconds: z.number().optional() })
  .meta({ id: 'ListAdded', description: 'How many entries were added (or renewed).' });

export const ListRemoved = z
  .strictObject({ name: z.string(), removed: z.literal(1) })
  .meta({ id: 'ListRemoved', description: 'The entry was removed.' });

const addFields = {
  values: z.array(z.string()).describe("1 to 1000 values of the list's key field."),
  ttlSeconds: z.number().optional().describe('Seconds until the entries expire (absent: never).'),
};

export const ListAddBody = z.strictObject(addFields).meta({ id: 'ListAddBody', description: 'Entries to add.' });

export const ListAddWithReasonBody = z
  .strictObject({ ...addFields, reason: z.string().describe('Why (kept by the audit entry), 1 to 500 characters.') })
  .meta({ id: 'ListAddWithReasonBody', description: 'Entries to add, and why.' });

export const ListAdminRemoveBody = z
  .strictObject({ value: z.string() })
  .meta({ id: 'ListAdminRemoveBody', description: 'The entry to remove (in the body: request logs keep URLs).' });

export const ListRemoveBody = ListAdminRemoveBody.extend({
  reason: z.string().describe('Why (kept by the audit entry), 1 to 500 characters.'),
}).meta({ id: 'ListRemoveBody', description: 'The entry to remove, and why.' });

export const listsPeople = defineContract({
  name: 'listsPeople',
  method: 'GET',
  route: 'lists',
  auth: 'people',
  summary: 'The lists the active ruleset declares, with their key field and entry count (analysts and leads).',
  status: 200,
  response: ListsAnswer,
});

export const listEntries = defineContract({
  name: 'listEntries',
  method: 'GET',
  route: 'list-entries/{name}',
  auth: 'people',
  summary: 'One page of entries with their expiry (analysts and leads).',
  params: name,
  query: cursor,
  status: 200,
  response: ListPage,
});

export const listEntriesAdd = defineContract({
  name: 'listEntriesAdd',
  method: 'POST',
  route: 'list-entries/{name}',
  auth: 'people',
  summary: 'A lead adds entries, with a reason the audit entry keeps.',
  params: name,
  body: ListAddWithReasonBody,
  bodyLimitBytes: LIST_BODY_LIMIT_BYTES,
  status: 200,
  response: ListAdded,
});

export const listEntriesRemove = defineContract({
  name: 'listEntriesRemove',
  method: 'POST',
  route: 'list-entries/{name}/remove',
  auth: 'people',
  summary: 'A lead removes one entry (404 if absent), with a reason the audit entry keeps.',
  params: name,
  body: ListRemoveBody,
  bodyLimitBytes: LIST_REMOVE_BODY_LIMIT_BYTES,
  status: 200,
  response: ListRemoved,
});

export const listsPage = defineContract({
  name: 'listsPage',
  method: 'GET',
  route: 'lists/{name}',
  auth: 'admin',
  summary: 'One page of entries (at most 100) and the next cursor.',
  params: name,
  query: cursor,
  status: 200,
  response: ListPage,
});

export const listsAdd = defineContract({
  name: 'listsAdd',
  method: 'POST',
  route: 'lists/{name}',
  auth: 'admin',
  summary: 'Adds entries (a bad value named by its index); every instance sees them through Redis; audited.',
  params: name,
  body: ListAddBody,
  bodyLimitBytes: LIST_BODY_LIMIT_BYTES,
  status: 200,
  response: ListAdded,
});

export const listsRemove = defineContract({
  name: 'listsRemove',
  method: 'POST',
  route: 'lists/{name}/remove',
  auth: 'admin',
  summary: 'Removes one entry, named in the body, never the URL (404 if absent); audited.',
  params: name,
  body: ListAdminRemoveBody,
  bodyLimitBytes: LIST_REMOVE_BODY_LIMIT_BYTES,
  status: 200,
  response: ListRemoved,
});

/** The lists' contracts, in the reference page's order. */
export const LIST_CONTRACTS = [
  listsPeople,
  listEntries,
  listEntriesAdd,
  listEntriesRemove,
  listsPage,
  listsAdd,
  listsRemove,
] as const;
