"""Labels read from the installed APKs themselves, cached per device.

Real phones print ``nonLocalizedLabel=null`` for almost every launcher activity: the
label lives in the APK's ``resources.arsc``. ``pm path PKG`` names the APK; it is pulled
over the sync protocol (adbutils) and parsed with **pyaxmlparser** (a small pure-Python
AXML/ARSC parser from PyPI, chosen over androguard, which pulls in a large analysis
stack, and apkutils, which is less maintained). Every locale's label is kept, so
``微信`` finds WeChat on an English phone. The cache is a JSON file per device, keyed
``package@versionCode``: an app updated to a new version is read again.

May import: pyaxmlparser (lazily), adbutils, the standard library, ``mobile_agent.errors``.
"""

from __future__ import annotations

import io
import json
import logging
import re
import threading
import zipfile
from pathlib import Path
from typing import Any

from mobile_agent.errors import DeviceError

__all__ = ["ApkLabelCache", "labels_from_apk"]

log = logging.getLogger(__name__)

MAX_APK_BYTES = 150 * 1024 * 1024  # larger base.apks are skipped: the pull would take too long
_VERSION_RE = re.compile(r"^package:(\S+) versionCode:(\d+)", re.M)


def labels_from_apk(data: bytes) -> tuple[str | None, list[str]]:
    """``(package, labels)`` of an APK's bytes: the application label (or the main
    activity's), resolved through ``resources.arsc`` in every configuration, default
    locale first. Raises ``ValueError`` for bytes that are no APK."""
    try:
        zipfile.ZipFile(io.BytesIO(data)).getinfo("AndroidManifest.xml")
    except (zipfile.BadZipFile, KeyError) as exc:
        raise ValueError(f"not an APK: {exc}") from exc
    logging.getLogger("pyaxmlparser").setLevel(logging.ERROR)  # it warns loudly on odd resources
    from pyaxmlparser import APK

    apk = APK(data, raw=True)
    package = apk.get_package() or None
    raw = apk.get_attribute_value("application", "label")
    if raw is None:
        mains = list(apk.get_main_activities())
        raw = apk.get_attribute_value("activity", "label", name=mains[0]) if mains else None
    labels: list[str] = []
    if raw and raw.startswith("@"):
        resources = apk.get_android_resources()
        if resources is not None:
            try:
                res_id, _ = resources.parse_id(raw)
                default = apk.get_app_name()
                if default and not default.startswith("@"):
                    labels.append(default)
                for _config, value in resources.get_resolved_res_configs(res_id):
                    if value and value not in labels:
                        labels.append(value)
            except (ValueError, KeyError, IndexError, AttributeError) as exc:
                log.debug("unresolvable label %s in %s: %s", raw, package, exc)
    elif raw:
        labels.append(raw)
    return package, labels


class ApkLabelCache:
    """Launcher labels of one device's apps, read from their APKs once per version.

    ``path``: the JSON cache file (None: in memory only)."""

    def __init__(self, device: Any, path: Path | None) -> None:
        self.device = device
        self.path = path
        self._lock = threading.Lock()
        self._entries: dict[str, list[str]] = {}
        if path is not None and path.is_file():
            try:
                loaded = json.loads(path.read_text("utf-8"))
                if isinstance(loaded, dict):
                    self._entries = {
                        str(k): [str(x) for x in v] for k, v in loaded.items() if isinstance(v, list)
                    }
            except (OSError, ValueError) as exc:
                log.warning("ignoring the unreadable app label cache %s: %s", path, exc)

    def versions(self) -> dict[str, str]:
        """``package → versionCode`` (``pm list packages --show-versioncode``, Android 9+;
        older phones answer without versions: then ``?``, never cached on disk)."""
        out = self.device.shell(["pm", "list", "packages", "--show-versioncode"])
        found = dict(_VERSION_RE.findall(out))
        if not found:
            for line in out.splitlines():
                if line.startswith("package:"):
                    found[line[8:].split()[0]] = "?"
        return found

    def cached(self, package: str, version: str) -> list[str] | None:
        return self._entries.get(f"{package}@{version}")

    def labels(self, package: str, version: str) -> list[str]:
        """The labels of ``package`` at ``version``, from the cache or the APK."""
        key = f"{package}@{version}"
        with self._lock:
            if key in self._entries:
                return self._entries[key]
        labels = self._read(package)
        with self._lock:
            self._entries[key] = labels
            if version != "?":
                self._save()
        return labels

    def _read(self, package: str) -> list[str]:
        out = self.device.shell(["pm", "path", package])
        paths = [ln[8:].strip() for ln in out.splitlines() if ln.startswith("package:")]
        base = next((p for p in paths if p.endswith("/base.apk")), paths[0] if paths else None)
        if base is None:
            return []
        return self.read_labels_at(base, package)

    def read_labels_at(self, path: str, package: str | None = None) -> list[str]:
        """The labels of the APK at ``path`` on the phone, pulled over the sync protocol;
        [] when it cannot be read (too big, gone, not an APK): a label is optional."""
        what = package or path
        try:
            sync = self.device.adbutils_device.sync
            size = sync.stat(path).size
            if not 0 < size <= MAX_APK_BYTES:
                log.info("not reading %s's label: its APK is %d bytes", what, size)
                return []
            data = sync.read_bytes(path)
            _, labels = labels_from_apk(data)
        except (ValueError, OSError, DeviceError) as exc:
            log.info("could not read the label of %s from %s: %s", what, path, exc)
            return []
        except Exception as exc:  # adbutils' AdbError and the parser's own errors: a label is optional
            log.info("could not read the label of %s from %s: %s: %s", what, path, type(exc).__name__, exc)
            return []
        return labels

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self._entries, ensure_ascii=False, sort_keys=True), "utf-8")
            tmp.replace(self.path)
        except OSError as exc:
            log.warning("could not write the app label cache %s: %s", self.path, exc)
