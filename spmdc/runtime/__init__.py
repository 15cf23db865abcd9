"""Devices and execution: PJRT client, spmdc.Array, compiled executables."""
