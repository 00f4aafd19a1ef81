"""One direction of dependency: the core package never reaches the distributed shell.

`memeval/` (suites, engines, runner, scoring, llm, store, report) must run, and be imported,
without `workers/` or Celery; what it needs from the farm comes in as protocols
(`memeval.llm.shared`). Only the top layer, which parses options and picks the farm, may
import the shell. The check reads every module's imports with `ast`, including those inside
functions and `TYPE_CHECKING` blocks, so a lazy import cannot slip through; a second check
imports every core module in a fresh interpreter and looks at what got loaded, so a chain of
imports through the top layer cannot either.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import memeval

PACKAGE = Path(memeval.__file__).resolve().parent
ROOT = PACKAGE.parent
SHELL = frozenset({"memeval_farm", "celery", "kombu", "flower"})
"""Top-level names only the top layer may import."""
TOP_LAYER = (
    "memeval.cli",
    "memeval.__main__",
    "memeval.api",
    "memeval.pytest_plugin",
)
"""The only modules allowed to import the shell: the command line (and its entry point), the
Python API it is a layer over, and the pytest plugin; each picks an executor for a run. The
run's lifecycle itself (`memeval.evaluation`) is core. Kept small on purpose."""
LAZY_REEXPORT = frozenset({"memeval"})
"""The package root may re-export the API lazily (inside a function, e.g. a module
`__getattr__`, or for type checkers only), so `import memeval.runner` still loads no shell."""


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def in_top_layer(module: str) -> bool:
    return any(module == top or module.startswith(f"{top}.") for top in TOP_LAYER)


def _deferred(tree: ast.Module) -> set[int]:
    """Ids of the nodes that do not run when the module loads: inside a function, or under
    `if TYPE_CHECKING:`."""
    scopes = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        or (isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"))
    ]
    return {id(inner) for scope in scopes for inner in ast.walk(scope) if inner is not scope}


def imported(source: str, module: str, *, is_package: bool) -> list[tuple[str, int, bool]]:
    """(absolute module name, line, runs on load) for every import in `source`, including
    `importlib.import_module("...")` and `__import__("...")` with a literal name."""
    tree = ast.parse(source)
    deferred = _deferred(tree)
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[str, int, bool]] = []
    for node in ast.walk(tree):
        on_load = id(node) not in deferred
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno, on_load) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.append((base, node.lineno, on_load))
            found += [(f"{base}.{alias.name}", node.lineno, on_load) for alias in node.names]
        elif isinstance(node, ast.Call) and node.args:
            func, first = node.func, node.args[0]
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__") and isinstance(first, ast.Constant):
                found.append((str(first.value), node.lineno, on_load))
    return found


def violations(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """What in `source` (the text of `module`) breaks the rule; empty for the top layer."""
    if in_top_layer(module):
        return []
    bad: list[str] = []
    for name, line, on_load in imported(source, module, is_package=is_package):
        if name.split(".")[0] in SHELL:
            bad.append(f"{module}:{line} imports {name}")
        elif in_top_layer(name) and (on_load or module not in LAZY_REEXPORT):
            bad.append(f"{module}:{line} imports the top layer {name}")
    return bad


def core_modules() -> list[tuple[str, Path]]:
    modules = [(module_name(p), p) for p in sorted(PACKAGE.rglob("*.py"))]
    return [(name, path) for name, path in modules if not in_top_layer(name)]


def test_no_core_module_imports_the_shell() -> None:
    modules = core_modules()
    assert len(modules) > 100  # the walk found the package, not an empty folder
    bad = [
        v
        for name, path in modules
        for v in violations(path.read_text(), name, is_package=path.name == "__init__.py")
    ]
    assert not bad, "the core reaches the shell:\n" + "\n".join(bad)


def test_importing_the_core_loads_no_shell() -> None:
    names = [name for name, _ in core_modules()]
    script = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(SHELL)!r}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"importing the core loaded: {done.stdout}"


def test_the_checker_flags_what_it_must() -> None:
    """Negative controls: each way of reaching the shell is caught, so the test above can fail."""
    cases = {
        "from memeval_farm.limiter import Limiter\n": "memeval_farm.limiter",
        "import celery\n": "celery",
        "def f():\n    from kombu import Connection\n": "kombu",
        "if TYPE_CHECKING:\n    from memeval_farm.budget import Budget\n": "memeval_farm.budget",
        "import importlib\nimportlib.import_module('memeval_farm.farm')\n": "memeval_farm.farm",
        "from memeval.cli.run import run\n": "memeval.cli.run",
    }
    for source, reached in cases.items():
        found = violations(source, "memeval.runner.sneaky")
        assert found, f"not flagged: {source!r}"
        assert any(v.endswith(reached) for v in found), found
    relative = violations("from ..cli import run\n", "memeval.runner.sneaky")
    assert "memeval.runner.sneaky:1 imports the top layer memeval.cli.run" in relative


def test_the_allow_list_is_the_top_layer_only() -> None:
    shell = "from memeval_farm.farm import run_on_farm\n"
    assert violations(shell, "memeval.cli.run") == []
    assert violations(shell, "memeval.api") == []
    assert violations(shell, "memeval.pytest_plugin") == []
    assert violations(shell, "memeval.cliche")  # a name that only starts like the top layer
    lazy = "def __getattr__(name):\n    from memeval.api import evaluate\n    return evaluate\n"
    assert violations(lazy, "memeval", is_package=True) == []
    typed = "if TYPE_CHECKING:\n    from memeval.api import evaluate\n"
    assert violations(typed, "memeval", is_package=True) == []
    assert violations(typed, "memeval.runner", is_package=True)  # only the root may
    assert violations("from memeval.api import evaluate\n", "memeval", is_package=True)
    assert violations(lazy.replace("memeval.api", "memeval_farm"), "memeval", is_package=True)


IN_PROCESS_RUN = """
import sys
{run}
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & {shell!r})
print("LOADED", loaded)
"""


def _loaded_after(run: str, tmp_path: Path) -> str:
    script = IN_PROCESS_RUN.format(run=run, shell={"celery", "kombu", "flower"})
    env = {**os.environ, "MEMEVAL_DATABASE_URL": f"sqlite:///{tmp_path / 'runs.db'}"}
    env.pop("MEMEVAL_BROKER_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_an_in_process_run_loads_no_celery(tmp_path: Path) -> None:
    """`memeval.evaluate` with no farm, and `memeval run --in-process`, run every case in this
    process: neither may pay for (or depend on) Celery, kombu or Flower being importable."""
    api = "import memeval\nr = memeval.evaluate('reference', suites='dimensions', " + (
        "dimension='temporal')\nassert r.cases and all(c.status.value == 'done' for c in r.cases)"
    )
    assert _loaded_after(api, tmp_path) == "LOADED []"
    cli = (
        "from memeval.cli import main\n"
        "sys.argv = ['memeval', 'run', '--in-process', '--dimension', 'temporal']\n"
        "try:\n    main()\n"
        "except SystemExit as e:\n    assert not e.code, e.code\n"
    )
    assert _loaded_after(cli, tmp_path) == "LOADED []"
    farm = cli.replace("'--in-process', ", "")
    assert _loaded_after(farm, tmp_path) == "LOADED ['celery', 'kombu']"  # the control
