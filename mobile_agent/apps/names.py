"""Name → package knowledge that needs no phone: the alias table (``aliases.toml``) and
the package-name heuristic.

May import: the standard library only.
"""

from __future__ import annotations

import difflib
import functools
import importlib.resources
import re
import sys
import unicodedata

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["alias_packages", "heuristic_matches", "known_packages", "normalize_name", "package_tokens"]

# Words that say nothing about which app is meant ("Google Maps", "Simple Gallery Pro",
# "Joplin app"): they may match, but never decide.
_FILLER_WORDS = frozenset(
    {"app", "application", "the", "google", "android", "pro", "simple", "lite", "free", "my", "mobile", "client"}
)
# Package parts every vendor uses: they never carry the app's name.
_GENERIC_TOKENS = frozenset(
    {
        "com",
        "org",
        "net",
        "io",
        "me",
        "de",
        "tv",
        "co",
        "ca",
        "in",
        "android",
        "app",
        "apps",
        "google",
        "mobile",
        "client",
        "activity",
        "main",
    }
)


def normalize_name(text: str) -> str:
    """Case-folded, NFKC, punctuation and ``app`` suffixes removed: ``"Google  Maps!"``
    and ``"google maps"`` meet."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"[^\w\s+]", " ", text)
    words = text.split()
    while len(words) > 1 and words[-1] in ("app", "application"):
        words.pop()
    return " ".join(words)


@functools.lru_cache(maxsize=1)
def _alias_index() -> dict[str, tuple[str, ...]]:
    data = tomllib.loads(
        importlib.resources.files("mobile_agent.apps").joinpath("aliases.toml").read_text("utf-8")
    )
    index: dict[str, list[str]] = {}
    for entry in data["app"]:
        for name in entry["names"]:
            key = normalize_name(name)
            bucket = index.setdefault(key, [])
            bucket.extend(p for p in entry["packages"] if p not in bucket)
    return {k: tuple(v) for k, v in index.items()}


def known_packages() -> frozenset[str]:
    """Every Android package the alias table lists."""
    return frozenset(p for packages in _alias_index().values() for p in packages)


def alias_packages(label: str) -> tuple[str, ...]:
    """The packages the alias table knows for ``label``, preferred first (empty if none)."""
    key = normalize_name(label)
    index = _alias_index()
    found = index.get(key)
    if found is None and key.replace(" ", "") != key:
        found = index.get(key.replace(" ", ""))
    if found is None and len(key) >= 5:
        # a near spelling of a listed name ("google map", "google email"); short names
        # ("X", "QQ", "Meet") only match exactly
        close = difflib.get_close_matches(key, [k for k in index if len(k) >= 5], n=1, cutoff=0.88)
        found = index[close[0]] if close else None
    return found or ()


def package_tokens(package: str) -> list[str]:
    """The name-bearing parts of a package: ``com.simplemobiletools.gallery.pro`` →
    ``["simplemobiletools", "gallery", "pro"]`` (camelCase and ``_`` split too)."""
    tokens: list[str] = []
    for part in package.split("."):
        for piece in re.split(r"_|(?<=[a-z])(?=[A-Z])", part):
            piece = piece.lower()
            if piece and piece not in _GENERIC_TOKENS:
                tokens.append(piece)
    return tokens


def _covered_words(words: list[str], tokens: list[str]) -> set[int]:
    """Indexes of ``words`` that the tokens spell: a token equal to a run of consecutive
    words glued together (``smsmessenger`` ← sms messenger), or starting with a word of
    at least three letters (``simplemobiletools`` ← simple), or ending with one of five
    or more (``googlevoice`` ← voice)."""
    covered: set[int] = set()
    for token in tokens:
        for start in range(len(words)):
            glued = ""
            for end in range(start, len(words)):
                glued += words[end]
                if glued == token:
                    covered.update(range(start, end + 1))
                    break
                if not token.startswith(glued):
                    break
            else:
                continue
        for i, word in enumerate(words):
            if (len(word) >= 3 and token.startswith(word)) or (len(word) >= 5 and token.endswith(word)):
                covered.add(i)
    return covered


def heuristic_matches(label: str, packages: list[str]) -> list[tuple[float, str]]:
    """Packages whose name spells ``label``, best first, as ``(score, package)``.

    Score 1.0 (+ up to 0.01 for the filler words it also spells): every distinctive word
    of the label is in the package name (``Retro Music`` → ``code.name.monkey.retromusic``);
    less when only some are. Filler words (google, app, pro, simple…) decide nothing alone. Labels
    without Latin letters (Chinese names) never match here: the alias table and the
    APKs' own labels cover them.
    """
    normalized = normalize_name(label)
    words = [w for w in re.split(r"[\s_]+", normalized) if w]
    if not words or not any("a" <= ch <= "z" for ch in normalized):
        return []
    distinctive = [i for i, w in enumerate(words) if w not in _FILLER_WORDS] or list(range(len(words)))
    scored: list[tuple[float, float, str]] = []
    for package in packages:
        tokens = package_tokens(package)
        if not tokens:
            continue
        covered = _covered_words(words, tokens)
        hits = sum(1 for i in distinctive if i in covered)
        if hits:
            # filler words break ties: "Simple Calendar Pro" is simplemobiletools.calendar.pro
            scored.append((hits / len(distinctive), len(covered) / len(words), package))
    scored.sort(key=lambda item: (-item[0], -item[1], len(package_tokens(item[2])), item[2]))
    return [(round(score + tie / 100, 4), package) for score, tie, package in scored]
