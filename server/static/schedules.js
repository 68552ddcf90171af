// The dashboard's recurring tasks: list, add (from the New task form's task), delete.
// Uses api(), el() and $() of app.js (loaded after this file; called only on events and timers).
"use strict";

async function refreshSchedules() {
  let list;
  try {
    list = await api("/v1/schedules");
  } catch (err) {
    document.getElementById("schedule-error").textContent = err.message;
    document.getElementById("schedule-error").hidden = false;
    return;
  }
  const body = document.querySelector("#schedules tbody");
  body.replaceChildren();
  for (const s of list.data) {
    const row = el("tr");
    const when = s.cron ? `cron ${s.cron}` : `every ${s.every_s} s`;
    row.append(el("td", null, s.id), el("td", null, s.name), el("td", null, when), el("td", null, s.runs),
      el("td", null, `${Math.round(s.next_in_s)} s`), el("td", null, s.last_task_id || "-"));
    // occurrences skipped over the token's quota; the last one's reason on hover
    const skipped = el("td", null, s.skipped);
    if (s.last_skipped) skipped.title = s.last_skipped.reason;
    row.append(skipped);
    const remove = el("button", "secondary", "Delete");
    remove.type = "button";
    remove.addEventListener("click", async () => {
      try {
        await fetch(`/v1/schedules/${s.id}`, { method: "DELETE", credentials: "same-origin" });
      } finally {
        refreshSchedules();
      }
    });
    const cell = el("td");
    cell.append(remove);
    row.append(cell);
    body.append(row);
  }
}

document.getElementById("schedule-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const error = document.getElementById("schedule-error");
  error.hidden = true;
  const task = { device: $("device").value };
  if ($("instruction").value.trim()) task.instruction = $("instruction").value;
  if ($("script").value.trim()) task.script = $("script").value;
  if ($("max_steps").value) task.max_steps = Number($("max_steps").value);
  const body = { name: $("schedule-name").value, task };
  if ($("schedule-cron").value.trim()) body.cron = $("schedule-cron").value.trim();
  if ($("schedule-every").value) body.every_s = Number($("schedule-every").value);
  try {
    await api("/v1/schedules", { method: "POST", body: JSON.stringify(body) });
    $("schedule-name").value = "";
    refreshSchedules();
  } catch (err) {
    error.textContent = err.message;
    error.hidden = false;
  }
});

window.addEventListener("load", () => {
  refreshSchedules();
  setInterval(refreshSchedules, 5000);
});
