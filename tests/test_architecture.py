"""The code's shape, read from the source: dependencies run one way, nothing imports in a circle, and
every function fits on a screen."""

import ast

from tests.support.paths import ROOT

PACKAGES = ("explorer", "nodes", "perception", "memory", "prompts")
# main.py -> explorer -> nodes -> perception, memory, prompts: a module may import its own
# package and the layers below it, never one above.
LAYER = {"main": 0, "explorer": 1, "nodes": 2, "perception": 3, "memory": 3, "prompts": 3}


def project_modules():
    """{module name: path} for main.py and every module of the five packages."""
    modules = {"main": ROOT / "main.py"}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


# One small module per external API: the rest of the code reaches it through that module.
EXTERNAL_API_OWNERS = {
    "litellm": {"explorer.model.client"},
    "jsonschema": {"explorer.model.conformance"},
    "faiss": {"memory.vector_memory"},
    "onnxruntime": {"memory.onnx_model"},
    "tokenizers": {"memory.onnx_model"},
    "sentence_transformers": {"memory.torch_model"},
    "torch": {"memory.torch_model", "memory.onnx_export"},  # the fallback backend, and the one-time export
    "redis": {"explorer.team.redis_store"},
    "plotly": {"explorer.report.charts"},
    "gymnasium": {"explorer.envs.spaces"},  # the environments' spaces, and the Env they subclass
    "pettingzoo": {"explorer.envs.pettingzoo_env"},
    "jinja2": {"explorer.report.page"},
    "pyautogui": {"perception.keyboard"},
    "pywinctl": {"perception.desktop_windows"},
    "Xlib": {"perception.x11"},
    "mss": {"perception.screen_capture"},
    "PIL": {"perception.screenshots"},
    "mlflow": {"explorer.sweep.tracking"},
    "pandas": {"explorer.sweep.tidy"},
    "pyarrow": {"explorer.sweep.tidy"},
    "ray": {"explorer.sweep.ray_executor"},
    "aiohttp": {"explorer.cli.web_server"},
    "scipy": {"explorer.policies.grid_arrays"},
    "ortools": {"explorer.policies.classical.mtsp"},
}


def import_graph(keep_external=False):
    """{module: set of project modules it imports}, counting imports inside functions too;
    with `keep_external`, the top-level names of every package it imports as well."""
    modules = project_modules()
    graph = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # `from pkg import sub` imports the module pkg.sub when there is one.
                targets.update(
                    f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                    for alias in node.names
                )
        if keep_external:
            graph[name] = {target.split(".")[0] for target in targets} - set(PACKAGES)
        else:
            graph[name] = {target for target in targets if target in modules and target != name}
    return graph


def cycles(graph):
    """Every strongly connected group of more than one node (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def package_of(module):
    return module.split(".")[0]


# explorer/'s floors, lowest first (docs/design.md's table): a sub-package may import its own modules and
# those of lower floors only. Its top-level modules (api.py, __main__.py) stand on the top floor.
FLOORS = (
    ("records",),
    ("model", "team"),
    ("schedule",),
    ("config",),
    ("policies",),
    ("report",),
    ("run",),
    ("sweep",),
    ("cli",),
    ("envs", "api", "__main__"),
)
FLOOR = {unit: level for level, units in enumerate(FLOORS) for unit in units}


def unit_of(module):
    """explorer's sub-package (or top-level module) that `module` belongs to; None outside explorer."""
    parts = module.split(".")
    return parts[1] if parts[0] == "explorer" and len(parts) > 1 else None


def unit_graph(graph):
    """{sub-package: the other sub-packages it imports}, from a module graph."""
    units = {}
    for module, targets in graph.items():
        if unit_of(module) is None:
            continue
        units.setdefault(unit_of(module), set()).update(
            unit_of(t) for t in targets if unit_of(t) not in (None, unit_of(module))
        )
    return units


def upward_imports(graph):
    """Every import of a sub-package from one on its floor or above, as "module imports target"."""
    return [
        f"{module} imports {target}"
        for module, targets in graph.items()
        for target in targets
        if unit_of(module) is not None
        and unit_of(target) not in (None, unit_of(module))
        and FLOOR[unit_of(target)] >= FLOOR[unit_of(module)]
    ]


def test_the_graph_is_read_from_the_source():
    graph = import_graph()
    # A few edges every reader of the code can check by eye, so the parser cannot silently find nothing.
    assert "nodes.flow" in graph["explorer.run.crew"]
    assert "nodes.interfaces" in graph["nodes.decision"]
    assert "perception.x11" in graph["perception.windows"]  # imported inside a function


def test_no_module_imports_in_a_circle():
    assert cycles(import_graph()) == []


def test_no_package_imports_in_a_circle():
    packages = {}
    for module, targets in import_graph().items():
        packages.setdefault(package_of(module), set()).update(
            package_of(t) for t in targets if package_of(t) != package_of(module)
        )
    assert cycles(packages) == []


def test_every_sub_package_of_explorer_has_a_floor():
    on_disk = {path.stem if path.is_file() else path.name for path in (ROOT / "explorer").iterdir()}
    on_disk = {name for name in on_disk if not name.startswith((".", "_")) or name == "__main__"} - {"__init__"}
    assert on_disk - {"__pycache__"} == set(FLOOR)


def test_no_sub_package_of_explorer_imports_in_a_circle():
    assert cycles(unit_graph(import_graph())) == []


def test_every_import_in_explorer_points_down_its_floors():
    assert upward_imports(import_graph()) == []


def test_the_floor_check_sees_an_upward_import_and_a_loop():
    # Broken on purpose: the records floor importing the live console; the run importing the sweep,
    # which imports the run. Both checks must fail on such graphs.
    upward = import_graph()
    upward["explorer.records.trace"] = upward["explorer.records.trace"] | {"explorer.cli.console"}
    assert upward_imports(upward) == ["explorer.records.trace imports explorer.cli.console"]
    loop = import_graph()
    loop["explorer.run.runner"] = loop["explorer.run.runner"] | {"explorer.sweep.runner"}
    assert upward_imports(loop) == ["explorer.run.runner imports explorer.sweep.runner"]
    assert cycles(unit_graph(loop)) == [["run", "sweep"]]


def packages_init():
    """The modules that are a package's `__init__`."""
    return {name for name, path in project_modules().items() if path.name == "__init__.py"}


def test_no_module_imports_its_own_package_init():
    # Importing a submodule runs its package's __init__ first: were that __init__ to import the
    # submodule's siblings (a factory, say), every such import would be a cycle through it.
    inits = packages_init()
    inward = [
        f"{module} imports {target}"
        for module, targets in import_graph().items()
        for target in targets
        if target in inits and module.startswith(target + ".")
    ]
    assert inward == []


def test_no_package_init_imports_its_own_modules():
    outward = [
        f"{init} imports {target}"
        for init in packages_init()
        for target in import_graph()[init]
        if target.startswith(init + ".")
    ]
    assert outward == []


def test_every_import_points_down_the_layers():
    upward = [
        f"{module} imports {target}"
        for module, targets in import_graph().items()
        for target in targets
        if package_of(target) != package_of(module) and LAYER[package_of(target)] <= LAYER[package_of(module)]
    ]
    assert upward == []


def test_the_nodes_never_import_the_application():
    graph = import_graph()
    assert not [
        (m, t) for m, targets in graph.items() if m.startswith("nodes") for t in targets if t.startswith("explorer")
    ]


def test_each_external_api_is_imported_by_its_own_module_only():
    graph = import_graph(keep_external=True)
    for api, owners in EXTERNAL_API_OWNERS.items():
        importers = {module for module, imported in graph.items() if api in imported}
        assert importers == owners, api


MAX_FUNCTION_LINES = 60


def test_no_function_is_over_sixty_lines():
    # A function does one thing and fits on a screen: a longer one is split into named parts.
    paths = [*project_modules().values(), *(ROOT / "bench").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]
    too_long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path in paths
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert too_long == []


def test_the_run_module_stays_a_table_of_contents():
    # explorer/run/runner.py reads as what a run does; each part lives in a module of its own.
    assert len((ROOT / "explorer" / "run" / "runner.py").read_text().splitlines()) < 200


def test_only_the_catalogues_test_a_schedules_or_a_topologys_name():
    # A schedule or a topology is chosen from its catalogue; the rest of the code asks its traits, so that
    # adding one touches its module and the catalogue only. ("all" and "none" also name every recipient
    # and no value, so the names looked for are those that mean nothing else.)
    names = {"lockstep", "event", "realtime", "star", "tree"}
    catalogues = {"explorer.schedule.catalogue", "explorer.team.topologies"}

    def named(node):
        values = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
        return any(isinstance(v, ast.Constant) and v.value in names for v in values)

    tests = [
        f"{module}:{node.lineno}"
        for module, path in project_modules().items()
        if module.startswith("explorer") and module not in catalogues
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Compare) and any(named(side) for side in [node.left, *node.comparators])
    ]
    assert tests == []
