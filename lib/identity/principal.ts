/**
 * Easy Auth's signed-in user: the `x-ms-client-principal` header that App Service / Container Apps
 * authentication sets (base64 of JSON `{ auth_typ, claims: [{ typ, val }], name_typ, role_typ }`), decoded into
 * the actor's name and roles. Pure: garbage gives `unauthenticated`, never another error.
 */
import { textProblem } from '../domain/text';
import { AppError } from '../errors/errors';

/** The roles of the case API: `analyst` works cases; `lead` also reassigns and adds to lists from a case. */
export const ROLES = ['analyst', 'lead'] as const;
export type Role = (typeof ROLES)[number];

/** Who is acting. */
export interface Actor {
  /** The user's name (Easy Auth's `name_typ` claim, else `preferred_username` / `name` / `email`). */
  readonly name: string;
  /** The case roles among the user's role claims (other roles are ignored). */
  readonly roles: readonly Role[];
  /** True when the identity comes from the development mode (`IDENTITY_MODE=development`, `npm start`). */
  readonly development: boolean;
}

/** Longest header accepted, characters (Easy Auth principals are a few KiB). */
export const MAX_PRINCIPAL_CHARS = 16_384;

const NAME_FALLBACKS = [
  'preferred_username',
  'name',
  'email',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
];
const ROLE_FALLBACKS = ['roles', 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role'];

function unauthenticated(message: string): AppError {
  return new AppError('unauthenticated', 'The x-ms-client-principal header is not a valid Easy Auth principal.', {
    errors: [{ path: 'x-ms-client-principal', message }],
  });
}

/** Whether `s` is one of the case {@link ROLES}. */
export function isRole(s: string): s is Role {
  return (ROLES as readonly string[]).includes(s);
}

/**
 * Decodes an `x-ms-client-principal` header value.
 * @throws AppError `unauthenticated` (naming the header) for anything that is not a principal with a user name.
 */
export function decodePrincipal(header: string, development = false): Actor {
  if (header.length === 0 || header.length > MAX_PRINCIPAL_CHARS)
    throw unauthenticated(`must be 1 to ${MAX_PRINCIPAL_CHARS} characters of base64`);
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(header.trim())) throw unauthenticated('must be base64');
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(header.trim(), 'base64').toString('utf8'));
  } catch {
    throw unauthenticated('must be base64 of a JSON object');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw unauthenticated('must be base64 of a JSON object');
  const p = doc as Record<string, unknown>;
  if (!Array.isArray(p['claims'])) throw unauthenticated('must hold a claims array');
  const claims: { typ: string; val: string }[] = [];
  for (const c of p['claims'] as unknown[]) {
    if (typeof c !== 'object' || c === null) continue;
    const { typ, val } = c as Record<string, unknown>;
    if (typeof typ === 'string' && typeof val === 'string') claims.push({ typ, val });
  }
  const nameTyp = typeof p['name_typ'] === 'string' ? p['name_typ'] : undefined;
  const roleTyp = typeof p['role_typ'] === 'string' ? p['role_typ'] : undefined;
  const nameTypes = nameTyp === undefined ? NAME_FALLBACKS : [nameTyp, ...NAME_FALLBACKS];
  let name: string | undefined;
  for (const t of nameTypes) {
    name = claims.find((c) => c.typ === t && c.val.trim() !== '')?.val.trim();
    if (name !== undefined) break;
  }
  if (name === undefined || name.length > 256) throw unauthenticated('must name the user (name_typ claim)');
  const bad = textProblem(name, 'identifier');
  if (bad !== undefined) throw unauthenticated(`the user's name ${bad}`);
  const roleTypes = new Set(roleTyp === undefined ? ROLE_FALLBACKS : [roleTyp, ...ROLE_FALLBACKS]);
  const roles = new Set<Role>();
  for (const c of claims) if (roleTypes.has(c.typ) && isRole(c.val)) roles.add(c.val);
  return { name, roles: ROLES.filter((r) => roles.has(r)), development };
}

/** Encodes an Easy Auth principal (tests and development tools acting as someone). */
export function encodePrincipal(name: string, roles: readonly string[]): string {
  const doc = {
    auth_typ: 'aad',
    name_typ: 'name',
    role_typ: 'roles',
    claims: [{ typ: 'name', val: name }, ...roles.map((r) => ({ typ: 'roles', val: r }))],
  };
  return Buffer.from(JSON.stringify(doc), 'utf8').toString('base64');
}
