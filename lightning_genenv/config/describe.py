"""A schema described: its leaf keys (:func:`schema_keys`) with type, default and the description that
the dataclass's source gives each field (the comment on its line, else the comment block just above).

The comments are read from the source with :mod:`inspect` and :mod:`tokenize`, once per class, so a
schema defined anywhere (``schema.py``, ``evaluate``'s, ``report``'s) is described the same way.

Deliberately left out: docstrings of fields (dataclasses have none), keys outside a dataclass, and the
layout of ``--help`` (``cli.py``).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import io
import re
import tokenize
import typing
from dataclasses import dataclass
from typing import Any, Literal

import yaml
from omegaconf import MISSING


def _comments(cls: type) -> dict[int, str]:
    """Comment text per source line of ``cls``."""
    lines, _ = inspect.getsourcelines(cls)
    tokens = tokenize.generate_tokens(io.StringIO("".join(lines)).readline)
    return {t.start[0]: t.string.lstrip("#").strip() for t in tokens if t.type == tokenize.COMMENT}


@functools.cache  # reads the source: once per class
def _field_docs(cls: type) -> dict[str, str]:
    """Each field's description: the comment on its line, else the comment block just above it."""
    docs: dict[str, str] = {}
    for klass in reversed([k for k in cls.__mro__ if dataclasses.is_dataclass(k)]):
        lines, _ = inspect.getsourcelines(klass)
        comments = _comments(klass)
        for n, line in enumerate(lines, start=1):
            match = re.match(r"    (\w+):", line)
            if not match:
                continue
            text, above = comments.get(n), []
            while text is None and n - 1 - len(above) in comments and \
                    lines[n - 2 - len(above)].lstrip().startswith("#"):
                above.insert(0, comments[n - 1 - len(above)])
            docs[match.group(1)] = text or " ".join(above)
    return docs


def type_name(tp: Any) -> str:
    """A key's type as ``--help`` and the config errors write it: ``a|b`` for a Literal, ``int or null``, ..."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Literal:
        return "|".join(map(str, args))
    if origin is typing.Union and type(None) in args:
        inner = [a for a in args if a is not type(None)]
        return f"{type_name(inner[0])} or null" if len(inner) == 1 else "any"
    if origin is list:
        return f"list[{type_name(args[0])}]" if args else "list"
    return "any" if tp is Any else getattr(tp, "__name__", str(tp))


@dataclass
class Key:
    """One leaf key of a schema: its dotted name, type, default and description."""

    name: str
    type: Any
    default: Any
    doc: str


def schema_keys(schema: type, prefix: str = "") -> list[Key]:
    """Every leaf key of ``schema``, in declaration order (nested groups flattened to dotted names)."""
    hints, docs, out = typing.get_type_hints(schema), _field_docs(schema), []
    for f in dataclasses.fields(schema):
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp):
            out.extend(schema_keys(tp, f"{prefix}{f.name}."))
            continue
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        out.append(Key(f"{prefix}{f.name}", tp, default, docs.get(f.name, "")))
    return out


def choices_of(tp: Any) -> tuple:
    """The allowed values of a Literal (or Optional Literal) type; () for any other type."""
    if typing.get_origin(tp) is typing.Union:
        tp = next((a for a in typing.get_args(tp) if a is not type(None)), tp)
    return typing.get_args(tp) if typing.get_origin(tp) is Literal else ()


def show_value(value: Any) -> str:
    """A default as ``--help`` writes it: flow-style YAML, ``???`` for a required key."""
    if value == MISSING:
        return "???"
    return yaml.safe_dump(value, default_flow_style=True, width=1000).strip().removesuffix("...").strip()
