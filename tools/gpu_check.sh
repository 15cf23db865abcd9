#!/usr/bin/env bash
# The GPU checks of docs/PERFORMANCE.md ("GPU"), run on a GPU host from the repository
# root: versions, a CUDA smoke test, the demo, a benchmark subset against JAX on the same
# GPU, the test suite on the CPU client of that host's jaxlib, and a subset of it on the
# GPU. Results go to $OUT (default: ./gpu-check). Each step is bounded by a timeout.
# STEPS picks the steps (default: smoke demo bench tests-gpu tests-cpu); more:
# tests-gpu-all, the whole suite on the GPU (-v, so a run cut by its timeout still says
# which tests passed); random, tools/gpu_random_check.py (spmdc's draws against JAX's on
# the GPU, both x64 modes side by side); and linalg, tools/gpu_linalg_check.py (cuSOLVER
# and the host callbacks against NumPy and JAX). random and linalg run beside the suite;
# bench-gpu, tools/bench_gpu.py (model-scale training steps, spmdc and JAX in separate
# processes on the GPU, about 5 minutes; issue 29): the GPU lease's one command for it is
#   STEPS="smoke tests-gpu bench-gpu" OUT=$OUT tools/gpu_check.sh   (about 7 minutes)
set -u
STEPS=" ${STEPS:-smoke demo bench tests-gpu tests-cpu} "
want() { [[ "$STEPS" == *" $1 "* ]]; }
OUT=${OUT:-gpu-check}; mkdir -p "$OUT"
PY=${PY:-python3}
export PYTHONPATH=$PWD HYPOTHESIS_PROFILE=ci
step() { local name=$1 limit=$2; shift 2; echo "=== $name"; local t0=$SECONDS
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1; local rc=$?
  echo "=== $name rc=$rc $((SECONDS - t0))s"; tail -n "${TAIL:-6}" "$OUT/$name.log"; }
nvidia-smi -L; $PY -c "import jaxlib, numpy, sys; print(sys.version.split()[0], 'jaxlib', jaxlib.__version__, 'numpy', numpy.__version__)"
cat > "$OUT/smoke.py" <<'PYEOF'
import numpy as np, spmdc as jax, spmdc.numpy as jnp
from spmdc import lax
print(jax.default_backend(), jax.devices(), jax.device_count())
a = np.random.default_rng(0).normal(size=(512, 512)).astype(np.float32)
f = jax.jit(lambda x: jnp.tanh(x @ x.T).sum())
print("jit", float(f(a)), float(np.tanh(a @ a.T).sum()))
g = jax.grad(lambda x: jnp.sum(jnp.sin(x) ** 2))(a[:4, :4])
print("grad err", float(np.abs(np.asarray(g) - np.sin(2 * a[:4, :4])).max()))
n = jax.local_device_count()
print("pmap psum", np.asarray(jax.pmap(lambda v: lax.psum(v, "i"), "i")(np.arange(n, dtype=np.float32))))
print("vmap", np.asarray(jax.vmap(jnp.dot)(a[:3], a[:3])).round(3))
k = jax.random.PRNGKey(0); print("random", np.asarray(jax.random.normal(k, (3,))))
x = jax.device_put(a); print("resident", x.devices())
PYEOF
want smoke && SPMDC_PLATFORM=cuda step smoke 60 $PY "$OUT/smoke.py"
want demo && SPMDC_PLATFORM=cuda step demo 60 $PY examples/train_data_parallel.py
want bench && SPMDC_PLATFORM=cuda JAX_PLATFORMS=cuda XLA_PYTHON_CLIENT_PREALLOCATE=false step bench 120 $PY tools/bench.py --quick --only "${BENCH:-W1,W3,W7,W8,W11}" --json "$OUT/bench.json"
want tests-gpu && SPMDC_PLATFORM=cuda XLA_PYTHON_CLIENT_PREALLOCATE=false step tests-gpu "${GPU_LIMIT:-80}" $PY -m pytest -p no:cacheprovider --tb=line -rf -n 8 -m "not slow" tests/transforms/test_jit.py tests/transforms/test_grad.py tests/nn/test_functions.py tests/nn/test_attention_cudnn.py tests/random/test_samplers.py tests/lax/test_control_flow.py
want bench-gpu && SPMDC_PLATFORM=cuda JAX_PLATFORMS=cuda XLA_PYTHON_CLIENT_PREALLOCATE=false TAIL=40 step bench-gpu "${BENCH_GPU_LIMIT:-330}" $PY tools/bench_gpu.py --budget "${BENCH_GPU_BUDGET:-280}" --json "$OUT/bench_gpu.json"
want tests-cpu && TAIL=15 step tests-cpu "${CPU_LIMIT:-190}" $PY -m pytest -p no:cacheprovider --tb=line -rf -n 14 -m "not slow" tests
if want random; then
  for mode in x32 x64; do
    SPMDC_PLATFORM=cuda JAX_PLATFORMS=cuda XLA_PYTHON_CLIENT_PREALLOCATE=false \
      step random-$mode "${RANDOM_LIMIT:-240}" $PY tools/gpu_random_check.py $mode "$OUT/random-$mode.json" &
  done
fi
want linalg && SPMDC_PLATFORM=cuda XLA_PYTHON_CLIENT_PREALLOCATE=false TAIL=40 \
  step linalg "${LINALG_LIMIT:-150}" $PY tools/gpu_linalg_check.py &
want tests-gpu-all && SPMDC_PLATFORM=cuda XLA_PYTHON_CLIENT_PREALLOCATE=false TAIL=8 step tests-gpu-all "${GPU_LIMIT:-300}" $PY -m pytest -p no:cacheprovider -o addopts= -v --tb=line -rf -n "${WORKERS:-12}" -m "not slow" tests
wait
