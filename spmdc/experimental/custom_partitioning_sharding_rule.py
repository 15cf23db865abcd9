"""Shardy sharding rules of ``custom_partitioning`` (JAX's
``jax._src.custom_partitioning_sharding_rule``): ``SdyShardingRule`` and the pieces it is
made of (``ArrayMapping``, ``CompoundFactor``, ``BATCHING``), the einsum-like text that
describes one (``str_to_sdy_sharding_rule``), and the ``#sdy.op_sharding_rule`` attribute
that the custom call carries (``sdy_sharding_rule_to_mlir``).

Note [sharding rules]
~~~~~~~~~~~~~~~~~~~~~
A rule names one *factor* per dimension of every operand and result: ``'i j, j k -> i
k'`` is a matmul's. Shardy propagates a sharding along a factor from every value that
has it to every other, so ``'...i -> ...i'`` keeps the leading dimensions' sharding
through the op. A leading ``...`` (``BATCHING``, stored as the one character ``…``;
``...2`` names a second group) stands for however many leading dimensions a value has
beyond its named ones, the same number in every value of its group. A dimension may be
the product of several factors, a ``CompoundFactor`` (``'(a b) -> a b'``); a factor used
only inside products needs its size as a keyword argument. A factor is a pass-through
one unless listed among ``reduction_factors`` (in operands only, like a contracted
dimension: sharded, the result is all-reduced), ``need_replication_factors`` (must not
be sharded) or ``permutation_factors`` (sharded, it costs a collective permute).

In the MLIR attribute each factor gets an index in order of first appearance (operands
first, then results; the dimensions a ``...`` stands for get factors of their own) and
a size: the size of a whole dimension it names (the smallest, if it names several), or
the size given for it. The checks and messages are JAX's.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..compiler.stablehlo import ir, sdy

__all__ = ["BATCHING", "CompoundFactor", "ArrayMapping", "SdyShardingRule",
           "str_to_sdy_sharding_rule", "sdy_sharding_rule_to_mlir"]

BATCHING: str = "…"
"""The leading batching dimensions of a value (``...`` in a rule's text)."""


def _check_factor_name(name: str) -> None:
    if not name[0].isalpha():
        raise ValueError(f"Factor names have to start with a letter, but got '{name[0]}'")
    for char in name[1:]:
        if not (char == "_" or char.isalnum()):
            raise ValueError(f"Unknown character '{char}'")


def _is_batching(name: str) -> bool:
    """``…`` alone, or followed by the number of its group."""
    return name[:1] == BATCHING and (len(name) == 1 or name[1:].isdigit())


def _batching_group(name: str) -> str:
    return str(int(name[1:])) if len(name) > 1 else "0"


class CompoundFactor(tuple):
    """A dimension that is the product of two or more factors: ``CompoundFactor('b', 'c')``."""

    def __new__(cls, *factors: str) -> CompoundFactor:
        if len(factors) < 2:
            raise ValueError("A compound factor should contain at least two factors")
        for f in factors:
            if not isinstance(f, str):
                raise ValueError(f"Each element of CompoundFactor must be a str, but got "
                                 f"{type(f)}")
            if _is_batching(f):
                raise ValueError("Ellipsis can't be used in a compound factor")
            _check_factor_name(f)
        return super().__new__(cls, factors)


class ArrayMapping(tuple):
    """The factors of one operand or result, one per dimension (a name or a
    CompoundFactor), after an optional leading ``BATCHING``."""

    def __new__(cls, *dims: str | CompoundFactor) -> ArrayMapping:
        for k, d in enumerate(dims):
            if isinstance(d, CompoundFactor):
                continue
            if not isinstance(d, str):
                raise ValueError("Each element of ArrayMapping must be a str or "
                                 f"CompoundFactor, but got {type(d)}")
            if _is_batching(d):
                if k != 0:
                    raise ValueError("Ellipsis can only be used at the beginning of a "
                                     "dimension")
            else:
                _check_factor_name(d)
        return super().__new__(cls, dims)


class SdyShardingRule:
    """A Shardy sharding rule: the ArrayMappings of the operands and of the results, the
    special factors and the sizes of the factors used only in compound factors. See
    Note [sharding rules]."""

    def __init__(self, operand_mappings: tuple[ArrayMapping, ...],
                 result_mappings: tuple[ArrayMapping, ...], *,
                 reduction_factors: tuple[str, ...] = (),
                 need_replication_factors: tuple[str, ...] = (),
                 permutation_factors: tuple[str, ...] = (), **factor_sizes: int):
        whole: dict[str, bool] = {}        # factor -> names a whole dimension somewhere
        for mapping in (*operand_mappings, *result_mappings):
            for d in mapping:
                if isinstance(d, CompoundFactor):
                    for f in d:
                        whole.setdefault(f, False)
                else:
                    whole[d] = True
        for f in factor_sizes:
            if f not in whole:
                raise ValueError(f"Factor {f} is not used in the rule, but size is provided")
        for f, is_whole in whole.items():
            if not is_whole and f not in factor_sizes:
                raise ValueError(f"Factor {f} is only used in compound factors; must specify"
                                 " its size")
            if is_whole and f in factor_sizes:
                raise ValueError(f"Factor {f} represents a whole dimension; do not specify "
                                 "its size")
        special: set[str] = set()
        for kind, factors in (("reduction_factors", reduction_factors),
                              ("need_replication_factors", need_replication_factors),
                              ("permutation_factors", permutation_factors)):
            if not isinstance(factors, tuple):
                raise ValueError(f"{kind} must be a tuple of factors")
            if len(set(factors)) != len(factors):
                raise ValueError(f"{kind} contains duplicated factors")
            for f in factors:
                if f not in whole:
                    raise ValueError(f"Factor {f} in {kind} is not used in the rule")
                if f in special:
                    raise ValueError(f"Factor {f} can only be in one of the reduction, need "
                                     "replication, or permutation factor sets.")
                special.add(f)
        self.operand_mappings = operand_mappings
        self.result_mappings = result_mappings
        self.factor_sizes = factor_sizes
        self.reduction_factors = reduction_factors
        self.need_replication_factors = need_replication_factors
        self.permutation_factors = permutation_factors

    def __str__(self) -> str:
        special = "".join(f" {kind}={factors}" for kind, factors in (
            ("reduction_factors", self.reduction_factors),
            ("need_replication_factors", self.need_replication_factors),
            ("permutation_factors", self.permutation_factors)) if factors)
        return (f"SdyShardingRule({self.operand_mappings}, {self.result_mappings}, "
                f"{self.factor_sizes}{special})")


# --- the einsum-like text -----------------------------------------------------------------

def _parse_side(text: str) -> tuple[ArrayMapping, ...]:
    """The ArrayMappings of one side of a rule (comma-separated values; an empty side is
    one scalar)."""
    text = " ".join(text.split())
    values: list[ArrayMapping] = []
    dims: list[Any] = []
    compound: list[str] | None = None     # the factors of an open bracket
    name = ""
    k = 0

    def end_name() -> None:
        nonlocal name
        if name:
            (dims if compound is None else compound).append(name)
            name = ""

    while k < len(text):
        char = text[k]
        k += 1
        if char == BATCHING:
            if name or compound is not None or dims:
                raise ValueError("Ellipsis can only be used at the beginning of a dimension")
            digits = ""
            while k < len(text) and text[k].isdigit():
                digits += text[k]
                k += 1
            dims.append(BATCHING + (str(int(digits)) if digits else "0"))
        elif char in "(), ":
            end_name()
            if char == "(":
                if compound is not None:
                    raise ValueError("Compound factors should be one level, nested brackets"
                                     " are not allowed")
                compound = []
            elif char == ")":
                if compound is None:
                    raise ValueError("Brackets are not balanced")
                if len(compound) < 2:
                    raise ValueError("Brackets should contain at least two factors")
                dims.append(CompoundFactor(*compound))
                compound = None
            elif char == ",":
                values.append(ArrayMapping(*dims))
                dims = []
        elif char == "_" or char.isalnum():
            if not name and char.isdigit():
                raise ValueError(f"Factor names have to start with a letter, but got '{char}'")
            name += char
        else:
            raise ValueError(f"Unknown character '{char}'")
    if compound is not None:
        raise ValueError(f"Brackets are not balanced in rule: '{text}'")
    end_name()
    values.append(ArrayMapping(*dims))
    return tuple(values)


def str_to_sdy_sharding_rule(rule: str, *, reduction_factors: tuple[str, ...] = (),
                             need_replication_factors: tuple[str, ...] = (),
                             permutation_factors: tuple[str, ...] = (),
                             **factor_sizes: int) -> SdyShardingRule:
    """The SdyShardingRule that the einsum-like ``rule`` (``'...i j, ...j k -> ...i k'``)
    describes, with its special factors and factor sizes (Note [sharding rules])."""
    if not isinstance(rule, str):
        raise TypeError(f"rule must be a str, but got {type(rule)}")
    if not all(isinstance(size, int) for size in factor_sizes.values()):
        raise TypeError(f"factor_sizes must be a dict of str to int, but got {factor_sizes}")
    if BATCHING in rule:
        raise ValueError(f"Unknown character '{BATCHING}'")
    rule = rule.replace("...", BATCHING)
    if "." in rule:
        raise ValueError("Character '.' must be used inside ellipsis '...'")
    sides = rule.split("->")
    if len(sides) != 2:
        raise ValueError(f"There is no -> in rule: '{rule}'")
    return SdyShardingRule(_parse_side(sides[0]), _parse_side(sides[1]),
                           reduction_factors=reduction_factors,
                           need_replication_factors=need_replication_factors,
                           permutation_factors=permutation_factors, **factor_sizes)


# --- the MLIR attribute -------------------------------------------------------------------

def _describe(k: int, n_operands: int) -> str:
    return f"{k}th operand" if k < n_operands else f"{k - n_operands}th result"


def sdy_sharding_rule_to_mlir(rule: SdyShardingRule, operand_types: Sequence[Any],
                              result_types: Sequence[Any]) -> Any:
    """The ``#sdy.op_sharding_rule<..., custom>`` attribute of ``rule`` for an op with
    these operand and result types (MLIR ranked tensor types), checking that the rule
    fits them (Note [sharding rules])."""
    n_in = len(operand_types)
    if len(rule.operand_mappings) != n_in:
        raise ValueError(f"Sharding rule has {len(rule.operand_mappings)} operands, but the "
                         f"operation has {n_in} operands")
    if len(rule.result_mappings) != len(result_types):
        raise ValueError(f"Sharding rule has {len(rule.result_mappings)} results, but the "
                         f"operation has {len(result_types)} results")
    types = [*operand_types, *result_types]
    if not all(isinstance(t, ir.Type) for t in types):
        raise TypeError(f"operand_types and result_types must be a list of ir.Type, but "
                        f"got {list(operand_types)} and {list(result_types)}")
    shapes = [list(ir.ShapedType(t).shape) for t in types]
    mappings = [*rule.operand_mappings, *rule.result_mappings]

    # the number of leading dimensions each batching group stands for
    group_rank: dict[str, int] = {}
    split: list[tuple[str | None, tuple[Any, ...]]] = []    # (group, named dims) per value
    for k, (mapping, shape) in enumerate(zip(mappings, shapes, strict=True)):
        dims = tuple(mapping)
        group = _batching_group(dims[0]) if dims and _is_batching(dims[0]) else None
        named = dims[1:] if group is not None else dims
        extra = max(len(shape) - len(named), 0) if group is not None else 0
        if group is not None:
            known = group_rank.setdefault(group, extra)
            if known != extra:
                raise ValueError(f"Ellipsis represents different number of leading "
                                 f"dimensions {known} and {extra}")
        if len(named) + extra != len(shape):
            what = _describe(k, n_in)
            raise ValueError(f"Sharding rule {what} has rank {len(named) + extra}, but the "
                             f"operation {what} has rank {len(shape)}")
        split.append((group, named))

    index: dict[str, int] = {}
    size: dict[str, int | None] = {}

    def see(factor: str, n: int | None, batching: bool) -> None:
        if factor not in index:
            index[factor], size[factor] = len(index), n
            return
        if n is None:
            return
        if size[factor] is None or (n < size[factor]):   # the smallest whole size
            if batching and size[factor] is not None:
                raise ValueError(f"Batching dimension {factor[1:]} corresponds to two "
                                 f"sizes: {size[factor]} and {n}")
            size[factor] = n
        elif batching and n != size[factor]:
            raise ValueError(f"Batching dimension {factor[1:]} corresponds to two sizes: "
                             f"{size[factor]} and {n}")

    def batch_factor(group: str, j: int) -> str:
        return f"?{group}_{j}"      # a name no rule can spell

    for (group, named), shape in zip(split, shapes, strict=True):
        extra = group_rank[group] if group is not None else 0
        for j in range(extra):
            see(batch_factor(group, j), shape[j], True)
        for j, d in enumerate(named):
            if isinstance(d, CompoundFactor):
                for f in d:
                    see(f, rule.factor_sizes.get(f), False)
            else:
                see(d, shape[extra + j], False)

    tensor_mappings = []
    for k, ((group, named), shape) in enumerate(zip(split, shapes, strict=True)):
        extra = group_rank[group] if group is not None else 0
        dim_mappings = [sdy.DimMappingAttr.get(factor_indices=[index[batch_factor(group, j)]])
                        for j in range(extra)]
        for j, d in enumerate(named):
            factors = list(d) if isinstance(d, CompoundFactor) else [d]
            if isinstance(d, CompoundFactor):
                product = 1
                for f in factors:
                    product *= size[f]
                if product != shape[extra + j]:
                    raise ValueError(f"{_describe(k, n_in)} actual size {shape[extra + j]} "
                                     f"doesn't match the size {product} derived from the "
                                     f"compound factors {d}")
            dim_mappings.append(sdy.DimMappingAttr.get(
                factor_indices=[index[f] for f in factors]))
        tensor_mappings.append(sdy.TensorMappingAttr.get(dim_mappings=dim_mappings))
    return sdy.OpShardingRuleAttr.get(
        factor_sizes=[size[f] for f in index],
        operand_mappings=tensor_mappings[:n_in], result_mappings=tensor_mappings[n_in:],
        is_custom=True,
        reduction_factors=[index[f] for f in rule.reduction_factors],
        need_replication_factors=[index[f] for f in rule.need_replication_factors],
        permutation_factors=[index[f] for f in rule.permutation_factors])
