// The dashboard: reads /api/view whenever the server says a file changed (server-sent events,
// no timers), and sends every action to /api/action, where the CLI's own code performs it.
"use strict";

const view = { project: new URLSearchParams(location.search).get("project") || "", tasks: 0, alerts: 0, runs: 0, q: "", errors: false, sort: { key: "iteration", dir: -1 }, open: new Set(), data: null };
let loading = null, again = false;

function say(text, bad) {
  const box = document.getElementById("message");
  box.hidden = false;
  box.className = bad ? "message bad" : "message ok";
  box.textContent = text;
}

async function act(body) {
  try {
    const reply = await fetch("/api/action", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ ...body, project: view.project }),
    });
    const answer = await reply.json();
    say(reply.ok ? answer.message : `Refused: ${answer.error}`, !reply.ok);
    // A refused click may have left a control (a checkbox) showing what did not happen.
    if (!reply.ok) for (const key of Object.keys(drawn)) delete drawn[key];
    await load();
    return reply.ok;
  } catch (err) {
    say(`Could not reach wild: ${err}`, true);
    return false;
  }
}

// One request at a time; a change that lands meanwhile means one more read afterwards.
async function load() {
  if (loading) { again = true; return loading; }
  loading = (async () => {
    do {
      again = false;
      const q = new URLSearchParams({ project: view.project, tasks: view.tasks, alerts: view.alerts, runs: view.runs, q: view.q, errors: view.errors ? "1" : "" });
      const reply = await fetch(`/api/view?${q}`);
      if (!reply.ok) { say(`The dashboard refused: ${(await reply.json()).error}`, true); break; }
      view.data = await reply.json();
      render(view.data);
      refreshLogs();
    } while (again);
  })().finally(() => { loading = null; });
  return loading;
}

// Each section is drawn again only when its data changed: a new alert redraws the alerts, not
// two dozen charts and hundreds of rows.
const drawn = {};
function section(key, value, draw) {
  const text = JSON.stringify(value);
  if (drawn[key] === text) return;
  drawn[key] = text;
  draw(value);
}

function render(d) {
  document.body.dataset.version = d.version;
  renderProjects(d.projects || [], d.project);
  renderBanner(d);
  renderProblems(d.problems || []);
  if (d.fatal) return;
  section("alerts", d.alerts, renderAlerts);
  section("human", d.human, renderHuman);
  section("queue", d.queue, renderQueue);
  section("policy", d.policy, renderPolicy);
  section("runs", d.runs, renderRuns);
  section("iterations", d.iterations, renderIterations);
  section("tasks", d.tasks, renderTasks);
  section("barriers", d.barriers, renderBarriers);
  section("events", d.events, renderEvents);
  renderPagers(d);
  fill("footer", `${d.dir} · read ${d.now}`);
  // For the benchmark (bench/bench_dashboard.py): when the page first showed the files.
  if (!performance.getEntriesByName("wild-first-data").length) performance.mark("wild-first-data");
}

function renderProjects(names, chosen) {
  const select = document.getElementById("project");
  select.hidden = names.length < 2;
  if (document.activeElement === select) return;
  select.replaceChildren(...names.map((n) => el("option", { value: n, selected: n === chosen }, n)));
}

function renderBanner(d) {
  const b = d.banner || {};
  fill("stage", b.stage || "unknown");
  document.getElementById("stage").className = `pill stage-${b.stage}`;
  fill("iteration", b.iteration ?? "–");
  fill("elapsed", span(b.elapsedS));
  fill("loop-state", b.paused ? `${b.loop}, paused` : (b.loop || "–"));
  const r = b.runs || {};
  fill("run-counts", ["running", "queued", "finished", "failed"].map((k) =>
    el("span", { class: `run-count ${k}` }, `${r[k] || 0} ${k}`)));
  const badge = document.getElementById("alert-badge");
  badge.textContent = `⚠ ${b.alerts || 0} alert${b.alerts === 1 ? "" : "s"}`;
  badge.className = b.critical ? "badge critical" : (b.alerts ? "badge warn" : "badge");
  fill("goal", b.goal ? `Goal: ${b.goal}` : "");
  document.getElementById("pause").disabled = !!b.paused;
  document.getElementById("resume").disabled = !b.paused;
}

function renderProblems(problems) {
  document.getElementById("problems").hidden = !problems.length;
  fill("problem-list", problems.map((p) => el("li", {}, p)));
}

function renderAlerts(alerts) {
  fill("alerts-count", alerts.total);
  fill("alerts", alerts.rows.length ? alerts.rows.map((a) => el("div", { class: `alert ${a.severity}`, dataset: { alert: a.id } },
    el("div", { class: "alert-head" }, el("span", { class: `sev ${a.severity}` }, a.severity), " ",
      el("strong", {}, a.type), " from ", el("span", { class: "mono" }, a.source), " ",
      el("span", { class: "muted" }, `${a.id} · ${a.status} · ${a.timestamp}`)),
    el("div", { class: "alert-desc" }, a.description),
    a.context ? el("div", { class: "muted mono small" }, a.context) : null,
    el("div", { class: "choices" }, (a.choices.length ? a.choices : ["resolved"]).map((c) =>
      el("button", { class: "choice", dataset: { choice: c }, onclick: () => act({ action: "answer-alert", id: a.id, choice: c }) }, c)))))
    : el("p", { class: "muted" }, "No open alerts."));
}

function renderHuman(inputs) {
  fill("human", inputs.length ? inputs.map((h) => el("li", { class: `human ${h.status}` },
    el("span", { class: "muted small" }, `${h.key} · ${h.status}${h.urgent ? " · URGENT" : ""}`),
    el("div", { class: "pre" }, h.content))) : el("li", { class: "muted" }, "Nothing queued."));
}

function renderQueue(queue) {
  fill("queue-count", queue.total > queue.rows.length ? `${queue.rows.length} of ${queue.total}` : queue.total);
  fill("queue", queue.rows.length ? queue.rows.map((item) => el("li", { class: `work kind-${item.kind}` },
    el("span", { class: "kind" }, item.kind), " ", el("span", { class: "mono" }, item.id), " ", item.title,
    item.reason ? el("div", { class: "reason" }, `waits: ${item.reason}`) : null))
    : el("li", { class: "muted" }, "No work queued: all work is complete."));
}

function renderPolicy(p) {
  fill("policy", el("div", {}, el("strong", {}, p.mode || "–"), p.preset ? ` (${p.preset})` : "",
    p.expiresAt ? el("span", { class: "muted" }, ` until ${p.expiresAt}`) : "",
    el("div", { class: "muted small" }, `autonomy ${p.autonomyLevel ?? "–"} · retries ${p.maxRetryAttempts ?? "–"} · command approval ${p.commandApproval ?? "–"}`),
    p.note ? el("div", { class: "small" }, p.note) : null));
  const select = document.getElementById("policy-mode");
  if (document.activeElement !== select) {
    const modes = p.modes || [];
    select.replaceChildren(...modes.map((m) => el("option", { value: m, selected: m === p.mode || m === p.preset }, m)));
  }
}

function renderRuns(runs) {
  fill("runs-count", runs.runs.total || "");
  fill("sweeps", runs.sweeps.length ? el("table", { class: "table" },
    el("thead", {}, el("tr", {}, ["sweep", "name", "status", "runs", "by status"].map((h) => el("th", {}, h)))),
    el("tbody", {}, runs.sweeps.map((s) => el("tr", {}, el("td", { class: "mono" }, s.id), el("td", {}, s.name),
      el("td", {}, s.status), el("td", {}, s.runs + (s.cut ? ` (+${s.cut} cut)` : "")),
      el("td", {}, Object.entries(s.counts).map(([k, v]) => `${v} ${k}`).join(", "))))))
    : el("p", { class: "muted" }, "No sweeps yet."));
  fill("overlays", runs.sweeps.filter((s) => s.overlay).map(overlay).filter((o) => o));
  fill("runs", runs.runs.rows.map((r) => {
    const names = Object.keys(r.curves);
    return el("div", { class: `run ${r.status}`, dataset: { run: r.id } },
      el("div", { class: "run-head" }, el("span", { class: "mono" }, r.id), " ", el("span", { class: `status ${r.status}` }, r.status),
        r.exitCode !== null ? el("span", { class: "muted" }, ` exit ${r.exitCode}`) : null),
      r.reason && r.status !== "finished" ? el("div", { class: `small run-reason${r.earlyStopped ? " early-stop" : ""}` },
        r.earlyStopped ? `stopped early: ${r.reason}` : r.reason) : null,
      el("div", { class: "muted small mono" }, Object.entries(r.params).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(" ")),
      runCharts(r, names), runLog(r));
  }));
}

// A run's metrics, each on its own small chart with its own y axis: on one shared axis a
// metric in the thousands (samples per second) flattened the loss into a line.
const RUN_CHARTS = 4;
function runCharts(r, names) {
  const broke = r.diverged || {};
  const shown = names.slice(0, RUN_CHARTS);
  return el("div", { class: "run-charts" },
    shown.map((name, i) => el("div", { class: "run-chart", dataset: { metric: name } },
      el("span", { class: `small${name in broke ? " diverged-note" : ""}` },
        el("i", { class: `swatch c${i % 7}` }), name in broke ? `${name} (diverged at step ${broke[name]})` : name),
      lineChart({ [name]: r.curves[name] }, { width: 300, height: 70, colour: i }))),
    names.length > shown.length ? el("div", { class: "muted small" }, `+ ${names.length - shown.length} more: ${names.slice(RUN_CHARTS).join(", ")}`) : null,
    Object.keys(broke).filter((k) => !names.includes(k)).map((k) =>
      el("div", { class: "small diverged-note" }, `${k}: diverged at step ${broke[k]} (no finite value)`)));
}

// A run's log tail, read when opened and again on every change while it is open.
const openRunLogs = new Set();
function runLog(r) {
  const box = el("pre", { class: "log", dataset: { runLog: r.id } });
  const details = el("details", { open: openRunLogs.has(r.id), ontoggle: () => {
    if (details.open) { openRunLogs.add(r.id); fetchLog({ run: r.id }, box); } else openRunLogs.delete(r.id);
  } }, el("summary", { class: "small muted" }, "log"), box);
  if (openRunLogs.has(r.id)) fetchLog({ run: r.id }, box);
  return details;
}

async function fetchLog(which, box) {
  const reply = await fetch(`/api/log?${new URLSearchParams({ ...which, project: view.project })}`);
  const answer = await reply.json();
  box.textContent = reply.ok ? (answer.text || "(empty log)") : answer.error;
}

// Logs still being written (a running iteration, an open run's log) are read again after
// every change; the sections around them are redrawn only when their data changed.
function refreshLogs() {
  for (const box of document.querySelectorAll("pre[data-log].running")) showLog(JSON.parse(box.dataset.row), box);
  for (const box of document.querySelectorAll("pre[data-run-log]")) {
    if (box.parentElement.open) fetchLog({ run: box.dataset.runLog }, box);
  }
}

const SORTERS = {
  files: (r) => (r.filesChanged ? r.filesChanged.length : -1),
};

function renderIterations(it) {
  if (!it || !it.rows) return;
  const s = it.stats;
  fill("stats", [
    ["iterations", s.iterations], ["success rate", s.successRate === null ? "–" : `${Math.round(s.successRate * 100)}%`],
    ["cost", money(s.costUsd)], ["tokens", compact(s.tokens)], ["errors", s.errors],
  ].map(([k, v]) => el("div", { class: "stat" }, el("div", { class: "value" }, v), el("div", { class: "label" }, k))));
  fill("health", healthStrip(it.health));
  fill("burndown", it.burndown.length > 1 ? [el("div", { class: "muted small" }, "open tasks over time"), burndownChart(it.burndown)] : []);
  const key = view.sort.key, get = SORTERS[key] || ((r) => r[key]);
  const rows = [...it.rows].sort((a, b) => {
    const x = get(a), y = get(b);
    if (x === y) return 0;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    return (x < y ? -1 : 1) * view.sort.dir;
  });
  const body = document.querySelector("#iterations tbody");
  body.replaceChildren(...rows.flatMap((r) => {
    const id = `${r.iteration}:${r.startedAt}`;
    const row = el("tr", { class: `iter ${r.outcome.replace(" ", "-")}`, onclick: () => toggle(id, r) },
      el("td", {}, r.iteration), el("td", {}, r.workType ? `${r.workType} ${r.work}` : "–"), el("td", {}, r.agent || "–"),
      el("td", {}, span(r.durationS)), el("td", {}, el("span", { class: `outcome ${r.outcome.replace(" ", "-")}` }, r.outcome)),
      el("td", {}, compact(r.tokens)), el("td", {}, money(r.costUsd)),
      el("td", { class: "small" }, r.filesChanged ? r.filesChanged.join(", ") : "–"));
    if (!view.open.has(id)) return [row];
    const live = r.outcome === "running" ? "log running" : "log";
    const log = el("pre", { class: live, dataset: { log: id, row: JSON.stringify({ log: r.log, iteration: r.iteration }) } }, "loading…");
    showLog(r, log);
    return [row, el("tr", { class: "log-row" }, el("td", { colspan: 8 }, log))];
  }));
}

function toggle(id, r) {
  if (view.open.has(id)) view.open.delete(id); else view.open.add(id);
  renderIterations(view.data.iterations);
}

function showLog(r, box) {
  const name = r.log ? r.log.split("/").pop() : `iteration-${r.iteration}.log`;
  return fetchLog({ name }, box);
}

function renderTasks(tasks) {
  fill("tasks-count", tasks.total);
  fill("tasks", tasks.rows.map((t) => el("li", { class: `task ${t.status}`, dataset: { task: t.id || "" } },
    el("input", { type: "checkbox", checked: t.status === "complete", disabled: !t.id || t.status === "cancelled",
      title: t.id ? "tick or untick (writes tasks.md)" : "this task has no id yet",
      onchange: (e) => act({ action: "tick-task", id: t.id, seen: t.status, status: e.target.checked ? "complete" : "todo" }) }),
    " ", el("span", { class: "mono muted" }, t.id || "(no id)"), " ", el("span", { class: "prio" }, `P${t.priority}`), " ",
    el("span", { class: "task-text" }, t.text),
    t.status === "in-progress" ? el("span", { class: "tag" }, "in progress") : null,
    t.blockedBy.length ? el("span", { class: "tag" }, `blocked by ${t.blockedBy.join(", ")}`) : null,
    t.dependsOn.length ? el("span", { class: "tag" }, `after ${t.dependsOn.join(", ")}`) : null)));
}

function renderBarriers(barriers) {
  fill("barriers", barriers.length ? barriers.map((b) => el("li", { class: `barrier ${b.status}` },
    el("span", { class: `status ${b.status}` }, b.status), " ", el("span", { class: "mono" }, b.id), " ",
    el("span", { class: "muted" }, b.type), b.result ? el("div", { class: "small" }, b.result) : null,
    b.command ? el("div", { class: "mono small muted" }, b.command) : null,
    el("div", { class: "choices" },
      b.canSatisfy ? el("button", { onclick: () => act({ action: "satisfy", id: b.id }) }, "Satisfy") : null,
      b.needsApproval ? el("button", { onclick: () => act({ action: "approve", id: b.id, sha256: b.commandSha256 }) }, "Approve command") : null)))
    : el("li", { class: "muted" }, "No barriers."));
}

function renderEvents(events) {
  if (!events || !events.rows) return;
  fill("events", events.rows.map((e) => el("li", { class: e.error ? "event error" : "event" },
    el("span", { class: "muted" }, e.ts), " ", el("strong", {}, e.kind), " ", e.text)));
}

function renderPagers(d) {
  for (const pager of document.querySelectorAll(".pager")) {
    const list = pager.dataset.list;
    const page = list === "runs" ? d.runs.runs : d[list];
    if (!page || page.total <= page.limit) { pager.replaceChildren(); continue; }
    const at = view[list], last = Math.max(0, page.total - page.limit);
    pager.replaceChildren(
      el("button", { disabled: at <= 0, onclick: () => { view[list] = Math.max(0, at - page.limit); load(); } }, "‹ previous"),
      el("span", { class: "muted" }, ` ${at + 1}–${Math.min(at + page.limit, page.total)} of ${page.total} `),
      el("button", { disabled: at >= last, onclick: () => { view[list] = Math.min(last, at + page.limit); load(); } }, "next ›"));
  }
}

function wire() {
  document.getElementById("project").addEventListener("change", (e) => {
    Object.assign(view, { project: e.target.value, tasks: 0, alerts: 0, runs: 0 });
    view.open.clear();
    for (const key of Object.keys(drawn)) delete drawn[key];
    history.replaceState(null, "", `/?${new URLSearchParams({ project: view.project })}`);
    load();
  });
  for (const button of document.querySelectorAll("[data-control]")) {
    button.addEventListener("click", () => act({ action: button.dataset.control }));
  }
  document.getElementById("human-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const form = e.target;
    if (await act({ action: "human-input", text: form.text.value, urgent: form.urgent.checked })) form.reset();
  });
  document.getElementById("policy-form").addEventListener("submit", (e) => {
    e.preventDefault();
    act({ action: "update-policy", mode: e.target.mode.value, duration: e.target.duration.value });
  });
  document.getElementById("task-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const form = e.target;
    if (await act({ action: "add-task", text: form.text.value, priority: Number(form.priority.value) })) form.reset();
  });
  document.getElementById("event-search").addEventListener("input", (e) => { view.q = e.target.value; load(); });
  document.getElementById("event-errors").addEventListener("change", (e) => { view.errors = e.target.checked; load(); });
  for (const th of document.querySelectorAll("#iterations th[data-sort]")) {
    th.addEventListener("click", () => {
      const key = th.dataset.sort;
      view.sort = { key, dir: view.sort.key === key ? -view.sort.dir : -1 };
      if (view.data) renderIterations(view.data.iterations);
    });
  }
  const live = document.getElementById("live");
  const stream = new EventSource("/api/stream");
  window.wildStream = stream; // the browser tests close it to act on a stale view on purpose
  stream.onopen = () => { live.className = "live on"; live.title = "live: updates arrive as files change"; };
  stream.onerror = () => { live.className = "live off"; live.title = "disconnected: retrying"; };
  stream.onmessage = () => load();
}

window.addEventListener("error", (e) => { document.body.dataset.error = String(e.message); });
document.addEventListener("DOMContentLoaded", () => { wire(); load(); });
