"""Printing and files: array_repr, array_str, the print options, save, savez, load.

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core import dtypes
from .core import asarray

array_repr, array_str, save, savez = np.array_repr, np.array_str, np.save, np.savez


get_printoptions, printoptions, set_printoptions = (np.get_printoptions, np.printoptions,
                                                    np.set_printoptions)


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """``np.load``, its array (bfloat16 restored from its 2-byte void form) as an Array;
    other results (an ``.npz`` archive, pickled objects) as NumPy gives them."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == "V2":
            out = out.view(dtypes.canonicalize("bfloat16"))
        try:
            return asarray(out)
        except (TypeError, ValueError):           # a dtype spmdc has no array of
            return out
    return out
