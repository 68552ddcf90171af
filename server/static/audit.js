// Who is signed in (GET /v1/me: a viewer's session is not offered the forms that act), and the
// audit trail (GET /v1/audit, admins only): who submitted, replied, cancelled, deleted, cleared
// the cache, connected a phone. The trail is hidden for a token that may not read it.
// Uses api(), el() and whoAmI() of app.js (loaded after this file; called only on events and timers).
"use strict";

let auditOffset = 0;
const AUDIT_PAGE = 20;

async function refreshAudit() {
  const section = document.getElementById("audit-section");
  let page;
  try {
    page = await api(`/v1/audit?offset=${auditOffset}&limit=${AUDIT_PAGE}`);
  } catch (err) {
    section.hidden = true;  // 403: not an admin's session
    return false;
  }
  section.hidden = false;
  const body = document.querySelector("#audit tbody");
  body.replaceChildren();
  for (const row of page.data) {
    const tr = el("tr");
    tr.append(el("td", null, new Date(row.at * 1000).toLocaleString()), el("td", null, `${row.actor} (${row.role})`),
      el("td", null, row.action), el("td", null, row.resource), el("td", "muted", JSON.stringify(row.detail)));
    body.append(tr);
  }
  const last = Math.min(page.count, auditOffset + page.data.length);
  document.getElementById("audit-page").textContent = page.count ? `${auditOffset + 1}-${last} of ${page.count}` : "none yet";
  document.getElementById("audit-newer").disabled = auditOffset === 0;
  document.getElementById("audit-older").disabled = last >= page.count;
  return true;
}

document.getElementById("audit-newer").addEventListener("click", () => {
  auditOffset = Math.max(0, auditOffset - AUDIT_PAGE);
  refreshAudit();
});
document.getElementById("audit-older").addEventListener("click", () => {
  auditOffset += AUDIT_PAGE;
  refreshAudit();
});

async function showPrincipal() {
  let me;
  try {
    me = await whoAmI();
  } catch (err) {
    return;
  }
  document.getElementById("whoami").textContent =
    `signed in as ${me.name} (${me.role}${me.team ? `, team ${me.team}` : ""})`;
  if (!me.may_act) {
    document.getElementById("submit-section").hidden = true;
    document.getElementById("schedule-form").hidden = true;
  }
}

window.addEventListener("load", async () => {
  showPrincipal();
  if (await refreshAudit()) setInterval(refreshAudit, 10000);
});
