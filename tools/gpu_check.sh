#!/usr/bin/env bash
# Runs tests/runtime and `jaxlint --verify` on the bundled examples on whatever device JAX finds (CPU, GPU,
# TPU) and prints one summary line. Needs no network: jaxlint comes from this checkout (PYTHONPATH), and
# jax, libcst, pytest (and pytest-xdist, for workers) must be installed already.
#
#   tools/gpu_check.sh [SECONDS]      # time limit for the whole check (default 900: on a
#                                     16-core H200 the whole of tests/runtime took over 306 s, each verify child
#                                     starting the CUDA backend)
#   PYTHON=/path/to/python WORKERS=8 TESTS="tests/runtime/test_verify_rules.py" tools/gpu_check.sh 300
set -u
cd "$(dirname "$0")/.."
limit=${1:-900}
py=${PYTHON:-python3}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
# Many JAX processes share one accelerator: none may take most of its memory up front.
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.05}
start=$SECONDS
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

device=$("$py" -c "import jax; d = jax.devices()[0]; print(f'jax {jax.__version__}, {jax.default_backend()}: {d.device_kind} x{jax.device_count()}')" 2>"$out/device.err") \
  || { echo "gpu_check: FAILED: cannot import jax: $(tail -1 "$out/device.err")"; exit 2; }

# --verify on the examples: a quarter of the time at most.
timeout $((limit / 4)) "$py" -m jaxlint --verify --format json examples/ >"$out/verify.json" 2>"$out/verify.err"
verify=$("$py" - "$out/verify.json" <<'PY'
import collections, json, sys
try:
    rows = json.load(open(sys.argv[1]))
except Exception as error:
    print(f"verify: no report ({type(error).__name__})")
else:
    counts = collections.Counter(row["verdict"] for row in rows)
    print(f"verify examples: {counts['CONFIRMED']} confirmed, {counts['NOT_REPRODUCED']} not reproduced, "
          f"{counts['NOT_RUN']} not run, {counts['NOT_CHECKED']} not checked by tracing, of {len(rows)}")
PY
)

# tests/runtime in the time left, spread over workers when pytest-xdist is there.
left=$((limit - (SECONDS - start) - 5))
workers=${WORKERS:-$(( $(nproc) > 8 ? 8 : $(nproc) ))}
spread=()
"$py" -c "import xdist" 2>/dev/null && [ "$workers" -gt 1 ] && spread=(-n "$workers")
read -r -a tests_to_run <<<"${TESTS:-tests/runtime}"
timeout "$left" "$py" -m pytest -q -p no:cacheprovider "${spread[@]}" "${tests_to_run[@]}" >"$out/tests.txt" 2>&1
code=$?
tests=$(grep -E "^(=+ )?[0-9]+ (passed|failed)|^(=+ )?no tests ran" "$out/tests.txt" | tail -1 | sed -E 's/^=+ //; s/ =+$//')
[ "$code" -eq 124 ] && tests="timed out after ${left}s${tests:+ ($tests)}"
[ -n "$tests" ] || tests="pytest exit $code"
grep -E "^(FAILED|ERROR) " "$out/tests.txt" | head -20 >&2
echo "gpu_check: $device; ${TESTS:-tests/runtime}: $tests; $verify; $((SECONDS - start)) s"
[ "$code" -eq 0 ]
