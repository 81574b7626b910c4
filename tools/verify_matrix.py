"""Run every case of the coverage matrix against real JAX and keep those that misbehave as their pitfall says.

    python tools/verify_matrix.py [--jobs 2] [--only SUBSTRING] [--depth]

Needs jax and jaxlib (CPU is enough), tqdm (JAX202's progress-bar pitfall) and, for the framework contexts,
flax, optax, equinox, dm-haiku and numpyro (all in the project's dev virtualenv; `pip install tqdm flax optax
equinox dm-haiku numpyro` elsewhere).
It writes `tests/matrix/verified.json`: for every (pitfall, twin) pair the matrix builds
(`tests/matrix/matrix_cases.py`), what was observed and whether the pair is verified: the pitfall
misbehaves (the exception class its rule predicts, or an observed wrong result or side effect) and the twin
runs clean. Only verified pairs are linted by `tests/matrix/test_matrix.py`. With `--only`, the pairs whose id
contains the text are run again and the rest of the file is kept; with `--check` nothing is written and the
exit status is 1 where a verdict changed (after an upgrade of JAX or of a framework, say). With `--depth` it
runs the depth axis instead (`tests/matrix/depth_cases.py`: the pitfall 1-3 hops from the traced function) and
writes `tests/matrix/verified_depth.json`.

Each pair runs in one of `--jobs` worker processes (default 2: the machine is shared), each case in a module of
its own (`main_<tag>`, `<pkg>_<tag>`), with JAX on CPU and x64 off; JAX301's cases run with
`jax_debug_key_reuse` on, so a reused key raises `KeyReuseError`. A case that runs over 120 s counts as an error.
A pitfall that raises must raise the class its rule predicts from the pitfall's own line (the traceback passes
through it), except where JAX raises away from the line by nature (AWAY_FROM_THE_LINE).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MATRIX = ROOT / "tests" / "matrix"
OUTPUT = MATRIX / "verified.json"
sys.path.insert(0, str(MATRIX))

import depth_cases  # noqa: E402
import matrix_cases  # noqa: E402

CASE_TIMEOUT_S = 120

# -- in a worker ------------------------------------------------------------------------------------------

_traces = [0]


def _init_worker(tree: str) -> None:
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
    import warnings

    import jax
    import jax.monitoring

    warnings.simplefilter("ignore")
    sys.path.insert(0, tree)
    jax.monitoring.register_event_duration_secs_listener(_count_traces)


def _count_traces(name: str, _secs: float, **_kwargs) -> None:
    if name == "/jax/core/compile/jaxpr_trace_duration":
        _traces[0] += 1


def _resolve(dotted: str) -> type:
    import builtins
    import importlib

    if "." not in dotted:
        return getattr(builtins, dotted)
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _load(case: dict, tree: str):
    """The case's main module (a notebook's cells run in order in one module) and its modules' names."""
    import importlib
    import types

    main = next(p for p in case["files"] if p.startswith("main_"))
    name = main.rsplit(".", 1)[0]
    names = [p[:-3].replace("/", ".").removesuffix(".__init__") for p in case["files"] if p.endswith(".py")]
    if main.endswith(".ipynb"):
        module = types.ModuleType(name)
        sys.modules[name] = module
        notebook = json.loads(Path(tree, main).read_text())
        for number, cell in enumerate(notebook["cells"], 1):
            exec(compile("".join(cell["source"]), f"{main}#cell{number}", "exec"), module.__dict__)
        return module, [name]
    return importlib.import_module(name), names


def _leaves_have_tracer(value, tracer_type, depth: int = 0) -> bool:
    if isinstance(value, tracer_type):
        return True
    if depth < 2 and isinstance(value, (list, tuple)):
        return any(_leaves_have_tracer(v, tracer_type, depth + 1) for v in value)
    if depth < 2 and isinstance(value, dict):
        return any(_leaves_have_tracer(v, tracer_type, depth + 1) for v in value.values())
    return False


def _shows_tracer_not_values(line: str) -> bool:
    """`JitTracer(float32[3])`, `VmapTracer(aval=...)`, `Traced<...>`: a tracer in place of values. Under grad
    alone the print shows `GradTracer(primal=[1. 2. 3.], ...)`: the values, which is not the misbehaviour."""
    return ("Tracer(" in line or "Traced<" in line) and "primal=" not in line


def _frames(error: BaseException, tree: str) -> list[list]:
    """[path, line, cell] of the traceback's frames in the case's own files (a notebook cell's are named
    `main_<tag>.ipynb#cell<N>` when run)."""
    import traceback

    found = []
    for frame in traceback.extract_tb(error.__traceback__):
        name, _, cell = frame.filename.partition("#cell")
        if cell:
            found.append([name, frame.lineno, int(cell)])
        elif frame.filename.startswith(tree):
            found.append([os.path.relpath(frame.filename, tree).replace(os.sep, "/"), frame.lineno, None])
    return found


def _run_case(case: dict, tree: str) -> dict:
    import signal

    import jax
    import numpy as np

    def alarm(_signum, _frame):
        raise TimeoutError(f"case ran over {CASE_TIMEOUT_S} s")

    jax.config.update("jax_debug_key_reuse", case["code"] == "JAX301" and case["measure"] == "raises")
    observed: dict = {"exception": None, "mro": []}
    stdout = io.StringIO()
    names: list[str] = []
    traces_before = _traces[0]
    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(CASE_TIMEOUT_S)
    out = None
    try:
        with contextlib.redirect_stdout(stdout):
            try:
                module, names = _load(case, tree)
                if case["measure"] == "rowcalls":
                    out = _counting_calls(module.run, tree, observed)
                else:
                    out = module.run()
                jax.block_until_ready(out)
                jax.effects_barrier()
            except Exception as error:  # the pitfall's misbehaviour, or a twin that does not run
                observed["exception"] = type(error).__module__ + "." + type(error).__qualname__
                observed["mro"] = [c.__module__ + "." + c.__qualname__ for c in type(error).__mro__]
                if case["raises"]:
                    observed["expected_class"] = isinstance(error, _resolve(case["raises"]))
                observed["message"] = str(error).split("\n", 1)[0][:160]
                observed["at_pitfall"] = case["expect"] in _frames(error, tree)
    finally:
        signal.alarm(0)
    observed["traces"] = _traces[0] - traces_before
    observed["tracer_in_stdout"] = any(map(_shows_tracer_not_values, stdout.getvalue().splitlines()))
    modules = [sys.modules[n] for n in names if n in sys.modules]
    observed["calls"] = sum(getattr(m, "CALLS", 0) for m in modules)
    observed["ticks"] = sum(getattr(getattr(m, "BAR", None), "n", 0) for m in modules)  # a tqdm bar's count
    observed["leak"] = any(_leaves_have_tracer(v, jax.core.Tracer) for m in modules for v in vars(m).values())
    if out is not None and observed["exception"] is None:
        leaves = jax.tree_util.tree_leaves(out)
        observed["dtypes"] = sorted({str(np.asarray(leaf).dtype) for leaf in leaves})
        observed["output"] = [
            np.round(np.asarray(leaf, dtype=np.float64), 4).ravel().tolist() for leaf in leaves
        ]
        if case["measure"] == "timing":  # run() answers (result, seconds the timer read)
            observed["elapsed"] = float(out[1])
    for n in names:
        sys.modules.pop(n, None)
    for n in [m for m in sys.modules if any(m.startswith(p + ".") for p in names)]:
        sys.modules.pop(n, None)
    observed["x64"] = bool(jax.config.jax_enable_x64)
    return observed


def _counting_calls(run, tree: str, observed: dict):
    """run(), counting the calls of the case's own Python functions (`run` excluded): a loop over rows calls
    the per-row chain once per row, vmap traces it once."""
    import sys as _sys

    calls = [0]

    def profile(frame, event, _arg):
        if event == "call" and frame.f_code.co_filename.startswith(tree) and frame.f_code.co_name != "run":
            calls[0] += 1

    _sys.setprofile(profile)
    try:
        return run()
    finally:
        _sys.setprofile(None)
        observed["python_calls"] = calls[0]


def _run_pair(pair: tuple[dict, dict], tree: str) -> tuple[str, dict, dict | None]:
    """Both cases' observations; the twin is not run where the pitfall alone rules the pair out."""
    bad, good = pair
    bad_seen = _run_case(bad, tree)
    if not pitfall_may_verify(bad["measure"], bad_seen):
        return bad["pair"], bad_seen, None
    return bad["pair"], bad_seen, _run_case(good, tree)


# -- the verdict ------------------------------------------------------------------------------------------


def pitfall_may_verify(measure: str, bad: dict) -> bool:
    if measure == "raises":
        return bool(bad.get("expected_class"))
    if bad["exception"] is not None:
        return False
    if measure == "tracer_stdout":
        return bad["tracer_in_stdout"]
    if measure == "leak":
        return bad["leak"]
    if measure == "dtype":
        return not bad["x64"] and "float64" not in bad.get("dtypes", [])
    return True


# Rules whose exception JAX raises away from the flagged line by nature; their cases are matched by class only.
AWAY_FROM_THE_LINE = {
    "JAX301": "JAX's key-reuse checker raises at the second consuming call or at the transformation's call",
    "JAX405": "raised where the jitted method is called, not at its decorator",
}


def verdict(measure: str, bad: dict, good: dict | None, code: str = "") -> tuple[bool, str]:
    """Whether the pitfall misbehaves and the twin runs clean, and what was seen (one line)."""
    if good is None:  # the pitfall did not misbehave: say how it behaved
        good = {
            "exception": None,
            "tracer_in_stdout": False,
            "leak": False,
            "calls": 0,
            "ticks": 0,
            "traces": 0,
        }
    if good["exception"] is not None:
        return False, f"twin raised {good['exception']}: {good.get('message', '')}"
    if measure == "raises":
        if bad["exception"] is None:
            return False, "pitfall ran without error"
        if not bad.get("expected_class"):
            return False, f"pitfall raised {bad['exception']}, not the class its rule predicts"
        if bad.get("at_pitfall"):
            return True, f"raises {bad['exception']} at the pitfall's line"
        if code in AWAY_FROM_THE_LINE:
            return True, f"raises {bad['exception']} ({AWAY_FROM_THE_LINE[code]})"
        return False, f"pitfall raised {bad['exception']}, but not at the pitfall's line"
    if bad["exception"] is not None:
        return False, f"pitfall raised {bad['exception']}: {bad.get('message', '')}"
    if measure == "tracer_stdout":
        if good["tracer_in_stdout"]:
            return False, "twin printed a tracer too"
        return bad["tracer_in_stdout"], (
            "prints a tracer, not values" if bad["tracer_in_stdout"] else "printed values, no tracer"
        )
    if measure == "counter":
        ok = bad["calls"] < good["calls"]
        return ok, f"side effect ran {bad['calls']}x, twin's callback {good['calls']}x"
    if measure == "ticks":
        ok = bad["ticks"] < good["ticks"]
        return ok, f"progress bar advanced {bad['ticks']}x, twin's callback {good['ticks']}x"
    if measure == "leak":
        if good["leak"]:
            return False, "twin leaked a tracer too"
        return bad["leak"], "a tracer outlives the trace in a global" if bad["leak"] else "no tracer leaked"
    if measure == "output":
        ok = bad.get("output") != good.get("output")
        return ok, "result lacks the update (differs from twin's)" if ok else "same result as the twin"
    if measure == "dtype":
        ok = not bad["x64"] and "float64" not in bad.get("dtypes", [])
        return ok, f"float64 requested, got {'/'.join(bad.get('dtypes', []))}"
    if measure == "compiles":
        ok = bad["traces"] > good["traces"]
        return ok, f"traced {bad['traces']}x, twin {good['traces']}x"
    if measure == "draws":  # one row per iteration: the same key gives the same draws
        rows = _rows(bad.get("output"), 3)
        twin_rows = _rows(good.get("output"), 3)
        ok = len(set(rows)) == 1 and len(set(twin_rows)) == 3
        return ok, f"{len(set(rows))} distinct draws in 3 iterations, twin {len(set(twin_rows))}"
    if measure == "timing":
        fast, waited = bad.get("elapsed", 0.0), good.get("elapsed", 0.0)
        ok = bad.get("output", [])[:1] == good.get("output", [])[:1] and fast * 5 < waited
        return ok, f"timer read {fast * 1e3:.2f} ms, twin (waiting) {waited * 1e3:.1f} ms"
    if measure == "rowcalls":
        ok = bad.get("output") == good.get("output") and bad.get("python_calls", 0) > good.get(
            "python_calls", 0
        )
        return ok, (
            f"same result as vmap; the chain's functions ran {bad.get('python_calls')}x per loop, "
            f"{good.get('python_calls')}x under vmap"
        )
    raise ValueError(measure)


def _rows(output, count: int) -> list[tuple]:
    """The first output leaf cut into `count` rows (as tuples)."""
    if not output:
        return []
    leaf = output[0]
    size = len(leaf) // count
    return [tuple(leaf[k * size : (k + 1) * size]) for k in range(count)]


# -- the driver -------------------------------------------------------------------------------------------


def _as_dict(case: matrix_cases.Case) -> dict:
    return {
        "pair": case.pair,
        "code": case.code,
        "files": case.files,
        "raises": case.raises,
        "measure": case.measure,
        "expect": list(case.expect) if case.expect else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default=None, help="re-run only the pairs whose id contains this text")
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 where a verdict differs from verified.json",
    )
    parser.add_argument("--depth", action="store_true", help="the depth axis (verified_depth.json)")
    args = parser.parse_args(argv)

    suite = depth_cases if args.depth else matrix_cases
    output = depth_cases.VERIFIED if args.depth else OUTPUT
    pairs = list(suite.all_pairs())
    recorded = json.loads(output.read_text())["pairs"] if output.exists() else {}
    old = recorded if args.only else {}
    todo = [p for p in pairs if args.only is None or args.only in p[0].pair]
    measures = {bad.pair: bad.measure for bad, _ in pairs}
    digests = {bad.pair: (bad.digest(), good.digest()) for bad, good in pairs}
    results: dict[str, dict] = {k: v for k, v in old.items() if k in measures}
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="jaxlint-matrix-") as tree:
        for bad, good in todo:
            for case in (bad, good):
                for path, text in case.files.items():
                    target = Path(tree, path)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(text)
        # Slow contexts first, so the last chunks are short.
        todo.sort(key=lambda p: p[0].context not in suite.FRAMEWORKS)
        work = [(_as_dict(bad), _as_dict(good)) for bad, good in todo]
        with ProcessPoolExecutor(args.jobs, initializer=_init_worker, initargs=(tree,)) as pool:
            futures = [pool.submit(_run_pair, pair, tree) for pair in work]
            for done, future in enumerate(futures, 1):
                pair_id, bad_seen, good_seen = future.result()
                ok, seen = verdict(measures[pair_id], bad_seen, good_seen, pair_id.split("-", 1)[0])
                results[pair_id] = {"verified": ok, "observed": seen, "digest": list(digests[pair_id])}
                if done % 25 == 0:
                    print(f"{done}/{len(work)} pairs, {time.time() - started:.0f} s", file=sys.stderr)
    verified = sum(r["verified"] for r in results.values())
    if args.check:
        changed = [k for k in results if recorded.get(k, {}).get("verified") != results[k]["verified"]]
        for k in changed:
            print(
                f"{k}: now {'verified' if results[k]['verified'] else 'not verified'} ({results[k]['observed']})"
            )
        print(
            f"{verified} of {len(results)} pairs verified; {len(changed)} verdicts differ from {output.name}"
        )
        return 1 if changed else 0
    _write(results, pairs, output, "python tools/verify_matrix.py" + (" --depth" if args.depth else ""))
    print(f"{verified} of {len(results)} pairs verified ({time.time() - started:.0f} s); wrote {output}")
    return 0


def _environment() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": sys.version.split()[0]}
    for dist in ("jax", "jaxlib", "flax", "optax", "equinox", "dm-haiku", "numpyro"):
        try:
            found[dist] = version(dist)
        except PackageNotFoundError:
            found[dist] = "absent"
    return found


def _write(results: dict[str, dict], pairs: list, output: Path, command: str) -> None:
    order = {bad.pair: k for k, (bad, _) in enumerate(pairs)}
    lines = [
        f"  {json.dumps(k)}: {json.dumps(results[k], sort_keys=True)}" for k in sorted(results, key=order.get)
    ]
    header = {"generated_by": command, "environment": _environment()}
    text = json.dumps(header, indent=1)[:-2] + ',\n "pairs": {\n' + ",\n".join(lines) + "\n }\n}\n"
    json.loads(text)
    output.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
