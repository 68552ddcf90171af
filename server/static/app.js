// The dashboard: phones with live screens, submit, watch a run (SSE), cancel, replay.
// Same-origin requests only; auth rides on the HttpOnly cookie the server set.
// Text from the server is always inserted as textContent, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { taskId: null, source: null, steps: [], current: 0, devices: [] };

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

async function api(path, options = {}) {
  const response = await fetch(path, { credentials: "same-origin", ...options,
    headers: { "Content-Type": "application/json", ...(options.headers || {}) } });
  if (response.status === 401) {
    // the cookie is gone or the server's token changed: back to the sign-in page
    location.assign("/dashboard/");
    throw new Error("401: sign in again");
  }
  if (!response.ok) {
    let detail = response.statusText;
    try {
      const body = await response.json();
      detail = Array.isArray(body.detail) ? body.detail.map((d) => d.msg).join("; ") : JSON.stringify(body.detail);
    } catch (_) { /* keep the status text */ }
    throw new Error(`${response.status}: ${detail}`);
  }
  return response.json();
}

// Who is signed in (GET /v1/me), asked once (again after a failure): its role says which
// phones' frames it may get. audit.js reads it too.
let mePromise = null;
function whoAmI() {
  if (mePromise === null) mePromise = api("/v1/me").catch((err) => { mePromise = null; throw err; });
  return mePromise;
}

// --- phones -----------------------------------------------------------------------
async function refreshDevices() {
  try {
    const [list, me] = await Promise.all([api("/v1/devices"), whoAmI()]);
    state.devices = list.data;
    renderDevices(list.data, me);
    $("health").textContent = `${list.count} phone(s)`;
    $("health").className = "pill ok";
  } catch (err) {
    $("health").textContent = String(err.message);
    $("health").className = "pill error";
  }
}

const PLATFORM_NAMES = { android: "Android", ios: "iOS" };
const PHONE_NAMES = { android: "Android phone", ios: "iPhone" };

function renderDevices(devices, me) {
  const box = $("devices");
  $("no-devices").hidden = devices.length > 0;
  const seen = new Set();
  for (const d of devices) {
    seen.add(d.serial);
    let card = box.querySelector(`[data-serial="${CSS.escape(d.serial)}"]`);
    if (!card) {
      card = el("div", "device");
      card.dataset.serial = d.serial;
      const img = el("img");
      img.alt = `screen of ${d.serial}`;
      card.append(img, el("div", "serial"), el("div", "model"), el("div", "state"));
      box.append(card);
    }
    card.querySelector(".serial").textContent = d.serial;
    card.dataset.platform = d.platform || "android";
    // on a farm the phone's host and properties come along (and its screen stays on its host)
    const model = [PLATFORM_NAMES[d.platform] || d.platform, d.model].filter(Boolean).join(" · ");
    card.querySelector(".model").textContent = d.host ? `${model} on ${d.host}` : model;
    const ready = d.state === "device" || d.state === "free" || d.state === "busy";
    // another principal's task is not named (the API gives no current_task for it): "busy" alone
    const busyText = d.current_task != null ? `busy: task ${d.current_task}` : "busy";
    const stateText = d.busy ? busyText : ready ? "free" : d.state;
    const stateNode = card.querySelector(".state");
    stateNode.textContent = stateText;
    stateNode.className = `state pill ${d.busy ? "busy" : ready ? "ok" : "lost"}`;
    // a phone that stopped answering keeps its last frame, dimmed, so nobody reads it as live
    card.classList.toggle("offline", !ready);
    // only the frames the screenshot route gives this role are asked for (nor an old one kept):
    // a phone running a task the list names (its own, its team's; an admin's every task); busy
    // with no task named, another principal's task or another interface's run (its PhoneLease),
    // to an admin only (409 for others); a free phone to a token that may act (403 for a viewer)
    const admin = me.role === "admin";
    const hidden = d.busy ? d.current_task == null && !admin : !me.may_act;
    if (hidden) {
      card.querySelector("img").removeAttribute("src");
    } else if (d.state === "device" && !d.host) {
      card.querySelector("img").src = `${d.screenshot_url}?format=jpeg&t=${Date.now()}`;
    }
  }
  for (const card of box.querySelectorAll(".device")) {
    if (!seen.has(card.dataset.serial)) card.remove();
  }
  const select = $("device");
  const chosen = select.value;
  for (const option of [...select.options].slice(1)) option.remove();
  // iPhones and Android phones together: "any free" phone of one platform (the task's platform)
  const platforms = [...new Set(devices.map((d) => d.platform || "android"))].sort();
  if (platforms.length > 1) {
    for (const platform of platforms) {
      const option = el("option", null, `any free ${PHONE_NAMES[platform] || platform}`);
      option.value = `any:${platform}`;
      select.append(option);
    }
  }
  for (const d of devices) {
    const option = el("option", null, d.serial);
    option.value = d.serial;
    select.append(option);
  }
  select.value = [...select.options].some((o) => o.value === chosen) ? chosen : "any";
}

// --- submit -------------------------------------------------------------------------
$("submit-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const chosen = $("device").value;
  const body = { device: chosen.startsWith("any:") ? "any" : chosen };
  if (chosen.startsWith("any:")) body.platform = chosen.slice(4);
  if ($("instruction").value.trim()) body.instruction = $("instruction").value;
  if ($("script").value.trim()) body.script = $("script").value;
  if ($("max_steps").value) body.max_steps = Number($("max_steps").value);
  if ($("model").value.trim()) body.model = $("model").value.trim();
  $("submit-error").hidden = true;
  $("submit-button").disabled = true;
  try {
    const task = await api("/v1/tasks", { method: "POST", body: JSON.stringify(body) });
    openTask(task.id);
    refreshTasks();
  } catch (err) {
    $("submit-error").textContent = err.message;
    $("submit-error").hidden = false;
  } finally {
    $("submit-button").disabled = false;
  }
});

// --- runs list ------------------------------------------------------------------------
async function refreshTasks() {
  try {
    const list = await api("/v1/tasks?limit=30");
    const body = $("tasks").querySelector("tbody");
    body.replaceChildren();
    for (const t of list.data) {
      const row = el("tr");
      row.dataset.task = t.id;
      const status = el("td");
      status.append(el("span", `pill ${t.status}`, t.status));
      row.append(el("td", null, t.id), status, el("td", null, t.device || t.device_request),
        el("td", null, t.instruction), el("td", null, t.steps),
        el("td", null, new Date(t.created_at * 1000).toLocaleTimeString()));
      row.addEventListener("click", () => openTask(t.id));
      body.append(row);
    }
  } catch (_) { /* the header shows connection problems */ }
}

// --- one run, live or replayed -----------------------------------------------------
function openTask(id) {
  if (state.source) state.source.close();
  state.taskId = id;
  state.steps = [];
  state.current = 0;
  $("run-section").hidden = false;
  $("run-id").textContent = `#${id}`;
  $("steps").replaceChildren();
  $("run-screen").removeAttribute("src");
  $("run-caption").textContent = "";
  updateReplay();
  loadTask(id);
  const source = new EventSource(`/v1/tasks/${id}/events`);
  state.source = source;
  for (const kind of ["status", "run_started", "step_started", "step_finished", "run_finished", "cancel_requested"]) {
    source.addEventListener(kind, (msg) => onEvent(id, kind, JSON.parse(msg.data)));
  }
  source.addEventListener("end", () => { source.close(); loadTask(id); refreshTasks(); });
  personOpen(id, source);  // person.js: the live phone, the question, the takeover
  location.hash = `task-${id}`;
}

async function loadTask(id) {
  try {
    const t = await api(`/v1/tasks/${id}`);
    if (id !== state.taskId) return;
    $("run-instruction").textContent = t.instruction;
    setStatus(t.status);
    $("run-device").textContent = t.device ? `on ${t.device}` : `waiting for ${t.device_request}`;
    $("run-usage").textContent = `· ${t.steps} step(s) · ${t.prompt_tokens + t.completion_tokens} tokens · $${t.cost_usd.toFixed(4)}`
      + (t.error ? ` · ${t.error.reason || t.error.type}: ${t.error.message || ""}` : "")
      + (t.result && t.result.reason && !t.error ? ` · ${t.result.reason}` : "");
    const link = $("download-link");
    link.hidden = !t.links.trajectory || !["completed", "not_completed", "budget_exhausted", "error", "cancelled", "interrupted"].includes(t.status);
    link.href = t.links.trajectory || "#";
  } catch (_) { /* keep what is shown */ }
}

function setStatus(status) {
  $("run-status").textContent = status;
  $("run-status").className = `pill ${status}`;
  $("cancel-button").disabled = !["queued", "running", "waiting_for_user"].includes(status);
}

function imageUrl(data) {
  // the annotated frame (tap point, swipe) when the step has one, else the plain screenshot
  if (typeof data.annotated_path_url === "string") return data.annotated_path_url;
  for (const [key, value] of Object.entries(data)) {
    if (key.endsWith("_url") && typeof value === "string" && key.includes("screenshot")) return value;
  }
  for (const [key, value] of Object.entries(data)) {
    if (key.endsWith("_url") && typeof value === "string") return value;
  }
  return null;
}

function describeAction(data) {
  const action = data.action ?? data.action_text ?? data.operation;
  if (action && typeof action === "object") return action.raw || `${action.name || ""} ${JSON.stringify(action.params || {})}`;
  return action || "";
}

function onEvent(id, kind, event) {
  if (id !== state.taskId) return;
  const data = event.data || {};
  if (kind === "status") {
    setStatus(data.status);
    loadTask(id);
    return;
  }
  if (kind === "step_finished") {
    const step = { n: state.steps.length + 1, thought: data.thought || "", action: describeAction(data),
      feedback: data.feedback || (data.outcome && data.outcome.feedback) || "", image: imageUrl(data) };
    state.steps.push(step);
    const item = el("li", data.by === "person" ? "step by-person" : "step");
    item.dataset.step = step.n;
    if (data.by === "person") item.append(el("div", "who", "by you (the person)"));
    item.append(el("div", "thought", step.thought), el("div", "action", step.action));
    if (step.feedback) item.append(el("div", "feedback", step.feedback));
    item.addEventListener("click", () => showStep(step.n));
    $("steps").append(item);
    showStep(step.n);
    loadTask(id);
  }
}

function showStep(n) {
  const step = state.steps[n - 1];
  if (!step) return;
  state.current = n;
  if (step.image) $("run-screen").src = step.image;
  $("run-caption").textContent = `step ${n}: ${step.action}`;
  for (const li of $("steps").children) li.classList.toggle("current", Number(li.dataset.step) === n);
  updateReplay();
}

function updateReplay() {
  const slider = $("replay");
  slider.max = Math.max(1, state.steps.length);
  slider.disabled = state.steps.length < 2;
  slider.value = state.current || 1;
  $("replay-label").textContent = state.steps.length ? `${state.current}/${state.steps.length}` : "";
}

$("replay").addEventListener("input", (event) => showStep(Number(event.target.value)));

$("cancel-button").addEventListener("click", async () => {
  if (state.taskId === null) return;
  $("cancel-button").disabled = true;
  try {
    const t = await api(`/v1/tasks/${state.taskId}/cancel`, { method: "POST" });
    setStatus(t.status);
  } catch (err) {
    $("run-caption").textContent = err.message;
  }
});

// --- start -----------------------------------------------------------------------------
// One refresh at a time per list (never two answers racing to the screen).
async function every(fn, ms) {
  try { await fn(); } finally { setTimeout(() => every(fn, ms), ms); }
}
// Without a planner endpoint only scripts run: say so before a task fails.
fetch("/readyz", { credentials: "same-origin" }).then((r) => r.json()).then((ready) => {
  $("planner-warning").hidden = ready.planner !== false;
}).catch(() => { /* not ready yet: the submit answers with the reason */ });
every(refreshDevices, 2500);
every(refreshTasks, 4000);
// #task-N opens that run: on load, and when the address changes without a reload
// (a pasted link in the same tab, the back button).
function openFromHash() {
  const match = /^#task-(\d+)$/.exec(location.hash);
  if (match && Number(match[1]) !== state.taskId) openTask(Number(match[1]));
}
window.addEventListener("hashchange", openFromHash);
openFromHash();
