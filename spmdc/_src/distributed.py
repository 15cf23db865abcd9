"""``jax._src.distributed`` under the alias: ``global_state``, the distributed state of
this process as JAX keeps it (``process_id``, ``num_processes``, ``coordinator_address``,
the coordination ``service`` and the distributed ``client``, both None in a
single-process program). Orbax reads ``global_state.client`` to tell whether the
distributed system is up and ``global_state.process_id``. Each field is read from
spmdc's runtime when asked, so it is the state now."""
from __future__ import annotations

from typing import Any

from ..runtime import distributed as _distributed
from ..runtime import pjrt

__all__ = ["State", "global_state"]


class State:
    """A view of spmdc's distributed state with JAX's field names."""

    @property
    def process_id(self) -> int:
        return pjrt.process_index()

    @property
    def num_processes(self) -> int:
        return pjrt.process_count()

    @property
    def client(self) -> Any:
        s = _distributed.state()
        return None if s is None else s.client

    @property
    def service(self) -> Any:
        s = _distributed.state()
        return None if s is None else s.service

    @property
    def coordinator_address(self) -> str | None:
        s = _distributed.state()
        return None if s is None else s.spec.coordinator_address

    def __repr__(self) -> str:
        return (f"State(process_id={self.process_id}, num_processes={self.num_processes}, "
                f"coordinator_address={self.coordinator_address!r})")


global_state = State()
