/**
 * @module The Advisor page: renders `GET /api/advice` (each recommendation's evidence,
 * expected effect, risk and apply mode) and the doctor's checklist from
 * `GET /api/doctor` (measured value next to each answer, and the verdict). Read-only:
 * applying stays an authenticated API call. Opening the page asks for fresh advice
 * (`?refresh=1`), the Refresh button again; then polled every 30 s (3 s while the advice
 * is the precomputed, partial one). The advice's age is shown and ticks every second;
 * advice made on an idle pool says so. Exposes
 * `window.switchyardAdvisor` (`advice`, `doctor`, `renders`, `error`) for tests.
 */
import { byId, el, getJson, replaceChildren, setStatus, setText } from "./dom.js";
import { formatTime } from "./page_model.js";

const REFRESH_MS = 30_000;
/** Sooner while the advice is the precomputed one (the bias evaluation is under way). */
const PARTIAL_REFRESH_MS = 3000;
const page = { advice: null, doctor: null, renders: 0, error: null, receivedAt: 0 };
globalThis.switchyardAdvisor = page;

function applyText(advice) {
  if (advice.apply === "live") {
    return advice.recommended
      ? `live: deno task advise --apply ${advice.id} (admin token required)`
      : "live (nothing to apply now)";
  }
  if (advice.apply === "config") {
    const settings = Object.entries(advice.settings ?? {}).map(([k, v]) => `${k}: ${v}`);
    return settings.length > 0 ? `config: set ${settings.join(", ")} and restart` : "config";
  }
  return "none (informational)";
}

function adviceCard(advice) {
  return el(
    "article",
    { class: "advice", "data-id": advice.id, "data-recommended": String(advice.recommended) },
    el(
      "h3",
      {},
      advice.title,
      el("span", { class: "badge" }, advice.recommended ? "recommended" : "no change"),
      el("span", { class: "badge", "data-field": "apply" }, advice.apply),
    ),
    el("b", {}, "Evidence"),
    el("ul", { "data-field": "evidence" }, ...advice.evidence.map((line) => el("li", {}, line))),
    el(
      "dl",
      {},
      ...[
        ["Expected effect", advice.expected_effect, "expected_effect"],
        ["Risk", advice.risk, "risk"],
        ["Apply", applyText(advice), "apply_how"],
      ].flatMap((
        [term, text, field],
      ) => [el("dt", {}, term), el("dd", { "data-field": field }, text)]),
    ),
  );
}

/** `12 s old` from the answer's age and the time since it arrived. */
function ageText() {
  const body = page.advice;
  if (body === null || typeof body.age_ms !== "number") return "n/a";
  const seconds = Math.round((body.age_ms + Date.now() - page.receivedAt) / 1000);
  const idle = body.traffic === false ? ", made before any traffic was measured" : "";
  return `${seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} min`} old${idle}`;
}

function renderAdvice(body) {
  setText("advice-at", formatTime(body.at));
  setText("advice-age", ageText());
  const list = body.advice.length === 0
    ? [el("p", { class: "note" }, "No advice yet.")]
    : body.advice.map(adviceCard);
  replaceChildren(byId("advice-list"), ...list);
}

function renderDoctor(body) {
  setText("doctor-at", formatTime(body.at));
  byId("verdict").dataset.verdict = body.verdict;
  setText("verdict", `Verdict: ${body.verdict} (${body.yes} of ${body.checks.length} yes)`);
  const header = el("tr", {}, ...["question", "answer", "measured"].map((h) => el("th", {}, h)));
  const rows = body.checks.map((check) =>
    el(
      "tr",
      { "data-check": check.id },
      el("td", {}, check.question),
      el("td", { "data-answer": check.answer, "data-field": "answer" }, check.answer),
      el("td", { "data-field": "measured" }, check.measured),
    )
  );
  replaceChildren(byId("doctor-table"), header, ...rows);
}

async function refresh(fresh = false) {
  // Each half renders as soon as it arrives: a slow or failing advisor never holds back
  // the doctor, and the page's frame is there from the start.
  const errors = [];
  const failed = (error) => errors.push(String(error?.message ?? error));
  await Promise.all([
    getJson(fresh ? "/api/advice?refresh=1" : "/api/advice").then((body) => {
      page.advice = body;
      page.receivedAt = Date.now();
      renderAdvice(body);
    }, failed),
    getJson("/api/doctor").then((body) => {
      page.doctor = body;
      renderDoctor(body);
    }, failed),
  ]);
  page.renders++;
  page.error = errors.length > 0 ? errors.join("; ") : null;
  document.body.dataset.renders = String(page.renders);
  if (errors.length > 0) setStatus("error", errors.join("; "));
  else setStatus("live", "live");
}

/** Polls: every 30 s, or sooner while the advice is partial; the first asks for fresh advice. */
let timer;
async function loop(fresh = false) {
  clearTimeout(timer);
  await refresh(fresh);
  timer = setTimeout(() => void loop(), page.advice?.partial ? PARTIAL_REFRESH_MS : REFRESH_MS);
}

byId("advice-refresh").addEventListener("click", () => void loop(true));
setInterval(() => setText("advice-age", ageText()), 1000);

loop(true).catch((error) => {
  page.error = String(error);
  setStatus("error", `cannot load the advisor page: ${error}`);
});
