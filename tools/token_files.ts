/**
 * @module The launcher's token files. `deno task start` writes a fresh random admin
 * token to `data/admin_token` (for `deno task logs`, `advise --apply` and the admin API)
 * and the internal token to `data/internal_token` (for Prometheus scraping backends, see
 * deploy/prometheus/prometheus.yml), both mode 0600, when none is configured. Tokens
 * are never printed.
 */
import { dirname } from "node:path";

/** Where the launcher writes the admin token and the CLIs look for it. */
export const ADMIN_TOKEN_FILE = "data/admin_token";
/** Where the launcher writes the router→backend token (Prometheus reads it). */
export const INTERNAL_TOKEN_FILE = "data/internal_token";

/** A random 48-hex-digit token. */
export function randomToken(): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(24)),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
}

/**
 * Writes `token` to `path`, readable by the owner only. An old file is removed first, so
 * the token is never written into a file with wider permissions.
 */
export async function writeTokenFile(path: string, token: string): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.remove(path).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
  await Deno.writeTextFile(path, `${token}\n`, { createNew: true, mode: 0o600 });
  await Deno.chmod(path, 0o600); // the umask may have narrowed it further, never widened
}

/** The admin token: `SWITCHYARD_AUTH__ADMIN_TOKEN` first, then `path`; `undefined` if neither. */
export async function readAdminToken(
  env: Record<string, string>,
  path: string,
): Promise<string | undefined> {
  const fromEnv = env["SWITCHYARD_AUTH__ADMIN_TOKEN"]?.trim();
  if (fromEnv) return fromEnv;
  try {
    return (await Deno.readTextFile(path)).trim() || undefined;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}
