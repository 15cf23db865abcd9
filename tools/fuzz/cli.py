"""``python tools/fuzz``: generate programs, run them, compare, minimise, report.

    python tools/fuzz -n 200                      # spmdc vs the reference (and JAX if importable)
    python tools/fuzz -n 5000 --jax-python /work/jaxenv/bin/python
    python tools/fuzz --show 17                   # print program 17 as a script
Exit status 1 when an unexplained mismatch was found.
"""
from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import time
from dataclasses import dataclass

from .generate import generate
from .program import Program, to_source
from .reference import estimate_cost
from .run import (
    JAX_WRONG,
    KNOWN_DIFFERENCES,
    InProcess,
    Result,
    Worker,
    compare,
    differentiated,
    known_difference,
    minimise,
    run_reference,
)


@dataclass
class Finding:
    seed: int
    oracle: str
    category: str
    detail: str
    program: Program


ALL_FEATURES = frozenset({"where", "modes", "jvp", "jacrev", "bfloat16", "sort"})

# What each optional feature needs from spmdc. The generator leaves a feature out when its
# probe fails (and says so), so that a gap someone is still filling shows up once, as a
# line in the summary, rather than as every other program failing.
PROBES = {
    "jvp": "spmdc.jvp(lambda x: (x,), (x,), (x,)); spmdc.jacfwd(lambda x: (x,))(x)",
    "jacrev": "spmdc.jacrev(lambda x: (x, 2 * x))(x)",
    "bfloat16": "np.asarray(spmdc.jit(lambda x: x)(x.astype(jnp.bfloat16)[0]))"
                ".astype(np.float32) + 0",
    "sort": "jnp.sort(x)",
    "modes": "jnp.take(x, np.array([5]), mode='fill'); jnp.asarray(x).at[5].get(mode='fill', "
             "fill_value=0)",
    "where": "assert float(jnp.max(x, where=x < 1, initial=-5)) == -5",
}


def features_available(without: frozenset[str] = frozenset(), probe: bool = True
                       ) -> tuple[frozenset[str], dict[str, str]]:
    """The features to generate, and why each probed one that failed was left out."""
    import numpy as np

    import spmdc
    import spmdc.numpy as jnp
    found, missing = set(ALL_FEATURES - without), {}
    if not (hasattr(spmdc, "jvp") and hasattr(spmdc, "jacfwd")):     # forward mode is coming
        found.discard("jvp")
        missing["jvp"] = "spmdc has no jvp/jacfwd yet"
    for name, code in PROBES.items():
        if name not in found or not probe:
            continue
        try:
            exec(code, {"spmdc": spmdc, "jnp": jnp, "np": np, "x": np.ones(3, np.float32)})
        except Exception as e:  # noqa: BLE001
            found.discard(name)
            missing[name] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:160]
    return frozenset(found), missing


class Checker:
    """Runs one program on spmdc and on each oracle; ``check`` returns the disagreements."""

    def __init__(self, spmdc_backend, jax_backend=None, reference: bool = True, budget: int = 4000):
        self.spmdc, self.jax = spmdc_backend, jax_backend
        self.reference, self.budget = reference, budget
        self.counts: collections.Counter[str] = collections.Counter()

    def outcome(self, p: Program, oracle: str) -> tuple[Result, Result]:
        got = self.spmdc.run(to_source(p, "spmdc"))
        if oracle == "jax":
            return got, self.jax.run(to_source(p, "jax"))
        if estimate_cost(p) > self.budget:
            return got, Result("skipped", error="too costly for finite differences")
        return got, run_reference(p, budget=self.budget)

    def check(self, p: Program) -> list[Finding]:
        findings = []
        got = self.spmdc.run(to_source(p, "spmdc"))
        self.counts["spmdc " + ("raised" if got.status == "error" else got.status)] += 1
        if self.reference:
            want = Result("skipped", error="too costly") if estimate_cost(p) > self.budget \
                else run_reference(p, budget=self.budget)
            self.counts["reference " + want.status] += 1
            bad = self.against_reference(p, got, want)
            if bad:
                findings.append(Finding(p.seed, "reference", *bad, p))
        if self.jax is not None:
            want = self.jax.run(to_source(p, "jax"))
            self.counts["jax " + want.status] += 1
            bad = compare(p, got, want, "jax")
            known = known_difference(p, want, got) if bad else None
            if known:
                self.counts[f"known difference: {known}"] += 1
            elif bad:
                findings.append(Finding(p.seed, "jax", *bad, p))
        return findings

    def against_reference(self, p: Program, got: Result, want: Result):
        """The disagreement with the reference, if a second look confirms it: a finite
        difference whose step straddles a kink (ceil, abs, max ...) is wrong, so a
        derivative that disagrees is checked again with a step a thousand times smaller;
        that look also leaves unjudged a derivative exactly at a kink, where the one-sided
        slopes differ (a tie of pmin over copies of an in_axes=None input: seed 11017)."""
        bad = compare(p, got, want, "reference")
        if bad and bad[0] == "value" and differentiated(p):
            again = run_reference(p, step=1e-6, budget=self.budget, kinks=True)
            if compare(p, got, again, "reference") is None:
                self.counts["reference: second step agreed"] += 1
                return None
        return bad

    def still_fails(self, finding: Finding):
        def fails(q: Program) -> bool:
            got, want = self.outcome(q, finding.oracle)
            bad = compare(q, got, want, "jax") if finding.oracle == "jax" else \
                self.against_reference(q, got, want)
            if bad is None or bad[0] != finding.category:
                return False
            return finding.oracle != "jax" or known_difference(q, want, got) is None
        return fails


def jax_python(arg: str | None) -> str | None:
    """The interpreter to run JAX with: ``--jax-python``, else this one if it has jax."""
    candidates = [arg] if arg else [sys.executable]
    for python in candidates:
        try:
            ok = subprocess.run([python, "-c", "import jax"], capture_output=True,
                                timeout=120).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        if ok:
            return python
        if arg:
            raise SystemExit(f"fuzz: --jax-python {arg}: that interpreter cannot import jax")
    return None


def report(f: Finding, minimised: Program) -> str:
    return (f"=== seed {f.seed}: spmdc vs {f.oracle}: {f.category}\n{f.detail}\n"
            f"--- minimised reproducer (spmdc; the JAX script differs in its imports only):\n"
            f"{to_source(minimised, 'spmdc')}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python tools/fuzz", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=200, help="how many programs (default 200)")
    ap.add_argument("--seed", type=int, default=0, help="the first program's seed")
    ap.add_argument("--jax-python",
                    help="an interpreter that has jax (default: this one, if it does)")
    ap.add_argument("--no-jax", action="store_true", help="the reference oracle only")
    ap.add_argument("--no-reference", action="store_true", help="the JAX oracle only")
    ap.add_argument("--in-process", action="store_true", help="run spmdc in this process")
    ap.add_argument("--without", default="", help="features to leave out: where,modes,jvp")
    ap.add_argument("--all-features", action="store_true",
                    help="generate every feature, even those whose probe fails")
    ap.add_argument("--minimise-seconds", type=float, default=90.0)
    ap.add_argument("--out", default="fuzz-out", help="where reproducers are written")
    ap.add_argument("--show", type=int, metavar="SEED", help="print one program and exit")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        from .run import worker_main
        worker_main()
        return 0
    features, missing = features_available(frozenset(filter(None, args.without.split(","))),
                                           probe=not args.all_features)
    for name, why in missing.items():
        print(f"fuzz: leaving out {name}: spmdc fails its probe ({why})")
    if args.show is not None:
        print(to_source(generate(args.show, features)))
        return 0
    python = None if args.no_jax else jax_python(args.jax_python)
    spmdc_backend = InProcess() if args.in_process else Worker(sys.executable)
    jax_backend = Worker(python) if python else None
    checker = Checker(spmdc_backend, jax_backend, reference=not args.no_reference)
    print(f"fuzz: {args.n} programs from seed {args.seed}; oracles: "
          f"{'reference ' if checker.reference else ''}{'jax (' + python + ')' if python else ''}; "
          f"features: {', '.join(sorted(features)) or 'none'}", flush=True)
    os.makedirs(args.out, exist_ok=True)
    findings: list[Finding] = []
    start = time.monotonic()
    try:
        for seed in range(args.seed, args.seed + args.n):
            p = generate(seed, features)
            for f in checker.check(p):
                small = minimise(p, checker.still_fails(f), args.minimise_seconds)
                text = report(f, small)
                print(text, flush=True)
                with open(os.path.join(args.out, f"seed{seed}_{f.oracle}.py"), "w") as fh:
                    fh.write("".join("# " + line + "\n" for line in
                                     f"spmdc vs {f.oracle}: {f.category}\n{f.detail}".splitlines()))
                    fh.write(to_source(small, "spmdc"))
                findings.append(f)
            if (seed - args.seed + 1) % 100 == 0:
                print(f"... {seed - args.seed + 1} programs, {len(findings)} mismatches, "
                      f"{time.monotonic() - start:.0f} s", flush=True)
    finally:
        spmdc_backend.close()
        if jax_backend:
            jax_backend.close()
    print(f"\n{args.n} programs in {time.monotonic() - start:.0f} s; {len(findings)} mismatches")
    for key, count in sorted(checker.counts.items()):
        print(f"  {key}: {count}")
    if any(k.startswith("known difference") for k in checker.counts):
        print("known differences (not mismatches):")
        for name, _, why in KNOWN_DIFFERENCES + JAX_WRONG:
            print(f"  {name}: {why}")
    return 1 if findings else 0
