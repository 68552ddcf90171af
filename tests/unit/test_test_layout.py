"""The suite's own layout: shared helpers reach the tests as fixtures, never as imports between test modules.

A fixture defined in a helper module (tests/llm_fixtures.py, tests/server_fixtures.py, ...) is served
to every test by the root conftest's ``pytest_plugins``; a test module that imports it by name
(``from tests.llm_fixtures import llm_server  # noqa: F401``) registers it a second time and hides
where it comes from. A test module imported by another one runs its tests' module-level code in a
stranger's collection. Plain helper functions and classes stay importable.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _is_fixture(node: ast.stmt) -> bool:
    if not isinstance(node, ast.FunctionDef):
        return False
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if ast.unparse(target) in ("pytest.fixture", "fixture"):
            return True
    return False


def _is_test_module(name: str) -> bool:
    leaf = name.rsplit(".", 1)[-1]
    return leaf.startswith("test_") or leaf == "conftest"


def _trees() -> dict[str, ast.Module]:
    return {_module_name(path): ast.parse(path.read_text(), str(path)) for path in sorted(TESTS.rglob("*.py"))}


def _fixture_modules(trees: dict[str, ast.Module]) -> dict[str, set[str]]:
    """Helper modules (neither test modules nor conftests) that define fixtures -> their function names."""
    found: dict[str, set[str]] = {}
    for name, tree in trees.items():
        if _is_test_module(name):
            continue
        fixtures = {node.name for node in tree.body if _is_fixture(node) and isinstance(node, ast.FunctionDef)}
        if fixtures:
            found[name] = fixtures
    return found


def _imports(tree: ast.Module, module: str) -> list[tuple[int, str, str | None]]:
    """(line, imported module, imported name or None) for every import in the module, nested ones too."""
    package = module.rsplit(".", 1)[0]
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join([*base, source] if source else base)
            for alias in node.names:
                found.append((node.lineno, source, alias.name))
    return found


def _violations(trees: dict[str, ast.Module]) -> list[str]:
    fixtures = _fixture_modules(trees)
    problems = []
    for name, tree in trees.items():
        for line, source, imported in sorted(_imports(tree, name), key=lambda found: found[0]):
            where = f"{name.replace('.', '/')}.py:{line}"
            if imported is not None and imported in fixtures.get(source, set()):
                problems.append(f"{where} imports the fixture {imported} from {source}")
            for target in (source, f"{source}.{imported}" if imported else source):
                if target in trees and _is_test_module(target):
                    problems.append(f"{where} imports the test module {target}")
                    break
    return problems


def _plugins(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["pytest_plugins"]:
            value = ast.literal_eval(node.value)
            assert isinstance(value, list | tuple)
            return [str(v) for v in value]
    return []


def test_no_test_module_imports_a_fixture_or_another_test_module() -> None:
    problems = _violations(_trees())
    assert not problems, "\n".join(problems)


def test_every_helper_module_with_fixtures_is_a_plugin_of_the_root_conftest() -> None:
    trees = _trees()
    plugins = _plugins(trees["tests.conftest"])
    missing = sorted(set(_fixture_modules(trees)) - set(plugins))
    assert not missing, f"tests/conftest.py pytest_plugins lacks {missing}: their fixtures reach no test"


def test_the_checks_see_a_fixture_import_and_a_test_module_import() -> None:
    # the checker itself, on a made-up suite: each kind of import it must refuse, and one it must allow
    helper = ast.parse("import pytest\n@pytest.fixture\ndef llm_server():\n    yield 1\ndef chat_text(): ...\n")
    user = ast.parse(
        "from tests.llm_fixtures import chat_text, llm_server\n"
        "def test_x():\n    from tests.unit.test_other import CASES\n"
        "import tests.unit.conftest\n"
    )
    trees = {
        "tests.llm_fixtures": helper,
        "tests.unit.test_other": ast.parse("CASES = []\n"),
        "tests.unit.conftest": ast.parse(""),
        "tests.unit.test_user": user,
    }
    assert _violations(trees) == [
        "tests/unit/test_user.py:1 imports the fixture llm_server from tests.llm_fixtures",
        "tests/unit/test_user.py:3 imports the test module tests.unit.test_other",
        "tests/unit/test_user.py:4 imports the test module tests.unit.conftest",
    ]
