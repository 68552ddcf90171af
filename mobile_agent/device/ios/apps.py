"""Bundle ids of iPhone apps, by the names people call them: Open App's first step on an
iPhone (``IosDevice.resolve_app_label``). A name the table does not know is looked for
among the home screen's icons in the page source, then on the screen
(``mobile_agent.operations.open_app``).

Apple's built-in apps (``APPLE_APP_NAMES``): the ids from Apple's Platform Deployment guide,
"Bundle IDs for native iPhone and iPad apps" (support.apple.com/guide/deployment/depece748c41;
its localized editions as mirrored by petarov/apple-bundle-ids ``localized/*_README.md``);
the names are each app's home-screen name in English, Chinese (simplified), German, French,
Spanish and Japanese, plus a few everyday words, as the Android alias table
(``mobile_agent/apps/aliases.toml``) keeps them.

Common third-party apps (``THIRD_PARTY_APP_NAMES``): each id with the published source it
was read from (``SOURCES``; the key is the last item of each row), never guessed; the names
in English and Chinese (and the app's own name where a market calls it otherwise), as the
Android alias table has them. An app whose iOS id no named source gave is not here (its
name goes on to the home screen). Matched after case-folding and removing spaces and
punctuation.

May import: the standard library.
"""

from __future__ import annotations

import unicodedata

__all__ = ["APPLE_APPS", "APPLE_APP_NAMES", "BUNDLE_IDS", "IOS_APPS", "SOURCES", "THIRD_PARTY_APP_NAMES", "bundle_for_label"]

# where each id was read (the key closes each row of the tables below)
SOURCES: dict[str, str] = {
    "apple": "Apple Platform Deployment guide, 'Bundle IDs for native iPhone and iPad apps' "
             "(support.apple.com/guide/deployment/depece748c41)",
    "midscene": "web-infra-dev/midscene packages/ios/src/appNameMapping.ts @ 45f476ecef002af6d3fb33493c5b141391929116 "
                "(the iOS app table Midscene took from zai-org/Open-AutoGLM)",
    "telegram": "TelegramMessenger/Telegram-iOS build-system/appstore-configuration.json @ "
                "99d63e732830971ef2fe4f7e6dd0f99c630dd7d5 (the App Store build's bundle_id, appstore_id 686449807)",
    "upgrader": "larryaasen/upgrader test/mock_itunes_client.dart @ 828ba88b1238071cf9bcdc93b178a17a6262a697 "
                "(the App Store lookup of Google Maps, id 585027354)",
    "appscan": "leverdeterre/shakeMyApps-appScan-blog _pages/ios/id/<bundle id>.md and _pages/ios_apps/<bundle id>.md "
               "(each page quotes the App Store app's BundleId and App Name)",
}

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
    ("com.apple.facetime", ("FaceTime",)),
    ("com.apple.Passbook", ("Wallet", "钱包", "Apple Wallet")),
    ("com.apple.iBooks", ("Books", "Apple Books", "图书", "Bücher", "Livres", "Libros", "ブック")),
    ("com.apple.podcasts", ("Podcasts", "播客")),
    ("com.apple.findmy", ("Find My", "查找", "Wo ist?", "Localiser", "Buscar", "探す")),
    ("com.apple.shortcuts", ("Shortcuts", "快捷指令", "Kurzbefehle", "Raccourcis", "Atajos", "ショートカット")),
)

# bundle id, names, source key (SOURCES)
THIRD_PARTY_APP_NAMES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("com.google.chrome.ios", ("Chrome", "Google Chrome", "谷歌浏览器"), "midscene"),
    ("com.google.Gmail", ("Gmail", "Google Mail", "谷歌邮箱"), "midscene"),
    ("com.google.ios.youtube", ("YouTube", "油管"), "midscene"),
    ("com.google.Maps", ("Google Maps", "谷歌地图", "Google 地图", "Google マップ"), "upgrader"),
    ("com.google.GoogleMobile", ("Google", "Google Search", "谷歌", "谷歌搜索"), "appscan"),
    ("net.whatsapp.WhatsApp", ("WhatsApp", "WhatsApp Messenger"), "midscene"),
    ("net.whatsapp.WhatsAppSMB", ("WhatsApp Business",), "appscan"),
    ("com.burbn.instagram", ("Instagram", "IG", "照片墙"), "midscene"),
    ("com.facebook.Facebook", ("Facebook", "FB", "脸书"), "midscene"),
    ("com.facebook.Messenger", ("Messenger", "Facebook Messenger"), "midscene"),
    ("com.zhiliaoapp.musically", ("TikTok", "TikTok国际版"), "midscene"),
    ("com.ss.iphone.ugc.Aweme", ("Douyin", "抖音"), "midscene"),
    ("com.spotify.client", ("Spotify", "声破天"), "midscene"),
    ("com.atebits.Tweetie2", ("X", "Twitter", "推特"), "midscene"),
    ("ph.telegra.Telegraph", ("Telegram", "电报"), "telegram"),
    ("com.tencent.xin", ("WeChat", "Weixin", "微信"), "midscene"),
    ("com.netflix.Netflix", ("Netflix", "网飞", "奈飞"), "midscene"),
    ("com.linkedin.LinkedIn", ("LinkedIn", "领英"), "midscene"),
    ("jp.naver.line", ("LINE",), "midscene"),
    ("org.mozilla.ios.Firefox", ("Firefox", "火狐", "火狐浏览器"), "midscene"),
    ("com.alipay.iphoneclient", ("Alipay", "支付宝"), "midscene"),
    ("com.taobao.taobao4iphone", ("Taobao", "淘宝"), "midscene"),
    ("com.xingin.discover", ("Xiaohongshu", "RedNote", "小红书"), "midscene"),
    ("com.sina.weibo", ("Weibo", "微博"), "midscene"),
    ("tv.danmaku.bilianime", ("Bilibili", "哔哩哔哩", "B站"), "midscene"),
    ("com.ubercab.UberClient", ("Uber", "优步"), "appscan"),
    ("com.amazon.Amazon", ("Amazon", "Amazon Shopping", "亚马逊", "亚马逊购物"), "appscan"),
    ("com.amazon.mp3.AmazonCloudPlayer", ("Amazon Music", "亚马逊音乐"), "appscan"),
    ("com.alibaba.sourcing", ("Alibaba.com", "Alibaba", "阿里巴巴"), "appscan"),
    ("com.microsoft.Office.Outlook", ("Outlook", "Microsoft Outlook", "微软邮箱"), "appscan"),
    ("com.microsoft.skype.teams", ("Teams", "Microsoft Teams"), "appscan"),
    ("us.zoom.videomeetings", ("Zoom", "Zoom Workplace", "Zoom Meetings"), "appscan"),
    ("com.tinyspeck.chatlyio", ("Slack",), "appscan"),
    ("com.weather.TWC", ("The Weather Channel", "Weather Channel"), "appscan"),
)


def _key(name: str) -> str:
    folded = unicodedata.normalize("NFKC", name).casefold()
    return "".join(ch for ch in folded if ch.isalnum())


APPLE_APPS: dict[str, str] = {_key(name): bundle for bundle, names in APPLE_APP_NAMES for name in names}
IOS_APPS: dict[str, str] = {
    **APPLE_APPS,
    **{_key(name): bundle for bundle, names, _ in THIRD_PARTY_APP_NAMES for name in names},
}


BUNDLE_IDS = frozenset(IOS_APPS.values())  # every listed id: Open App by id, and a script's platform (apps.platforms)


def bundle_for_label(label: str) -> str | None:
    """The bundle id of the app named ``label`` (any listed name, any listed language), or
    ``label`` itself when it is a listed bundle id (``Open App (com.apple.Preferences)``); None
    otherwise."""
    if label.strip() in BUNDLE_IDS:
        return label.strip()
    return IOS_APPS.get(_key(label))
