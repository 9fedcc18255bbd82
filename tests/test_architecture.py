# SPDX-License-Identifier: Apache-2.0
"""The house by stages, checked: hdbbench/__init__.py names the stages, pyproject.toml's
[tool.importlinter] orders them, and these tests hold the code to both.

- `lint-imports` keeps every contract (a stage imports only the stages below it; backends import no
  stage above them; each backend is its own folder).
- An import graph over *every* import of hdbbench/ (those inside functions and under TYPE_CHECKING
  too, which import-linter also counts) has no cycle between modules.
- Imports inside functions are kept only for a heavy optional dependency, with a comment saying so
  (PyTango, the database drivers, YAML; the command line defers the report stage, which loads
  matplotlib, to the commands that write a report).
- At most 8 modules stay at the package's root; no backend or database server is named outside
  backends/ and stack/servers/.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from hdbbench.backends.registry import REGISTRY
from hdbbench.stack.servers.registry import SERVER_KINDS

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "hdbbench"
# Names that are also ordinary words of the code ("local" hosts, "null" values, the "tango" host):
# only the database engines' and their servers' names are checked.
# Published studies name engines in prose ("TimescaleDB", parts/disk/reference.py): identifiers only.
ORDINARY_WORDS = {"local", "null", "tango"}


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return modules


def _imported(module: str, path: Path, node: ast.Import | ast.ImportFrom, known: dict[str, Path]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
            package = package[:len(package) - node.level + 1]
            base = ".".join(package + ([node.module] if node.module else []))
        targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
    for target in targets:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != module:
            yield target


def _import_graph() -> dict[str, set[str]]:
    known = _modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[name].update(_imported(name, path, node, known))
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_lint_imports_keeps_every_contract() -> None:
    done = subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"], cwd=REPO,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_no_import_cycle_between_modules_over_every_import() -> None:
    assert _cycles(_import_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The check above can fail: a graph with a cycle beside an acyclic part gives that cycle."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]


def _imports_in_functions(path: Path) -> Iterator[tuple[int, str, str]]:
    lines = path.read_text().splitlines()
    for node in ast.walk(ast.parse("\n".join(lines))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    module = inner.module if isinstance(inner, ast.ImportFrom) else inner.names[0].name
                    if isinstance(inner, ast.ImportFrom) and inner.level:
                        module = "hdbbench"
                    context = lines[inner.lineno - 1] + " " + lines[inner.lineno - 2]
                    yield inner.lineno, module or "", context


def test_imports_inside_functions_only_defer_a_heavy_optional_dependency() -> None:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, module, context in _imports_in_functions(path):
            where = f"{path.relative_to(REPO)}:{line} {module}"
            if module.split(".")[0] == "hdbbench" and not (module.startswith("hdbbench.report")
                                                           and path.parent == PACKAGE / "cli"):
                wrong.append(f"{where}: an hdbbench module (import it at the top)")
            elif "deferred" not in context:
                wrong.append(f"{where}: no comment saying why it is deferred")
    assert wrong == []


def test_at_most_eight_modules_at_the_package_root() -> None:
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= 8, root


def _string_constants(tree: ast.AST) -> Iterator[tuple[int, str]]:
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value


def test_no_backend_or_server_named_outside_their_folders() -> None:
    names = ({entry.name for entry in REGISTRY} | {kind.name for kind in SERVER_KINDS}) - ORDINARY_WORDS
    rooms = (PACKAGE / "backends", PACKAGE / "stack" / "servers")
    named = [f"{path.relative_to(REPO)}:{line} {value!r}"
             for path in sorted(PACKAGE.rglob("*.py")) if not any(room in path.parents for room in rooms)
             for line, value in _string_constants(ast.parse(path.read_text())) if value in names]
    assert named == []
