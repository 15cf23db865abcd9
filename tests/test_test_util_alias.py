"""spmdc/test_util.py loaded as ``jax.test_util`` from its file, as pytest's
assertion-rewriting import hook loads it under the alias (Note [test_util under
pytest]): its imports still find spmdc's floors and check_grads works."""
import subprocess
import sys

PROGRAM = r"""
import importlib.util, sys
import spmdc
sys.modules["jax"] = spmdc
spec = importlib.util.spec_from_file_location("jax.test_util", spmdc.test_util.__file__)
module = importlib.util.module_from_spec(spec)
sys.modules["jax.test_util"] = module
spec.loader.exec_module(module)
import numpy as np
module.check_grads(lambda x: spmdc.numpy.sin(x) * x, (np.float32(0.7),), order=1)
print(module.dtypes.__name__)
"""


def test_test_util_loaded_under_the_alias_name():
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "spmdc.core.dtypes"
