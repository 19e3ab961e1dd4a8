"""The package's import structure: no import cycles between modules or between top-level packages, and no
module reaching for another module's private names. Imports inside functions count too: a lazy import
hides a cycle from the interpreter, not from a reader."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = "kerneljudge"


def _module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package (problem and example data excluded)."""
    root = SRC / PACKAGE
    modules = {}
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(SRC).with_suffix("")
        if "data" in relative.parts[1:2]:
            continue
        parts = list(relative.parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of `name` that is a module of the package (a.b.c may name a.b's attribute c)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def _imports(module: str, path: Path, modules: dict[str, Path]):
    """(imported module, names taken from it, line) for every import of the package in this file, and for
    every `alias._name` read through a module alias the file imported."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _resolve(alias.name, modules)
                if target:
                    if alias.asname and target == alias.name:
                        aliases[alias.asname] = target
                    yield target, (), node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if not base.startswith(PACKAGE):
                continue
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in modules:
                    aliases[alias.asname or alias.name] = submodule
                    yield submodule, (), node.lineno
                else:
                    target = _resolve(base, modules)
                    if target:
                        yield target, (alias.name,), node.lineno
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            yield aliases[node.value.id], (node.attr,), node.lineno


@pytest.fixture(scope="module")
def graph():
    modules = _module_files()
    edges: dict[str, dict[str, int]] = {name: {} for name in modules}
    private = []
    for module, path in modules.items():
        for target, names, line in _imports(module, path, modules):
            if target == module:
                continue
            # A package's __init__ re-exporting its own modules is not an edge a reader must follow.
            if not (path.name == "__init__.py" and target.startswith(module + ".")):
                edges[module].setdefault(target, line)
            for name in names:
                if name.startswith("_") and not name.startswith("__"):
                    private.append(f"{module}:{line} imports {target}.{name}")
    return edges, private


def _cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found = []
    counter = 0
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(edges.get(successor, {}))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
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


def _top_package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


def _describe(component: list[str], edges: dict[str, dict[str, int]]) -> str:
    members = set(component)
    links = [f"{a} -> {b}" for a in component for b in edges.get(a, {}) if b in members]
    return "; ".join(links)


def test_no_module_import_cycles(graph):
    edges, _ = graph
    cycles = _cycles(edges)
    assert not cycles, "import cycles between modules:\n" + "\n".join(_describe(c, edges) for c in cycles)


def test_no_package_import_cycles(graph):
    edges, _ = graph
    packages: dict[str, dict[str, int]] = {}
    witnesses: dict[tuple[str, str], str] = {}
    for module, targets in edges.items():
        if module.endswith(".__main__"):
            continue   # an entry point (python -m ...) is imported by nobody, so it cannot close a cycle
        source = _top_package(module)
        packages.setdefault(source, {})
        for target, line in targets.items():
            destination = _top_package(target)
            if destination != source and destination != PACKAGE:
                packages[source].setdefault(destination, line)
                witnesses.setdefault((source, destination), f"{module}:{line} -> {target}")
    cycles = _cycles(packages)
    report = []
    for component in cycles:
        members = set(component)
        report += [witnesses[(a, b)] for a in component for b in packages[a] if b in members]
    assert not cycles, "import cycles between packages:\n" + "\n".join(report)


def test_no_private_names_across_modules(graph):
    _, private = graph
    assert not private, "private names imported from another module:\n" + "\n".join(private)


def test_cycle_finder_finds_a_cycle():
    edges = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert _cycles(edges) == [["a", "b", "c"]]
    assert _cycles({"a": {"b": 1}, "b": {}}) == []


def test_every_package_says_what_it_holds():
    """Each code folder is a package whose __init__ docstring says what lives there and what it may import."""
    missing = [f"{folder.relative_to(SRC)} (no __init__.py)" for folder in sorted((SRC / PACKAGE).rglob("*"))
               if folder.is_dir() and folder.name != "__pycache__" and "data" not in folder.relative_to(SRC).parts[1:2]
               and any(folder.glob("*.py")) and not (folder / "__init__.py").exists()]
    for init in sorted((SRC / PACKAGE).rglob("__init__.py")):
        docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        if "import" not in docstring.lower():
            missing.append(str(init.relative_to(SRC)))
    assert not missing, "packages whose __init__ docstring does not say what they may import:\n" + "\n".join(
        missing
    )


def _allowed(docstring: str) -> set[str] | None:
    """The packages a top-level package's docstring says it may import ("May import: a, b. ..."); None: all."""
    for line in docstring.splitlines():
        if line.startswith("May import:"):
            claim = re.sub(r"\(.*?\)", "", line[len("May import:"):]).split(".")[0]
            if claim.strip().startswith("every"):
                return None
            return {word.strip(" ,()") for word in claim.split(",")} - {"nothing else of kerneljudge"}
    raise AssertionError(f"no 'May import:' line in {docstring[:60]!r}")


def test_packages_import_only_what_their_docstring_allows(graph):
    edges, _ = graph
    broken = []
    for init in sorted((SRC / PACKAGE).glob("*/__init__.py")):
        package = init.parent.name
        allowed = _allowed(ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or "")
        if allowed is None:
            continue
        for module, targets in edges.items():
            if module.split(".")[1:2] != [package] or module.endswith(".__main__"):
                continue
            for target, line in targets.items():
                other = target.split(".")[1] if target.count(".") else PACKAGE
                if other not in (package, PACKAGE) and other not in allowed:
                    broken.append(f"{module}:{line} imports {target} ({package} may import: {sorted(allowed)})")
    assert not broken, "imports across the layers the package docstrings state:\n" + "\n".join(broken)


def test_public_names_resolve():
    import kerneljudge

    for name in kerneljudge.__all__:
        assert getattr(kerneljudge, name) is not None, name
