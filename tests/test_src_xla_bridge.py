"""``jax._src.xla_bridge._backends`` (spmdc/_src/xla_bridge.py), as chex's
``set_n_cpu_devices`` reads it, through the package attribute: empty before the first
PJRT client is made, the CPU client after."""
import subprocess
import sys

PROGRAM = r"""
import sys, spmdc
sys.modules["jax"] = spmdc
import jax
before = dict(jax._src.xla_bridge._backends)
jax.numpy.ones(2).block_until_ready()
after = jax._src.xla_bridge._backends
print(before == {}, sorted(after), after["cpu"].platform)
"""


def test_backends_made_so_far():
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "['cpu']", "cpu"]
