"""Bundle ids of Apple's built-in iPhone apps, by the names people call them.

The ids: Apple's Platform Deployment guide, "Bundle IDs for native iPhone and iPad apps"
(support.apple.com/guide/deployment/depece748c41). The names: each app's name on the
home screen in English, Chinese (simplified), German, French, Spanish and Japanese, plus
a few everyday words, as the Android alias table (``mobile_agent/apps/aliases.toml``)
keeps them. Matched after case-folding and removing spaces and punctuation.

Not here yet (issue 33): third-party apps (their bundle ids), more languages.

May import: the standard library.
"""

from __future__ import annotations

import unicodedata

__all__ = ["APPLE_APPS", "APPLE_APP_NAMES", "bundle_for_label"]

APPLE_APP_NAMES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("com.apple.Preferences", ("Settings", "System Settings", "设置", "Einstellungen", "Réglages", "Ajustes", "設定")),
    ("com.apple.mobilesafari", ("Safari", "Browser", "Web Browser", "浏览器")),
    ("com.apple.mobileslideshow", ("Photos", "Gallery", "照片", "相册", "Fotos", "写真")),
    ("com.apple.camera", ("Camera", "相机", "Kamera", "Appareil photo", "Cámara", "カメラ")),
    ("com.apple.MobileSMS", ("Messages", "SMS", "iMessage", "信息", "短信", "Nachrichten", "Mensajes", "メッセージ")),
    ("com.apple.mobilemail", ("Mail", "Email", "邮件", "メール")),
    ("com.apple.Maps", ("Maps", "Apple Maps", "地图", "Karten", "Plans", "Mapas", "マップ")),
    ("com.apple.mobilecal", ("Calendar", "日历", "Kalender", "Calendrier", "Calendario", "カレンダー")),
    ("com.apple.mobiletimer", ("Clock", "Alarm", "时钟", "闹钟", "Uhr", "Horloge", "Reloj", "時計")),
    ("com.apple.mobilenotes", ("Notes", "备忘录", "Notizen", "Notas", "メモ")),
    ("com.apple.reminders", ("Reminders", "提醒事项", "Erinnerungen", "Rappels", "Recordatorios", "リマインダー")),
    ("com.apple.AppStore", ("App Store", "应用商店")),
    ("com.apple.mobilephone", ("Phone", "Dialer", "电话", "Telefon", "Téléphone", "Teléfono", "電話")),
    ("com.apple.MobileAddressBook", ("Contacts", "通讯录", "联系人", "Kontakte", "Contactos", "連絡先")),
    ("com.apple.Music", ("Music", "Apple Music", "音乐", "Musik", "Musique", "Música", "ミュージック")),
    ("com.apple.Health", ("Health", "健康", "Santé", "Salud", "ヘルスケア")),
    ("com.apple.weather", ("Weather", "天气", "Wetter", "Météo", "Tiempo", "天気")),
    ("com.apple.calculator", ("Calculator", "计算器", "Rechner", "Calculette", "Calculadora", "計算機")),
    ("com.apple.DocumentsApp", ("Files", "文件", "Dateien", "Fichiers", "Archivos", "ファイル")),
)


def _key(name: str) -> str:
    folded = unicodedata.normalize("NFKC", name).casefold()
    return "".join(ch for ch in folded if ch.isalnum())


APPLE_APPS: dict[str, str] = {_key(name): bundle for bundle, names in APPLE_APP_NAMES for name in names}


def bundle_for_label(label: str) -> str | None:
    """The bundle id of the Apple app named ``label`` (any listed language), or None."""
    return APPLE_APPS.get(_key(label))
