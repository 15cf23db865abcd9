"""Compiler passes: each is a pure function Func -> Func."""
