"""Key reuse across calls, as a run sees it: the same key bits consumed twice (JAX301).

JAX's own key-reuse checker (`jax_debug_key_reuse`, run on each traced jaxpr by jax_hooks) sees one trace
at a time; a key handed unchanged to a jitted step on every iteration is reused across calls, which no
trace shows. Here keys are fingerprinted where they are consumed, in the user's own calls:

- a jitted function (every `jax.jit` made after `import jax` is wrapped, `_KeyWatchedJit`): the key
  arguments its trace consumes (`consumed_inputs`, from the jaxpr: a typed key, or a raw uint32[..., 2|4]
  key that the function wraps with `jax.random`, reaching `random_bits` or `random_split`, or
  `random_fold_in` with data that is no input, as flax's `make_rng` folds in a module path);
- a `jax.random` sampler or `split` called eagerly (outside any trace). `fold_in` is not a consumer
  here: `fold_in(key, step)` with the same key is the way to derive per-step keys.

A fingerprint is a hash of the key's PRNG implementation and bits, read only when the array is ready (reading an
unfinished key would wait for the device); an unfinished one is told by identity (a weak reference, so
the array is never kept alive). Fingerprints live in a bounded table, oldest dropped first. The second
consumption of a fingerprint, at a call made from the user's code (not an installed library's), is an
observation `{"kind": "key-reuse", "code": "JAX301", "path", "line", "text", "first", "loop"}` at that
call's line; `loop` is the `for`/`while` line around the call that repeats it, and `through` the line in
that loop that calls the helper making the call, when it is another.

Off with `JAXLINT_KEY_FINGERPRINTS=0`. Nothing here imports jax; `install` is handed the module.
"""

from __future__ import annotations

import ast
import collections
import functools
import itertools
import linecache
import os
import sys
import threading
import types
import weakref
from collections.abc import Callable
from typing import Any

from .evidence import KEY_REUSE

ENV_SWITCH = "JAXLINT_KEY_FINGERPRINTS"
MAX_FINGERPRINTS = 20_000  # consumptions remembered (a few hundred bytes each)
MAX_REPORTS = 50
# The eager `jax.random` functions that consume their key (first argument, or `key=`).
CONSUMERS = (
    "ball bernoulli beta binomial bits categorical cauchy chisquare choice dirichlet double_sided_maxwell "
    "exponential f gamma generalized_normal geometric gumbel laplace loggamma logistic lognormal maxwell "
    "multinomial multivariate_normal normal orthogonal pareto permutation poisson rademacher randint "
    "rayleigh split t triangular truncated_normal uniform wald weibull_min"
).split()
# Primitives that move a raw uint32 key's bits without changing them (a typed key's are always moved
# unchanged: no arithmetic applies to it).
_MOVES = frozenset(
    "broadcast_in_dim concatenate copy copy_p device_put dynamic_slice expand_dims gather random_unwrap "
    "random_wrap reshape select_n slice squeeze transpose optimization_barrier".split()
)
_SUB_JAXPR_PARAMS = ("jaxpr", "call_jaxpr", "fun_jaxpr", "body_jaxpr", "branches")


class _Plan:
    """What one function's traces consume: per count of key-like inputs, the ordinals among them that
    every trace with that count consumed (a static flag that turns dropout off leaves the key unconsumed:
    only what all variants consume is checked)."""

    __slots__ = ("by_count", "consumes")

    def __init__(self) -> None:
        self.by_count: dict[int, frozenset[int]] = {}
        self.consumes = False

    def add(self, count: int, consumed: frozenset[int]) -> None:
        before = self.by_count.get(count)
        self.by_count[count] = consumed if before is None else before & consumed
        self.consumes = any(self.by_count.values())


class KeyWatch:
    def __init__(self, jax: Any, skip_dirs: tuple[str, ...], on_observed: Callable[[dict], None]) -> None:
        import numpy

        self.jax = jax
        self.np = numpy
        self.skip_dirs = skip_dirs
        self.on_observed = on_observed
        self.local = threading.local()
        self.lock = threading.Lock()
        self.tracer_type = jax.core.Tracer
        self.key_dtype = getattr(getattr(jax, "dtypes", None), "prng_key", None)
        self.dtype_kinds: dict[Any, str] = {}
        self.type_kinds: dict[type, str] = {}
        self.code_paths: dict[int, tuple[Any, str | None]] = {}  # id(code) → (code, its file if the user's)
        # fingerprint → first (path, line, consumer), oldest first
        self.consumed: collections.OrderedDict[Any, tuple[str, int, str]] = collections.OrderedDict()
        self.by_id: dict[int, tuple[Any, Any]] = {}  # id(array) → (weak reference, fingerprint)
        self.tokens = itertools.count()
        self.reported: set[tuple[str, int]] = set()
        self.plans: weakref.WeakKeyDictionary[Any, _Plan] = weakref.WeakKeyDictionary()
        self.errors = 0

    # -- which inputs are keys ----------------------------------------------------------------------
    def key_like(self, value: Any) -> bool:
        """A typed key, or what a raw key looks like (uint32 with a last axis of 2 or 4): an argument."""
        kind = self.type_kinds.get(type(value))
        if kind is None:  # a typed key array's class holds keys only (and its dtype is slow to hash)
            kind = "key" if self.aval_key_like(value) and hasattr(value, "_base_array") else "other"
            if len(self.type_kinds) < 256:
                self.type_kinds[type(value)] = kind
        return kind == "key" or self.aval_key_like(value)

    def aval_key_like(self, value: Any) -> bool:
        """The same, of anything with a dtype and a shape (a jaxpr variable's abstract value)."""
        dtype = getattr(value, "dtype", None)
        if dtype is None:
            return False
        kind = self.dtype_kinds.get(dtype)
        if kind is None:
            kind = self._dtype_kind(dtype)
        if kind != "raw":
            return kind == "key"
        shape = value.shape
        return len(shape) >= 1 and shape[-1] in (2, 4)

    def _dtype_kind(self, dtype: Any) -> str:
        """The kind of a dtype, cached (this runs on every leaf): "key" (typed), "raw" (uint32), or ""."""
        kind = ""
        try:
            if self.key_dtype is not None and self.jax.dtypes.issubdtype(dtype, self.key_dtype):
                kind = "key"
            elif dtype == self.np.uint32:
                kind = "raw"
        except TypeError:
            pass
        if len(self.dtype_kinds) < 256:
            self.dtype_kinds[dtype] = kind
        return kind

    def traced(self, fun: Any, jaxpr: Any) -> None:
        """An outermost trace of `fun` ended (jax_hooks): remember which key inputs it consumes, for the
        wrapped jit on this thread whose call made the trace."""
        caller = getattr(self.local, "pending", None)
        if caller is None or not _same_function(caller.fun, fun):
            return
        jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
        count, consumed = consumed_inputs(jaxpr, lambda v: self.aval_key_like(getattr(v, "aval", None)))
        caller.plan.add(count, consumed)

    def plan_for(self, fun: Any) -> _Plan:
        """The plan of `fun`, shared by every jit of it (`jax.jit(f)` made again need not trace again)."""
        try:
            plan = self.plans.get(fun)
            if plan is None:
                plan = self.plans[fun] = _Plan()
            return plan
        except TypeError:  # not hashable, or no weak reference to it
            return _Plan()

    # -- fingerprints --------------------------------------------------------------------------------
    def fingerprint(self, value: Any) -> Any:
        """The key's bits (hashed), or a token for this very array when its bits are not ready; None for
        what cannot be read (a tracer, a deleted array)."""
        if isinstance(value, self.tracer_type):
            return None
        entry = self.by_id.get(id(value))
        if entry is not None and entry[0]() is value:
            return entry[1]
        base = getattr(value, "_base_array", value)  # a typed key's uint32 data
        try:
            if base.is_deleted():
                return None
            ready = base.is_ready()
        except AttributeError:  # numpy
            ready = True
        if ready:
            data = self.np.asarray(base)
            impl = getattr(value, "_impl", None)  # a typed key's PRNG implementation, a singleton
            return hash((id(impl) if impl is not None else 0, data.shape, data.tobytes()))
        # Told by identity while this array lives: the same array handed again gets the same token.
        fingerprint = ("unread", next(self.tokens))
        try:
            reference = weakref.ref(value, functools.partial(_forget, self.by_id, id(value)))
        except TypeError:
            return fingerprint
        if len(self.by_id) < MAX_FINGERPRINTS:
            self.by_id[id(value)] = (reference, fingerprint)
        return fingerprint

    def consume(self, keys: list[Any], consumer: str, depth: int) -> None:
        """`keys` consumed by `consumer` in a call `depth` frames above this one."""
        frame: Any = sys._getframe(depth + 1)
        code = frame.f_code
        known = self.code_paths.get(id(code))  # by identity: a code object's own hash is not cached
        path = known[1] if known is not None and known[0] is code else self._user_path(code)
        if path is None:
            return  # a library's own use of keys, or code without a file
        site = (path, frame.f_lineno, consumer)
        for key in keys:
            fingerprint = self.fingerprint(key)
            if fingerprint is None:
                continue
            with self.lock:
                first = self.consumed.get(fingerprint)
                if first is None:
                    if len(self.consumed) >= MAX_FINGERPRINTS:
                        self.consumed.popitem(last=False)
                    self.consumed[fingerprint] = site
                    continue
            self._report(first, site, frame)

    def _user_path(self, code: Any) -> str | None:
        path = code.co_filename
        user = not (path.startswith(self.skip_dirs) or path.startswith("<") or _installed(path))
        found = os.path.abspath(path) if user else None
        if len(self.code_paths) < 4096:
            self.code_paths[id(code)] = (code, found)
        return found

    def _report(self, first: tuple[str, int, str], second: tuple[str, int, str], frame: Any) -> None:
        path, line, consumer = second
        with self.lock:
            if (path, line) in self.reported or len(self.reported) >= MAX_REPORTS:
                return
            self.reported.add((path, line))
        loop = _repeating_loop(frame) if first[:2] == second[:2] else None
        where = "at this line" if first[:2] == second[:2] else f"at {_short(first[0], path)}:{first[1]}"
        text = f"key consumed by '{consumer}' here was already consumed by '{first[2]}' {where}"
        record: dict[str, Any] = {
            "kind": KEY_REUSE,
            "code": "JAX301",
            "path": path,
            "line": line,
            "first": {"path": first[0], "line": first[1], "consumer": first[2]},
            "loop": None,
        }
        if loop is not None:
            loop_path, loop_line, keyword, call_line = loop
            text += (
                f", in an earlier iteration of the {keyword} loop at {_short(loop_path, path)}:{loop_line}"
            )
            record["loop"] = {"path": loop_path, "line": loop_line}
            if (loop_path, call_line) != (path, line):  # a helper called in the loop: the call there
                record["through"] = {"path": loop_path, "line": call_line}
        record["text"] = text
        self.on_observed(record)

    def call_keys(self, jitted: _KeyWatchedJit, args: tuple, kwargs: dict) -> list[Any]:
        """The arguments of a call that its function's traces consume, by their order among the key-like
        arguments (static arguments are never arrays, so the order is the trace's)."""
        leaves = [leaf for leaf in self.jax.tree_util.tree_leaves((args, kwargs)) if self.key_like(leaf)]
        consumed = jitted.plan.by_count.get(len(leaves))
        return [leaves[i] for i in sorted(consumed)] if consumed else []


class _KeyWatchedJit:
    """A jitted function as `jax.jit` returned it, called through: attributes (`lower`, `trace`,
    `__wrapped__`, ...) are the jitted function's, and a method binds as it would."""

    def __init__(self, jitted: Any, fun: Any, watch: KeyWatch) -> None:
        self.__dict__.update(
            _jitted=jitted,
            fun=fun,
            watch=watch,
            plan=watch.plan_for(fun),
            __doc__=getattr(jitted, "__doc__", None),
            __module__=getattr(jitted, "__module__", None),
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        watch = self.watch
        consumes = self.plan.consumes
        if consumes:  # before the call: a donated key is gone after it
            self._consume(args, kwargs)
        local = watch.local
        pending = getattr(local, "pending", None)
        local.pending = self
        try:
            result = self._jitted(*args, **kwargs)
        finally:
            local.pending = pending
        if not consumes and self.plan.consumes:  # the first call, which traced it: its keys are still there
            self._consume(args, kwargs)
        return result

    def _consume(self, args: tuple, kwargs: dict) -> None:
        try:
            keys = self.watch.call_keys(self, args, kwargs)
            if keys:
                name = getattr(self.fun, "__name__", None) or type(self.fun).__name__
                self.watch.consume(keys, name, 2)
        except Exception:
            self.watch.errors += 1  # never break the user's call

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        return self if instance is None else types.MethodType(self, instance)

    def __getattr__(self, name: str) -> Any:
        try:
            jitted = self.__dict__["_jitted"]
        except KeyError:  # a copy being made: no attributes yet
            raise AttributeError(name) from None
        return getattr(jitted, name)

    def __repr__(self) -> str:
        return repr(self._jitted)


def install(jax: Any, watch: KeyWatch) -> bool:
    """Wrap `jax.jit` and the consuming `jax.random` functions; False when switched off."""
    if os.environ.get(ENV_SWITCH) == "0":
        return False
    original_jit = jax.jit

    @functools.wraps(original_jit)
    def jit(*args: Any, **kwargs: Any) -> Any:
        jitted = original_jit(*args, **kwargs)
        fun = args[0] if args else kwargs.get("fun")
        if fun is None or not callable(jitted) or not hasattr(jitted, "lower"):
            return jitted  # the decorator-factory form (`jax.jit(static_argnames=...)`): left as is
        return _KeyWatchedJit(jitted, fun, watch)

    jit._jaxlint_original = original_jit  # type: ignore[attr-defined]
    jax.jit = jit
    random = jax.random
    for name in CONSUMERS:
        original = getattr(random, name, None)
        if callable(original) and getattr(original, "_jaxlint_original", None) is None:
            setattr(random, name, _consumer(original, name, watch))
    return True


def _consumer(original: Any, name: str, watch: KeyWatch) -> Any:
    qualified = f"jax.random.{name}"

    @functools.wraps(original)
    def consumer(*args: Any, **kwargs: Any) -> Any:
        key = args[0] if args else kwargs.get("key")
        if key is not None and not isinstance(key, watch.tracer_type):
            try:
                watch.consume([key], qualified, 1)
            except Exception:
                watch.errors += 1
        return original(*args, **kwargs)

    consumer._jaxlint_original = original  # type: ignore[attr-defined]
    return consumer


# -- the jaxpr ----------------------------------------------------------------------------------------
def consumed_inputs(jaxpr: Any, key_like: Callable[[Any], bool]) -> tuple[int, frozenset[int]]:
    """How many of `jaxpr`'s inputs are key-like, and which of them (by their order among those) it
    consumes: reaching `random_bits` or `random_split`, or `random_fold_in` with data that depends on no
    input, through moves of the key and nested jaxprs (jit, custom derivatives, checkpoint, cond, scan,
    while)."""
    keys = [v for v in jaxpr.invars if key_like(v)]
    taint = {v: frozenset({i}) for i, v in enumerate(keys)}
    consumed: set[int] = set()
    _walk(jaxpr, taint, set(jaxpr.invars), consumed, key_like, 0)
    return len(keys), frozenset(consumed)


def _walk(jaxpr: Any, taint: dict, dependent: set, consumed: set, key_like: Callable, depth: int) -> None:
    """Forward over the equations: `taint` maps a variable to the input keys its bits are, `dependent`
    holds the variables computed from any input."""
    for eqn in jaxpr.eqns:
        ins = eqn.invars
        in_taint = [taint.get(v, frozenset()) if _is_var(v) else frozenset() for v in ins]
        if any(_is_var(v) and v in dependent for v in ins):
            dependent.update(eqn.outvars)
        name = getattr(eqn.primitive, "name", "")
        if name in ("random_bits", "random_split"):
            consumed.update(in_taint[0] if in_taint else ())
            continue
        if name == "random_fold_in":
            if len(ins) > 1 and not (_is_var(ins[1]) and ins[1] in dependent):
                consumed.update(in_taint[0])
            continue
        everything = frozenset().union(*in_taint) if in_taint else frozenset()
        if not everything:
            continue
        subs = _sub_jaxprs(eqn) if depth < 50 else []
        if subs:
            out_taint: list[frozenset] = [frozenset()] * len(eqn.outvars)
            for sub, operands in subs:
                inner = {
                    v: taint.get(o, frozenset())
                    for v, o in zip(sub.invars, operands, strict=True)
                    if _is_var(o)
                }
                inner_dependent = {
                    v for v, o in zip(sub.invars, operands, strict=True) if _is_var(o) and o in dependent
                }
                _walk(sub, inner, inner_dependent, consumed, key_like, depth + 1)
                if len(sub.outvars) == len(eqn.outvars):
                    out_taint = [
                        t | (inner.get(v, frozenset()) if _is_var(v) else frozenset())
                        for t, v in zip(out_taint, sub.outvars, strict=True)
                    ]
                else:
                    out_taint = [t | everything for t in out_taint]
            for v, t in zip(eqn.outvars, out_taint, strict=True):
                if t and key_like(v):
                    taint[v] = t
            continue
        for v in eqn.outvars:
            if key_like(v) and (name in _MOVES or _typed_key(v)):
                taint[v] = everything


def _sub_jaxprs(eqn: Any) -> list[tuple[Any, list[Any]]]:
    """The jaxprs an equation runs, each with the operands its inputs are bound to."""
    params, ins = eqn.params, list(eqn.invars)
    found = []
    for name in _SUB_JAXPR_PARAMS:
        value = params.get(name)
        if value is None:
            continue
        for jaxpr in value if isinstance(value, (tuple, list)) else (value,):
            jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
            if not hasattr(jaxpr, "eqns"):
                continue
            if name == "branches":  # cond: the index first
                operands = ins[1:]
            elif name == "body_jaxpr":  # while: the cond's consts first
                operands = ins[params.get("cond_nconsts", 0) :]
            else:
                operands = ins
            if len(operands) == len(jaxpr.invars):
                found.append((jaxpr, operands))
    return found


def _is_var(v: Any) -> bool:
    return type(v).__name__ != "Literal" and not hasattr(v, "val")


def _typed_key(v: Any) -> bool:
    return "key<" in str(getattr(getattr(v, "aval", None), "dtype", ""))


# -- helpers ------------------------------------------------------------------------------------------
def _forget(table: dict, key: int, reference: Any) -> None:
    entry = table.get(key)
    if entry is not None and entry[0] is reference:
        del table[key]


def _same_function(a: Any, b: Any) -> bool:
    return a is b or _unwrap(a) is _unwrap(b)


def _unwrap(fun: Any) -> Any:
    for _ in range(16):
        inner = fun.func if isinstance(fun, functools.partial) else getattr(fun, "__wrapped__", None)
        inner = inner or getattr(fun, "__func__", None)
        if inner is None or inner is fun:
            return fun
        fun = inner
    return fun


def _installed(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    return "site-packages" in parts or "dist-packages" in parts


def _short(path: str, relative_to: str) -> str:
    return os.path.basename(path) if os.path.dirname(path) == os.path.dirname(relative_to) else path


@functools.lru_cache(maxsize=64)
def _loops(path: str) -> tuple[tuple[int, int, str], ...]:
    """The `for`/`while` statements of a file: (first line, last line, keyword)."""
    try:
        tree = ast.parse("".join(linecache.getlines(path)))
    except (SyntaxError, ValueError):
        return ()
    return tuple(
        (node.lineno, node.end_lineno or node.lineno, "while" if isinstance(node, ast.While) else "for")
        for node in ast.walk(tree)
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While))
    )


def _repeating_loop(frame: Any) -> tuple[str, int, str, int] | None:
    """The innermost loop around the call, in its function or a caller's (a helper called from a loop):
    its file, line and keyword, and the line in it that the call came through."""
    while frame is not None:
        path = frame.f_code.co_filename
        if not path.startswith("<") and not _installed(path):
            line = frame.f_lineno
            around = [loop for loop in _loops(path) if loop[0] <= line <= loop[1]]
            if around:
                first, _, keyword = max(around)
                return os.path.abspath(path), first, keyword, line
        frame = frame.f_back
    return None
