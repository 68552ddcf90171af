// A person in the loop, on the dashboard: while a task runs or waits, its phone live
// (GET /v1/tasks/{id}/live, a multipart JPEG stream); when the task asks (waiting_for_user),
// the question with answer / "I did it on the phone" / decline, or approve / deny; during a
// takeover, taps and drags on the live view go to the phone (POST /v1/tasks/{id}/reply,
// action "touch", in screen pixels). Loaded before app.js: it uses app.js's $, el, api and
// state only when called, and app.js calls personOpen(id, source) for each opened task.
// Text from the server goes in as textContent, never as HTML.
"use strict";

const person = { taskId: null, asking: null, live: false, down: null };

function personOpen(id, source) {
  person.taskId = id;
  person.asking = null;
  showAsking(null);
  setLive(false);
  for (const kind of ["waiting_for_user", "user_replied", "status"]) {
    source.addEventListener(kind, () => { if (person.taskId === id) personRefresh(id); });
  }
  source.addEventListener("end", () => { if (person.taskId === id) { setLive(false); showAsking(null); } });
  personRefresh(id);
}

async function personRefresh(id) {
  try {
    const t = await api(`/v1/tasks/${id}`);
    if (id !== person.taskId) return;
    setLive(["running", "waiting_for_user"].includes(t.status), t.device);
    showAsking(t.status === "waiting_for_user" ? t.asking : null);
  } catch (_) { /* the header shows connection problems */ }
}

function setLive(on, serial) {
  const img = document.getElementById("live-screen");
  document.getElementById("live-figure").hidden = !on;
  if (on && !person.live) img.src = `/v1/tasks/${person.taskId}/live?fps=3&t=${Date.now()}`;
  if (!on && person.live) img.removeAttribute("src");  // closes the stream
  person.live = on;
  person.serial = serial || person.serial;
}

function showAsking(asking) {
  person.asking = asking;
  const box = document.getElementById("person");
  box.hidden = !asking;
  document.getElementById("ask-error").hidden = true;
  if (!asking) return;
  const confirm = asking.kind === "confirm";
  document.getElementById("ask-kind").textContent = confirm ? "Confirm:" : "The agent asks:";
  document.getElementById("ask-question").textContent = asking.question || "";
  document.getElementById("ask-question-controls").hidden = confirm;
  document.getElementById("ask-confirm-controls").hidden = !confirm;
  document.getElementById("live-hint").textContent = confirm ? "live" : "live: tap or drag on the phone to act on it";
}

async function reply(body) {
  if (person.taskId === null) return;
  const error = document.getElementById("ask-error");
  error.hidden = true;
  try {
    await api(`/v1/tasks/${person.taskId}/reply`, { method: "POST", body: JSON.stringify(body) });
    if (body.action !== "touch") showAsking(null);
  } catch (err) {
    error.textContent = err.message;
    error.hidden = false;
  }
}

document.getElementById("answer-button").addEventListener("click", () => {
  const text = document.getElementById("ask-answer").value.trim();
  if (text) reply({ action: "answer", text });
});
document.getElementById("done-button").addEventListener("click", () =>
  reply({ action: "done", text: document.getElementById("ask-answer").value.trim() }));
document.getElementById("decline-button").addEventListener("click", () => reply({ action: "deny" }));
document.getElementById("approve-button").addEventListener("click", () => reply({ action: "approve" }));
document.getElementById("deny-button").addEventListener("click", () =>
  reply({ action: "deny", text: document.getElementById("deny-reason").value.trim() }));

// the live view in screen pixels: the phone's size from the device list
function screenPoint(event) {
  const img = document.getElementById("live-screen");
  const rect = img.getBoundingClientRect();
  const device = (state.devices || []).find((d) => d.serial === person.serial);
  const width = (device && device.width) || img.naturalWidth;
  const height = (device && device.height) || img.naturalHeight;
  const x = Math.round(((event.clientX - rect.left) / rect.width) * width);
  const y = Math.round(((event.clientY - rect.top) / rect.height) * height);
  return { x: Math.min(Math.max(0, x), width - 1), y: Math.min(Math.max(0, y), height - 1), px: event.clientX, py: event.clientY };
}

const liveImg = document.getElementById("live-screen");
liveImg.addEventListener("pointerdown", (event) => {
  if (!person.asking || person.asking.kind !== "question") return;
  event.preventDefault();
  person.down = screenPoint(event);
});
liveImg.addEventListener("pointerup", (event) => {
  const start = person.down;
  person.down = null;
  if (!start || !person.asking || person.asking.kind !== "question") return;
  const end = screenPoint(event);
  const moved = Math.hypot(end.px - start.px, end.py - start.py) > 8;  // screen pixels of the page
  reply(moved ? { action: "touch", x: start.x, y: start.y, x2: end.x, y2: end.y }
              : { action: "touch", x: start.x, y: start.y });
});
liveImg.addEventListener("dragstart", (event) => event.preventDefault());
