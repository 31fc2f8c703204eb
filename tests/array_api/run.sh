#!/usr/bin/env bash
# The Python array API standard's conformance suite (data-apis/array-api-tests, an unmodified
# pinned copy in shared/array-api-tests) run against autograd_core on one backend.
#
#   tests/array_api/run.sh [backend] [extra pytest args]
#   tests/array_api/run.sh --find        # print where the suite is (exit 2 when there is none)
#   tests/array_api/run.sh numpy array_api_tests/test_creation_functions.py -x   # a part of it
#
# backend: numpy (the default), torch, jax or array_api_strict. ARRAY_API_TESTS_MODULE=array_api_strict
# runs the same settings against array_api_strict itself (the reference count, no xfails).
# Known failures we decided not to fix are listed, one test id and its `# why` a line, in
# xfails.txt (every backend) and xfails-<backend>.txt (that backend). Exits non-zero when a
# test that is not xfailed fails. ARRAY_API_TESTS_DIR overrides where the suite is;
# ARRAY_API_TESTS_WORKERS the pytest-xdist worker count (0: no xdist); ARRAY_API_TESTS_SEED the
# hypothesis seed (default 0, so CI draws the same examples every run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
backend=${1:-numpy}
shift $(($# > 0 ? 1 : 0))

suite=${ARRAY_API_TESTS_DIR:-}
for candidate in "$repo/shared/array-api-tests" "$repo/../shared/array-api-tests" /work/shared/array-api-tests; do
    [[ -z $suite && -d $candidate/array_api_tests ]] && suite=$(cd "$candidate" && pwd)
done
[[ -n $suite ]] || { echo "run.sh: no array-api-tests copy (set ARRAY_API_TESTS_DIR)" >&2; exit 2; }
[[ $backend == --find ]] && { echo "$suite"; exit 0; }  # where the suite is, for .ci/run

module=${ARRAY_API_TESTS_MODULE:-autograd_core}
# torch has uint16/32/64 as storage types only: sum, flip, floor_divide... raise NotImplementedError
# for them, so the suite draws no arrays of those dtypes there (ARRAY_API_TESTS_SKIP_DTYPES overrides).
skip_dtypes=
case $backend in
    numpy) examples=20 ;;
    torch) examples=5 skip_dtypes=uint16,uint32,uint64 ;;
    jax | array_api_strict) examples=5 ;;
    *) echo "run.sh: unknown backend $backend" >&2; exit 2 ;;
esac
skip_dtypes=${ARRAY_API_TESTS_SKIP_DTYPES-$skip_dtypes}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The suite reads every non-comment line as an id: keep the id, drop the `# why`.
xfails=$work/xfails.txt
: > "$xfails"
if [[ $module == autograd_core ]]; then
    for f in "$here/xfails.txt" "$here/xfails-$backend.txt"; do
        [[ -f $f ]] && sed -e 's/[[:space:]]*#.*$//' -e '/^[[:space:]]*$/d' "$f" >> "$xfails"
    done
fi
# Arguments naming the suite's tests (array_api_tests/test_x.py::test_y) narrow the run.
selection=() options=()
for arg in "$@"; do
    if [[ $arg == array_api_tests* ]]; then selection+=("$suite/$arg"); else options+=("$arg"); fi
done
((${#selection[@]})) || selection=("$suite/array_api_tests")
workers=${ARRAY_API_TESTS_WORKERS:-2}
xdist=()
((workers > 0)) && xdist=(-n "$workers")

cd "$work"  # hypothesis writes its example database into the current folder
set +e
PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}" ARRAY_API_TESTS_MODULE=$module ARRAY_API_TESTS_VERSION=2024.12 \
    ARRAY_API_TESTS_SKIP_DTYPES=$skip_dtypes AUTOGRAD_BACKEND=$backend \
    python -m pytest "${selection[@]}" -p no:cacheprovider -q -rfE --max-examples="$examples" \
    --hypothesis-disable-deadline --hypothesis-seed="${ARRAY_API_TESTS_SEED:-0}" --xfails-file="$xfails" "${xdist[@]}" "${options[@]}" 2>&1 | tee "$work/log"
rc=${PIPESTATUS[0]}
set -e
summary=$(grep -E '^=* ?[0-9]+ (passed|failed)|^[0-9]+ (passed|failed)' "$work/log" | tail -n 1 | tr -d '=')
echo "array-api-tests $module ($backend, --max-examples=$examples ${options[*]}): ${summary:-no summary} (exit $rc)"
exit "$rc"
