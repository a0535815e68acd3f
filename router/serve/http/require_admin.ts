/**
 * @module The admin check every state-changing (and sensitive read) router endpoint uses: 403 when no admin
 * token is configured (admin endpoints are off), 401 when the request lacks it.
 */
import { hasBearerToken } from "../../../shared/bearer_token.ts";
import { ApiError } from "../../../shared/errors.ts";

/**
 * Throws 403 when no admin token is configured, 401 when the request lacks it;
 * `action` completes "Cannot …" in the message.
 */
export function requireAdmin(
  headers: Headers,
  adminToken: string | undefined,
  action = "change state",
): void {
  if (adminToken === undefined || adminToken === "") {
    throw new ApiError("forbidden", `Cannot ${action}: auth.admin_token is not configured`);
  }
  if (!hasBearerToken(headers, adminToken)) {
    throw new ApiError("unauthorized", `Cannot ${action}: missing or wrong admin token`);
  }
}
