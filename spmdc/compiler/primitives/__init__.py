"""All primitives, one module per family. ``spmdc.compiler`` imports every family, so
that importing any part of the compiler registers every primitive and its rules."""
