"""Gmail (com.google.android.gm): inbox, compose, sent and drafts.

Views: {"view": "main", "folder": "inbox" | "sent" | "drafts", "scroll"} a folder's mail
list with the "Compose" button (pencil) at the bottom right and folder tabs;
{"view": "compose", "fields": {"to", "subject", "body"}, "error", "draft_id"} the editor:
the To field has focus when it opens; ENTER in To moves to Subject, in Subject to the
body ("Compose email"), in the body starts a new line. The paper plane at the top right
sends (To must hold at least one address like name@host.tld; otherwise an error shows and
nothing is sent). BACK from a compose with something in it keeps a draft; the cross
discards. {"view": "read", "folder", "mail_id"} one mail.

Data: {"inbox": [{id, from, subject, body, time}], "sent": [{id, to: [addresses],
subject, body, time}], "drafts": [{id, to, subject, body}], "account", "next_id"}.

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

import random
import re
from typing import Any

from simphone.apps import App, AppContext, register
from simphone.apps.app_widgets import add_record, wrap
from simphone.ui.canvas import Canvas
from simphone.ui.icons import COLORS
from simphone.ui.widgets import TITLE_BAR_H, scroll_list, text_field, title_bar

ADDRESS = re.compile(r"[^@\s,;]+@[^@\s,;]+\.[^@\s,;]+")
ROW_H = 220
FOLDERS = [("inbox", "Inbox"), ("sent", "Sent"), ("drafts", "Drafts")]
INBOX = [
    ("Google", "Security alert", "A new sign-in on SimPhone 1. If this was you, you don't need to do anything."),
    ("Maria Lopez", "Lunch on Friday?", "Hi! Are you free for lunch on Friday? There's a new place near the office."),
    ("GitHub", "Your pull request was merged", "Your pull request #42 was merged into main."),
    ("Alex Chen", "Photos from the trip", "Here are the photos from West Lake. Let me know which ones you like!"),
    ("Amazon", "Your order has shipped", "Your order of 1 item has shipped and will arrive on Thursday."),
    ("Team Calendar", "Weekly sync moved", "The weekly sync is moved to Wednesday at 10:00."),
]


def recipients(text: str) -> list[str]:
    return ADDRESS.findall(text)


@register
class Gmail(App):
    package = "com.google.android.gm"
    label = "Gmail"
    activity = ".ConversationListActivityGmail"
    icon = "mail"
    color = "red"
    multiline_fields = ("body",)

    def initial_data(self, seed: int) -> dict[str, Any]:
        rng = random.Random(f"gmail-{seed}")
        mails = INBOX[:]
        rng.shuffle(mails)
        minutes, inbox = 9 * 60 + 30, []
        for i, (sender, subject, body) in enumerate(mails):  # newest first
            minutes -= rng.randint(5, 90)
            inbox.append({"id": i + 1, "from": sender, "subject": subject, "body": body,
                          "time": f"{minutes // 60:02d}:{minutes % 60:02d}", "unread": i < 2})
        return {"account": "me@simphone.example", "inbox": inbox, "sent": [], "drafts": [], "next_id": len(inbox) + 1}

    def main_view(self) -> dict[str, Any]:
        return {"view": "main", "folder": "inbox"}

    def view_activity(self, view: dict[str, Any]) -> str:
        return "com.android.mail.compose.ComposeActivityGmail" if view.get("view") == "compose" else self.activity

    def on_intent(self, ctx: AppContext, action: str, data: str | None, extras: dict[str, str]) -> dict | None:
        if data and data.startswith("mailto:"):
            return {"view": "compose", "fields": {"to": data[7:], "subject": "", "body": ""}}
        return self.main_view()

    def render(self, ctx: AppContext, c: Canvas) -> None:
        view = ctx.view
        if view["view"] == "compose":
            self._compose(ctx, c)
        elif view["view"] == "read":
            self._read(ctx, c)
        else:
            self._list(ctx, c, view.get("folder", "inbox"))

    # -- list -------------------------------------------------------------------------
    def _list(self, ctx: AppContext, c: Canvas, folder: str) -> None:
        th = c.theme
        mails = list(reversed(ctx.data[folder])) if folder != "inbox" else ctx.data["inbox"]
        top = ctx.content[1] + TITLE_BAR_H + 120

        def draw(y: float) -> None:
            for mail in mails:
                who = mail["from"] if folder == "inbox" else self._to_line(mail)
                avatar = COLORS[["blue", "green", "purple", "orange", "teal"][mail["id"] % 5]]
                c.ellipse((40, y + 40, 150, y + 150), fill=avatar)
                c.text((95, y + 95), (who.removeprefix("To: ")[:1] or "?").upper(), size=52, color=(255, 255, 255),
                       anchor="mm", record=False)
                bold = bool(mail.get("unread"))
                c.text((190, y + 40), who, size=44, bold=bold, max_width=c.width - 400)
                if "time" in mail:
                    c.text((c.width - 50, y + 45), mail["time"], size=34, color=th.text_secondary, anchor="ra")
                c.text((190, y + 100), mail["subject"] or "(no subject)", size=40, bold=bold, max_width=c.width - 240)
                c.text((190, y + 152), mail["body"].replace("\n", " ") or " ", size=36, color=th.text_secondary,
                       max_width=c.width - 240)
                c.on_tap((0, y, c.width, y + ROW_H), lambda m=mail: self._open(ctx, folder, m))
                y += ROW_H

        if not mails:
            c.text((540, top + 300), f"Nothing in {dict(FOLDERS)[folder]}", size=44, color=th.text_secondary, anchor="mm")
        scroll_list(c, ctx, top, len(mails) * ROW_H + 300, draw)
        bar_top = ctx.content[1] + TITLE_BAR_H
        c.rect((0, bar_top, c.width, bar_top + 120), fill=th.background)
        for i, (key, name) in enumerate(FOLDERS):
            cx = 180 + i * 360
            selected = key == folder
            c.text((cx, bar_top + 50), name, size=42, bold=selected, anchor="mm",
                   color=COLORS["red"] if selected else th.text_secondary)
            if selected:
                c.rect((cx - 100, bar_top + 100, cx + 100, bar_top + 108), fill=COLORS["red"])
            c.on_tap((cx - 180, bar_top, cx + 180, bar_top + 120),
                     lambda k=key: self._show_folder(ctx, k))
        title_bar(c, ctx, "Gmail", back=False,
                  actions=[("magnifier", "search in mail, magnifier", lambda: None), ("person", "account, person", lambda: None)])
        # the extended floating button: pencil + "Compose"
        bottom = ctx.content[3]
        box = (c.width - 480, bottom - 220, c.width - 60, bottom - 70)
        c.rect(box, fill=(255, 228, 225) if th.name == "light" else (90, 40, 40), radius=40)
        c.icon("pencil", (box[0] + 45, box[1] + 40, box[0] + 115, box[1] + 110), COLORS["red"], description="pencil")
        c.text((box[0] + 145, (box[1] + box[3]) / 2), "Compose", size=46, bold=True, anchor="lm")
        c.widget(box, "Compose button", text="Compose")
        c.on_tap(box, lambda: self.compose(ctx))

    @staticmethod
    def _show_folder(ctx: AppContext, folder: str) -> None:
        view = ctx.view  # the task's root view: changed in place (replacing the root would leave the app)
        view.clear()
        view.update(view="main", folder=folder)

    @staticmethod
    def _to_line(mail: dict[str, Any]) -> str:
        to = mail["to"] if isinstance(mail["to"], list) else [mail["to"]]  # drafts keep the raw field
        return "To: " + (", ".join(t for t in to if t.strip()) or "(no recipient)")

    def _open(self, ctx: AppContext, folder: str, mail: dict[str, Any]) -> None:
        if folder == "drafts":
            ctx.push({"view": "compose", "draft_id": mail["id"],
                      "fields": {"to": mail["to"], "subject": mail["subject"], "body": mail["body"]}})
            return
        if folder == "inbox":
            mail["unread"] = False
        ctx.push({"view": "read", "folder": folder, "mail_id": mail["id"]})

    def compose(self, ctx: AppContext) -> None:
        ctx.push({"view": "compose", "fields": {"to": "", "subject": "", "body": ""}})
        ctx.focus("to")

    # -- read -------------------------------------------------------------------------
    def _read(self, ctx: AppContext, c: Canvas) -> None:
        th = c.theme
        view = ctx.view
        mail = next((m for m in ctx.data[view["folder"]] if m["id"] == view["mail_id"]), None)
        top = ctx.content[1] + TITLE_BAR_H
        if mail is not None:
            y = top + 40
            for line in wrap(c, mail["subject"] or "(no subject)", 56, c.width - 120, bold=True):
                c.text((60, y), line, size=56, bold=True)
                y += 80
            y += 30
            who = mail.get("from") or self._to_line(mail)
            c.text((60, y), who, size=42, bold=True, max_width=c.width - 120)
            c.text((60, y + 65), f"to {'me' if 'from' in mail else ', '.join(mail['to'])}", size=36,
                   color=th.text_secondary, max_width=c.width - 120)
            y += 170
            for para in mail["body"].split("\n"):
                for line in wrap(c, para, 42, c.width - 120) or [""]:
                    c.text((60, y), line, size=42)
                    y += 62
        title_bar(c, ctx, "", actions=[("trash", "delete, trash can", lambda: None), ("mail", "mark unread, envelope", lambda: None)])

    # -- compose ----------------------------------------------------------------------
    def _compose(self, ctx: AppContext, c: Canvas) -> None:
        th = c.theme
        top = ctx.content[1] + TITLE_BAR_H
        y = top
        c.text((50, y + 60), "From", size=40, color=th.text_secondary, anchor="lm")
        c.text((200, y + 60), ctx.data["account"], size=40, anchor="lm")
        c.line([(0, y + 120), (c.width, y + 120)], fill=th.divider, width=2)
        y += 120
        c.text((50, y + 65), "To", size=40, color=th.text_secondary, anchor="lm")
        text_field(c, ctx, (150, y + 5, c.width - 30, y + 125), "to", "", size=42, border=False)
        c.line([(0, y + 130), (c.width, y + 130)], fill=th.divider, width=2)
        y += 130
        text_field(c, ctx, (20, y + 5, c.width - 30, y + 125), "subject", "Subject", size=42, border=False)
        c.line([(0, y + 130), (c.width, y + 130)], fill=th.divider, width=2)
        y += 130
        error = ctx.view.get("error")
        if error:
            c.text((50, y + 20), error, size=38, color=COLORS["red"], max_width=c.width - 100)
            y += 80
        text_field(c, ctx, (20, y + 10, c.width - 30, max(y + 300, ctx.content[3] - 30)), "body", "Compose email",
                   size=42, multiline=True, border=False)
        c.rect((0, top - TITLE_BAR_H, c.width, top), fill=th.background)
        title_bar(c, ctx, "Compose", actions=[("paper_plane", "send, paper plane", lambda: self.send(ctx)),
                                              ("more", "more options, three dots", lambda: None)])

    def on_enter(self, ctx: AppContext, field: str) -> None:
        if field == "to":
            ctx.focus("subject")
        elif field == "subject":
            ctx.focus("body")
        else:
            super().on_enter(ctx, field)

    def send(self, ctx: AppContext) -> None:
        to = recipients(ctx.field("to"))
        if not to:
            ctx.view["error"] = "Add at least one recipient (name@example.com)"
            return
        add_record(ctx.data, "sent", to=to, subject=ctx.field("subject").strip(), body=ctx.field("body").rstrip(),
                   time=ctx.clock.strftime("%H:%M"))
        self._drop_draft(ctx)
        ctx.finish()

    def _drop_draft(self, ctx: AppContext) -> None:
        draft_id = ctx.view.get("draft_id")
        if draft_id is not None:
            ctx.data["drafts"] = [d for d in ctx.data["drafts"] if d["id"] != draft_id]

    def on_back(self, ctx: AppContext) -> bool:
        if ctx.view["view"] != "compose":
            return False
        fields = {k: ctx.field(k) for k in ("to", "subject", "body")}
        self._drop_draft(ctx)
        if any(v.strip() for v in fields.values()):
            add_record(ctx.data, "drafts", **fields)
        ctx.finish()
        return True
