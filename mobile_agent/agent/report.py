"""``report.html``: a self-contained page to replay a run step by step.

Everything is inside the one file (images as base64 data URIs, the run as JSON in a
``<script type="application/json">`` block, a few lines of CSS and JS), so it works
opened from disk, mailed, or served by the REST service. Texts are inserted with
``textContent``: a model's reply cannot inject markup.

May import: the standard library, Pillow, ``mobile_agent.planner.images``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PIL import Image

from mobile_agent.planner.images import encode_image

__all__ = ["embed_image", "embed_pil", "render_report"]

_REPORT_LONG_SIDE = 900  # embedded images are downscaled copies; the files keep full size


def embed_image(path: Path, long_side: int = _REPORT_LONG_SIDE) -> str | None:
    """A JPEG data URI of the image at ``path``, downscaled; None when unreadable."""
    try:
        with Image.open(path) as img:
            return embed_pil(img, long_side)
    except (OSError, ValueError):
        return None


def embed_pil(image: Image.Image, long_side: int = _REPORT_LONG_SIDE) -> str:
    """The same of an image in memory (the trajectory writer's, as it writes the file)."""
    return encode_image(image, long_side, quality=80).data_url


def _script_json(data: Any) -> str:
    # Inside <script>, "</script>" or "<!--" in a model's text would end the block.
    text = json.dumps(data, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


VIDEO_NAME = "video.mp4"  # the screen recording a run may keep beside its report


def render_report(folder: Path, header: dict[str, Any], steps: list[dict[str, Any]], result: dict[str, Any] | None,
                  images: Mapping[str, str] | None = None) -> str:
    """The HTML of the replay page; images are read from ``folder`` and embedded, or taken
    from ``images`` (file name -> data URI from ``embed_image``) when embedded already."""
    view_steps = []
    for step in steps:
        image = None
        for key in ("annotated", "screenshot"):
            rel = step.get(key)
            if rel:
                image = (images or {}).get(rel) or embed_image(folder / rel)
                if image:
                    break
        view_steps.append({**step, "image": image})
    final = (result or {}).get("final_screenshot")
    if final:
        view_steps.append({"index": "end", "final": True, "image": (images or {}).get(final) or embed_image(folder / final)})
    data: dict[str, Any] = {"header": header, "steps": view_steps, "result": result}
    if (folder / VIDEO_NAME).is_file():  # a recorded run (mobile-agent test --record): linked, not embedded
        data["video"] = VIDEO_NAME
    title = "mobile-agent run"
    return _TEMPLATE.replace("__TITLE__", title).replace("__DATA__", _script_json(data))


_TEMPLATE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1d2330; }
header { background: #1d2330; color: #fff; padding: 12px 20px; }
header h1 { font-size: 18px; margin: 0 0 4px; }
header .meta { opacity: .8; font-size: 13px; }
.status { display: inline-block; padding: 1px 8px; border-radius: 10px; font-weight: 600; }
.status.completed { background: #1e9e4a; } .status.error { background: #c62828; }
.status.not_completed, .status.budget_exhausted { background: #d98200; } .status.cancelled { background: #666; }
main { display: flex; gap: 20px; padding: 16px 20px; align-items: flex-start; }
#shot { max-height: 80vh; max-width: 45vw; border: 1px solid #ccc; background: #fff; }
#panel { flex: 1; min-width: 300px; }
.nav { display: flex; gap: 8px; align-items: center; margin-bottom: 12px; }
.nav button { font-size: 14px; padding: 4px 14px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 12px; margin: 0; }
dt { font-weight: 600; color: #555; } dd { margin: 0; white-space: pre-wrap; word-break: break-word; }
.bad { color: #c62828; } .good { color: #1e9e4a; }
#strip { display: flex; flex-wrap: wrap; gap: 4px; margin-top: 14px; }
#strip button { min-width: 32px; }
#strip button.cur { background: #1d2330; color: #fff; }
#result { margin-top: 16px; padding: 10px; background: #fff; border: 1px solid #ddd; white-space: pre-wrap; }
</style>
</head>
<body>
<header>
  <h1 id="instruction"></h1>
  <div class="meta"><span id="status" class="status"></span> <span id="meta"></span></div>
</header>
<main>
  <img id="shot" alt="screenshot of the step">
  <div id="panel">
    <div class="nav">
      <button id="prev" title="previous step (left arrow)">&larr; prev</button>
      <span id="counter"></span>
      <button id="next" title="next step (right arrow)">next &rarr;</button>
    </div>
    <dl id="details"></dl>
    <div id="strip"></div>
    <div id="result"></div>
    <p id="video-link" hidden><a id="video-href">the screen recording (MP4)</a></p>
  </div>
</main>
<script type="application/json" id="run-data">__DATA__</script>
<script>
(function () {
  const data = JSON.parse(document.getElementById("run-data").textContent);
  const steps = data.steps;
  const header = data.header || {};
  const result = data.result || {};
  let cur = 0;
  const $ = (id) => document.getElementById(id);
  $("instruction").textContent = header.instruction || "(no instruction)";
  const status = result.status || "unfinished";
  $("status").textContent = status;
  $("status").className = "status " + status;
  const taken = steps.filter((x) => !x.final).length;  // the end screen is no step
  $("meta").textContent = [
    header.mode === "scripted" ? "scripted (no model)" : header.mode === "mcp" ? "MCP session (the client's tool calls)"
      : "model: " + (header.model || "-"),
    "device: " + ((header.device || {}).serial || "-"),
    taken + (taken === 1 ? " step" : " steps"),
    result.duration_s !== undefined ? result.duration_s + " s" : "",
  ].filter(Boolean).join(" · ");
  function row(dl, name, value, cls) {
    if (value === null || value === undefined || value === "") return;
    const dt = document.createElement("dt"); dt.textContent = name;
    const dd = document.createElement("dd"); dd.textContent = value;
    if (cls) dd.className = cls;
    dl.appendChild(dt); dl.appendChild(dd);
  }
  function runLink(dl, run) {  // a run of its own, in a sibling folder: its report
    const dt = document.createElement("dt"); dt.textContent = "Run";
    const dd = document.createElement("dd");
    const a = document.createElement("a");
    if (/^[\\w.-]+$/.test(run.folder || "")) a.href = "../" + run.folder + "/report.html";
    a.textContent = run.run_id + ": " + run.status + (run.reason ? " (" + run.reason + ")" : "");
    dd.appendChild(a); dl.appendChild(dt); dl.appendChild(dd);
  }
  function timings(t) {
    if (!t) return "";
    return Object.entries(t).map(([k, v]) => k.replace("_ms", "") + " " + v + " ms").join(", ");
  }
  function show(i) {
    if (!steps.length) { $("counter").textContent = "no steps"; return; }
    cur = Math.max(0, Math.min(steps.length - 1, i));
    const s = steps[cur];
    const count = steps.filter((x) => !x.final).length;
    $("counter").textContent = s.final ? "the screen at the end" : "step " + s.index + " / " + count;
    if (s.image) { $("shot").src = s.image; $("shot").style.display = ""; } else { $("shot").style.display = "none"; }
    const dl = $("details"); dl.textContent = "";
    if (s.final) row(dl, "End", "The screen after the last action.");
    row(dl, "Observation", s.observation);
    row(dl, "Thought", s.thought);
    row(dl, "Action", s.action_text);
    if (s.by === "replay") row(dl, "Planned by", "replay of a cached plan (no model call)");
    if (s.by === "person") row(dl, "Done by", "the person (a takeover or a reply)");
    if (s.by === "mcp") row(dl, "Asked by", "the MCP client (a tool call)");
    if (s.linked_run) runLink(dl, s.linked_run);
    if (s.asked_user) {
      const r = s.asked_user.reply;
      row(dl, s.asked_user.kind === "confirm" ? "Confirmation asked" : "Question to the person", s.asked_user.question);
      if (s.asked_user.reason) row(dl, "Why asked", s.asked_user.reason);
      row(dl, "Person's reply", r ? r.kind + (r.text ? ": " + r.text : "") + (r.by ? " (" + r.by + ")" : "")
        : (s.asked_user.kind === "question" ? "(see the next step)" : "none in time"),
        r && (r.kind === "approve" || r.kind === "done" || r.kind === "answer") ? "good" : "bad");
    }
    if (s.operation) row(dl, "Operation", s.operation.name + " " + JSON.stringify(s.operation.params || {}));
    if (s.tap_point) row(dl, "Tap", s.tap_point.join(", "));
    if (s.swipe) row(dl, "Swipe", s.swipe.join(", "));
    if (s.location) row(dl, "Perception", s.location.status + " '" + s.location.target + "'" +
      (s.location.candidates.length ? " (" + s.location.candidates.length + " candidates)" : ""));
    if (s.chosen_candidate) row(dl, "Chosen", "candidate " + s.chosen_candidate);
    const ended = s.error && s.error.cause;  // the error that ended the run during this step
    if (!s.final) row(dl, "Result", ended ? "the run ended here: " + s.error.cause :
      (s.error ? "invalid reply" : (s.ok ? "done" : "not done")), s.ok && !ended ? "good" : "bad");
    row(dl, "Feedback", s.feedback);
    if (s.screen_changed !== null && s.screen_changed !== undefined)
      row(dl, "Screen", s.screen_changed ? "changed" : "unchanged", s.screen_changed ? "" : "bad");
    row(dl, "Reflection", s.reflection_note, "bad");
    if (s.error) row(dl, "Error", (s.error.type || "") + ": " + (s.error.message || ""), "bad");
    if (s.completion) row(dl, "Completion check", (s.completion.done ? "done: " : "not done: ") + (s.completion.reason || ""),
      s.completion.done ? "good" : "bad");
    row(dl, "Timings", timings(s.timings));
    if (s.usage && s.usage.prompt_tokens !== undefined)
      row(dl, "Tokens", s.usage.prompt_tokens + " in / " + s.usage.completion_tokens + " out");
    document.querySelectorAll("#strip button").forEach((b, j) => b.className = j === cur ? "cur" : "");
  }
  steps.forEach((s, j) => {
    const b = document.createElement("button"); b.textContent = s.index;
    b.addEventListener("click", () => show(j)); $("strip").appendChild(b);
  });
  $("prev").addEventListener("click", () => show(cur - 1));
  $("next").addEventListener("click", () => show(cur + 1));
  document.addEventListener("keydown", (e) => {
    if (e.key === "ArrowLeft") show(cur - 1);
    if (e.key === "ArrowRight") show(cur + 1);
  });
  const lines = ["Result: " + status];
  if (result.reason) lines.push(result.reason);
  if (result.error) lines.push("Error: " + (result.error.cause || "") + " " + (result.error.message || ""));
  if (result.usage) lines.push("Tokens: " + result.usage.prompt_tokens + " in / " + result.usage.completion_tokens +
    " out, cost $" + result.usage.cost_usd);
  $("result").textContent = lines.join("\\n");
  if (data.video) { $("video-href").href = data.video; $("video-link").hidden = false; }
  show(0);
})();
</script>
</body>
</html>
"""
