"""Notes (com.google.android.keep, label "Notes"): a list of notes and an editor.

Views: {"view": "main", "scroll": y} lists the notes (newest first) with an orange "+"
button; {"view": "edit", "note_id": id | None, "fields": {"title", "body"}} edits one.
Saving, as in Google Keep: the check mark at the top right saves, and so does BACK (the
navigation back key or the back arrow); a note left with empty title and body is not
kept. The trash can deletes the note. ENTER in the title moves to the body; in the body
it starts a new line.

Data (`state()["apps"]["com.google.android.keep"]`): {"notes": [{"id", "title", "body",
"created", "modified"}], "next_id"}; times are the phone clock's ISO strings.

May import: the standard library, `simphone.apps`, `simphone.ui`.
"""

from __future__ import annotations

from typing import Any

from simphone.apps import App, AppContext, register
from simphone.apps.app_widgets import add_record
from simphone.ui.canvas import Canvas
from simphone.ui.widgets import TITLE_BAR_H, fab, scroll_list, text_field, title_bar, wrap

CARD_H = 260


def _fit(lines: list[str], most: int) -> list[str]:
    """At most `most` lines; the last one shown ends with an ellipsis when some are left out."""
    if len(lines) <= most:
        return lines
    return lines[: most - 1] + [lines[most - 1].rstrip() + "…"] if most > 0 else []


@register
class Notes(App):
    package = "com.google.android.keep"
    label = "Notes"
    activity = ".activities.BrowseActivity"
    icon = "pencil"
    color = "orange"
    multiline_fields = ("body",)

    def initial_data(self, seed: int) -> dict[str, Any]:
        return {"notes": [], "next_id": 1}

    def view_activity(self, view: dict[str, Any]) -> str:
        return ".activities.EditorActivity" if view.get("view") == "edit" else self.activity

    def render(self, ctx: AppContext, c: Canvas) -> None:
        if ctx.view["view"] == "edit":
            self._editor(ctx, c)
        else:
            self._list(ctx, c)

    def _list(self, ctx: AppContext, c: Canvas) -> None:
        notes = list(reversed(ctx.data["notes"]))
        top = ctx.content[1] + TITLE_BAR_H
        th = c.theme

        def draw(y: float) -> None:
            y += 20
            for note in notes:
                card = (40, y, c.width - 40, y + CARD_H - 30)
                c.rect(card, fill=th.surface, radius=30, outline=th.divider)
                # as Keep's cards: a long title wraps to a second line, the body fills what is left
                titles = wrap(c, note["title"] or "(untitled)", 48, c.width - 160, bold=True)
                shown = _fit(titles, 2)
                for i, line in enumerate(shown):
                    c.text((80, y + 35 + i * 62), line, size=48, bold=True, max_width=c.width - 160)
                body_top = y + 35 + len(shown) * 62 + 12
                preview = note["body"].replace("\n", " ")
                if preview:
                    lines = _fit(wrap(c, preview, 38, c.width - 160), 3 - len(shown))
                    for i, line in enumerate(lines):
                        c.text((80, body_top + i * 50), line, size=38, color=th.text_secondary,
                               max_width=c.width - 160)
                c.on_tap(card, lambda n=note: self.open(ctx, n))
                y += CARD_H

        if not notes:
            c.text((540, top + 500), "No notes yet", size=48, color=th.text_secondary, anchor="mm")
            c.text((540, top + 580), "Tap + to write one", size=38, color=th.text_secondary, anchor="mm")
        scroll_list(c, ctx, top, len(notes) * CARD_H + 300, draw)
        title_bar(c, ctx, "Notes", back=False, actions=[("magnifier", "search notes", lambda: None)])
        fab(c, ctx, "plus", "orange", "orange plus button: new note", lambda: self.open(ctx, None))

    def open(self, ctx: AppContext, note: dict[str, Any] | None) -> None:
        fields = {"title": note["title"], "body": note["body"]} if note else {"title": "", "body": ""}
        ctx.push({"view": "edit", "note_id": note["id"] if note else None, "fields": fields})
        if note is None:
            ctx.focus("title")

    def _editor(self, ctx: AppContext, c: Canvas) -> None:
        top = ctx.content[1] + TITLE_BAR_H
        bottom = ctx.content[3]
        text_field(c, ctx, (40, top + 20, c.width - 40, top + 160), "title", "Title", size=56, bold=True,
                   border=False)
        text_field(c, ctx, (40, top + 180, c.width - 40, max(top + 300, bottom - 40)), "body", "Note",
                   multiline=True, border=False)
        actions = [("trash", "delete note", lambda: self.delete(ctx)), ("check", "save", lambda: self.save(ctx))]
        title_bar(c, ctx, "Edit note" if ctx.view.get("note_id") else "New note", actions=actions)

    def save(self, ctx: AppContext) -> None:
        """Store the editor's note (unless empty) and leave the editor."""
        view = ctx.view
        title, body = ctx.field("title").strip(), ctx.field("body").rstrip()
        notes = ctx.data["notes"]
        now = ctx.clock.isoformat()
        existing = next((n for n in notes if n["id"] == view.get("note_id")), None)
        if existing is not None:
            if title or body:
                existing.update(title=title, body=body, modified=now)
            else:
                notes.remove(existing)
        elif title or body:
            add_record(ctx.data, "notes", title=title, body=body, created=now, modified=now)
        ctx.finish()

    def delete(self, ctx: AppContext) -> None:
        note_id = ctx.view.get("note_id")
        ctx.data["notes"] = [n for n in ctx.data["notes"] if n["id"] != note_id]
        ctx.finish()

    def on_back(self, ctx: AppContext) -> bool:
        if ctx.view["view"] == "edit":
            self.save(ctx)
            return True
        return False

    def on_enter(self, ctx: AppContext, field: str) -> None:
        if field == "title":
            ctx.focus("body")
        else:
            super().on_enter(ctx, field)
