"""jax.scipy.linalg's qr_multiply, hessenberg and polar, run on spmdc and on JAX 0.10.2
(`tools/record.py linalg_more` records JAX's results in
tests/data/linalg_more_reference.json; tests/scipy/test_linalg_decompositions.py
compares)."""
from __future__ import annotations

import numpy as np

rng = np.random.default_rng(23)
SQUARE = rng.normal(size=(5, 5)).astype(np.float32)
BATCH = rng.normal(size=(2, 4, 4)).astype(np.float32)
TALL = rng.normal(size=(6, 4)).astype(np.float32)
WIDE = rng.normal(size=(3, 5)).astype(np.float32)
ROWS = rng.normal(size=(2, 6)).astype(np.float32)
COLUMNS = rng.normal(size=(4, 3)).astype(np.float32)
# Singular values from 1 to 1e-3: QDWH takes its QR steps first, then Cholesky steps.
U, _ = np.linalg.qr(rng.normal(size=(5, 5)))
ILL = (U @ np.diag(np.logspace(0, -3, 5)) @ U.T).astype(np.float32)


def cases(lib):
    linalg = lib.scipy.linalg
    return {
        "hessenberg": lambda: linalg.hessenberg(SQUARE),
        "hessenberg.q": lambda: linalg.hessenberg(SQUARE, calc_q=True),
        "hessenberg.batch": lambda: linalg.hessenberg(BATCH, calc_q=True),
        "hessenberg.1x1": lambda: linalg.hessenberg(SQUARE[:1, :1], calc_q=True),
        "polar": lambda: linalg.polar(SQUARE),
        "polar.tall": lambda: linalg.polar(TALL),
        "polar.left_wide": lambda: linalg.polar(WIDE, side="left"),
        "polar.svd_left": lambda: linalg.polar(TALL, side="left", method="svd"),
        "polar.svd_batch": lambda: linalg.polar(BATCH, method="svd"),
        "polar.ill": lambda: linalg.polar(ILL),
        "qr_multiply.right": lambda: linalg.qr_multiply(TALL, ROWS),
        "qr_multiply.left": lambda: linalg.qr_multiply(TALL, COLUMNS, mode="left"),
        "qr_multiply.wide": lambda: linalg.qr_multiply(WIDE, ROWS[:, :3]),
        "qr_multiply.vector": lambda: linalg.qr_multiply(TALL, ROWS[0]),
        "qr_multiply.conjugate": lambda: linalg.qr_multiply(TALL, COLUMNS, mode="left",
                                                           conjugate=True),
    }
